package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class SysctlTest {

    @Test
    void procSysNetFollowsTheCallingThreadsNamespace() {
        String rootForwarding = Sysctl.get("net.ipv4.ip_forward"); // read only: the root namespace is never changed
        try (Scratch a = Scratch.create(); Scratch b = Scratch.create()) {
            String flipped = "1".equals(rootForwarding) ? "0" : "1";
            Sysctl.set(a.ns, "net.ipv4.ip_forward", flipped);
            assertEquals(flipped, Sysctl.get(a.ns, "net.ipv4.ip_forward"));
            assertEquals(flipped, Scratch.exec(List.of("ip", "netns", "exec", a.name, "cat", "/proc/sys/net/ipv4/ip_forward")).trim());
            assertEquals(rootForwarding, Sysctl.get("net.ipv4.ip_forward"));
            assertEquals(Scratch.exec(List.of("ip", "netns", "exec", b.name, "cat", "/proc/sys/net/ipv4/ip_forward")).trim(),
                    Sysctl.get(b.ns, "net.ipv4.ip_forward"));
        }
    }

    @Test
    void multiCharacterValuesAreReadWhole() {
        try (Scratch s = Scratch.create()) {
            // /proc/sys files report size 0; a size-trusting read would return "4" here.
            Sysctl.set(s.ns, "net.core.somaxconn", "4321");
            assertEquals("4321", Sysctl.get(s.ns, "net.core.somaxconn"));
            assertEquals(Scratch.exec(List.of("ip", "netns", "exec", s.name, "sysctl", "-n", "net.ipv4.ip_local_port_range")).trim(),
                    Sysctl.get(s.ns, "net.ipv4.ip_local_port_range"));
        }
    }

    @Test
    void perInterfaceKeysExistOnlyWhereTheInterfaceIs() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("sx0.5", "sx1"));
            // A dotted interface name needs the slash form.
            String key = "net/ipv6/conf/sx0.5/disable_ipv6";
            assertEquals("0", Sysctl.get(s.ns, key));
            Sysctl.set(s.ns, key, "1");
            assertEquals("1", Sysctl.get(s.ns, key));
            Sysctl.set(s.ns, "net.ipv6.conf.sx1.accept_dad", "0");
            assertEquals("0", Sysctl.get(s.ns, "net.ipv6.conf.sx1.accept_dad"));
            assertEquals("1", Scratch.exec(List.of("ip", "netns", "exec", s.name, "sysctl", "-n",
                    "net.ipv6.conf.sx0/5.disable_ipv6")).trim());
            assertFalse(Files.exists(Sysctl.path(key)), "the root namespace has no sx0.5");
            ErrnoException e = assertThrows(ErrnoException.class, () -> Sysctl.get(key));
            assertEquals(Errno.ENOENT, e.errno());
        }
    }

    @Test
    void badValuesAndKeys() {
        try (Scratch s = Scratch.create()) {
            ErrnoException bad = assertThrows(ErrnoException.class, () -> Sysctl.set(s.ns, "net.ipv4.ip_forward", "banana"));
            assertEquals(Errno.EINVAL, bad.errno());
            assertTrue(bad.getMessage().startsWith("write sysctl net.ipv4.ip_forward=banana: EINVAL"), bad.getMessage());
            assertEquals(Errno.ENOENT, assertThrows(ErrnoException.class, () -> Sysctl.get(s.ns, "net.ipv4.no_such_key")).errno());
            assertThrows(IllegalArgumentException.class, () -> Sysctl.path("net/../../etc/passwd"));
        }
    }

    @Test
    void procNetIsTheProcessesButThreadSelfNetIsTheThreads() throws Exception {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.bridge("onlyhere0"));
            String threadSelf = s.ns.run(() -> Files.readString(java.nio.file.Path.of("/proc/thread-self/net/dev")));
            String procNet = s.ns.run(() -> Files.readString(java.nio.file.Path.of("/proc/net/dev")));
            assertTrue(threadSelf.contains("onlyhere0"));
            assertFalse(procNet.contains("onlyhere0"));
        }
    }
}
