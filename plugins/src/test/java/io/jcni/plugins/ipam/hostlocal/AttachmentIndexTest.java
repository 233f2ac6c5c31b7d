package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jcni.types.Attachment;
import io.jcni.types.IpAddr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The attachment index is a hint: a damaged entry reads as none (the reservations decide) and GC drops it. */
class AttachmentIndexTest {
    @TempDir
    Path dataDir;

    @Test
    void aDamagedEntryIsNoHintAndGcDropsIt() throws Exception {
        AttachmentIndex index = new AttachmentIndex(dataDir, "net");
        index.put("c1", "eth0", List.of(IpAddr.parse("10.0.0.2")));
        assertEquals(List.of(IpAddr.parse("10.0.0.2")), index.get("c1", "eth0"));
        Path entry;
        try (var files = Files.list(index.directory())) {
            entry = files.findFirst().orElseThrow();
        }
        for (String damaged : List.of("", "{\"containerID\":\"c1\",\"ifna", "c1 eth0 10.0.0.2", "[\"c1\"]",
                "{\"containerID\":1,\"ifname\":\"eth0\",\"ips\":[\"10.0.0.2\"]}", "{\"containerID\":\"c1\",\"ifname\":\"eth0\",\"ips\":\"10.0.0.2\"}",
                "{\"containerID\":\"c1\",\"ifname\":\"eth0\",\"ips\":[10]}", "{\"ifname\":\"eth0\",\"ips\":[\"10.0.0.2\"]}")) {
            Files.writeString(entry, damaged);
            assertEquals(List.of(), index.get("c1", "eth0"), damaged);
        }
        index.retainOnly(Set.of(new Attachment("c1", "eth0")));
        assertFalse(Files.exists(entry), "GC drops a damaged entry even of a valid attachment: it is only a hint");
        index.put("c1", "eth0", List.of(IpAddr.parse("10.0.0.3")));
        assertEquals(List.of(IpAddr.parse("10.0.0.3")), index.get("c1", "eth0"));
    }

    /** A writer killed between writing and renaming leaves the temporary file: the attachment's DEL removes it, not only GC. */
    @Test
    void deleteRemovesTheTemporaryFileOfAKilledWriter() throws Exception {
        AttachmentIndex index = new AttachmentIndex(dataDir, "net");
        index.put("c1", "eth0", List.of(IpAddr.parse("10.0.0.2")));
        Path entry;
        try (var files = Files.list(index.directory())) {
            entry = files.findFirst().orElseThrow();
        }
        Path leftover = io.jcni.common.AtomicFile.lockedTemporary(entry);
        Files.writeString(leftover, "{\"containerID\":\"c1\""); // what a killed put left
        index.put("c1", "eth0", List.of(IpAddr.parse("10.0.0.2"), IpAddr.parse("10.0.0.3"))); // a later write replaces it
        assertEquals(List.of(IpAddr.parse("10.0.0.2"), IpAddr.parse("10.0.0.3")), index.get("c1", "eth0"));
        Files.writeString(leftover, "{\"containerID\":\"c1\"");
        index.delete("c1", "eth0");
        try (var files = Files.list(index.directory())) {
            assertEquals(List.of(), files.toList());
        }
    }
}
