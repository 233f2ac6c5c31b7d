/*
 * libjcni: the only native code in jcni. Deliberately tiny and generic: thin wrappers over the
 * system calls the JDK does not expose (setns, unshare, mount, netlink sockets, flock, gettid,
 * a UDP socket bound to one device for DHCP, one netlink request sent later by a detached process).
 * Every netlink message is encoded and decoded in Java; failures become
 * io.jcni.linux.ErrnoException(errno, operation).
 */
#define _GNU_SOURCE
#include <jni.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <time.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/nsfs.h>

#include "io_jcni_linux_Native.h"

static jclass errno_exception;
static jmethodID errno_exception_init;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void) reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_10) != JNI_OK) return JNI_ERR;
    jclass local = (*env)->FindClass(env, "io/jcni/linux/ErrnoException");
    if (local == NULL) return JNI_ERR;
    errno_exception = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    errno_exception_init = (*env)->GetMethodID(env, errno_exception, "<init>", "(ILjava/lang/String;)V");
    if (errno_exception_init == NULL) return JNI_ERR;
    return JNI_VERSION_10;
}

/* Throws ErrnoException for err; the operation text is formatted like printf. */
__attribute__((format(printf, 3, 4)))
static void throw_errno(JNIEnv *env, int err, const char *fmt, ...) {
    char op[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op, sizeof op, fmt, ap);
    va_end(ap);
    jstring jop = (*env)->NewStringUTF(env, op);
    if (jop == NULL) return; /* OutOfMemoryError pending */
    jobject ex = (*env)->NewObject(env, errno_exception, errno_exception_init, (jint) err, jop);
    if (ex != NULL) (*env)->Throw(env, (jthrowable) ex);
}

/* Path arguments: NULL Java strings map to NULL C strings (mount's source, fstype and data). */
typedef struct { jstring j; const char *c; } jpath;

static int path_get(JNIEnv *env, jstring s, jpath *p) {
    p->j = s;
    p->c = NULL;
    if (s == NULL) return 1;
    p->c = (*env)->GetStringUTFChars(env, s, NULL);
    return p->c != NULL;
}

static void path_release(JNIEnv *env, jpath *p) {
    if (p->c != NULL) (*env)->ReleaseStringUTFChars(env, p->j, p->c);
}

static const char *str_or(const char *s, const char *alt) { return s != NULL ? s : alt; }

/* For arguments that must not be null: an exception instead of a silent -1. */
static int require(JNIEnv *env, jstring s, const char *what) {
    if (s != NULL) return 1;
    throw_errno(env, EINVAL, "%s (null path)", what);
    return 0;
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_open(JNIEnv *env, jclass cls, jstring path, jint flags, jint mode) {
    (void) cls;
    jpath p;
    if (!require(env, path, "open") || !path_get(env, path, &p)) return -1;
    int fd;
    do fd = open(p.c, flags | O_CLOEXEC, (mode_t) mode); while (fd < 0 && errno == EINTR);
    if (fd < 0) throw_errno(env, errno, "open %s", p.c);
    path_release(env, &p);
    return fd;
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_close(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    /* Linux releases the descriptor even when close reports EINTR, so never retry. */
    if (close(fd) < 0 && errno != EINTR) throw_errno(env, errno, "close fd %d", fd);
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_setns(JNIEnv *env, jclass cls, jint fd, jint nstype) {
    (void) cls;
    if (setns(fd, nstype) < 0) throw_errno(env, errno, "setns fd %d", fd);
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_unshare(JNIEnv *env, jclass cls, jint flags) {
    (void) cls;
    if (unshare(flags) < 0) throw_errno(env, errno, "unshare 0x%x", (unsigned) flags);
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_mount(JNIEnv *env, jclass cls, jstring source, jstring target,
                                                       jstring fstype, jlong flags, jstring data) {
    (void) cls;
    if (!require(env, target, "mount")) return;
    jpath s, t, f, d;
    int ok = path_get(env, source, &s) & path_get(env, target, &t) & path_get(env, fstype, &f)
             & path_get(env, data, &d);
    if (ok && t.c != NULL) {
        if (mount(s.c, t.c, f.c, (unsigned long) flags, d.c) < 0)
            throw_errno(env, errno, "mount %s on %s", str_or(s.c, "none"), t.c);
    }
    path_release(env, &s); path_release(env, &t); path_release(env, &f); path_release(env, &d);
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_umount2(JNIEnv *env, jclass cls, jstring target, jint flags) {
    (void) cls;
    jpath t;
    if (!require(env, target, "umount") || !path_get(env, target, &t)) return;
    if (umount2(t.c, flags) < 0) throw_errno(env, errno, "umount %s", t.c);
    path_release(env, &t);
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_gettid(JNIEnv *env, jclass cls) {
    (void) env; (void) cls;
    return (jint) syscall(SYS_gettid);
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_nsType(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    int type = ioctl(fd, NS_GET_NSTYPE);
    if (type < 0) throw_errno(env, errno, "ioctl NS_GET_NSTYPE fd %d", fd);
    return type;
}

JNIEXPORT jlong JNICALL Java_io_jcni_linux_Native_inode(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        throw_errno(env, errno, "fstat fd %d", fd);
        return -1;
    }
    return (jlong) st.st_ino;
}

JNIEXPORT jlong JNICALL Java_io_jcni_linux_Native_statfsType(JNIEnv *env, jclass cls, jstring path) {
    (void) cls;
    jpath p;
    if (!require(env, path, "statfs") || !path_get(env, path, &p)) return -1;
    struct statfs sf;
    int rc;
    do rc = statfs(p.c, &sf); while (rc < 0 && errno == EINTR);
    if (rc < 0) throw_errno(env, errno, "statfs %s", p.c);
    path_release(env, &p);
    return rc < 0 ? -1 : (jlong) sf.f_type;
}

JNIEXPORT jlong JNICALL Java_io_jcni_linux_Native_fstatfsType(JNIEnv *env, jclass cls, jint fd) {
    (void) cls;
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0) {
        throw_errno(env, errno, "fstatfs fd %d", fd);
        return -1;
    }
    return (jlong) sf.f_type;
}

/* out = { st_mode, st_size }. */
JNIEXPORT void JNICALL Java_io_jcni_linux_Native_fstat(JNIEnv *env, jclass cls, jint fd, jlongArray out) {
    (void) cls;
    struct stat st;
    if (out == NULL || (*env)->GetArrayLength(env, out) < 2) {
        throw_errno(env, EINVAL, "fstat fd %d (need a long[2])", fd);
        return;
    }
    if (fstat(fd, &st) < 0) {
        throw_errno(env, errno, "fstat fd %d", fd);
        return;
    }
    jlong v[2] = { (jlong) st.st_mode, (jlong) st.st_size };
    (*env)->SetLongArrayRegion(env, out, 0, 2, v);
}

/* read(2) into buf[off, off+len) through a bounded stack buffer; 0 at end of file. */
JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_read(JNIEnv *env, jclass cls, jint fd, jbyteArray buf, jint off, jint len) {
    (void) cls;
    char tmp[8192];
    if (buf == NULL || off < 0 || len < 0 || (jlong) off + len > (*env)->GetArrayLength(env, buf)) {
        throw_errno(env, EINVAL, "read fd %d (bad buffer range)", fd);
        return -1;
    }
    size_t want = (size_t) len < sizeof tmp ? (size_t) len : sizeof tmp;
    ssize_t n;
    do n = read(fd, tmp, want); while (n < 0 && errno == EINTR);
    if (n < 0) {
        throw_errno(env, errno, "read fd %d", fd);
        return -1;
    }
    (*env)->SetByteArrayRegion(env, buf, off, (jsize) n, (const jbyte *) tmp);
    return (jint) n;
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_socket(JNIEnv *env, jclass cls, jint domain, jint type, jint protocol) {
    (void) cls;
    int fd = socket(domain, type | SOCK_CLOEXEC, protocol);
    if (fd < 0) throw_errno(env, errno, "socket(%d, %d, %d)", domain, type, protocol);
    return fd;
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_bindNetlink(JNIEnv *env, jclass cls, jint fd, jint groups) {
    (void) cls;
    struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = (unsigned) groups };
    if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
        throw_errno(env, errno, "bind netlink fd %d", fd);
        return -1;
    }
    socklen_t len = sizeof sa;
    if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0) {
        throw_errno(env, errno, "getsockname fd %d", fd);
        return -1;
    }
    return (jint) sa.nl_pid;
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_setsockoptInt(JNIEnv *env, jclass cls, jint fd, jint level, jint name, jint value) {
    (void) cls;
    int v = value;
    if (setsockopt(fd, level, name, &v, sizeof v) < 0)
        throw_errno(env, errno, "setsockopt fd %d level %d option %d", fd, level, name);
}

JNIEXPORT void JNICALL Java_io_jcni_linux_Native_setReceiveTimeout(JNIEnv *env, jclass cls, jint fd, jint millis) {
    (void) cls;
    struct timeval tv = { .tv_sec = millis / 1000, .tv_usec = (millis % 1000) * 1000 };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        throw_errno(env, errno, "setsockopt SO_RCVTIMEO fd %d", fd);
}

/* Direct buffers only: the address is stable and no copy is needed. */
static char *buffer_at(JNIEnv *env, jobject buf, jint off, jint len) {
    char *base = (*env)->GetDirectBufferAddress(env, buf);
    jlong cap = (*env)->GetDirectBufferCapacity(env, buf);
    if (base == NULL || off < 0 || len < 0 || (jlong) off + len > cap) {
        throw_errno(env, EINVAL, "netlink buffer (need a direct buffer holding offset %d length %d)", off, len);
        return NULL;
    }
    return base + off;
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_send(JNIEnv *env, jclass cls, jint fd, jobject buf, jint off, jint len) {
    (void) cls;
    char *p = buffer_at(env, buf, off, len);
    if (p == NULL) return -1;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    ssize_t n;
    do n = sendto(fd, p, (size_t) len, 0, (struct sockaddr *) &kernel, sizeof kernel); while (n < 0 && errno == EINTR);
    if (n < 0) throw_errno(env, errno, "netlink send");
    return (jint) n;
}

JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_receive(JNIEnv *env, jclass cls, jint fd, jobject buf, jint off, jint len) {
    (void) cls;
    char *p = buffer_at(env, buf, off, len);
    if (p == NULL) return -1;
    for (;;) {
        struct sockaddr_nl from;
        struct iovec iov = { .iov_base = p, .iov_len = (size_t) len };
        struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n = recvmsg(fd, &msg, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno(env, errno, errno == EAGAIN ? "netlink receive timed out" : "netlink receive");
            return -1;
        }
        if (msg.msg_flags & MSG_TRUNC) {
            throw_errno(env, EMSGSIZE, "netlink receive (message larger than %d bytes)", len);
            return -1;
        }
        /* Only the kernel (port 0) may talk to us; drop anything a local process sent. */
        if (from.nl_pid != 0) continue;
        return (jint) n;
    }
}

JNIEXPORT jboolean JNICALL Java_io_jcni_linux_Native_flock(JNIEnv *env, jclass cls, jint fd, jint operation) {
    (void) cls;
    for (;;) {
        if (flock(fd, operation) == 0) return JNI_TRUE;
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK && (operation & LOCK_NB)) return JNI_FALSE;
        throw_errno(env, errno, "flock fd %d", fd);
        return JNI_FALSE;
    }
}

/*
 * A UDP socket for a DHCP client on an interface that has no address yet: bound to 0.0.0.0:port
 * and to the device (SO_BINDTODEVICE), so that a broadcast leaves through that device although no
 * route exists, with SO_BROADCAST and SO_REUSEADDR (one socket per interface of a namespace).
 * The JDK has no SO_BINDTODEVICE, hence this.
 */
JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_udpBindToDevice(JNIEnv *env, jclass cls, jstring ifname, jint port) {
    (void) cls;
    jpath dev;
    if (!require(env, ifname, "udpBindToDevice") || !path_get(env, ifname, &dev)) return -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        throw_errno(env, errno, "socket(AF_INET, SOCK_DGRAM) for %s", dev.c);
        path_release(env, &dev);
        return -1;
    }
    int one = 1;
    const char *step = "setsockopt SO_BINDTODEVICE";
    int ok = setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev.c, (socklen_t) strlen(dev.c)) == 0;
    if (ok) { step = "setsockopt SO_BROADCAST"; ok = setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) == 0; }
    if (ok) { step = "setsockopt SO_REUSEADDR"; ok = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0; }
    if (ok) {
        step = "bind";
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short) port), .sin_addr = { htonl(INADDR_ANY) } };
        ok = bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0;
    }
    if (!ok) {
        int err = errno;
        close(fd);
        throw_errno(env, err, "%s (udp port %d on %s)", step, port, dev.c);
        path_release(env, &dev);
        return -1;
    }
    path_release(env, &dev);
    return fd;
}

/*
 * sendto(2) of len bytes of buf to the IPv4 address addr (4 bytes, network order) and port; at
 * most the largest UDP payload over IPv4 (the kernel fragments what exceeds the MTU).
 */
#define UDP_MAX_PAYLOAD 65507
JNIEXPORT void JNICALL Java_io_jcni_linux_Native_udpSendTo(JNIEnv *env, jclass cls, jint fd, jbyteArray buf, jint len,
                                                           jbyteArray addr, jint port) {
    (void) cls;
    if (len < 0 || len > UDP_MAX_PAYLOAD || len > (*env)->GetArrayLength(env, buf) || (*env)->GetArrayLength(env, addr) != 4) {
        throw_errno(env, EINVAL, "udp send (length %d, need at most %d bytes and a 4-byte address)", len, UDP_MAX_PAYLOAD);
        return;
    }
    char *tmp = malloc(len > 0 ? (size_t) len : 1);
    if (tmp == NULL) {
        throw_errno(env, ENOMEM, "udp send of %d bytes", len);
        return;
    }
    (*env)->GetByteArrayRegion(env, buf, 0, len, (jbyte *) tmp);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((unsigned short) port) };
    (*env)->GetByteArrayRegion(env, addr, 0, 4, (jbyte *) &to.sin_addr);
    ssize_t n;
    do n = sendto(fd, tmp, (size_t) len, 0, (struct sockaddr *) &to, sizeof to); while (n < 0 && errno == EINTR);
    int err = errno;
    free(tmp);
    if (n < 0) throw_errno(env, err, "udp send to port %d", port);
}

/*
 * One datagram into buf, waiting at most millis; its sender's IPv4 address into from (4 bytes).
 * Returns its full length, which is more than buf holds when it was truncated (MSG_TRUNC), so
 * the caller can say so; 0 when none came in time (or it was empty).
 */
JNIEXPORT jint JNICALL Java_io_jcni_linux_Native_udpReceive(JNIEnv *env, jclass cls, jint fd, jbyteArray buf, jint millis,
                                                            jbyteArray from) {
    (void) cls;
    jint max = (*env)->GetArrayLength(env, buf);
    if ((*env)->GetArrayLength(env, from) != 4) {
        throw_errno(env, EINVAL, "udp receive needs a 4-byte address array");
        return -1;
    }
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int r;
    do r = poll(&p, 1, millis < 0 ? 0 : millis); while (r < 0 && errno == EINTR);
    if (r < 0) {
        throw_errno(env, errno, "poll udp fd %d", fd);
        return -1;
    }
    if (r == 0) return 0;
    char *tmp = malloc(max > 0 ? (size_t) max : 1);
    if (tmp == NULL) {
        throw_errno(env, ENOMEM, "udp receive of %d bytes", max);
        return -1;
    }
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    memset(&sa, 0, sizeof sa);
    ssize_t n;
    do n = recvfrom(fd, tmp, (size_t) max, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &sa, &salen);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int err = errno;
        free(tmp);
        if (err == EAGAIN) return 0;
        throw_errno(env, err, "udp receive fd %d", fd);
        return -1;
    }
    (*env)->SetByteArrayRegion(env, buf, 0, (jsize) (n < max ? n : max), (const jbyte *) tmp);
    (*env)->SetByteArrayRegion(env, from, 0, 4, (const jbyte *) &sa.sin_addr);
    free(tmp);
    return (jint) n;
}

/*
 * The values of the C constants Native.java uses, read once at load: they differ between
 * architectures (O_DIRECTORY is 0200000 on x86-64 but 040000 on arm64, where 0200000 means
 * O_DIRECT), so Java must never hard-code them.
 */
static const struct { const char *name; long value; } constants[] = {
    { "O_RDONLY", O_RDONLY }, { "O_RDWR", O_RDWR }, { "O_CREAT", O_CREAT }, { "O_EXCL", O_EXCL },
    { "O_DIRECTORY", O_DIRECTORY }, { "O_NOCTTY", O_NOCTTY }, { "O_NONBLOCK", O_NONBLOCK },
    { "S_IFMT", S_IFMT }, { "S_IFREG", S_IFREG }, { "S_IFDIR", S_IFDIR },
    { "NSFS_MAGIC", NSFS_MAGIC }, { "PROC_SUPER_MAGIC", PROC_SUPER_MAGIC },
    { "CLONE_NEWNET", CLONE_NEWNET },
    { "MS_BIND", MS_BIND }, { "MS_REC", MS_REC }, { "MS_SHARED", MS_SHARED }, { "MNT_DETACH", MNT_DETACH },
    { "LOCK_SH", LOCK_SH }, { "LOCK_EX", LOCK_EX }, { "LOCK_NB", LOCK_NB }, { "LOCK_UN", LOCK_UN },
    { "AF_NETLINK", AF_NETLINK }, { "SOCK_RAW", SOCK_RAW }, { "SOL_SOCKET", SOL_SOCKET },
    { "SO_SNDBUF", SO_SNDBUF }, { "SO_RCVBUF", SO_RCVBUF }, { "SOL_NETLINK", SOL_NETLINK },
};

JNIEXPORT jlong JNICALL Java_io_jcni_linux_Native_constant(JNIEnv *env, jclass cls, jstring name) {
    (void) cls;
    jpath n;
    if (!require(env, name, "constant") || !path_get(env, name, &n)) return -1;
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        if (strcmp(constants[i].name, n.c) == 0) {
            path_release(env, &n);
            return (jlong) constants[i].value;
        }
    }
    throw_errno(env, ENOENT, "libjcni has no constant %s", n.c);
    path_release(env, &n);
    return -1;
}

JNIEXPORT jstring JNICALL Java_io_jcni_linux_Native_errnoName(JNIEnv *env, jclass cls, jint err) {
    (void) cls;
    const char *name = strerrorname_np(err);
    return name == NULL ? NULL : (*env)->NewStringUTF(env, name);
}

JNIEXPORT jstring JNICALL Java_io_jcni_linux_Native_strerror(JNIEnv *env, jclass cls, jint err) {
    (void) cls;
    char buf[256];
    return (*env)->NewStringUTF(env, strerror_r(err, buf, sizeof buf));
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/*
 * The cookie of the calling thread's network namespace (SO_NETNS_COOKIE, Linux 5.14): a number
 * the kernel never hands out twice until reboot, unlike the namespace's inode. 0 when the kernel
 * does not know the option.
 */
JNIEXPORT jlong JNICALL Java_io_jcni_linux_Native_netnsCookie(JNIEnv *env, jclass cls) {
    (void) cls;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        throw_errno(env, errno, "socket(AF_UNIX) for the netns cookie");
        return 0;
    }
    unsigned long long cookie = 0;
    socklen_t len = sizeof cookie;
    int rc = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len);
    int err = errno;
    close(fd);
    if (rc < 0) {
        if (err == ENOPROTOOPT) return 0;
        throw_errno(env, err, "getsockopt SO_NETNS_COOKIE");
        return 0;
    }
    return (jlong) cookie;
}

/*
 * Sends one finished netlink request (NETLINK_ROUTE) about delay_millis from now, from a detached
 * grandchild of this process, in the calling thread's network namespace, and returns at once.
 * For a standalone plugin, whose process ends with its answer and whose runtime waits for that
 * end: the kernel's slow part of a deletion (RCU grace periods) then happens after the answer,
 * as jcnid does it on a thread. The grandchild only makes system calls (it is the copy of one
 * thread of a JVM: no malloc, no locks), closes every descriptor first (the runtime reads our
 * stdout and stderr until they close) and starts its own session. Its answer is read and ignored:
 * ENODEV (nothing left to delete) is the usual one.
 */
JNIEXPORT void JNICALL Java_io_jcni_linux_Native_sendDetached(JNIEnv *env, jclass cls, jbyteArray request, jint delay_millis) {
    (void) cls;
    jsize len = (*env)->GetArrayLength(env, request);
    char *msg = malloc((size_t) len);
    if (msg == NULL) {
        throw_errno(env, ENOMEM, "detached netlink request");
        return;
    }
    (*env)->GetByteArrayRegion(env, request, 0, len, (jbyte *) msg);
    pid_t child = fork();
    if (child < 0) {
        int err = errno;
        free(msg);
        throw_errno(env, err, "fork for a detached netlink request");
        return;
    }
    if (child == 0) {
        if (fork() != 0) _exit(0); /* the grandchild goes on, reparented: nobody waits for it */
        setsid();
        close_range(0, ~0U, 0);
        struct timespec wait = { .tv_sec = delay_millis / 1000, .tv_nsec = (long) (delay_millis % 1000) * 1000000L };
        while (nanosleep(&wait, &wait) < 0 && errno == EINTR) {}
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0) _exit(1);
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        if (sendto(fd, msg, (size_t) len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0) _exit(1);
        char answer[1024];
        (void) recv(fd, answer, sizeof answer, 0);
        _exit(0);
    }
    free(msg);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
}
