package io.jcni.overlay;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * Certificates for a TLS etcd, made with openssl in {@code dir}: a CA, etcd's server certificate
 * for {@code serverIp}, client certificates of that CA with keys in each format openssl writes, and
 * the wrong ones (another CA, a client certificate of that other CA, an expired client certificate,
 * one with a CommonName).
 */
final class TestPki {
    final Path dir;

    TestPki(Path dir, String serverIp) throws Exception {
        this.dir = Files.createDirectories(dir);
        ca("ca");
        ca("other-ca");
        Path ext = dir.resolve("server.ext");
        Files.writeString(ext, "subjectAltName=IP:" + serverIp + ",IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
        key("server", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        sign("server", "ca", ext, "");
        Path clientExt = dir.resolve("client.ext");
        Files.writeString(clientExt, "extendedKeyUsage=clientAuth\n");
        key("rsa-pkcs1", "openssl genrsa -traditional -out K 2048");
        key("rsa-pkcs8", "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out K");
        key("ec-sec1", "openssl ecparam -name prime256v1 -genkey -out K");
        key("ec-pkcs8", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        for (String k : List.of("rsa-pkcs1", "rsa-pkcs8", "ec-sec1", "ec-pkcs8")) sign(k, "ca", clientExt, "");
        key("with-cn", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        sign("with-cn", "ca", clientExt, "");
        key("stranger", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        sign("stranger", "other-ca", clientExt, "");
        key("expired", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        sign("expired", "ca", clientExt, "-startdate 20200101000000Z -enddate 20200102000000Z");
    }

    Path cert(String name) {
        return dir.resolve(name + ".pem");
    }

    Path key(String name) {
        return dir.resolve(name + ".key");
    }

    private void ca(String name) throws Exception {
        key(name, "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out K");
        Lab.sh("openssl", "req", "-x509", "-new", "-key", key(name).toString(), "-subj", "/CN=" + name, "-days", "2", "-out", cert(name).toString());
        Path db = Files.createDirectories(dir.resolve(name + ".db"));
        Files.writeString(db.resolve("index.txt"), "");
        Files.writeString(db.resolve("serial"), "01\n");
        Files.writeString(dir.resolve(name + ".cnf"), "[ca]\ndefault_ca=c\n[c]\ndatabase=" + db.resolve("index.txt") + "\nserial="
                + db.resolve("serial") + "\nnew_certs_dir=" + db + "\ndefault_md=sha256\npolicy=p\nunique_subject=no\ncopy_extensions=none\n"
                + "default_days=2\n[p]\norganizationName=optional\ncommonName=optional\n");
    }

    private void key(String name, String cmd) throws Exception {
        Lab.sh(cmd.replace("K", key(name).toString()).split(" "));
        Files.setPosixFilePermissions(key(name), PosixFilePermissions.fromString("rw-------"));
    }

    /** openssl ca rather than x509 -req: it alone can back-date a certificate (the expired one). */
    private void sign(String name, String ca, Path ext, String dates) throws Exception {
        Path csr = dir.resolve(name + ".csr");
        // Client certificates carry no CN: etcd's gateway refuses one once authentication is on (the module README).
        String subject = name.equals("server") || name.equals("with-cn") ? "/CN=" + name : "/O=jcni-" + name;
        Lab.sh("openssl", "req", "-new", "-key", key(name).toString(), "-subj", subject, "-out", csr.toString());
        String cmd = "openssl ca -batch -notext -config " + dir.resolve(ca + ".cnf") + " -cert " + cert(ca) + " -keyfile " + key(ca)
                + " -extfile " + ext + " -in " + csr + " -out " + cert(name) + (dates.isEmpty() ? "" : " " + dates);
        Lab.sh(cmd.split(" "));
    }
}
