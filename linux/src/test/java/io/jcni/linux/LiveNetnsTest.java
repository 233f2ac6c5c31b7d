package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LiveNetnsTest {
    @Test
    void mountinfoNetnsBindMounts() {
        String info = """
                22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
                512 30 0:4 net:[4026532456] /run/netns/a rw shared:5 - nsfs nsfs rw
                513 30 0:4 net:[4026532999] /run/netns/with\\040space rw - nsfs nsfs rw
                514 30 0:4 mnt:[4026532111] /run/x rw - nsfs nsfs rw
                515 30 0:22 / /proc rw,nosuid - proc proc rw
                """;
        assertEquals(Map.of(4026532456L, "/run/netns/a", 4026532999L, "/run/netns/with space"), LiveNetns.netnsMounts(info));
    }

    @Test
    void namespaceLinks() {
        assertEquals(4026531840L, LiveNetns.inodeIn("net:[4026531840]", "net"));
        assertNull(LiveNetns.inodeIn("mnt:[4026531840]", "net"));
        assertNull(LiveNetns.inodeIn("net:[]", "net"));
        assertNull(LiveNetns.inodeIn("socket:[123]", "net"));
    }

    /** The scan finds this process's own namespace, through a path that opens it. */
    @Test
    void scanFindsOurOwnNamespace() throws Exception {
        long own = LiveNetns.inodeIn(Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString(), "net");
        Map<Long, String> live = LiveNetns.scan();
        assertTrue(live.containsKey(own), live.toString());
        assertTrue(LiveNetns.seesEveryProcess() || !live.isEmpty());
    }
}
