package io.jcni.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jcni.common.Launcher;
import io.jcni.runtime.Cni;
import io.jcni.testfixtures.Jvm;
import io.jcni.testfixtures.Peers;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import io.jcni.types.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * jcni driving Debian's reference Go plugins (/usr/lib/cni). Everything happens in namespaces this test
 * creates: jcni runs inside a throw-away "host" netns (so the bridge, veth ends and iptables rules land
 * there), the container is a second netns; both are deleted afterwards, as is the temp dir holding the
 * configs, the result cache and host-local's dataDir.
 */
@Tag("root")
@Tag("interop")
class ReferencePluginsInteropTest {

    static final Path REF = Path.of("/usr/lib/cni");
    static World world;
    static String host;
    static String ctr;
    static Path tmp;
    static Path cache;
    static Path ipam;
    static String netnsPath;
    static String containerId;
    static final String BRIDGE = "jrtbr" + HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt()).substring(0, 4);

    static final String CAP_ARGS = """
            {"portMappings":[{"hostPort":18080,"containerPort":80,"protocol":"tcp"}],
             "bandwidth":{"ingressRate":8000000,"ingressBurst":800000,"egressRate":8000000,"egressBurst":800000}}""";

    @BeforeAll
    static void createWorld() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root");
        Peers.requireExecutable(REF.resolve("bridge"), "containernetworking-plugins");
        world = new World("jrt");
        host = world.host;
        tmp = world.dir;
        cache = tmp.resolve("cache");
        ipam = tmp.resolve("ipam");
        Path conf = Files.createDirectories(tmp.resolve("net.d"));
        netnsPath = world.container();
        ctr = World.nsName(netnsPath);
        containerId = Main.containerId(netnsPath);

        String bridge = """
                {"type":"bridge","bridge":"%s","isGateway":true,"ipMasq":false,
                 "ipam":{"type":"host-local","subnet":"10.231.0.0/24","dataDir":"%s"}}""".formatted(BRIDGE, ipam);
        String tuning = "{\"type\":\"tuning\",\"sysctl\":{\"net.ipv4.conf.eth0.arp_notify\":\"1\"}}";
        String portmap = "{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true},\"snat\":true}";
        String bandwidth = "{\"type\":\"bandwidth\",\"capabilities\":{\"bandwidth\":true}}";
        Files.writeString(conf.resolve("10-jrt.conflist"), "{\"cniVersion\":\"1.0.0\",\"name\":\"jrt\",\"plugins\":["
                + String.join(",", bridge, tuning, portmap, bandwidth) + "]}");
        // reference portmap 1.1.1 fails CHECK on IPv4-only setups, so CHECK runs against a chain without it
        Files.writeString(conf.resolve("20-jrt-nopm.conflist"), "{\"cniVersion\":\"1.0.0\",\"name\":\"jrt-nopm\",\"plugins\":["
                + String.join(",", bridge, tuning, bandwidth) + "]}");
    }

    @AfterAll
    static void destroyWorld() throws Exception {
        if (world != null) world.close();
        if (host != null) {
            String netns = sh("ip", "netns", "list");
            assertFalse(netns.contains(host) || netns.contains(ctr), netns);
            assertFalse(sh("ip", "link").contains(BRIDGE), "nothing may leak into the root namespace");
        }
    }

    @Test
    void addCheckDelAgainstReferencePlugins() throws Exception {
        // ADD: the whole chain
        Run add = jcni(CAP_ARGS, "add", "jrt", netnsPath);
        assertEquals(0, add.rc, add.err);
        Map<String, Object> result = Json.parseObject(add.out);
        assertEquals("1.0.0", result.get("cniVersion"));
        List<String> ifNames = new ArrayList<>();
        for (Object o : Json.asList(result.get("interfaces"))) ifNames.add((String) Json.asObject(o).get("name"));
        assertTrue(ifNames.contains(BRIDGE) && ifNames.contains("eth0"), ifNames.toString());
        Map<String, Object> ip = Json.asObject(Json.asList(result.get("ips")).getFirst());
        String address = (String) ip.get("address");
        assertTrue(address.startsWith("10.231.0.") && address.endsWith("/24"), address);
        String bare = address.substring(0, address.indexOf('/'));

        // it really happened, in our namespaces
        assertTrue(sh("ip", "-n", ctr, "-4", "addr", "show", "eth0").contains(address));
        assertTrue(sh("ip", "-n", host, "link", "show", BRIDGE).contains(BRIDGE));
        assertTrue(sh("ip", "netns", "exec", host, "iptables", "-t", "nat", "-S").contains("CNI-HOSTPORT-DNAT"));
        Path cacheFile = cache.resolve("results/jrt-" + containerId + "-eth0");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheFile)));
        Map<String, Object> cached = Json.parseObject(Files.readString(cacheFile));
        assertEquals("cniCacheV1", cached.get("kind"));
        assertEquals(result, cached.get("result"));
        assertTrue(Files.exists(ipam.resolve("jrt").resolve(bare)), "host-local allocated " + bare);

        // DEL: everything goes away
        Run del = jcni(CAP_ARGS, "del", "jrt", netnsPath);
        assertEquals(0, del.rc, del.err);
        assertFalse(Files.exists(cacheFile));
        assertFalse(Files.exists(ipam.resolve("jrt").resolve(bare)), "host-local released " + bare);
        assertFalse(sh("ip", "-n", ctr, "link").contains("eth0"));
        assertFalse(sh("ip", "netns", "exec", host, "iptables", "-t", "nat", "-S").contains(containerId.substring(0, 8)));

        // CHECK on a chain the reference plugins can check
        Run add2 = jcni(CAP_ARGS, "add", "jrt-nopm", netnsPath);
        assertEquals(0, add2.rc, add2.err);
        Run check = jcni(CAP_ARGS, "check", "jrt-nopm", netnsPath);
        assertEquals(0, check.rc, check.err);
        // CHECK notices when the container's interface is gone
        sh("ip", "-n", ctr, "link", "del", "eth0");
        Run broken = jcni(CAP_ARGS, "check", "jrt-nopm", netnsPath);
        assertEquals(1, broken.rc);
        assertTrue(broken.err.contains("plugin type=\"bridge\" (check) failed"), broken.err);
        Run del2 = jcni(CAP_ARGS, "del", "jrt-nopm", netnsPath);
        assertEquals(0, del2.rc, del2.err);
        assertFalse(Files.exists(cache.resolve("results/jrt-nopm-" + containerId + "-eth0")));
        assertEquals(Set.of(), allocations("jrt-nopm"));
    }

    @Test
    void gcWithNoValidAttachmentsDeletesCachedOnes() throws Exception {
        Run add = jcni(CAP_ARGS, "add", "jrt", netnsPath);
        assertEquals(0, add.rc, add.err);
        Path cacheFile = cache.resolve("results/jrt-" + containerId + "-eth0");
        assertTrue(Files.exists(cacheFile));
        assertEquals(1, allocations("jrt").size());

        Run gc = jcni(null, "gc", "jrt", netnsPath, "--valid", "none");
        assertEquals(0, gc.rc, gc.err);
        assertFalse(Files.exists(cacheFile), "the synthetic DEL removed the cache entry");
        assertEquals(Set.of(), allocations("jrt"), "and host-local's allocation");
        assertFalse(sh("ip", "-n", ctr, "link").contains("eth0"), "and the interface");
    }

    /** IP files host-local keeps for a network (not its lock and last-reserved bookkeeping). */
    private static Set<String> allocations(String network) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        Path d = ipam.resolve(network);
        if (!Files.isDirectory(d)) return out;
        try (Stream<Path> s = Files.list(d)) {
            for (Path p : s.toList()) {
                String n = p.getFileName().toString();
                if (!n.equals("lock") && !n.startsWith("last_reserved_ip")) out.add(n);
            }
        }
        return out;
    }

    record Run(int rc, String out, String err) {}

    /** Runs the jcni CLI in a fresh JVM inside the test's host netns. */
    private static Run jcni(String capArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", host));
        cmd.addAll(Jvm.commandOn(classpath(), Launcher.Kind.PLUGIN, "io.jcni.cli.Main"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.put("NETCONFPATH", tmp.resolve("net.d").toString());
        env.put("CNI_PATH", REF.toString());
        env.put("JCNI_CACHE_DIR", cache.toString());
        env.put("JCNI_PLUGIN_TIMEOUT", "60");
        env.remove("CNI_ARGS");
        env.remove("CNI_IFNAME");
        if (capArgs != null) env.put("CAP_ARGS", capArgs);
        else env.remove("CAP_ARGS");
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("jcni " + String.join(" ", args) + " did not finish");
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static String classpath() {
        Set<String> cp = new LinkedHashSet<>();
        for (Class<?> c : List.of(Main.class, Cni.class, Json.class, io.jcni.common.Flags.class)) {
            cp.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().getPath()).toString());
        }
        return String.join(":", cp);
    }

    private static String sh(String... cmd) {
        return Proc.ok(cmd);
    }
}
