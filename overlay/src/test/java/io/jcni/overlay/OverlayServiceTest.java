package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.daemon.DaemonConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** jcnid's command line accepts the overlay's flags when this module is on its classpath. */
class OverlayServiceTest {
    @Test
    void jcnidTakesTheOverlayFlags() {
        DaemonConfig c = DaemonConfig.parse(List.of("--socket", "/tmp/x/jcnid.sock", "--overlay", "--etcd-endpoints=http://10.0.0.1:2379",
                "--ip-masq=false", "--iface", "eth0", "--ip-masq"));
        assertEquals(List.of("--overlay", "--etcd-endpoints", "http://10.0.0.1:2379", "--iface", "eth0", "--ip-masq"), c.serviceArgs());
        assertTrue(c.toArgs().containsAll(c.serviceArgs()), "the detached child gets them too");
        assertEquals(c, DaemonConfig.parse(c.toArgs()));
        // flanneld's repeatable underlay flags reach the agent in order, --flag=value too
        DaemonConfig u = DaemonConfig.parse(List.of("--overlay", "--iface", "wlan0", "--iface-regex=^10\\.", "--iface", "eth1",
                "--iface-can-reach", "192.0.2.1"));
        assertEquals(new UnderlayChoice(List.of("wlan0", "eth1"), List.of("^10\\."), "192.0.2.1"),
                AgentOptions.parse(u.serviceArgs().subList(1, u.serviceArgs().size())).underlayChoice());
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--kube-subnet-mgr")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--ip-masq=maybe")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--etcd-prefix")));
    }
}
