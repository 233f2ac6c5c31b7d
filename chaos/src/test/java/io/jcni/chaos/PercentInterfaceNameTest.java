package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code CNI_IFNAME=eth%d}. The kernel expands {@code %d} in a new link's name, so the
 * container interface would get a name the plugin never asked for; through jcnid that leaked the
 * host veth. jcni refuses '%' in interface names (code 4 from the environment, code 7 from a
 * config): nothing may be created, in the standalone plugin and through jcnid alike.
 */
@Tag("root")
class PercentInterfaceNameTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    void standalonePluginRefusesAndLeavesNothing() throws Exception {
        check(false);
    }

    @Test
    void throughJcnidRefusesAndLeavesNothing() throws Exception {
        check(true);
    }

    private void check(boolean daemon) throws Exception {
        try (World w = new World()) {
            ChainNetwork net = new ChainNetwork(w, jcni);
            String c = w.container(1);
            Jcnid jcnid = daemon ? Jcnid.start(jcni, w.dir.resolve("jcnid.log")) : null;
            try {
                Leaks before = Leaks.count(net, List.of(c));
                for (String ifname : List.of("eth%d", "e%s", "%d")) {
                    Sh.Run r = bridge(net, daemon, ifname, "eth0", c);
                    assertNotEquals(0, r.rc(), r.toString());
                    assertEquals(4L, ((Number) Json.parseObject(r.out()).get("code")).longValue(), r.toString());
                    assertTrue(r.out().contains("'%'"), r.out());
                }
                // the same through the config: a bridge named br%d
                Sh.Run r = bridge(net, daemon, "eth0", "jbr%d", c);
                assertEquals(7L, ((Number) Json.parseObject(r.out()).get("code")).longValue(), r.toString());
                assertEquals(before, Leaks.count(net, List.of(c)), "nothing created");
                assertEquals(List.of(), Sh.lines(Sh.ok("ip", "-n", w.host, "-o", "link", "show", "type", "bridge")), "no bridge created");
            } finally {
                if (jcnid != null) jcnid.close();
            }
        }
    }

    /**
     * The bridge plugin (with host-local) for one ADD: the installed standalone JVM plugin, or the
     * installed shim with jcnid running and no fallback (so only the daemon can answer).
     */
    private static Sh.Run bridge(ChainNetwork net, boolean daemon, String ifname, String bridgeName, String netns) {
        String conf = """
            {"cniVersion":"1.1.0","name":"%1$s","type":"bridge","bridge":"%2$s","isGateway":true,"ipMasq":true,"dataDir":"%4$s",
             "ipam":{"type":"host-local","ranges":[[{"subnet":"10.141.0.0/16"}]],"dataDir":"%3$s"}}
            """.formatted(net.name, bridgeName, net.ipamDir, net.nftDir);
        Map<String, String> env = new java.util.HashMap<>(World.cniEnv("ADD", "pct" + net.world.id, netns, ifname, jcni.bin.toString()));
        String exe;
        if (daemon) {
            exe = jcni.plugin("bridge").toString();
            env.put("JCNI_LIBEXEC", net.world.dir.resolve("no-fallback").toString());
        } else {
            exe = jcni.root.resolve("jcni/libexec/bridge").toString();
        }
        return net.world.inHost(env, conf, exe);
    }
}
