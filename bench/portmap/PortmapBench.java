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
 * In-process portmap latency (benchmark, not a test): java -cp CLASSES PortmapBench.java DATADIR LEVELS...
 * prints "N add_ms del_ms" (medians). Runs the plugin on the threads of namespaces it creates.
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
        Skel.Outcome o = Skel.run(PluginRegistry.lookup("portmap"), env, conf.getBytes(StandardCharsets.UTF_8), PluginRegistry.context(new PrintStream(System.err)));
        long dt = System.nanoTime() - t;
        if (o.exitCode() != 0) throw new IllegalStateException(cmd + " failed: " + o.stdout());
        return dt;
    }

    static double median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2) / 1e6;
    }

    /**
     * args: DATADIR LEVEL... ; -Drounds=N. Each level gets its own private namespace, filled once;
     * then the rounds alternate between the levels so that load from other processes on the
     * machine affects every level alike. Without -Dlevels-in-current-ns, namespaces are created
     * and deleted here.
     */
    public static void main(String[] args) {
        String dir = args[0];
        int rounds = Integer.getInteger("rounds", 21);
        int n = args.length - 1;
        int[] levels = new int[n];
        io.jcni.linux.Netns[] ns = new io.jcni.linux.Netns[n];
        String[] names = new String[n];
        try {
            for (int i = 0; i < n; i++) {
                levels[i] = Integer.parseInt(args[i + 1]);
                names[i] = "jp-bench-" + ProcessHandle.current().pid() + "-" + levels[i];
                ns[i] = io.jcni.linux.Netns.create(names[i]);
                String d = dir + "/" + levels[i];
                int level = levels[i];
                ns[i].exec(() -> {
                    for (int k = 0; k < level; k++) call("ADD", "pre" + k, conf(d, 10000 + k, k));
                    for (int k = 0; k < 20; k++) { // warm-up, also of the JIT
                        call("ADD", "warm" + k, conf(d, 60000 + k, 5000 + k));
                        call("DEL", "warm" + k, conf(d, 60000 + k, 5000 + k));
                    }
                });
            }
            List<List<Long>> add = new ArrayList<>();
            List<List<Long>> del = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                add.add(new ArrayList<>());
                del.add(new ArrayList<>());
            }
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < n; i++) {
                    String c = conf(dir + "/" + levels[i], 50000 + r, 4000 + r);
                    int rr = r;
                    int ii = i;
                    ns[i].exec(() -> {
                        add.get(ii).add(call("ADD", "bench" + rr, c));
                        del.get(ii).add(call("DEL", "bench" + rr, c));
                    });
                }
            }
            for (int i = 0; i < n; i++) System.out.printf("%d %.2f %.2f%n", levels[i], median(add.get(i)), median(del.get(i)));
        } finally {
            for (int i = 0; i < n; i++) {
                if (ns[i] != null) ns[i].close();
                if (names[i] != null && io.jcni.linux.Netns.exists(names[i])) io.jcni.linux.Netns.delete(names[i]);
            }
        }
    }
}
