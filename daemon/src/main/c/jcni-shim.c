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
 * When nobody answers on the socket, the shim starts jcnid itself (see autostart() and
 * daemon/README.md "Auto-start"): JCNI_AUTOSTART=0 in the environment or "autostart = no" in
 * /etc/jcni/jcni.conf turns that off.
 *
 * Compile-time: -DJCNI_SOCKET="/run/jcni/jcnid.sock" -DJCNI_LIBEXEC="/opt/jcni/libexec";
 * run-time overrides: JCNI_SOCKET, JCNI_LIBEXEC (jcnid is <libexec>/../bin/jcnid), JCNI_CGROUP.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
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
#ifndef JCNI_CONF
#define JCNI_CONF "/etc/jcni/jcni.conf"
#endif
#ifndef JCNI_CGROUP
#define JCNI_CGROUP "jcnid" /* under each cgroup hierarchy's root */
#endif
#ifndef JCNI_AUTOSTART_WAIT_MS
#define JCNI_AUTOSTART_WAIT_MS 15000 /* how long a call waits for the jcnid it started (or another shim did) */
#endif
#define AUTOSTART_BACKOFF_S 60 /* after a failed start, calls run standalone this long before the next try */
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

/* ---- Auto-start: when no jcnid answers, start one (see daemon/README.md "Auto-start"). ----
 * The daemon is started from this process, before anything else happens: the shim never enters
 * another namespace (jcnid enters the caller's network namespace itself, via JCNI_CALLER_PID), so
 * the daemon gets the runtime's namespaces, the same mount namespace in which the shim looked for
 * the socket and in which a standalone plugin would have resolved its paths. */

/* Whether auto-start is on: JCNI_AUTOSTART (0/no/false/off: off; anything else: on) wins over
 * "autostart = no" in JCNI_CONF; on when neither says. */
static int autostart_enabled(void) {
    const char *v = getenv("JCNI_AUTOSTART");
    if (!v || !*v) {
        static char line[256], value[32];
        v = NULL;
        FILE *f = fopen(JCNI_CONF, "re");
        while (f && fgets(line, sizeof line, f)) {
            char *k = line + strspn(line, " \t");
            if (strncmp(k, "autostart", 9) != 0) continue;
            k += 9 + strspn(k + 9, " \t");
            if (*k != '=') continue;
            k++;
            k += strspn(k, " \t");
            k[strcspn(k, " \t\r\n#")] = 0;
            snprintf(value, sizeof value, "%s", k); /* the last such line wins */
            v = value;
        }
        if (f) fclose(f);
        if (!v) return 1;
    }
    return !(strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0);
}

static int connect_to(const struct sockaddr_un *addr) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)addr, sizeof *addr) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* Records a failed start in the marker next to the socket (its mtime starts the back-off) and, the
 * first time in a back-off period, says why in the daemon's log. Where the marker cannot be written
 * (no socket directory), nothing is recorded: each call then pays one failed mkdir, no more. */
static void autostart_failed(const char *dir, const char *log, const char *why) {
    char marker[4200];
    snprintf(marker, sizeof marker, "%s/jcnid.autostart-failed", dir);
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) return;
    char line[4400];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02dZ jcni-shim autostart=failed retry_after_s=%d reason=\"%s\"\n",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, AUTOSTART_BACKOFF_S, why);
    if (n > 0 && (size_t)n < sizeof line) {
        write_all(fd, line, (size_t)n);
        int lf = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (lf >= 0) { write_all(lf, line, (size_t)n); close(lf); }
    }
    close(fd);
}

/* Moves the calling process into JCNI_CGROUP (relative path) under the root of every cgroup
 * hierarchy it can write: cgroup2 at /sys/fs/cgroup, or each cgroup v1 hierarchy below it. When
 * /sys is not the host's (ip netns exec mounts a fresh sysfs without cgroups), PID 1's view is
 * tried. Where none is writable the daemon stays in the runtime's cgroup. */
static void move_to_own_cgroup(void) {
    const char *name = getenv("JCNI_CGROUP");
    if (!name) name = JCNI_CGROUP;
    if (!*name) return;
    static const char *const roots[] = {"/sys/fs/cgroup", "/proc/1/root/sys/fs/cgroup"};
    for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
        char path[4096];
        int moved = 0;
        snprintf(path, sizeof path, "%s/cgroup.procs", roots[r]);
        if (access(path, F_OK) == 0) { /* cgroup2 mounted at the root */
            snprintf(path, sizeof path, "%s/%s", roots[r], name);
            if (mkdir(path, 0755) == 0 || errno == EEXIST) {
                snprintf(path, sizeof path, "%s/%s/cgroup.procs", roots[r], name);
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd >= 0) { moved = write(fd, "0", 1) == 1; close(fd); }
            }
            if (moved) return;
            continue;
        }
        DIR *d = opendir(roots[r]); /* cgroup v1 (or hybrid): one hierarchy per directory */
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s/cgroup.procs", roots[r], e->d_name);
            if (access(path, F_OK) != 0) continue;
            snprintf(path, sizeof path, "%s/%s/%s", roots[r], e->d_name, name);
            if (mkdir(path, 0755) != 0 && errno != EEXIST) continue;
            snprintf(path, sizeof path, "%s/%s/%s/cgroup.procs", roots[r], e->d_name, name);
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            if (fd >= 0) { moved |= write(fd, "0", 1) == 1; close(fd); }
        }
        if (d) closedir(d);
        if (moved) return;
    }
}

/* In the forked child: becomes the detached daemon and never returns. lock_fd is handed on as fd 3:
 * jcnid holds the start lock for as long as it lives, so no second shim starts another. */
static void exec_daemon(const char *jcnid, const char *sock, const char *log, int lock_fd) {
    setsid(); /* its own session: the runtime's process group and terminal signals never reach it */
    move_to_own_cgroup();
    int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); /* runtimes set theirs near -1000 */
    if (oom >= 0) { if (write(oom, "0", 1) < 0) {} close(oom); }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL); /* ignored signals survive exec: reset them */
    umask(077);
    if (chdir("/") != 0) _exit(127);
    /* Never the runtime's pipes: a plugin's stdout is its CNI result, and a runtime waits for EOF. */
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0) out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || out < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || dup2(lock_fd, 3) < 0) _exit(127);
    /* dup2 onto the same number keeps O_CLOEXEC (the lock is usually fd 3 already): clear it. */
    for (int fd = 0; fd <= 3; fd++) {
        if (fcntl(fd, F_SETFD, 0) < 0) _exit(127);
    }
    if (close_range(4, ~0U, 0) != 0) { /* whatever the runtime leaked to its plugin */
        for (int fd = 4; fd < 65536; fd++) close(fd);
    }
    char *const argv[] = {"jcnid", "start", "--foreground", "--socket", (char *)sock, "--log-file", (char *)log, NULL};
    char *const envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(jcnid, argv, envp);
    _exit(127);
}

static int sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    return nanosleep(&ts, NULL);
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Called when nothing answers on the socket: starts jcnid (or waits for the one another shim is
 * starting) and returns a connection to it, or -1 to run standalone. Never fails the call: every
 * failure path is the standalone plugin. */
static int autostart(const struct sockaddr_un *addr) {
    if (!autostart_enabled() || geteuid() != 0) return -1; /* jcnid serves uid 0 only */
    char dir[sizeof addr->sun_path], log[4200], jcnid[4200], lockpath[4200], marker[4200];
    strcpy(dir, addr->sun_path);
    char *slash = strrchr(dir, '/');
    if (!slash) return -1; /* a relative socket name: no directory to hold the lock */
    if (slash == dir) slash[1] = 0; else *slash = 0;
    /* The log: where `jcnid start` puts it for the standard socket, next to any other socket. */
    if (strcmp(addr->sun_path, "/run/jcni/jcnid.sock") == 0) snprintf(log, sizeof log, "/var/log/jcnid.log");
    else snprintf(log, sizeof log, "%s/jcnid.log", dir);
    snprintf(marker, sizeof marker, "%s/jcnid.autostart-failed", dir);
    struct stat st;
    time_t now = time(NULL);
    if (stat(marker, &st) == 0 && st.st_mtime <= now && now - st.st_mtime < AUTOSTART_BACKOFF_S) return -1;

    const char *libexec = getenv("JCNI_LIBEXEC");
    if (!libexec || !*libexec) libexec = JCNI_LIBEXEC;
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s", libexec);
    snprintf(jcnid, sizeof jcnid, "%s/bin/jcnid", dirname(prefix));
    if (access(jcnid, X_OK) != 0) {
        char why[4300];
        snprintf(why, sizeof why, "%s: %s", jcnid, strerror(errno));
        autostart_failed(dir, log, why);
        return -1;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
    snprintf(lockpath, sizeof lockpath, "%s/jcnid.autostart.lock", dir);
    int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (lock < 0) return -1;

    /* Whoever holds the lock is starting jcnid, or is the jcnid an earlier shim started: wait for
     * it to answer. Whoever takes it looks once more (jcnid may have come up meanwhile), then starts one. */
    long deadline = now_ms() + JCNI_AUTOSTART_WAIT_MS;
    int fd;
    for (;;) {
        if ((fd = connect_to(addr)) >= 0) { close(lock); return fd; }
        if (flock(lock, LOCK_EX | LOCK_NB) == 0) break;
        if (now_ms() >= deadline) {
            close(lock);
            autostart_failed(dir, log, "jcnid, started by another call, did not answer in time");
            return -1;
        }
        sleep_ms(10);
    }
    if ((fd = connect_to(addr)) >= 0 || (stat(marker, &st) == 0 && now - st.st_mtime < AUTOSTART_BACKOFF_S)) {
        close(lock);
        return fd;
    }
    pid_t pid = fork();
    if (pid < 0) { close(lock); return -1; }
    if (pid == 0) exec_daemon(jcnid, addr->sun_path, log, lock);
    close(lock); /* jcnid holds it now */
    while (now_ms() < deadline) {
        if ((fd = connect_to(addr)) >= 0) return fd;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            char why[256];
            snprintf(why, sizeof why, "jcnid exited with status %d at start (its log says why)", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            autostart_failed(dir, log, why);
            return -1;
        }
        sleep_ms(5);
    }
    autostart_failed(dir, log, "jcnid did not answer in time; it may still come up");
    return -1;
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
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int nobody = fd >= 0 && (errno == ENOENT || errno == ECONNREFUSED); /* no socket, or a stale one */
        if (fd >= 0) close(fd);
        fd = nobody ? autostart(&addr) : -1;
        if (fd < 0) fallback(); /* stdin untouched */
    }

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
