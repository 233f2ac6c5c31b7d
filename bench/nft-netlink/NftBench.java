import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * In-process latency of the nftables plugins (benchmark, not a test): portmap, firewall, and
 * bridge's ipMasq through Masquerade, ADD then DEL, warm JVM, in the namespace the JVM runs in
 * (as jcnid runs them: run.sh starts it with ip netns exec in a private namespace).
 * java -cp CLASSES NftBench.java DATADIR ; -Drounds=N. Prints "plugin add_ms del_ms" (medians).
 */
public class NftBench {
    static String prev(String ip) {
        return "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"cni0\"},{\"name\":\"eth0\",\"sandbox\":\"/x\"}],"
                + "\"ips\":[{\"address\":\"" + ip + "/16\",\"interface\":1}]}";
    }

    static String conf(String plugin, String dir, int i) {
        String ip = "10.90." + (i / 250) + "." + (2 + i % 250);
        String head = "{\"cniVersion\":\"1.0.0\",\"name\":\"bench\",\"type\":\"" + plugin + "\",\"dataDir\":\"" + dir + "\",";
        return switch (plugin) {
            case "portmap" -> head + "\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":" + (20000 + i)
                    + ",\"containerPort\":80,\"protocol\":\"tcp\"}]}," + prev(ip) + "}";
            case "firewall" -> head + prev(ip) + "}";
            default -> throw new IllegalArgumentException(plugin);
        };
    }

    static long call(String plugin, String cmd, String id, String conf) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", cmd);
        env.put("CNI_CONTAINERID", id);
        env.put("CNI_NETNS", "/proc/self/ns/net");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
        long t = System.nanoTime();
        Skel.Outcome o = Skel.run(PluginRegistry.lookup(plugin), env, conf.getBytes(StandardCharsets.UTF_8),
                PluginRegistry.context(new PrintStream(System.err)));
        long dt = System.nanoTime() - t;
        if (o.exitCode() != 0) throw new IllegalStateException(plugin + " " + cmd + " failed: " + o.stdout());
        return dt;
    }

    static long masq(io.jcni.plugins.common.nft.Masquerade m, boolean add, int i) {
        long t = System.nanoTime();
        if (add) m.setup("bench", "m" + i, "eth0", List.of(io.jcni.types.Cidr.parse("10.91.0." + (2 + i % 250) + "/16")));
        else m.teardown("bench", "m" + i, "eth0");
        return System.nanoTime() - t;
    }

    static double median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2) / 1e6;
    }

    public static void main(String[] args) {
        String dir = args[0];
        int rounds = Integer.getInteger("rounds", 31);
        String[] plugins = {"portmap", "firewall", "masquerade"};
        var m = io.jcni.plugins.common.nft.Masquerade.in(null, java.nio.file.Path.of(dir));
        Map<String, List<Long>> add = new HashMap<>();
        Map<String, List<Long>> del = new HashMap<>();
        for (String p : plugins) {
            add.put(p, new ArrayList<>());
            del.put(p, new ArrayList<>());
        }
        for (int r = -20; r < rounds; r++) { // 20 warm-up rounds, also of the JIT
            int i = r + 20;
            for (String p : plugins) {
                long a;
                long d;
                if (p.equals("masquerade")) {
                    a = masq(m, true, i);
                    d = masq(m, false, i);
                } else {
                    String c = conf(p, dir, i);
                    a = call(p, "ADD", "c" + i, c);
                    d = call(p, "DEL", "c" + i, c);
                }
                if (r >= 0) {
                    add.get(p).add(a);
                    del.get(p).add(d);
                }
            }
        }
        for (String p : plugins) System.out.printf("%s %.2f %.2f%n", p, median(add.get(p)), median(del.get(p)));
    }
}
