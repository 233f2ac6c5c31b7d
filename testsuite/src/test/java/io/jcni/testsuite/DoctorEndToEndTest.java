package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import io.jcni.testkit.Installed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code jcni doctor} (installed) inside a private "host" netns with scratch conf, cache and IPAM
 * directories: healthy, then made unhealthy on purpose (a broken conflist, a missing plugin, a
 * leaked allocation, a leaked veth, a container whose netns vanished without DEL), each reported
 * with its fix; then the fix it proposes for the leftovers is run and the node is healthy again.
 */
@Tag("root")
class DoctorEndToEndTest {

    @Test
    void healthyThenEachProblemWithItsFix() throws Exception {
        Installed jcni = Installed.get();
        try (World w = new World()) {
            Path conf = Files.createDirectories(w.dir.resolve("net.d"));
            Path ipam = w.dir.resolve("ipam");
            String net = "doc-" + w.id;
            Files.writeString(conf.resolve("10-good.conflist"), """
                    {"cniVersion":"1.1.0","name":"%s","plugins":[{"type":"bridge","bridge":"jdc%s","isGateway":true,
                     "ipam":{"type":"host-local","subnet":"10.252.3.0/24","dataDir":"%s"}}]}""".formatted(net, w.id.substring(0, 6), ipam));
            Map<String, String> env = new HashMap<>();
            env.put("CNI_PATH", jcni.bin.toString());
            env.put("NETCONFPATH", conf.toString());
            env.put("JCNI_CACHE_DIR", w.dir.resolve("cache").toString());
            env.put("JCNI_SOCKET", w.dir.resolve("no-daemon.sock").toString());

            String a = w.container(1), b = w.container(2);
            w.inHost(env, null, jcni.jcni.toString(), "add", net, a).ok();
            Map<String, Object> healthy = doctor(w, env, jcni, 0);
            assertEquals(true, healthy.get("ok"), Json.writePretty(healthy));

            // Break it: a container gone without DEL, a broken file, a missing plugin, a leaked address and veth.
            w.inHost(env, null, jcni.jcni.toString(), "add", net, b).ok();
            Sh.run("ip", "netns", "del", "jts-c2-" + w.id).ok();
            Files.writeString(conf.resolve("20-broken.conflist"), "{\"cniVersion\": \"1.0.0\", \"name\": ");
            Files.writeString(conf.resolve("30-missing.conflist"),
                    "{\"cniVersion\":\"1.0.0\",\"name\":\"miss-" + w.id + "\",\"plugins\":[{\"type\":\"no-such-plugin\"}]}");
            Files.writeString(ipam.resolve(net).resolve("10.252.3.200"), "leakedcid\r\neth0");
            String veth = "jdl" + w.id.substring(0, 6);
            Sh.run("ip", "-n", w.host, "link", "add", veth, "type", "veth", "peer", "name", veth + "p").ok();
            Sh.run("ip", "-n", w.host, "link", "set", veth, "alias", "jcni/" + net + "/leakedcid/eth1").ok();

            Map<String, Object> sick = doctor(w, env, jcni, 1);
            List<Map<String, Object>> problems = problems(sick);
            String text = Json.writePretty(sick);
            String gc = null;
            assertTrue(has(problems, "config", "20-broken.conflist does not load", "correct the file"), text);
            assertTrue(has(problems, "plugins", "\"no-such-plugin\", which is not in CNI_PATH", "install \"no-such-plugin\" into " + jcni.bin), text);
            assertTrue(has(problems, "leftovers", "address 10.252.3.200 in \"" + net + "\" is allocated to container leakedcid", "jcni gc " + net + " --valid "), text);
            assertTrue(has(problems, "leftovers", "link " + veth + " (veth) was made by jcni", "jcni gc " + net + " --valid "), text);
            assertTrue(has(problems, "leftovers", "jts-c2-" + w.id + ", which no longer exists", "jcni gc " + net + " --valid "), text);
            assertEquals(5, problems.size(), text);
            for (Map<String, Object> p : problems) if (p.get("check").equals("leftovers")) gc = (String) p.get("fix");

            // The proposed fixes: the files first (a broken file stops networks loading by name), then
            // the gc command, which cleans every leftover and keeps the live container.
            Files.delete(conf.resolve("20-broken.conflist"));
            Files.delete(conf.resolve("30-missing.conflist"));
            List<String> cmd = new ArrayList<>(List.of(gc.split(" ")));
            cmd.set(0, jcni.jcni.toString());
            w.inHost(env, null, cmd.toArray(String[]::new)).ok();
            Map<String, Object> again = doctor(w, env, jcni, 0);
            assertEquals(true, again.get("ok"), Json.writePretty(again));
            assertTrue(Sh.run("ip", "-n", w.host, "link", "show", veth).rc() != 0, "the leaked veth is gone");
            w.inHost(env, null, jcni.jcni.toString(), "check", net, a).ok();
            w.inHost(env, null, jcni.jcni.toString(), "del", net, a).ok();
        }
    }

    private static Map<String, Object> doctor(World w, Map<String, String> env, Installed jcni, int rc) {
        Sh.Run r = w.inHost(env, null, jcni.jcni.toString(), "doctor", "--json");
        assertEquals(rc, r.rc(), r.out() + r.err());
        return Json.parseObject(r.out());
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> problems(Map<String, Object> report) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object o : (List<Object>) report.get("findings")) {
            Map<String, Object> f = (Map<String, Object>) o;
            if (f.get("severity").equals("warn") || f.get("severity").equals("fail")) out.add(f);
        }
        return out;
    }

    private static boolean has(List<Map<String, Object>> problems, String check, String message, String fix) {
        return problems.stream().anyMatch(p -> p.get("check").equals(check) && ((String) p.get("message")).contains(message)
                && ((String) p.getOrDefault("fix", "")).contains(fix));
    }
}
