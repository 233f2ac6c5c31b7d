package io.jcni.plugins.common.link;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.Link;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The birth-group arithmetic and the creator check; no root, no kernel changes. */
class BirthMarksTest {

    private static Link veth(int group, String alias) {
        return new Link(7, "veth0a1b2c3d", "veth", 0, 1500, null, 0, 1000, 8, 0, alias, 0, null, group);
    }

    @Test
    void aBirthGroupNamesItsCreatorAndNoOtherGroupIsOne() {
        assertEquals(0x6a0004d2, BirthMarks.groupOf(1234));
        assertEquals(1234, BirthMarks.creatorOf(BirthMarks.groupOf(1234)));
        assertEquals(4194303, BirthMarks.creatorOf(BirthMarks.groupOf(4194303)), "the largest pid_max");
        assertEquals(BirthMarks.BASE, BirthMarks.groupOf(0), "no pid: creator unknown");
        assertEquals(BirthMarks.BASE, BirthMarks.groupOf(1L << 22), "out of range: creator unknown");
        assertEquals(0, BirthMarks.creatorOf(BirthMarks.BASE));
        assertEquals(-1, BirthMarks.creatorOf(0), "the default group");
        assertEquals(-1, BirthMarks.creatorOf(Links.RETIRED_GROUP), "retired links are not marked at birth");
        assertEquals(-1, BirthMarks.creatorOf(BirthMarks.BASE - 1));
        assertEquals(-1, BirthMarks.creatorOf(BirthMarks.BASE + (1 << 22)));
    }

    @Test
    void onlyAnUntaggedVethOfAKnownDeadCreatorIsAnOrphan() {
        int g = BirthMarks.groupOf(1234);
        assertTrue(BirthMarks.isOrphan(veth(g, null), pid -> false));
        assertTrue(BirthMarks.isOrphan(veth(g, ""), pid -> false));
        assertFalse(BirthMarks.isOrphan(veth(g, null), pid -> pid == 1234), "creator alive: an ADD between its two requests");
        assertFalse(BirthMarks.isOrphan(veth(g, "jcni/net/c1/eth0"), pid -> false), "tagged");
        assertFalse(BirthMarks.isOrphan(veth(BirthMarks.BASE, null), pid -> false), "creator unknown");
        assertFalse(BirthMarks.isOrphan(veth(0, null), pid -> false), "an untagged veth in the default group is not ours");
        assertFalse(BirthMarks.isOrphan(veth(Links.RETIRED_GROUP, null), pid -> false), "retired: its own sweep deletes it");
        Link bridge = new Link(7, "br0", "bridge", 0, 1500, null, 0, 1000, 0, -1, null, 0, null, g);
        assertFalse(BirthMarks.isOrphan(bridge, pid -> false), "only veths and ifbs are marked");
        Link ifb = new Link(8, "bwp0123456789ab", "ifb", 0, 1500, null, 0, 1000, 0, -1, null, 0, null, g);
        assertTrue(BirthMarks.isOrphan(ifb, pid -> false), "bandwidth's ifb is born marked too");
    }

    @Test
    void aProcessIsAliveUntilItIsGoneOrAZombie() throws Exception {
        assertTrue(BirthMarks.isAlive(ProcessHandle.current().pid()));
        Process done = new ProcessBuilder("true").start();
        assertTrue(done.waitFor(30, TimeUnit.SECONDS));
        assertFalse(BirthMarks.isAlive(done.pid()), "exited and reaped");

        // `sleep 0` becomes a child of `sleep 5` (sh execs it), which never reaps it: a zombie.
        Process parent = new ProcessBuilder("sh", "-c", "sleep 0 & echo $!; exec sleep 5").start();
        try {
            long zombie;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII))) {
                zombie = Long.parseLong(r.readLine().trim());
                boolean isZombie = false;
                for (int i = 0; i < 500 && !isZombie; i++) {
                    String stat = Files.readString(Path.of("/proc/" + zombie + "/stat"));
                    isZombie = stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
                    if (!isZombie) Thread.sleep(10);
                }
                assertTrue(isZombie, "sleep 0 became a zombie");
                assertFalse(BirthMarks.isAlive(zombie), "a zombie sends no request");
                assertTrue(BirthMarks.isAlive(parent.pid()));
            }
        } finally {
            parent.destroyForcibly();
            parent.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
