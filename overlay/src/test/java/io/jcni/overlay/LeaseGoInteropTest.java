package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jcni.testfixtures.Peers;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * jcni's leases as flanneld reads them: a small Go program (src/test/go/leaseinterop, standard
 * library only, built in GOPATH mode with Debian's golang-go) decodes each lease with Go's
 * encoding/json into structs written from flannel's lease format (LeaseAttrs: PublicIP,
 * PublicIPv6, BackendType, BackendData, BackendV6Data; the vxlan backend's VNI and VtepMAC) and
 * the key with flannel's subnet key pattern, refusing unknown keys, and prints what it understood.
 */
@Tag("interop")
class LeaseGoInteropTest {
    private static final String PREFIX = "/coreos.com/network";
    private static Path work;
    private static Path binary;

    @BeforeAll
    static void build() throws Exception {
        Peers.require(goInstalled(), "go is not installed (apt-get install golang-go)");
        work = Files.createTempDirectory("jcni-leaseinterop-");
        Path pkg = work.resolve("gopath/src/jcni/leaseinterop");
        Files.createDirectories(pkg);
        Files.copy(Path.of("src/test/go/leaseinterop/main.go"), pkg.resolve("main.go"));
        binary = work.resolve("leaseinterop");
        ProcessBuilder pb = new ProcessBuilder("go", "build", "-o", binary.toString(), ".").directory(pkg.toFile())
                .redirectErrorStream(true).redirectOutput(work.resolve("build.log").toFile());
        pb.environment().putAll(Map.of("GOPATH", work.resolve("gopath").toString(), "GO111MODULE", "off",
                "GOCACHE", work.resolve("gocache").toString(), "GOFLAGS", "", "CGO_ENABLED", "0"));
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("go build did not finish in 300 s");
        }
        assertEquals(0, p.exitValue(), "go build: " + Files.readString(work.resolve("build.log")));
    }

    @AfterAll
    static void clean() throws IOException {
        if (work == null) return;
        try (Stream<Path> s = Files.walk(work)) {
            for (Path f : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
        }
    }

    private static boolean goInstalled() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, "go"))) return true;
        }
        return false;
    }

    /** What the Go program printed for each "KEY\tVALUE" line. */
    private static List<String> decode(List<String> lines) throws Exception {
        Process p = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        List<String> out = new ArrayList<>(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList());
        if (!p.waitFor(30, TimeUnit.SECONDS)) p.destroyForcibly();
        return out;
    }

    private static String line(Lease l) {
        return Lease.key(PREFIX, l.subnet()) + "\t" + l.value();
    }

    @Test
    void vxlanAndHostGwLeasesParseUnderFlannelsStructs() throws Exception {
        Lease vxlan = new Lease(Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.0.2"), "vxlan", 4096, "aa:bb:cc:00:01:02");
        Lease hostGw = new Lease(Cidr.parse("10.5.2.0/24"), IpAddr.parse("192.168.0.3"), "host-gw", 0, null);
        assertEquals(List.of(
                "OK subnet=10.5.1.0/24 ipv6subnet=- public=192.168.0.2 publicv6=- type=vxlan vni=4096 mac=aa:bb:cc:00:01:02 v6vni=- v6mac=-",
                "OK subnet=10.5.2.0/24 ipv6subnet=- public=192.168.0.3 publicv6=- type=host-gw vni=- mac=- v6vni=- v6mac=-"),
                decode(List.of(line(vxlan), line(hostGw))));
    }

    /**
     * A dual-stack lease as flanneld writes it with EnableIPv6 (key {@code <v4>-<len>&<v6>-<len>},
     * PublicIPv6, BackendV6Data), and the same lease as jcni's writer makes it: both must decode
     * alike, or a flanneld host could not read a jcni host's lease.
     */
    @Test
    void dualStackLeaseFormParses() throws Exception {
        String key = PREFIX + "/subnets/10.5.1.0-24&fc00:0:0:1::-64";
        String value = "{\"PublicIP\":\"192.168.0.2\",\"PublicIPv6\":\"fd00::2\",\"BackendType\":\"vxlan\","
                + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"aa:bb:cc:00:01:02\"},\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"aa:bb:cc:00:01:03\"}}";
        Lease jcni = new Lease(Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.0.2"), "vxlan", 1, "aa:bb:cc:00:01:02",
                Cidr.parse("fc00:0:0:1::/64"), IpAddr.parse("fd00::2"), "aa:bb:cc:00:01:03");
        String decoded = "OK subnet=10.5.1.0/24 ipv6subnet=fc00:0:0:1::/64 public=192.168.0.2 publicv6=fd00::2 type=vxlan"
                + " vni=1 mac=aa:bb:cc:00:01:02 v6vni=1 v6mac=aa:bb:cc:00:01:03";
        assertEquals(List.of(decoded, decoded), decode(List.of(key + "\t" + value, jcni.key(PREFIX) + "\t" + jcni.value())));
    }

    /** An IPv6-only lease from jcni's writer (key {@code 0.0.0.0-0&<v6>-<len>}) as flanneld reads it. */
    @Test
    void ipv6OnlyLeaseFromJcniParses() throws Exception {
        Lease jcni = new Lease(Lease.NO_SUBNET, Lease.NO_PUBLIC_IP, "vxlan", 1, null,
                Cidr.parse("fc00:0:0:2::/64"), IpAddr.parse("fd00::3"), "aa:bb:cc:00:02:03");
        assertEquals(List.of("OK subnet=0.0.0.0/0 ipv6subnet=fc00:0:0:2::/64 public=0.0.0.0 publicv6=fd00::3 type=vxlan"
                + " vni=- mac=- v6vni=1 v6mac=aa:bb:cc:00:02:03"), decode(List.of(jcni.key(PREFIX) + "\t" + jcni.value())));
    }

    /** The program refuses what flannel's structs cannot hold, so the passing cases above mean something. */
    @Test
    void theDecoderRefusesWhatFlannelCannotRead() throws Exception {
        List<String> out = decode(List.of(
                PREFIX + "/subnets/10.5.1.0-24\t{\"PublicIP\":\"fd00::1\",\"BackendType\":\"vxlan\"}",
                PREFIX + "/subnets/10.5.1.0-24\t{\"PublicIP\":\"192.168.0.2\",\"BackendType\":\"vxlan\",\"BackendData\":{\"VNI\":70000,\"VtepMAC\":\"aa:bb:cc:00:01:02\"}}",
                PREFIX + "/subnets/10.5.1.0-24\t{\"PublicIP\":\"192.168.0.2\",\"Vni\":1}",
                PREFIX + "/subnets/10.5.1.0/24\t{\"PublicIP\":\"192.168.0.2\"}"));
        assertEquals(4, out.size(), String.join("\n", out));
        for (String l : out) assertEquals("ERR", l.substring(0, 3), l);
    }
}
