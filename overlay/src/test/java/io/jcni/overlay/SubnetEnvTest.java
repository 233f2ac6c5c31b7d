package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.meta.flannel.SubnetFile;
import io.jcni.types.Cidr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SubnetEnvTest {
    @Test
    void formatIsFlanneldsByteForByte(@TempDir Path dir) throws Exception {
        SubnetFile e = new SubnetFile(Cidr.parse("10.5.0.0/16"), Cidr.parse("10.5.1.0/24"), 1450, true);
        String expected = "FLANNEL_NETWORK=10.5.0.0/16\nFLANNEL_SUBNET=10.5.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
        assertEquals(expected, e.format());
        Path f = dir.resolve("run/flannel/subnet.env");
        SubnetEnv.write(f, e);
        assertEquals(expected, Files.readString(f));
        try (var s = Files.list(f.getParent())) {
            assertEquals(List.of(f), s.toList(), "no temporary file left");
        }
        SubnetFile back = SubnetEnv.read(f);
        assertEquals(Cidr.parse("10.5.1.0/24"), back.subnet().masked());
        assertEquals(1450, back.mtu());
        assertTrue(back.ipMasq());
    }

    @Test
    void masqueradeRulesAreFlanneldsFour() {
        String s = OverlayMasq.setup(Cidr.parse("10.5.0.0/16"), Cidr.parse("10.5.1.0/24"));
        assertEquals("""
                add table inet jcni
                add chain inet jcni overlay_masq { type nat hook postrouting priority 100; policy accept; }
                flush chain inet jcni overlay_masq
                add rule inet jcni overlay_masq ip saddr 10.5.0.0/16 ip daddr 10.5.0.0/16 return
                add rule inet jcni overlay_masq ip saddr 10.5.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random
                add rule inet jcni overlay_masq ip saddr != 10.5.0.0/16 ip daddr 10.5.1.0/24 return
                add rule inet jcni overlay_masq ip saddr != 10.5.0.0/16 ip daddr 10.5.0.0/16 masquerade fully-random
                """, s);
        assertTrue(OverlayMasq.teardown().endsWith("delete chain inet jcni overlay_masq\n"));
    }

    @Test
    void agentOptionsUseFlanneldsNames() {
        AgentOptions o = AgentOptions.parse(List.of("--etcd-endpoints", "http://10.0.0.1:2379,http://10.0.0.2:2379", "--etcd-prefix", "/x/network/",
                "--iface", "eth1", "--public-ip", "10.0.0.9", "--subnet-file", "/tmp/s.env", "--ip-masq", "--subnet-lease-ttl", "5"));
        assertEquals(List.of("http://10.0.0.1:2379", "http://10.0.0.2:2379"), o.etcdEndpoints());
        assertEquals("/x/network/config", o.configKey());
        assertEquals("eth1", o.iface());
        assertTrue(o.ipMasq());
        assertEquals(5, o.leaseTtl().toSeconds());
        AgentOptions d = AgentOptions.parse(List.of());
        assertEquals("/coreos.com/network", d.etcdPrefix());
        assertEquals(Path.of("/run/flannel/subnet.env"), d.subnetFile());
        AgentOptions r = AgentOptions.parse(List.of("--ipam-prefix", "/x/ipam/", "--ipam-host", "node-3", "--ipam-reconcile-every", "0",
                "--ipam-grace", "30"));
        assertEquals("/x/ipam", r.ipamPrefix());
        assertEquals("node-3", r.ipamHost());
        assertEquals(java.time.Duration.ZERO, r.ipamReconcile());
        assertEquals(java.time.Duration.ofSeconds(30), r.ipamGrace());
        assertEquals("/jcni/ipam", d.ipamPrefix());
        assertEquals(java.time.Duration.ofSeconds(60), d.ipamReconcile());
        assertEquals(java.time.Duration.ofMinutes(2), d.ipamGrace());
        assertEquals(java.time.Duration.ofMinutes(15), d.watchDeadline());
        assertEquals(java.time.Duration.ofSeconds(20), AgentOptions.parse(List.of("--watch-deadline", "20")).watchDeadline());
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--watch-deadline", "0")));
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--ipam-host", "a/b")));
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--kube-subnet-mgr")));
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--subnet-lease-ttl", "1")));
    }
}
