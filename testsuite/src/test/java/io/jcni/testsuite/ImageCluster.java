package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster around {@link ImageNode}s: in the world's host namespace an underlay bridge
 * (192.168.78.1/24) and a real etcd (Debian's etcd-server) on it, with TLS and client certificates
 * as the manifest's Secret {@code jcni-etcd-tls} holds them (ca.crt, tls.crt, tls.key), holding the
 * ConfigMap's net-conf.json at the manifest's prefix; each node is a namespace with eth0 on the
 * underlay and a default route (the agent's underlay is the default route's interface, as flanneld's).
 * etcd is a process of the world and the nodes its namespaces: they go when the world closes.
 */
final class ImageCluster {
    static final String ETCD_IP = "192.168.78.1";
    static final String ETCD = "https://" + ETCD_IP + ":2379";
    final World w;
    final Path pki;
    final Path secret;
    private final Process etcd;
    private final List<ImageNode> nodes = new ArrayList<>();

    ImageCluster(World w) throws Exception {
        this.w = w;
        World.bridge(w.host, "ul", ETCD_IP + "/24");
        pki = Files.createDirectories(w.dir.resolve("pki"));
        secret = Files.createDirectories(w.dir.resolve("secret"));
        certificates();
        etcd = w.start(w.host, List.of("etcd", "--name", "image-test",
                "--data-dir", w.dir.resolve("etcd").toString(),
                "--listen-client-urls", ETCD, "--advertise-client-urls", ETCD,
                "--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "image-test=http://127.0.0.1:2380",
                "--cert-file", pki.resolve("server.crt").toString(), "--key-file", pki.resolve("server.key").toString(),
                "--trusted-ca-file", secret.resolve("ca.crt").toString(), "--client-cert-auth"), w.dir.resolve("etcd.log"));
        // flanneld's etcd mode reads the network config from <prefix>/config; an operator puts it there once.
        String netConf = (String) ManifestTest.map(ManifestTest.byKind().get("ConfigMap").get("data")).get("net-conf.json");
        try {
            Await.until("etcd taking the network config", Duration.ofSeconds(30), () -> {
                if (!etcd.isAlive()) throw new AssertionError("etcd exited " + etcd.exitValue());
                return etcdctl("put", "/coreos.com/network/config", netConf).rc() == 0;
            });
        } catch (AssertionError e) {
            throw new AssertionError("etcd did not answer: " + etcdLog(), e);
        }
    }

    /** A CA, etcd's server certificate for ETCD_IP, and a node's client certificate (no CommonName: etcd's gateway refuses one once authentication is on). */
    private void certificates() throws IOException {
        String ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
        Path ca = secret.resolve("ca.crt"), caKey = pki.resolve("ca.key");
        Files.writeString(pki.resolve("server.ext"), "subjectAltName=IP:" + ETCD_IP + "\nextendedKeyUsage=serverAuth,clientAuth\n");
        Files.writeString(pki.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
        String script = String.join("\n",
                "set -e",
                "openssl req -x509 " + ec + " -keyout " + caKey + " -subj /CN=jcni-image-test-ca -days 2 -out " + ca,
                "openssl req " + ec + " -keyout " + pki.resolve("server.key") + " -subj /CN=etcd -out " + pki.resolve("server.csr"),
                "openssl x509 -req -in " + pki.resolve("server.csr") + " -CA " + ca + " -CAkey " + caKey + " -CAcreateserial -days 2"
                        + " -extfile " + pki.resolve("server.ext") + " -out " + pki.resolve("server.crt"),
                "openssl req " + ec + " -keyout " + secret.resolve("tls.key") + " -subj /O=jcni-node -out " + pki.resolve("client.csr"),
                "openssl x509 -req -in " + pki.resolve("client.csr") + " -CA " + ca + " -CAkey " + caKey + " -CAcreateserial -days 2"
                        + " -extfile " + pki.resolve("client.ext") + " -out " + secret.resolve("tls.crt"));
        Sh.run(null, null, 60, "sh", "-c", script).ok();
        Files.setPosixFilePermissions(secret.resolve("tls.key"), PosixFilePermissions.fromString("rw-------"));
    }

    Sh.Run etcdctl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("env", "ETCDCTL_API=3", "etcdctl",
                "--endpoints", ETCD, "--cacert", secret.resolve("ca.crt").toString(), "--cert", secret.resolve("tls.crt").toString(),
                "--key", secret.resolve("tls.key").toString(), "--dial-timeout", "2s", "--command-timeout", "5s"));
        cmd.addAll(List.of(args));
        return Sh.run(null, null, 30, World.inNs(w.host, cmd).toArray(String[]::new));
    }

    /** Node i (1..): its namespace on the underlay as 192.168.78.(10+i), its scratch root, the cluster's etcd and Secret. */
    ImageNode node(int i) throws IOException {
        String ns = "jts-n" + i + "-" + w.id;
        w.namespace(ns);
        World.attach(w.host, "ul", "n" + i, ns, "eth0", "192.168.78." + (10 + i) + "/24");
        World.ip(ns, "route", "add", "default", "via", ETCD_IP);
        ImageNode node = new ImageNode(ns, w.dir.resolve("node" + i));
        node.configMap.put("etcd-endpoints", ETCD);
        node.secretDir = secret;
        nodes.add(node);
        return node;
    }

    String etcdLog() {
        try {
            return Files.readString(w.dir.resolve("etcd.log"));
        } catch (IOException e) {
            return "";
        }
    }
}
