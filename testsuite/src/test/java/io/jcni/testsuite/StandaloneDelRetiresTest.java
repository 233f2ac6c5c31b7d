package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testkit.Installed;
import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A standalone plugin process (no jcnid: the shim falls back) answers DEL once the attachment's
 * address is released and its interface retired, and leaves the kernel's slow deletion of the veth
 * to a detached process: right after DEL the same container and ifname can be added
 * again, and a moment later no retired veth is left.
 */
@Tag("root")
class StandaloneDelRetiresTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    void delAnswersBeforeTheDeletionAndTheDeletionFollows() throws Exception {
        try (World w = new World()) {
            String conf = """
                {"cniVersion":"1.1.0","name":"net%s","type":"bridge","bridge":"jtsr%s","isGateway":true,
                 "ipam":{"type":"host-local","subnet":"10.128.0.0/24","dataDir":"%s"}}
                """.formatted(w.id, w.id.substring(0, 4), w.dir.resolve("ipam"));
            String netns = w.container(0);
            String bridge = jcni.plugin("bridge").toString();
            Map<String, String> add = World.cniEnv("ADD", "c0", netns, "eth0", jcni.bin.toString());
            Map<String, String> del = World.cniEnv("DEL", "c0", netns, "eth0", jcni.bin.toString());
            for (int round = 0; round < 3; round++) {
                w.inHost(add, conf, bridge).ok();
                w.inHost(del, conf, bridge).ok();
                // What DEL promises, at once: the address released, CNI_IFNAME gone from the container,
                // and every veth still in the host namespace retired (in the group deleted right after).
                assertEquals(List.of(), allocations(w), "round " + round);
                assertNotEquals(0, Sh.run("ip", "-n", Path.of(netns).getFileName().toString(), "link", "show", "eth0").rc(),
                        "eth0 is gone from the container at once");
                // One listing, each veth's group read from it: two listings (all, then the retired group)
                // raced the detached deletion, which may run between them on a loaded machine.
                String veths = w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip();
                for (String veth : veths.lines().toList()) {
                    assertTrue(veth.contains(" group " + RetiredLinks.GROUP + " "), "only retired veths are left right after DEL: " + veth);
                }
            }
            // The rounds above re-added the same container and ifname right after each DEL.
            RetiredLinks.awaitNone(w.host);
            assertEquals("", w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip());
            String inContainer = Sh.ok("ip", "-n", Path.of(netns).getFileName().toString(), "-o", "link", "show");
            assertTrue(inContainer.lines().allMatch(l -> l.contains(": lo:")), "the retired container ends went with their pairs: " + inContainer);
        }
    }

    private static List<String> allocations(World w) throws Exception {
        Path net = w.dir.resolve("ipam").resolve("net" + w.id);
        if (!Files.isDirectory(net)) return List.of();
        try (Stream<Path> s = Files.list(net)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip")).toList();
        }
    }
}
