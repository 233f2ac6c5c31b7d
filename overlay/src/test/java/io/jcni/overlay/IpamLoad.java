package io.jcni.overlay;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

/**
 * A "host" issuing cluster-ipam calls in-process, run by the lab in a host netns (the test JVM
 * itself cannot reach the lab's etcd). Prints one line per call: {@code OK <containerID> <ip>} or
 * {@code ERR <containerID> <error JSON>}.
 *
 * RANGE is one CIDR ({@code range}), or several separated by commas: one range set each ({@code ranges}),
 * and then the line's address is every address of the result, comma-separated.
 *
 * <pre>IpamLoad add|del ETCD RANGE HOST COUNT PARALLEL [HOST_LOCAL_DATADIR]   (the last: host-local instead, for comparison)
 * IpamLoad gc ETCD RANGE VALID_FILE        (one containerID a line; ifname eth0)
 * IpamLoad one ETCD RANGE ADD|DEL CONTAINER_ID NETNS HOST   (one call, cluster-ipam's "host" given)</pre>
 *
 * <p>With {@code -Djcni.ipam.phases=true}, add/del also print, on stderr, one line starting with {@code #} that splits the run's time (see
 * {@link Phases}): the JVM's start until main, the first call (class loading, client setup, the
 * first connection), the rest (the steady state); the process's CPU time in each, and the bytes it
 * wrote and read (sockets included) in the steady state. {@code -Djcni.ipam.warmup=N} first makes N
 * calls (ids {@code HOST-warm-I}) that the steady state leaves out; with {@code -Djcni.ipam.go=FILE}
 * it then prints {@code # warm} and waits (at most 10 minutes) for FILE to exist, so that the hosts
 * of a lab start their measured calls together, as warm as a running jcnid.
 */
public final class IpamLoad {
    public static void main(String[] a) throws Exception {
        String mode = a[0], etcd = a[1], range = a[2];
        // -Djcni.ipam.extra: more ipam keys, e.g. the TLS files of bench/multihost/run.sh -t
        String ipam = "{\"type\":\"cluster-ipam\",\"etcdEndpoints\":[\"" + etcd + "\"]," + rangesJson(range) + ",\"etcdPrefix\":\"/lab-ipam\""
                + System.getProperty("jcni.ipam.extra", "") + "}";
        if (mode.equals("gc")) {
            List<Object> valid = new ArrayList<>();
            for (String id : Files.readAllLines(Path.of(a[3]))) if (!id.isBlank()) valid.add(Map.of("containerID", id, "ifname", "eth0"));
            String conf = "{\"cniVersion\":\"1.1.0\",\"name\":\"lab\",\"type\":\"x\",\"cni.dev/valid-attachments\":" + Json.write(valid)
                    + ",\"ipam\":" + ipam + "}";
            Skel.Outcome o = call("cluster-ipam", "GC", "gc", conf);
            System.out.println("GC " + o.exitCode() + " " + o.stdout().replace('\n', ' '));
            return;
        }
        if (mode.equals("one")) {
            String conf = "{\"cniVersion\":\"1.1.0\",\"name\":\"lab\",\"type\":\"x\",\"ipam\":"
                    + ipam.substring(0, ipam.length() - 1) + ",\"host\":\"" + a[6] + "\"}}";
            Map<String, String> env = Map.of("CNI_COMMAND", a[3], "CNI_CONTAINERID", a[4], "CNI_NETNS", a[5], "CNI_IFNAME", "eth0",
                    "CNI_PATH", "/nonexistent");
            Skel.Outcome o = Skel.run(PluginRegistry.lookup("cluster-ipam"), env, conf.getBytes(StandardCharsets.UTF_8),
                    PluginRegistry.context(new PrintStream(new ByteArrayOutputStream())));
            System.out.println(o.exitCode() != 0 ? "ERR " + a[4] + " " + o.stdout().replace('\n', ' ')
                    : "OK " + a[4] + " " + (a[3].equals("ADD") ? ip(o.stdout()) : "-"));
            return;
        }
        Phases phases = new Phases();
        String host = a[3];
        if (a.length > 6) ipam = "{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\"" + range + "\"}]],\"dataDir\":\"" + a[6] + "\"}";
        String type = a.length > 6 ? "host-local" : "cluster-ipam";
        int count = Integer.parseInt(a[4]);
        Semaphore par = new Semaphore(Integer.parseInt(a[5]));
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"lab\",\"type\":\"x\",\"ipam\":" + ipam + "}";
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        int warmup = Integer.getInteger("jcni.ipam.warmup", 0);
        if (warmup > 0) {
            run(type, mode, host + "-warm-", warmup, par, conf, out, phases);
            String go = System.getProperty("jcni.ipam.go");
            if (go != null) {
                System.err.println("# warm"); // asked for by the lab script, which reads it
                for (int i = 0; i < 60_000 && !Files.exists(Path.of(go)); i++) Thread.sleep(10);
            }
            phases.steady();
        }
        run(type, mode, host + "-", count, par, conf, out, phases);
        phases.end();
    }

    private static void run(String type, String mode, String idPrefix, int count, Semaphore par, String conf, PrintStream out, Phases phases)
            throws Exception {
        List<Future<?>> calls = new ArrayList<>();
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < count; i++) {
                String id = idPrefix + i;
                calls.add(ex.submit(() -> {
                    par.acquire();
                    try {
                        Skel.Outcome o = call(type, mode.equals("add") ? "ADD" : "DEL", id, conf);
                        String line;
                        if (o.exitCode() != 0) line = "ERR " + id + " " + o.stdout().replace('\n', ' ');
                        else if (mode.equals("add")) line = "OK " + id + " " + ip(o.stdout());
                        else line = "OK " + id + " -";
                        synchronized (out) {
                            out.println(line);
                            phases.answered();
                        }
                    } finally {
                        par.release();
                    }
                    return null;
                }));
            }
        }
        // A call that threw (rather than answering with an error) fails the run instead of leaving a line out.
        for (Future<?> c : calls) c.get();
    }

    /**
     * Where a run's time goes: timestamps (ms since the JVM's start, from /proc/self/stat) and CPU
     * time (user + system, /proc/self/stat) at main, at the first answer, at the start of the
     * steady state (after the first answer, or after the warm-up) and at the end; /proc/self/io's
     * wchar/rchar over the steady state (socket bytes, TLS records included).
     */
    static final class Phases {
        private final long startNanos = System.nanoTime();
        private final long mainMs = uptimeMs(), mainCpu = cpuMs();
        private long firstMs = -1, firstCpu, steadyNanos = -1, steadyCpu, steadyW, steadyR;
        private int answers, steadyFrom;

        /** Called under the output's lock. */
        void answered() {
            answers++;
            if (firstMs < 0) {
                firstMs = mainMs + (System.nanoTime() - startNanos) / 1_000_000;
                firstCpu = cpuMs();
                steady();
            }
        }

        /** The steady state starts now (after the first answer, or again after a warm-up). */
        void steady() {
            steadyNanos = System.nanoTime();
            steadyCpu = cpuMs();
            steadyFrom = answers;
            long[] io = io();
            steadyW = io[0];
            steadyR = io[1];
        }

        void end() {
            if (!Boolean.getBoolean("jcni.ipam.phases")) return;
            long endNanos = System.nanoTime(), endCpu = cpuMs();
            long[] io = io();
            int n = answers - steadyFrom;
            double secs = (endNanos - steadyNanos) / 1e9;
            System.err.printf("# jvm-to-main %d ms (cpu %d ms); first answer at %d ms (cpu %d ms); steady %d answers in %.0f ms = %.0f/s,"
                    + " cpu %d ms = %.2f ms/answer, wrote %d read %d bytes/answer; total %d ms cpu %d ms%n",
                    mainMs, mainCpu, firstMs, firstCpu, n, secs * 1000, n / secs, endCpu - steadyCpu, (endCpu - steadyCpu) / (double) Math.max(1, n),
                    (io[0] - steadyW) / Math.max(1, n), (io[1] - steadyR) / Math.max(1, n), mainMs + (endNanos - startNanos) / 1_000_000, endCpu);
        }

        /** Fields 14 + 15 (utime, stime) and 22 (starttime) of /proc/self/stat, in clock ticks (100 Hz). */
        private static long[] stat() {
            try {
                String s = Files.readString(Path.of("/proc/self/stat"));
                String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
                return new long[] {Long.parseLong(f[11]) + Long.parseLong(f[12]), Long.parseLong(f[19])};
            } catch (java.io.IOException e) {
                return new long[] {0, 0};
            }
        }

        private static long cpuMs() {
            return stat()[0] * 10;
        }

        /** ms since the process started: the system's uptime less the start time. */
        private static long uptimeMs() {
            try {
                double up = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
                return Math.round(up * 1000) - stat()[1] * 10;
            } catch (java.io.IOException e) {
                return 0;
            }
        }

        private static long[] io() {
            long w = 0, r = 0;
            try {
                for (String l : Files.readAllLines(Path.of("/proc/self/io"))) {
                    if (l.startsWith("wchar:")) w = Long.parseLong(l.substring(6).trim());
                    if (l.startsWith("rchar:")) r = Long.parseLong(l.substring(6).trim());
                }
            } catch (java.io.IOException e) {
                return new long[] {0, 0};
            }
            return new long[] {w, r};
        }
    }

    private static String ip(String result) {
        List<String> out = new ArrayList<>();
        for (Object ip : Json.asList(Json.parseObject(result).get("ips"))) out.add(String.valueOf(Json.asObject(ip).get("address")).split("/")[0]);
        return String.join(",", out);
    }

    /** {@code "range":"A"} or {@code "ranges":[[{"subnet":"A"}],[{"subnet":"B"}]]}. */
    private static String rangesJson(String range) {
        if (!range.contains(",")) return "\"range\":\"" + range + "\"";
        List<Object> sets = new ArrayList<>();
        for (String r : range.split(",")) sets.add(List.of(Map.of("subnet", r)));
        return "\"ranges\":" + Json.write(sets);
    }

    private static Skel.Outcome call(String type, String cmd, String id, String conf) {
        Map<String, String> env = Map.of("CNI_COMMAND", cmd, "CNI_CONTAINERID", id, "CNI_NETNS", "/var/run/netns/none",
                "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent");
        return Skel.run(PluginRegistry.lookup(type), env, conf.getBytes(StandardCharsets.UTF_8),
                PluginRegistry.context(new PrintStream(new ByteArrayOutputStream())));
    }
}
