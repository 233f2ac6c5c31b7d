package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A production-like etcd (Debian's etcd-server): TLS, {@code --client-cert-auth} and RBAC (root
 * plus a user whose role grants only the overlay's and cluster-ipam's prefixes). The overlay agent
 * and cluster-ipam work with the right files and each key format; each wrong file or password, and
 * plain http against it, fails with its own message (cluster-ipam: code 11; the agent: logged on
 * every retry).
 */
@Tag("root")
class EtcdTlsLabTest {
    private static final String HTTPS = "https://" + Lab.ETCD_IP + ":2379";
    private static final String USER = "jcni", PASSWORD = "s3cret-pw", ROOT_PASSWORD = "r00t-pw";
    private static final String IPAM_PREFIX = "/tls-ipam";

    @Test
    void agentAndClusterIpamOverTlsWithClientCertificatesAndRbac() throws Exception {
        withTlsEtcd((lab, pki) -> {
            for (List<String> step : List.of(
                    List.of("user", "add", "root:" + ROOT_PASSWORD),
                    List.of("role", "add", "overlay"),
                    List.of("role", "grant-permission", "overlay", "--prefix=true", "readwrite", lab.prefix + "/"),
                    List.of("role", "grant-permission", "overlay", "--prefix=true", "readwrite", IPAM_PREFIX + "/"),
                    List.of("user", "add", USER + ":" + PASSWORD),
                    List.of("user", "grant-role", USER, "overlay"),
                    List.of("auth", "enable"))) {
                Lab.Out o = etcdctl(lab, pki, null, step.toArray(String[]::new));
                assertEquals(0, o.exit(), step + ": " + o.stdout());
            }
            Lab.Out put = etcdctl(lab, pki, "root:" + ROOT_PASSWORD, "put", lab.prefix + "/config", "{\"Network\":\"10.67.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            assertEquals(0, put.exit(), put.stdout());
            assertTrue(etcdctl(lab, pki, null, "get", lab.prefix + "/config").exit() != 0, "RBAC is on: no user, no read");

            // the agent, flanneld's flags, an EC key in SEC1 form
            lab.addHost(1);
            lab.startAgent(1, agentFlags(pki, "ec-sec1", PASSWORD));
            io.jcni.plugins.meta.flannel.SubnetFile env;
            try {
                env = lab.awaitSubnetEnv(1);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nagent log:\n" + lab.log(1), e);
            }
            assertTrue(env.subnet().toString().startsWith("10.67."), env.toString());
            // the agent with a wrong password: told what is wrong, on every retry, and never leases
            lab.addHost(2);
            lab.startAgent(2, agentFlags(pki, "rsa-pkcs1", "not-the-password"));
            String badAuth = "etcd " + HTTPS + ": user " + USER + " could not authenticate";
            Lab.waitFor("the bad password logged twice\n" + lab.log(2), Duration.ofSeconds(60),
                    () -> lab.log(2).split(java.util.regex.Pattern.quote(badAuth), -1).length > 2);
            assertTrue(!Files.exists(lab.subnetFile(2)), "no lease with a wrong password");
            lab.stopAgent(2);

            // cluster-ipam: every key format works; each wrong setting fails with code 11 and its own message
            Path pw = lab.dir.resolve("pw"), badPw = lab.dir.resolve("bad-pw");
            Files.writeString(pw, PASSWORD + "\n");
            Files.writeString(badPw, "wrong\n");
            Path looseKey = lab.dir.resolve("loose.key");
            Files.copy(pki.key("ec-pkcs8"), looseKey);
            Files.setPosixFilePermissions(looseKey, PosixFilePermissions.fromString("rw-r--r--"));
            Map<String, String> cases = new LinkedHashMap<>();
            for (String k : List.of("rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8")) {
                cases.put("ok-" + k, ipam(HTTPS, pki.cert("ca"), pki.cert(k), pki.key(k), pw));
            }
            cases.put("loose-key", ipam(HTTPS, pki.cert("ca"), pki.cert("ec-pkcs8"), looseKey, pw));
            cases.put("wrong-ca", ipam(HTTPS, pki.cert("other-ca"), pki.cert("ec-sec1"), pki.key("ec-sec1"), pw));
            cases.put("wrong-cert", ipam(HTTPS, pki.cert("ca"), pki.cert("stranger"), pki.key("stranger"), pw));
            cases.put("expired-cert", ipam(HTTPS, pki.cert("ca"), pki.cert("expired"), pki.key("expired"), pw));
            cases.put("wrong-key", ipam(HTTPS, pki.cert("ca"), pki.cert("ec-sec1"), pki.key("ec-pkcs8"), pw));
            cases.put("bad-password", ipam(HTTPS, pki.cert("ca"), pki.cert("ec-sec1"), pki.key("ec-sec1"), badPw));
            cases.put("cn-cert", ipam(HTTPS, pki.cert("ca"), pki.cert("with-cn"), pki.key("with-cn"), pw));
            cases.put("plain-http", ipam("http://" + Lab.ETCD_IP + ":2379", pki.cert("ca"), pki.cert("ec-sec1"), pki.key("ec-sec1"), pw));
            Map<String, String[]> got = probe(lab, 1, cases);

            for (String k : List.of("rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8", "loose")) {
                String[] r = got.get(k.equals("loose") ? "loose-key" : "ok-" + k);
                assertEquals("0", r[1], k + ": " + String.join(" | ", r));
                assertTrue(r[2].contains("10.73."), k + ": " + r[2]);
            }
            assertTrue(got.get("loose-key")[3].contains("WARNING: etcd key file " + looseKey + " is accessible by others"),
                    got.get("loose-key")[3]);
            assertTrue(got.get("ok-ec-sec1")[3].isBlank(), "a 0600 key: no warning: " + got.get("ok-ec-sec1")[3]);
            assertFails(got, "wrong-ca", "etcd " + HTTPS + ": TLS: etcd's server certificate is not signed by the CA file " + pki.cert("other-ca"));
            assertFails(got, "wrong-cert", "etcd " + HTTPS + ": TLS: etcd rejected our client certificate " + pki.cert("stranger"));
            assertFails(got, "expired-cert", "client certificate " + pki.cert("expired") + " expired on 2020-01-02");
            assertFails(got, "wrong-key", "key " + pki.key("ec-pkcs8") + " does not belong to the client certificate " + pki.cert("ec-sec1"));
            assertFails(got, "bad-password", badAuth);
            assertFails(got, "cn-cert", "etcd " + HTTPS + " refuses a client certificate with a CommonName on its JSON gateway");
            assertFails(got, "plain-http", "etcd http://" + Lab.ETCD_IP + ":2379 speaks TLS: use https://");

            // what the allocations left: the user's keys, readable only with credentials
            Lab.Out keys = etcdctl(lab, pki, "root:" + ROOT_PASSWORD, "get", "--prefix", "--keys-only", IPAM_PREFIX + "/10.73.0.0-24/ips/");
            assertEquals(5, keys.stdout().lines().filter(l -> !l.isBlank()).count(), keys.stdout());
        });
    }

    /**
     * What the agent's watchdog still guards: the etcd client bounds an answer as a whole, but a
     * TLS handshake only read by read. Host 1 reaches etcd through a proxy that then closes its
     * connections and trickles each new one a byte every 300 ms: the next handshake never
     * completes, though each read returns within the timeout. The watchdog finds the lease call
     * past its deadline, replaces the client (failing the stuck call) and leases again; once
     * connections flow again host 1 holds the same subnet and keeps it.
     */
    @Test
    void aTrickledTlsHandshakeIsCaughtByTheWatchdog() throws Exception {
        withTlsEtcd((lab, pki) -> {
            Lab.Out put = etcdctl(lab, pki, null, "put", lab.prefix + "/config", "{\"Network\":\"10.68.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            assertEquals(0, put.exit(), put.stdout());
            lab.addHost(1);
            try (StallingProxy proxy = new StallingProxy("/var/run/netns/" + lab.host(1), Lab.ETCD_IP, 2379)) {
                lab.startAgent(1, "--etcd-endpoints", proxy.endpoint().replace("http://", "https://"), "--etcd-timeout", "1",
                        "--etcd-cafile", pki.cert("ca").toString(), "--etcd-certfile", pki.cert("ec-sec1").toString(),
                        "--etcd-keyfile", pki.key("ec-sec1").toString(), "--ipam-reconcile-every", "0");
                io.jcni.plugins.meta.flannel.SubnetFile env;
                try {
                    env = lab.awaitSubnetEnv(1);
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "\nagent log:\n" + lab.log(1), e);
                }
                String key1 = Lease.key(lab.prefix, env.subnet().masked());

                proxy.trickleConnections(true);
                Lab.waitFor("the watchdog catching the stalled handshake\n" + lab.log(1), Duration.ofSeconds(40),
                        () -> lab.log(1).contains("msg=\"lease keep-alive stalled; new etcd client, leasing again\""));
                proxy.trickleConnections(false);

                Lab.waitFor("host 1 leased again\n" + lab.log(1), Duration.ofSeconds(60),
                        () -> lab.log(1).split(java.util.regex.Pattern.quote("msg=\"leased\""), -1).length > 2);
                assertEquals(env.subnet().masked(), SubnetEnv.read(lab.subnetFile(1)).subnet().masked(), "the same subnet");
                Thread.sleep(7000); // over two lease TTLs: kept alive now
                assertTrue(etcdctl(lab, pki, null, "get", key1).stdout().contains(Lab.hostIp(1)), "host 1's lease renewed\n" + lab.log(1));
            }
        });
    }

    /** A test's body, given its lab and PKI with the TLS etcd answering. */
    private interface TlsLabBody {
        void run(Lab lab, TestPki pki) throws Exception;
    }

    /** Runs {@code body} in a new lab with a TLS etcd, stopped by pid after it whatever happens. */
    private static void withTlsEtcd(TlsLabBody body) throws Exception {
        try (Lab lab = new Lab()) {
            TestPki pki = new TestPki(lab.dir.resolve("pki"), Lab.ETCD_IP);
            Process etcd = startTlsEtcd(lab, pki);
            try {
                body.run(lab, pki);
            } finally {
                etcd.destroyForcibly();
                etcd.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** etcd with TLS and {@code --client-cert-auth} in the lab's namespace on {@link #HTTPS}, answering; stopped by the caller. */
    private static Process startTlsEtcd(Lab lab, TestPki pki) throws Exception {
        Lab.sh("ip", "-n", lab.labNs, "link", "add", "ul", "type", "bridge");
        Lab.sh("ip", "-n", lab.labNs, "addr", "add", Lab.ETCD_IP + "/24", "dev", "ul");
        Lab.sh("ip", "-n", lab.labNs, "link", "set", "ul", "up");
        Process etcd = new ProcessBuilder("nsenter", "--net=/var/run/netns/" + lab.labNs, "etcd", "--name", "tls",
                "--data-dir", lab.dir.resolve("etcd").toString(),
                "--listen-client-urls", HTTPS, "--advertise-client-urls", HTTPS,
                "--cert-file", pki.cert("server").toString(), "--key-file", pki.key("server").toString(),
                "--trusted-ca-file", pki.cert("ca").toString(), "--client-cert-auth",
                "--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "tls=http://127.0.0.1:2380")
                .redirectErrorStream(true).redirectOutput(lab.dir.resolve("etcd.log").toFile()).start();
        try {
            Lab.waitFor("TLS etcd answers", Duration.ofSeconds(30), () -> etcdctl(lab, pki, null, "endpoint", "health").exit() == 0);
        } catch (Exception | Error e) {
            etcd.destroyForcibly();
            throw e;
        }
        return etcd;
    }

    private static void assertFails(Map<String, String[]> got, String name, String message) {
        String[] r = got.get(name);
        assertTrue(!r[1].equals("0"), name + " must fail: " + String.join(" | ", r));
        Map<String, Object> err = Json.parseObject(r[2]);
        assertEquals(11L, ((Number) err.get("code")).longValue(), name + ": " + r[2]);
        assertTrue(String.valueOf(err.get("msg")).contains(message), name + ": expected \"" + message + "\" in " + r[2]);
    }

    private static String[] agentFlags(TestPki pki, String key, String password) {
        return new String[] {"--etcd-endpoints", HTTPS, "--etcd-cafile", pki.cert("ca").toString(), "--etcd-certfile", pki.cert(key).toString(),
                "--etcd-keyfile", pki.key(key).toString(), "--etcd-username", USER, "--etcd-password", password, "--ipam-reconcile-every", "0"};
    }

    private static String ipam(String endpoint, Path ca, Path cert, Path key, Path passwordFile) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "cluster-ipam");
        m.put("etcdEndpoints", List.of(endpoint));
        m.put("range", "10.73.0.0/24");
        m.put("etcdPrefix", IPAM_PREFIX);
        m.put("timeout", 10);
        m.put("etcdCACertFile", ca.toString());
        m.put("etcdCertFile", cert.toString());
        m.put("etcdKeyFile", key.toString());
        m.put("etcdUsername", USER);
        m.put("etcdPasswordFile", passwordFile.toString());
        return Json.write(m);
    }

    /** Runs every case in one JVM inside host i's netns; name -> {name, exit, stdout, stderr}. */
    private static Map<String, String[]> probe(Lab lab, int i, Map<String, String> cases) throws Exception {
        Path in = lab.dir.resolve("cases.tsv");
        List<String> lines = new ArrayList<>();
        cases.forEach((k, v) -> lines.add(k + "\t" + v));
        Files.write(in, lines);
        Lab.Out o = Lab.run(lab.inHost(i, Jvm.command(Launcher.Kind.PLUGIN, EtcdTlsProbe.class.getName(), in.toString())));
        assertEquals(0, o.exit(), o.stdout());
        Map<String, String[]> out = new LinkedHashMap<>();
        for (String line : o.stdout().split("\n")) {
            String[] f = line.split("\t", -1);
            if (f.length == 4 && cases.containsKey(f[0])) out.put(f[0], f);
        }
        assertEquals(cases.keySet(), out.keySet(), o.stdout());
        return out;
    }

    private static Lab.Out etcdctl(Lab lab, TestPki pki, String user, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "--net=/var/run/netns/" + lab.labNs, "env", "ETCDCTL_API=3", "etcdctl",
                "--endpoints", HTTPS, "--cacert", pki.cert("ca").toString(), "--cert", pki.cert("ec-pkcs8").toString(),
                "--key", pki.key("ec-pkcs8").toString(), "--dial-timeout", "3s", "--command-timeout", "10s"));
        if (user != null) cmd.add("--user=" + user);
        cmd.addAll(List.of(args));
        return Lab.run(cmd);
    }
}
