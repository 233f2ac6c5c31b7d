package io.jcni.docker.store;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.docker.api.RemoteApi;
import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.network.FakeAttacher;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A truncated or hand-edited state file never stops the driver: it is named in the log ("damaged
 * state file PATH: ..."), moved aside to PATH.damaged-TIME, and every other network, endpoint and
 * pool is served as before.
 */
class DamagedStateTest {
    static final String GOOD = "a".repeat(64), BAD = "b".repeat(64), EP = "e".repeat(64);

    @TempDir
    Path tmp;

    /** A driver's state with two networks (one endpoint joined on the good one) and their pools. */
    FileStore populated() {
        FileStore store = new FileStore(tmp.resolve("state"));
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        int i = 0;
        for (String net : List.of(GOOD, BAD)) {
            String subnet = "10.8." + i++ + ".0/24";
            assertEquals(200, api.handle("POST", "/IpamDriver.RequestPool", ("{\"AddressSpace\":\"local_scope\",\"Pool\":\"" + subnet + "\"}")
                    .getBytes(StandardCharsets.UTF_8)).status());
            String r = api.handle("POST", "/NetworkDriver.CreateNetwork", ("{\"NetworkID\":\"" + net + "\",\"IPv4Data\":[{\"Pool\":\""
                    + subnet + "\"}]}").getBytes(StandardCharsets.UTF_8)).json();
            assertFalse(r.contains("Err"), r);
        }
        for (String call : List.of("CreateEndpoint\",{\"NetworkID\":\"" + GOOD + "\",\"EndpointID\":\"" + EP + "\",\"Interface\":{\"Address\":\"10.8.0.2/24\"}}",
                "Join\",{\"NetworkID\":\"" + GOOD + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"/run/x/1\"}")) {
            String[] p = call.split("\",", 2);
            String r = api.handle("POST", "/NetworkDriver." + p[0], p[1].getBytes(StandardCharsets.UTF_8)).json();
            assertFalse(r.contains("Err"), r);
        }
        return store;
    }

    record Loaded(CniNetworkDriver network, JcniIpam ipam, String log) {}

    Loaded load(FileStore store) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream log = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        FakeAttacher attacher = new FakeAttacher();
        attacher.sandboxes.add("/run/x/1");
        CniNetworkDriver network = new CniNetworkDriver(store, attacher, n -> null, "local", log);
        JcniIpam ipam = new JcniIpam(store, line -> log.println("jcnid docker " + line));
        network.reconcile();
        return new Loaded(network, ipam, bytes.toString(StandardCharsets.UTF_8));
    }

    List<Path> asideIn(String kind) throws Exception {
        try (Stream<Path> s = Files.list(tmp.resolve("state").resolve(kind))) {
            return s.filter(p -> p.getFileName().toString().contains(".json.damaged-")).toList();
        }
    }

    /** Each way a file gets damaged, one at a time, to the network BAD's file. */
    @Test
    void aDamagedNetworkFileIsNamedMovedAsideAndTheOthersAreServed() throws Exception {
        List<String> damages = List.of("", "{\"id\":\"" + BAD, "[]", "{\"id\": 5}", "{}");
        List<String> edits = List.of("mtu=\"big\"", "subnets=[]", "subnets=[{\"pool\":\"10.8.1.0/99\"}]", "id=\"" + GOOD + "\"",
                "plugins=[\"macvlan\"]", "internal=null", "bridge=\"../../x\"", "bandwidth={\"ingressRate\":\"1\"}");
        List<String> cases = new ArrayList<>(damages);
        cases.addAll(edits);
        for (String damage : cases) {
            FileStore store = populated();
            Path file = tmp.resolve("state/networks/" + BAD + ".json");
            if (edits.contains(damage)) {
                Map<String, Object> doc = store.get("networks", BAD).orElseThrow();
                String[] kv = damage.split("=", 2);
                doc.put(kv[0], Json.parse(kv[1]));
                Files.writeString(file, Json.write(doc));
            } else {
                Files.writeString(file, damage);
            }
            Loaded l = load(store);
            assertEquals(List.of(GOOD), List.copyOf(l.network().networks().keySet()), damage);
            assertEquals(1, l.network().endpoints().size(), damage);
            assertEquals(2, l.ipam().pools().size(), damage);
            assertTrue(l.log().contains("jcnid docker damaged state file " + file + ": "), damage + "\n" + l.log());
            List<Path> aside = asideIn("networks");
            assertEquals(1, aside.size(), damage);
            assertTrue(l.log().contains("moved to " + aside.getFirst() + ", networks " + BAD + " skipped"), l.log());
            assertFalse(Files.exists(file));
            assertFalse(l.log().contains("Exception"), l.log());
            for (Path p : asideIn("networks")) Files.delete(p);
            try (var all = Files.walk(tmp.resolve("state"))) {
                all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void damagedEndpointAndPoolFilesAreSkippedToo() throws Exception {
        FileStore store = populated();
        Path ep = tmp.resolve("state/endpoints/" + EP + ".json");
        Files.writeString(ep, Files.readString(ep).replace("\"/run/x/1\"", "7"));
        String pool = store.keys("pools").getFirst();
        Path pf = tmp.resolve("state/pools/" + pool + ".json");
        Files.writeString(pf, Files.readString(pf).substring(0, 40)); // truncated
        Loaded l = load(store);
        assertEquals(2, l.network().networks().size());
        assertEquals(Map.of(), l.network().endpoints());
        assertEquals(1, l.ipam().pools().size());
        assertTrue(l.log().contains("damaged state file " + ep + ": sandboxKey: expected a string"), l.log());
        assertTrue(l.log().contains("damaged state file " + pf + ": not JSON"), l.log());
        assertEquals(1, asideIn("endpoints").size());
        assertEquals(1, asideIn("pools").size());
        assertEquals(List.of(), store.keys("endpoints"), "a file moved aside is not read again");
    }
}
