package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.IpAddr;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leases on disk: read back as written; a damaged file is named and skipped, and the others still load. */
class LeaseStoreTest {
    @TempDir
    Path dir;

    static Lease lease(String containerId) {
        ClientIdentity id = new ClientIdentity(ClientIdentity.clientId(containerId, "net", "eth0"), new byte[] {2, 0, 0, 0, 0, 7},
                List.of(1, 3, 121), Map.of(DhcpOptions.HOST_NAME, "pod-a".getBytes(StandardCharsets.US_ASCII)));
        return new Lease(containerId, "net", "eth0", "/var/run/netns/c", id, IpAddr.parse("10.0.0.5"), IpAddr.parse("10.0.0.1"),
                Map.of(DhcpOptions.SUBNET_MASK, new byte[] {(byte) 255, (byte) 255, (byte) 255, 0}), new LeaseTimes(1, 2, 3, 4));
    }

    @Test
    void aLeaseReadsBackAsWritten() throws Exception {
        LeaseStore store = new LeaseStore(dir);
        Lease l = lease("c1");
        store.save(l);
        List<Lease> back = store.loadAll(System.err);
        assertEquals(1, back.size());
        Lease r = back.getFirst();
        assertEquals(List.of(l.containerId(), l.network(), l.ifname(), l.netns(), l.clientId(), l.address(), l.server(), l.times()),
                List.of(r.containerId(), r.network(), r.ifname(), r.netns(), r.clientId(), r.address(), r.server(), r.times()));
        assertArrayEquals(l.identity().mac(), r.identity().mac());
        assertEquals(l.identity().requested(), r.identity().requested());
        assertArrayEquals(l.ack().get(DhcpOptions.SUBNET_MASK), r.ack().get(DhcpOptions.SUBNET_MASK));
        assertArrayEquals(l.identity().provided().get(DhcpOptions.HOST_NAME), r.identity().provided().get(DhcpOptions.HOST_NAME));
    }

    @Test
    void everyDamagedShapeIsNamedAndSkipped() throws Exception {
        LeaseStore store = new LeaseStore(dir);
        store.save(lease("good"));
        String good = Files.readString(store.fileOf(lease("good").clientId()));
        Map<String, String> shapes = Map.of(
                "", "empty",
                good.substring(0, good.length() / 2), "not JSON",
                "lease of c1", "not JSON",
                "[1]", "not a JSON object",
                good.replace("\"10.0.0.5\"", "5"), "address: expected a string",
                good.replace("\"10.0.0.5\"", "\"10.0.0\""), "address: not an IP address",
                good.replaceFirst("\"request\": \\[", "\"request\": [\"x\", "), "request[0]: expected a whole number in [0, 255]",
                good.replace("\"expiresAt\": 4", "\"expiresAt\": \"4\""), "expiresAt: expected a whole number");
        int i = 0;
        for (Map.Entry<String, String> shape : shapes.entrySet()) {
            Path f = dir.resolve("damaged" + i++ + ".json");
            Files.writeString(f, shape.getKey());
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            List<Lease> loaded = store.loadAll(new PrintStream(log, true, StandardCharsets.UTF_8));
            assertEquals(List.of("good"), loaded.stream().map(Lease::containerId).toList(), shape.getValue());
            String said = log.toString(StandardCharsets.UTF_8);
            assertTrue(said.contains("damaged state file " + f + ": ") && said.contains(shape.getValue()) && said.contains("skipped"), said);
            assertTrue(Files.exists(f), "left for a person to look at");
            Files.delete(f);
        }
    }
}
