package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class NetnsTest {

    @Test
    void createIsVisibleToIproute2AndDeleteRemovesIt() {
        String name = Scratch.uniqueName();
        try (Netns ns = Netns.create(name)) {
            assertTrue(Scratch.exec(List.of("ip", "netns", "list")).contains(name));
            assertTrue(Files.exists(Netns.pathOf(name)));
            // iproute2 can work inside it: the bind mount holds a real namespace.
            Scratch.exec(List.of("ip", "-n", name, "link", "set", "lo", "up"));
            try (Rtnl rt = Rtnl.open(ns)) {
                assertTrue(rt.link("lo").up());
            }
        } finally {
            Netns.delete(name);
        }
        assertFalse(Files.exists(Netns.pathOf(name)));
        assertFalse(Scratch.exec(List.of("ip", "netns", "list")).contains(name));
    }

    @Test
    void anAnonymousNamespaceIsNewNamelessAndUsable() {
        try (Netns a = Netns.createAnonymous(); Netns b = Netns.createAnonymous(); Netns here = Netns.current()) {
            assertFalse(a.sameAs(here));
            assertFalse(a.sameAs(b));
            try (Rtnl rt = Rtnl.open(a)) {
                assertEquals(List.of("lo"), rt.links().stream().map(Link::name).toList());
                rt.addVeth("jl-anon0", "jl-anon1", null, 0, null);
                assertEquals(3, rt.links().size());
            }
            // No name: nothing under /var/run/netns to leak if the process dies.
            assertEquals("anonymous netns", a.path());
        }
    }

    @Test
    void createTwiceIsEexistAndDeleteMissingIsEnoent() {
        try (Scratch s = Scratch.create()) {
            ErrnoException e = assertThrows(ErrnoException.class, () -> Netns.create(s.name));
            assertEquals(Errno.EEXIST, e.errno());
            assertEquals("EEXIST", e.errnoName());
            assertTrue(e.getMessage().startsWith("create netns " + s.name + ": EEXIST"), e.getMessage());
        }
        ErrnoException e = assertThrows(ErrnoException.class, () -> Netns.delete("jl-no-such-ns"));
        assertEquals(Errno.ENOENT, e.errno());
    }

    @Test
    void badPathsNameTheErrno() throws IOException {
        ErrnoException missing = assertThrows(ErrnoException.class, () -> Netns.open("/var/run/netns/jl-missing"));
        assertEquals(Errno.ENOENT, missing.errno());
        assertEquals("open netns /var/run/netns/jl-missing: ENOENT (No such file or directory)", missing.getMessage());

        Path plain = Files.createTempFile("jl-notns", "");
        try {
            ErrnoException notNs = assertThrows(ErrnoException.class, () -> Netns.open(plain.toString()));
            assertEquals(Errno.EINVAL, notNs.errno());
        } finally {
            Files.delete(plain);
        }
        // A FIFO would block open(2) until a writer comes; devices may act on open: neither is opened.
        Path fifo = Files.createTempDirectory("jl-fifo").resolve("netns");
        try {
            assertEquals(0, Scratch.exitCode(List.of("mkfifo", fifo.toString())));
            for (String p : List.of(fifo.toString(), "/dev/zero", "/dev/null")) {
                ErrnoException e = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(30),
                        () -> assertThrows(ErrnoException.class, () -> Netns.open(p)));
                assertEquals(Errno.EINVAL, e.errno(), p);
                assertTrue(e.getMessage().contains("not a namespace file (file system magic"), e.getMessage());
            }
        } finally {
            Files.deleteIfExists(fifo);
            Files.delete(fifo.getParent());
        }
        // A namespace, but not a network one.
        ErrnoException wrongType = assertThrows(ErrnoException.class, () -> Netns.open("/proc/self/ns/uts"));
        assertEquals(Errno.EINVAL, wrongType.errno());
    }

    @Test
    void runExecutesInsideTheNamespaceOnOneDedicatedPlatformThread() throws Exception {
        try (Scratch s = Scratch.create(); Netns here = Netns.current()) {
            long inside = s.ns.run(() -> {
                try (Netns cur = Netns.current()) {
                    return cur.inode();
                }
            });
            assertEquals(s.ns.inode(), inside);
            assertNotEquals(here.inode(), inside);
            // The caller's thread did not move.
            try (Netns after = Netns.current()) {
                assertTrue(after.sameAs(here));
            }
            Thread t1 = s.ns.run(Thread::currentThread);
            Thread t2 = s.ns.run(Thread::currentThread);
            assertSame(t1, t2);
            assertFalse(t1.isVirtual());
            // Nested calls from the namespace thread run directly instead of deadlocking.
            assertEquals(42, s.ns.run(() -> s.ns.run(() -> 42)));
        }
    }

    @Test
    void runFromAVirtualThreadWorks() throws Exception {
        try (Scratch s = Scratch.create()) {
            AtomicReference<Long> seen = new AtomicReference<>();
            Thread v = Thread.ofVirtual().start(() -> seen.set(s.ns.run(() -> {
                try (Netns cur = Netns.current()) {
                    return cur.inode();
                }
            })));
            v.join(10_000);
            assertEquals(s.ns.inode(), seen.get());
        }
    }

    @Test
    void exceptionsComeBackToTheCaller() {
        try (Scratch s = Scratch.create()) {
            IOException checked = assertThrows(IOException.class, () -> s.ns.run(() -> {
                throw new IOException("boom");
            }));
            assertEquals("boom", checked.getMessage());
            ErrnoException errno = assertThrows(ErrnoException.class, () -> s.ns.exec(() -> {
                try (Rtnl rt = Rtnl.open()) {
                    rt.link("nope0");
                }
            }));
            assertEquals(Errno.ENODEV, errno.errno());
            // The namespace thread survives a failing task.
            assertEquals(7, s.ns.run(() -> 7));
        }
    }

    @Test
    void descriptorsAndThreadsDoNotLeak() {
        // Warm up class loading and the native library so later counts compare like with like.
        try (Scratch s = Scratch.create()) {
            s.ns.run(() -> 1);
        }
        int fdsBefore = Scratch.openFdCount();
        long threadsBefore = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("jcni-netns")).count();
        for (int i = 0; i < 5; i++) {
            try (Scratch s = Scratch.create()) {
                s.ns.run(() -> s.rt.links().size());
            }
        }
        assertEquals(fdsBefore, Scratch.openFdCount());
        long threadsAfter = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("jcni-netns") && t.isAlive()).count();
        assertEquals(threadsBefore, threadsAfter);
    }

    @Test
    void closedNamespaceRefusesWork() {
        Netns ns = Netns.current();
        ns.close();
        ns.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> ns.run(() -> 1));
    }

    @Test
    void rtnlOpenedForANamespaceSeesOnlyThatNamespace() {
        try (Scratch a = Scratch.create(); Scratch b = Scratch.create()) {
            a.rt.addLink(NewLink.bridge("br-a"));
            assertTrue(a.rt.findLink("br-a").isPresent());
            assertTrue(b.rt.findLink("br-a").isEmpty());
            // Used from this (root-namespace) thread, the socket still talks to its namespace.
            assertEquals(List.of("br-a", "lo"), a.rt.links().stream().map(Link::name).sorted().toList());
        }
    }
}
