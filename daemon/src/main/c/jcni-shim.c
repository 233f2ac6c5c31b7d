/*
 * jcni-shim: the executable a CNI runtime runs for a jcni plugin type (installed as e.g.
 * /opt/cni/bin/bridge; the type is basename(argv[0])). It hands environ + stdin to jcnid over its
 * unix socket and relays the answer (stdout, stderr, exit code). When the daemon cannot take the
 * request it execs the standalone plugin launcher <libexec>/<type> with the same environment and
 * stdin, so correctness never depends on the daemon.
 *
 * When it falls back (see daemon/README.md):
 *   - no socket, connect refused, or the daemon closes or fails before its 'A' (accepted) byte, or
 *     answers 'F' (declined): nothing ran in the daemon; exec the standalone plugin.
 *   - the daemon is lost after 'A' (the plugin may have run partly): ADD answers CNI error 11
 *     "try again later" (the runtime deletes and retries; ADD is not idempotent); every other
 *     command (DEL, CHECK, STATUS, GC, VERSION) is idempotent and runs standalone.
 *
 * Protocol v1 (big-endian): request "JCNI" u8 1, u8 1(EXEC), u16 0, u32 bodyLen,
 *   body = str type, u32 n, n x str "K=V", str stdin (str = u32 len + bytes);
 * reply u8 status ('A' | 'R' | 'F'), then for 'A'/'R': "JCNR" i32 exit, str stdout, str stderr.
 *
 * Compile-time: -DJCNI_SOCKET="/run/jcni/jcnid.sock" -DJCNI_LIBEXEC="/opt/jcni/libexec";
 * run-time overrides: JCNI_SOCKET, JCNI_LIBEXEC.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef JCNI_SOCKET
#define JCNI_SOCKET "/run/jcni/jcnid.sock"
#endif
#ifndef JCNI_LIBEXEC
#define JCNI_LIBEXEC "/opt/jcni/libexec"
#endif
#ifndef JCNI_TIMEOUT_S
#define JCNI_TIMEOUT_S 600 /* longer than the daemon's own request timeout */
#endif
#define MAX_BODY (16u << 20)
#define MAX_PART (64u << 20)

extern char **environ;

/* jcni's delegation looks for this marker to run jcni's own IPAM plugins in-process. */
__attribute__((used)) static const char jcni_marker[] = "jcni-launcher";

static const char *type;
static char *in;         /* stdin, once read */
static size_t in_len;
static int in_consumed;  /* whether stdin was read (a fallback must then replay it) */

/* Prints a CNI error object on stdout (in the configuration's cniVersion if it can be seen) and exits 1. */
static void cni_error(int code, const char *msg, const char *details) {
    char ver[16] = "1.1.0";
    const char *p = in ? memmem(in, in_len, "\"cniVersion\"", 12) : NULL;
    if (p) {
        const char *end = in + in_len;
        p += 12;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':')) p++;
        if (p < end && *p == '"') {
            size_t n = 0;
            for (p++; p + n < end && n < sizeof ver - 1 && ((p[n] >= '0' && p[n] <= '9') || p[n] == '.'); n++) {}
            if (n > 0 && p + n < end && p[n] == '"') { memcpy(ver, p, n); ver[n] = 0; }
        }
    }
    printf("{\n    \"cniVersion\": \"%s\",\n    \"code\": %d,\n    \"msg\": \"%s\",\n    \"details\": \"", ver, code, msg);
    for (const unsigned char *d = (const unsigned char *)details; *d; d++) {
        if (*d == '"' || *d == '\\') printf("\\%c", *d);
        else if (*d < 0x20) printf("\\u%04x", *d);
        else putchar(*d);
    }
    printf("\"\n}");
    fflush(stdout);
    exit(1);
}

/* Runs the standalone plugin in this process; never returns. */
static void fallback(void) {
    char path[4096], details[4200];
    const char *dir = getenv("JCNI_LIBEXEC");
    if (!dir || !*dir) dir = JCNI_LIBEXEC;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, type) >= sizeof path) cni_error(50, "plugin not available", "path too long");
    struct stat target, self;
    if (stat(path, &target) == 0 && stat("/proc/self/exe", &self) == 0 && target.st_dev == self.st_dev && target.st_ino == self.st_ino) {
        snprintf(details, sizeof details, "%s is the shim itself, not a standalone plugin", path);
        cni_error(50, "plugin not available", details);
    }
    if (in_consumed) { /* replay the stdin we already read */
        int fd = memfd_create("jcni-stdin", 0);
        size_t off = 0;
        while (fd >= 0 && off < in_len) {
            ssize_t w = write(fd, in + off, in_len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) { close(fd); fd = -1; break; }
            off += (size_t)w;
        }
        if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, 0) < 0) cni_error(5, "I/O failure", "cannot replay stdin for the standalone plugin");
        if (fd != 0) close(fd);
    }
    char *argv[] = {path, NULL};
    execv(path, argv);
    snprintf(details, sizeof details, "exec %s: %s", path, strerror(errno));
    cni_error(50, "plugin not available", details);
}

static void put32(char **p, uint32_t v) {
    unsigned char *q = (unsigned char *)*p;
    q[0] = v >> 24; q[1] = v >> 16; q[2] = v >> 8; q[3] = v;
    *p += 4;
}

static void putstr(char **p, const char *s, size_t n) {
    put32(p, (uint32_t)n);
    memcpy(*p, s, n);
    *p += n;
}

/* Reads exactly n bytes; 0 on success, -1 on EOF, error or timeout. */
static int read_full(int fd, void *buf, size_t n) {
    size_t off = 0;
    while (off < n) {
        ssize_t r = read(fd, (char *)buf + off, n - off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        off += (size_t)r;
    }
    return 0;
}

static int read32(int fd, uint32_t *v) {
    unsigned char b[4];
    if (read_full(fd, b, 4)) return -1;
    *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return 0;
}

static char *read_part(int fd, uint32_t *n) {
    if (read32(fd, n) || *n > MAX_PART) return NULL;
    char *b = malloc(*n ? *n : 1);
    if (!b || read_full(fd, b, *n)) { free(b); return NULL; }
    return b;
}

static void write_all(int fd, const char *b, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        b += w;
        n -= (size_t)w;
    }
}

static void read_stdin(void) {
    const char *cmd = getenv("CNI_COMMAND");
    in_consumed = 1;
    if (cmd && strcmp(cmd, "VERSION") == 0) { /* like PluginMain: VERSION does not wait for stdin */
        struct pollfd pf = {.fd = 0, .events = POLLIN};
        if (poll(&pf, 1, 0) <= 0 || (pf.revents & POLLNVAL)) return;
    }
    size_t cap = 0;
    for (;;) {
        if (in_len == cap) {
            cap = cap ? cap * 2 : 65536; /* all of it: if too large for the daemon, the fallback replays it */
            char *n = realloc(in, cap);
            if (!n) cni_error(5, "I/O failure", "out of memory reading stdin");
            in = n;
        }
        ssize_t r = read(0, in + in_len, cap - in_len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EBADF) return; /* no stdin at all */
        if (r < 0) cni_error(5, "I/O failure", "error reading stdin");
        if (r == 0) return;
        in_len += (size_t)r;
    }
}

int main(int argc, char **argv) {
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    type = slash ? slash + 1 : argv[0];

    const char *sock = getenv("JCNI_SOCKET");
    if (!sock || !*sock) sock = JCNI_SOCKET;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof addr.sun_path) fallback();
    strcpy(addr.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) fallback(); /* stdin untouched */

    /* The daemon runs the plugin in our network namespace, found through our pid while we wait. */
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("JCNI_CALLER_PID", pid, 1);

    read_stdin();
    if (in_len >= MAX_BODY) { close(fd); fallback(); }
    size_t body = 4 + strlen(type) + 4 + 4 + in_len, n = 0;
    for (char **e = environ; *e; e++, n++) body += 4 + strlen(*e);
    if (body > MAX_BODY) { close(fd); fallback(); }
    char *req = malloc(12 + body), *p = req;
    if (!req) { close(fd); fallback(); }
    memcpy(p, "JCNI\x01\x01\x00\x00", 8);
    p += 8;
    put32(&p, (uint32_t)body);
    putstr(&p, type, strlen(type));
    put32(&p, (uint32_t)n);
    for (char **e = environ; *e; e++) putstr(&p, *e, strlen(*e));
    putstr(&p, in ? in : "", in_len);
    for (size_t off = 0, len = (size_t)(p - req); off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { close(fd); fallback(); } /* the daemon went away before taking the request */
        off += (size_t)w;
    }
    free(req);

    struct timeval tv = {.tv_sec = JCNI_TIMEOUT_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char status;
    if (read_full(fd, &status, 1) || (status != 'A' && status != 'R')) { close(fd); fallback(); }

    char magic[4];
    int32_t code;
    uint32_t out_len = 0, err_len = 0, raw;
    char *out = NULL, *err = NULL;
    int ok = read_full(fd, magic, 4) == 0 && memcmp(magic, "JCNR", 4) == 0 && read32(fd, &raw) == 0
             && (out = read_part(fd, &out_len)) != NULL && (err = read_part(fd, &err_len)) != NULL;
    close(fd);
    if (!ok) {
        const char *cmd = getenv("CNI_COMMAND");
        if (status == 'A' && cmd && strcmp(cmd, "ADD") == 0) {
            cni_error(11, "try again later", "jcnid was lost while running ADD; it may have partly run, so it is not repeated here");
        }
        fallback(); /* nothing ran ('R'), or the command is idempotent */
    }
    code = (int32_t)raw;
    write_all(2, err, err_len);
    write_all(1, out, out_len);
    return code & 0xff;
}
