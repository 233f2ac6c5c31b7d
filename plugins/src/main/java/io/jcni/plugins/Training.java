package io.jcni.plugins;

import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.PluginContext;
import io.jcni.plugins.skel.Skel;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * The training run for the JVM's AOT cache ({@code scripts/install.sh} runs it once with
 * {@code -XX:AOTCacheOutput}): it drives the code paths a plugin process takes, so that the
 * classes they load, link and profile are in the cache every standalone plugin starts from.
 *
 * <p>Always: VERSION of every type, {@code static} and {@code host-local} ADD/CHECK/DEL (in a
 * scratch directory), and a few error answers. As root, also {@code bridge} + {@code host-local},
 * {@code ptp} and {@code macvlan} (on a scratch veth master) ADD/CHECK/DEL in a pair of scratch
 * network namespaces it creates and deletes.
 * Nothing outside the scratch directory and namespaces is touched. Prints a summary on stderr;
 * exits 0 even when a workload fails (a cache from a partial run is still a good cache).
 */
public final class Training {
    private static final int ROUNDS = 3;

    /** How a training call reaches a plugin: in-process through the skeleton, or through jcnid. */
    @FunctionalInterface
    public interface Caller {
        Skel.Outcome call(String type, Map<String, String> env, byte[] stdin) throws Exception;
    }

    private final Path dir;
    private final Path cniPath;
    private Caller caller;
    private final PluginContext context;
    private final List<String> failures = new ArrayList<>();
    private int calls;

    private Training(Path dir, PrintStream log) throws IOException {
        this.dir = dir;
        this.cniPath = dir.resolve("bin");
        this.context = PluginRegistry.context(log);
        // Delegates found here carry the marker, so bridge runs host-local in-process, as installed.
        Files.createDirectories(cniPath);
        for (String t : PluginRegistry.types()) {
            Path p = cniPath.resolve(t);
            Files.writeString(p, "#!/bin/sh\n# " + Delegation.MARKER + ": training stub\nexit 1\n");
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    public static void main(String[] args) throws Exception {
        // Plugins print nothing on stdout here; the JVM's own AOT messages may, so keep ours apart.
        System.setOut(System.err);
        // Every launcher's main class: loaded here so the cache has it. Without this it was the one
        // jcni class a plugin call still read from its jar (opening jcni-plugins.jar for it).
        // Errno too: its constants are inlined, so only an error message loads it, and the training
        // may meet none (a bridge ADD on an existing bridge does: EEXIST).
        // And the standalone DEL's Background, which the training's in-process calls do not use.
        System.err.println("training for " + PluginMain.class.getName() + " (" + io.jcni.linux.Errno.name(io.jcni.linux.Errno.EEXIST)
                + ", " + new io.jcni.plugins.skel.Background.Detached().getClass().getSimpleName() + ")");
        train(null, true, System.err);
    }

    /**
     * The workloads, each call made by {@code caller} (null: in-process through the skeleton);
     * {@code namespaces}: also the bridge/ptp workloads in scratch namespaces (root only, in-process
     * only: a daemon would run them in its own namespace).
     */
    public static void train(Caller caller, boolean namespaces, PrintStream err) throws Exception {
        Path dir = Files.createTempDirectory("jcni-training-");
        Training t = new Training(dir, new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
        t.caller = caller != null ? caller
                : (type, env, stdin) -> Skel.run(PluginRegistry.lookup(type), env, stdin, t.context);
        boolean withNs = namespaces && caller == null && isRoot();
        long t0 = System.nanoTime();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                t.withoutNetns(round);
                if (withNs) t.withNetns(round);
            }
        } finally {
            deleteTree(dir);
        }
        err.printf("jcni training%s: %d plugin calls in %d ms%s%s%n", caller == null ? "" : " (through jcnid)", t.calls,
                (System.nanoTime() - t0) / 1_000_000, withNs ? "" : " (no namespace workloads)",
                t.failures.isEmpty() ? "" : "; failed: " + t.failures);
    }

    private void withoutNetns(int round) {
        for (String type : PluginRegistry.types()) call(type, env("VERSION", null, null), "");
        String staticConf = """
            {"cniVersion":"1.1.0","name":"train-static","type":"bridge","ipam":{"type":"static",
             "addresses":[{"address":"10.10.0.1/24","gateway":"10.10.0.254"},{"address":"fd00::1/64"}],
             "routes":[{"dst":"0.0.0.0/0"}],"dns":{"nameservers":["10.10.0.53"]}}}""";
        String hostLocalConf = """
            {"cniVersion":"1.0.0","name":"train-hl","type":"bridge","ipam":{"type":"host-local",
             "ranges":[[{"subnet":"10.11.0.0/24"}],[{"subnet":"fd01::/64"}]],"routes":[{"dst":"0.0.0.0/0"}],
             "dataDir":"%s"}}""".formatted(dir.resolve("ipam"));
        String id = "train" + round;
        for (String[] c : new String[][] {{"static", staticConf}, {"host-local", hostLocalConf}}) {
            String added = call(c[0], env("ADD", id, "/proc/self/ns/net"), c[1]);
            if (added != null) call(c[0], env("CHECK", id, "/proc/self/ns/net"), withPrev(c[1], added));
            call(c[0], env("DEL", id, "/proc/self/ns/net"), c[1]);
        }
        // Error answers: bad JSON, a missing variable, an unknown version.
        callExpectingFailure("bridge", env("ADD", id, "/proc/self/ns/net"), "{not json");
        callExpectingFailure("bridge", env("ADD", "", "/proc/self/ns/net"), hostLocalConf);
        callExpectingFailure("static", env("ADD", id, "/proc/self/ns/net"), "{\"cniVersion\":\"9.9.9\",\"name\":\"x\",\"type\":\"static\"}");
    }

    private void withNetns(int round) throws Exception {
        if (round == 0) sweepDeadTrainings();
        // The pid in the name tells a later training whether these namespaces' owner still runs.
        String suffix = ProcessHandle.current().pid() + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        String hostName = "jcni-train-h-" + suffix;
        String podName = "jcni-train-p-" + suffix;
        List<String> created = new ArrayList<>();
        try {
            try (Netns host = Netns.create(hostName)) {
                created.add(hostName);
                Netns.create(podName).close();
                created.add(podName);
                String pod = Netns.pathOf(podName).toString();
                String bridgeConf = """
                    {"cniVersion":"1.1.0","name":"train-br","type":"bridge","bridge":"jtrain0","isGateway":true,
                     "ipam":{"type":"host-local","subnet":"10.12.0.0/24","dataDir":"%s"}}""".formatted(dir.resolve("ipam"));
                String ptpConf = """
                    {"cniVersion":"1.1.0","name":"train-ptp","type":"ptp",
                     "ipam":{"type":"host-local","subnet":"10.13.0.0/24","dataDir":"%s"}}""".formatted(dir.resolve("ipam"));
                String macvlanConf = """
                    {"cniVersion":"1.1.0","name":"train-mv","type":"macvlan","master":"jtrainmv0",
                     "ipam":{"type":"host-local","subnet":"10.14.0.0/24","dataDir":"%s"}}""".formatted(dir.resolve("ipam"));
                host.exec(() -> {
                    try (Rtnl rt = Rtnl.open()) {
                        rt.addLink(NewLink.veth("jtrainmv0", "jtrainmv1").up());
                    }
                });
                String id = "train-ns" + round;
                for (String[] c : new String[][] {{"bridge", bridgeConf, "eth0"}, {"ptp", ptpConf, "eth1"}, {"macvlan", macvlanConf, "eth2"}}) {
                    Map<String, String> add = env("ADD", id, pod);
                    add.put("CNI_IFNAME", c[2]);
                    String added = host.run(() -> call(c[0], add, c[1]));
                    if (added != null) {
                        Map<String, String> check = env("CHECK", id, pod);
                        check.put("CNI_IFNAME", c[2]);
                        host.run(() -> call(c[0], check, withPrev(c[1], added)));
                    }
                    Map<String, String> del = env("DEL", id, pod);
                    del.put("CNI_IFNAME", c[2]);
                    host.run(() -> call(c[0], del, c[1]));
                }
                chain(host, pod, id);
            }
        } finally {
            for (String n : created.reversed()) {
                try {
                    Netns.delete(n);
                } catch (RuntimeException e) {
                    failures.add("delete netns " + n + ": " + e.getMessage());
                }
            }
        }
    }

    /**
     * Deletes the namespaces a killed training left (an install interrupted while it trained): their
     * names carry the training's pid, and no live process has it. A pid reused since keeps them until
     * a later training; namespaces of a training still running are never touched.
     */
    private void sweepDeadTrainings() {
        List<String> names;
        try (Stream<Path> s = Files.exists(Netns.RUN_DIR) ? Files.list(Netns.RUN_DIR) : Stream.empty()) {
            names = s.map(p -> p.getFileName().toString()).toList();
        } catch (IOException e) {
            failures.add("list " + Netns.RUN_DIR + ": " + e.getMessage());
            return;
        }
        for (String n : deadTrainingNamespaces(names, pid -> ProcessHandle.of(pid).isPresent())) {
            try {
                Netns.delete(n);
            } catch (RuntimeException e) {
                failures.add("delete netns " + n + " of a dead training: " + e.getMessage());
            }
        }
    }

    /** Of {@code names}, the training namespaces ({@code jcni-train-h|p-PID-HEX}) whose PID is not {@code alive}. */
    static List<String> deadTrainingNamespaces(List<String> names, java.util.function.LongPredicate alive) {
        List<String> dead = new ArrayList<>();
        for (String n : names) {
            if (!n.startsWith("jcni-train-h-") && !n.startsWith("jcni-train-p-")) continue;
            String rest = n.substring("jcni-train-h-".length());
            int dash = rest.indexOf('-');
            if (dash <= 0) continue; // an older training's name, without its pid: not ours to judge
            long pid;
            try {
                pid = Long.parseLong(rest.substring(0, dash));
            } catch (NumberFormatException e) {
                continue;
            }
            if (!alive.test(pid)) dead.add(n);
        }
        return dead;
    }

    /**
     * The chain runtimes configure by default (bridge with masquerading, portmap, tuning,
     * bandwidth, firewall), as libcni runs it: each plugin gets the previous result, DEL runs in
     * reverse with the final one. Without it a standalone portmap or firewall call loaded ~200
     * classes from the jars (the nftables, tc and sysctl paths) instead of the cache.
     */
    private void chain(Netns host, String pod, String id) throws Exception {
        String nft = dir.resolve("nft").toString();
        String[][] plugins = {
            {"bridge", """
                "bridge":"jtrain1","isGateway":true,"ipMasq":true,"dataDir":"%s",
                "ipam":{"type":"host-local","subnet":"10.15.0.0/24","dataDir":"%s"}""".formatted(nft, dir.resolve("ipam"))},
            {"portmap", """
                "dataDir":"%s","runtimeConfig":{"portMappings":[{"hostPort":18080,"containerPort":80,"protocol":"tcp"}]}""".formatted(nft)},
            {"tuning", "\"sysctl\":{\"net.core.somaxconn\":\"512\"}"},
            {"bandwidth", """
                "runtimeConfig":{"bandwidth":{"ingressRate":8000000,"ingressBurst":80000,"egressRate":8000000,"egressBurst":80000}}"""},
            {"firewall", "\"dataDir\":\"%s\"".formatted(nft)},
        };
        String result = null;
        for (String[] p : plugins) {
            Map<String, String> add = env("ADD", id, pod);
            add.put("CNI_IFNAME", "eth3");
            String conf = chainConf(p, result);
            String out = host.run(() -> call(p[0], add, conf));
            if (out == null) break;
            result = out;
        }
        for (String[] p : plugins) {
            Map<String, String> check = env("CHECK", id, pod);
            check.put("CNI_IFNAME", "eth3");
            String conf = chainConf(p, result);
            if (result != null) host.run(() -> call(p[0], check, conf));
        }
        for (int i = plugins.length - 1; i >= 0; i--) {
            String[] p = plugins[i];
            Map<String, String> del = env("DEL", id, pod);
            del.put("CNI_IFNAME", "eth3");
            String conf = chainConf(p, result);
            host.run(() -> call(p[0], del, conf));
        }
    }

    private static String chainConf(String[] plugin, String prevResult) {
        String conf = "{\"cniVersion\":\"1.1.0\",\"name\":\"train-chain\",\"type\":\"" + plugin[0] + "\"," + plugin[1].strip() + "}";
        return prevResult == null ? conf : withPrev(conf, prevResult);
    }

    private Map<String, String> env(String command, String containerId, String netns) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("CNI_COMMAND", command);
        if (containerId != null) env.put("CNI_CONTAINERID", containerId);
        if (netns != null) env.put("CNI_NETNS", netns);
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", cniPath.toString());
        return env;
    }

    /** One call through the skeleton as PluginMain makes it; returns stdout, or null on failure. */
    private String call(String type, Map<String, String> env, String stdin) {
        calls++;
        Skel.Outcome out;
        try {
            out = caller.call(type, env, stdin.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            failures.add(type + " " + env.get("CNI_COMMAND") + ": " + e);
            return null;
        }
        if (out.exitCode() != 0) {
            failures.add(type + " " + env.get("CNI_COMMAND") + ": " + out.stdout().replaceAll("\\s+", " "));
            return null;
        }
        return out.stdout();
    }

    private void callExpectingFailure(String type, Map<String, String> env, String stdin) {
        calls++;
        try {
            caller.call(type, env, stdin.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            failures.add(type + " " + env.get("CNI_COMMAND") + ": " + e);
        }
    }

    /** The configuration with {@code prevResult} set, as a runtime sends it to CHECK. */
    private static String withPrev(String conf, String result) {
        int end = conf.lastIndexOf('}');
        return conf.substring(0, end) + ",\"prevResult\":" + result + "}";
    }

    private static boolean isRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
