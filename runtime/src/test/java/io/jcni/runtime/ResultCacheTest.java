package io.jcni.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniException;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultCacheTest {

    @TempDir
    Path dir;

    /** A cache file as libcni (Go encoding/json of cachedInfo) writes it. */
    static final String LIBCNI_FILE = "{\"kind\":\"cniCacheV1\",\"containerId\":\"abc123\","
            + "\"config\":\"eyJjbmlWZXJzaW9uIjoiMS4wLjAiLCJuYW1lIjoicG9kbWFuIn0=\",\"ifName\":\"eth0\",\"networkName\":\"podman\","
            + "\"netns\":\"/run/netns/netns-1\",\"cniArgs\":[[\"IgnoreUnknown\",\"1\"],[\"K8S_POD_NAME\",\"web\"]],"
            + "\"capabilityArgs\":{\"portMappings\":[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\",\"hostIP\":\"\"}]},"
            + "\"result\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"cni-podman0\",\"mac\":\"de:ad:be:ef:00:01\"}],"
            + "\"ips\":[{\"address\":\"10.88.0.3/16\",\"gateway\":\"10.88.0.1\",\"interface\":0}],\"dns\":{}}}";

    @Test
    void readsWhatLibcniWrites() throws Exception {
        ResultCache c = new ResultCache(dir);
        Path f = dir.resolve("results/podman-abc123-eth0");
        Files.createDirectories(f.getParent());
        Files.writeString(f, LIBCNI_FILE);
        CacheEntry e = c.get("podman", "abc123", "eth0").orElseThrow();
        assertEquals("{\"cniVersion\":\"1.0.0\",\"name\":\"podman\"}", new String(e.config(), StandardCharsets.UTF_8));
        assertEquals(List.of(Map.entry("IgnoreUnknown", "1"), Map.entry("K8S_POD_NAME", "web")), e.cniArgs());
        assertEquals("/run/netns/netns-1", e.netns());
        assertEquals("10.88.0.3/16", e.decodedResult().ips().getFirst().address().toString());
        assertEquals(List.of(e), c.list(null));
        assertEquals(List.of(e), c.list("abc123"));
        assertEquals(List.of(), c.list("abc"));
        // and writes the same document back
        c.put(e);
        assertEquals(Json.parseObject(LIBCNI_FILE), Json.parseObject(Files.readString(f)));
    }

    @Test
    void roundTripAtLibcnisPathWithMode0600() throws Exception {
        ResultCache c = new ResultCache(dir.resolve("cache"));
        CacheEntry e = new CacheEntry("ctr", "{\"name\":\"n\"}".getBytes(StandardCharsets.UTF_8), "net1", "n", "",
                List.of(), Map.of(), Json.parseObject("{\"cniVersion\":\"0.4.0\",\"dns\":{}}"));
        c.put(e);
        Path f = dir.resolve("cache/results/n-ctr-net1");
        assertTrue(Files.isRegularFile(f));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f.getParent())));
        Map<String, Object> json = Json.parseObject(Files.readString(f));
        assertEquals(List.of("kind", "containerId", "config", "ifName", "networkName", "result"), List.copyOf(json.keySet()),
                "empty netns, cniArgs and capabilityArgs are omitted, as Go's omitempty does");
        assertEquals(e, c.get("n", "ctr", "net1").orElseThrow());
        try (var s = Files.list(f.getParent())) {
            assertEquals(1, s.count(), "no temporary file is left behind");
        }
        assertTrue(c.remove("n", "ctr", "net1"));
        assertFalse(c.remove("n", "ctr", "net1"));
        assertTrue(c.get("n", "ctr", "net1").isEmpty());
    }

    /** Found by chaos kill points: a runtime killed between writing the temporary file and renaming it. */
    @Test
    void removeTakesTheTemporaryFilesAKilledPutLeft() throws Exception {
        ResultCache c = new ResultCache(dir);
        Path results = dir.resolve("results");
        Files.createDirectories(results);
        Files.writeString(results.resolve(".n-ctr-net1.tmp-44105de91060490c"), "{");
        Files.writeString(results.resolve(".n-ctr2-net1.tmp-1"), "{"); // another attachment's
        assertFalse(c.remove("n", "ctr", "net1"), "no entry");
        try (var s = Files.list(results)) {
            assertEquals(List.of(".n-ctr2-net1.tmp-1"), s.map(p -> p.getFileName().toString()).toList());
        }
    }

    /**
     * Found by chaos kill points through GC: the temporary file of a writer that is gone is
     * removed by GC, whose attachment may never see a DEL; a live writer's and an unnamed one stay.
     */
    @Test
    void gcRemovesTheTemporaryFilesOfWritersThatAreGone() throws Exception {
        ResultCache c = new ResultCache(dir);
        Path results = dir.resolve("results");
        Files.createDirectories(results);
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Files.writeString(results.resolve(".n-ctr-net1.tmp-" + gone.pid() + "-44105de91060490c"), "{");
        String live = ".n-ctr2-net1.tmp-" + ProcessHandle.current().pid() + "-1";
        Files.writeString(results.resolve(live), "{");
        Files.writeString(results.resolve(".n-ctr3-net1.tmp-44105de91060490c"), "{"); // no pid in the name
        assertEquals(1, c.removeAbandonedTemporaries());
        try (var s = Files.list(results)) {
            assertEquals(List.of(live, ".n-ctr3-net1.tmp-44105de91060490c"), s.map(p -> p.getFileName().toString()).sorted().toList());
        }
        assertEquals(4242, io.jcni.common.AtomicFile.writerPid(".a-b-c.tmp-4242-ff"));
        assertEquals(-1, io.jcni.common.AtomicFile.writerPid("a-b-c"));
    }

    @Test
    void legacyResultOnlyFileAndWrongKind() throws Exception {
        ResultCache c = new ResultCache(dir);
        Path f = c.file("n", "c", "eth0");
        Files.createDirectories(f.getParent());
        Files.writeString(f, "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.0.0.2/24\"}],\"dns\":{}}");
        CacheEntry legacy = c.get("n", "c", "eth0").orElseThrow();
        assertEquals("0.3.1", legacy.result().get("cniVersion"));
        assertNull(legacy.decodedResult().ips().getFirst().gateway());
        assertTrue(c.list(null).isEmpty(), "listing skips pre-cniCacheV1 files, as libcni does");

        Files.writeString(f, "{\"kind\":\"cniCacheV2\"}");
        CniException e = assertThrows(CniException.class, () -> c.get("n", "c", "eth0"));
        assertTrue(e.getMessage().contains("wrong kind"), e.getMessage());
    }

    @Test
    void pathNeedsAllThreeParts() {
        ResultCache c = new ResultCache(dir);
        assertThrows(CniException.class, () -> c.file("n", "", "eth0"));
        assertEquals(dir.resolve("results/a-b-c"), c.file("a", "b", "c"));
        assertEquals(ResultCache.DEFAULT_DIR, new ResultCache(null).cacheDir());
    }

    /** Names libcni would splice into a path unchecked are refused; long ones (the reference accepts them) fit NAME_MAX. */
    @Test
    void hostileNamesAreRefusedAndLongOnesAreHashed() {
        ResultCache c = new ResultCache(dir);
        assertThrows(CniException.class, () -> c.file("n", "../../etc", "eth0"));
        assertThrows(CniException.class, () -> c.file("../x", "c", "eth0"));
        assertThrows(CniException.class, () -> c.file("n", "c", "a/b"));

        String net = "n".repeat(200);
        String cid = "c".repeat(4096);
        Path f = c.file(net, cid, "eth0");
        assertTrue(f.getFileName().toString().length() <= ResultCache.MAX_FILE_NAME + 1 + 64, f.toString());
        CacheEntry e = new CacheEntry(cid, "{}".getBytes(StandardCharsets.UTF_8), "eth0", net, "", List.of(), Map.of(), null);
        c.put(e);
        assertEquals(e, c.get(net, cid, "eth0").orElseThrow());
        assertEquals(List.of(e), c.list(cid));
        assertTrue(c.remove(net, cid, "eth0"));
    }

    @Test
    void configBytesSurviveBase64() {
        byte[] raw = new byte[256];
        for (int i = 0; i < raw.length; i++) raw[i] = (byte) i;
        CacheEntry e = new CacheEntry("c", raw, "eth0", "n", "", List.of(), Map.of(), null);
        CacheEntry back = CacheEntry.fromJson(Json.parseObject(Json.write(e.toJson())), "t");
        assertArrayEquals(raw, back.config());
    }
}
