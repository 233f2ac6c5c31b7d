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
 * In-process portmap latency (benchmark, not a test). Run inside a private netns:
 *   ip netns exec NS java -cp JARS PortmapBench.java DATADIR LEVELS... ; prints "N add_ms del_ms".
 * Existing mappings are made by real plugin ADDs (one container, one port each).
 */
public class PortmapBench {
    static String conf(String dataDir, int port, int ipIndex) {
        String ip = "10.90." + (ipIndex / 250) + "." + (2 + ipIndex % 250);
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"bench\",\"type\":\"portmap\",\"dataDir\":\"" + dataDir + "\","
                + "\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":" + port + ",\"containerPort\":80,\"protocol\":\"tcp\"}]},"
                + "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":\"/x\"}],"
                + "\"ips\":[{\"address\":\"" + ip + "/16\",\"interface\":0}]}}";
    }

    static long call(String cmd, String id, String conf) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", cmd);
        env.put("CNI_CONTAINERID", id);
        env.put("CNI_NETNS", "/proc/self/ns/net");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
        long t = System.nanoTime();
        Skel.Outcome o = Skel.run(PluginRegistry.lookup("portmap"), env, conf.getBytes(StandardCharsets.UTF_8), new PrintStream(System.err));
        long dt = System.nanoTime() - t;
        if (o.exitCode() != 0) throw new IllegalStateException(cmd + " failed: " + o.stdout());
        return dt;
    }

    static double median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2) / 1e6;
    }

    public static void main(String[] args) {
        String dir = args[0];
        int rounds = Integer.getInteger("rounds", 21);
        int existing = 0;
        // Warm up the JIT and the code paths on a separate port range.
        for (int i = 0; i < 30; i++) {
            call("ADD", "warm" + i, conf(dir, 60000 + i, 5000 + i));
            call("DEL", "warm" + i, conf(dir, 60000 + i, 5000 + i));
        }
        for (int a = 1; a < args.length; a++) {
            int level = Integer.parseInt(args[a]);
            for (; existing < level; existing++) call("ADD", "pre" + existing, conf(dir, 10000 + existing, existing));
            List<Long> add = new ArrayList<>();
            List<Long> del = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                String c = conf(dir, 50000 + r, 4000 + r);
                add.add(call("ADD", "bench" + r, c));
                del.add(call("DEL", "bench" + r, c));
            }
            System.out.printf("%d %.2f %.2f%n", level, median(add), median(del));
        }
    }
}
