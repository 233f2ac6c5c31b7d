package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keys as openssl writes them (RSA PKCS#1 and PKCS#8, EC SEC1 with its EC PARAMETERS block, EC
 * PKCS#8) read with the JDK alone; a key is matched to its certificate and to no other; the
 * checks made before connecting (expired certificate, foreign key, encrypted key, loose mode).
 */
class PemKeysTest {
    @TempDir
    Path dir;

    @Test
    void everyKeyFormatOpensslWritesIsReadAndMatchesItsCertificate() throws Exception {
        List<String[]> gens = List.of(
                new String[] {"rsa-pkcs1", "openssl genrsa -traditional -out K 2048", "BEGIN RSA PRIVATE KEY"},
                new String[] {"rsa-pkcs8", "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out K", "BEGIN PRIVATE KEY"},
                new String[] {"ec-sec1", "openssl ecparam -name prime256v1 -genkey -out K", "BEGIN EC PRIVATE KEY"},
                new String[] {"ec-pkcs8", "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out K", "BEGIN PRIVATE KEY"});
        List<PrivateKey> keys = new ArrayList<>();
        List<X509Certificate> certs = new ArrayList<>();
        for (String[] g : gens) {
            Path k = dir.resolve(g[0] + ".key"), c = dir.resolve(g[0] + ".pem");
            sh(g[1].replace("K", k.toString()));
            sh("openssl req -x509 -new -key " + k + " -subj /CN=" + g[0] + " -days 1 -out " + c);
            assertTrue(Files.readString(k).contains(g[2]), g[0] + " is in the format under test");
            PrivateKey key = PemKeys.privateKey(Files.readString(k));
            X509Certificate cert = PemKeys.certificates(Files.readString(c)).getFirst();
            assertEquals(g[0].startsWith("rsa") ? "RSA" : "EC", key.getAlgorithm(), g[0]);
            assertTrue(TlsFiles.belongsTo(key, cert), g[0] + " signs for its certificate");
            keys.add(key);
            certs.add(cert);
        }
        assertFalse(TlsFiles.belongsTo(keys.get(0), certs.get(1)), "another RSA certificate");
        assertFalse(TlsFiles.belongsTo(keys.get(2), certs.get(3)), "another EC certificate");
        assertFalse(TlsFiles.belongsTo(keys.get(2), certs.get(0)), "RSA certificate, EC key");
    }

    @Test
    void clientFilesAreCheckedBeforeConnecting() throws Exception {
        Path k = dir.resolve("c.key"), c = dir.resolve("c.pem"), other = dir.resolve("o.key");
        sh("openssl ecparam -name prime256v1 -genkey -noout -out " + k);
        sh("openssl ecparam -name prime256v1 -genkey -noout -out " + other);
        sh("openssl req -x509 -new -key " + k + " -subj /CN=c -days 1 -out " + c);
        Files.setPosixFilePermissions(k, PosixFilePermissions.fromString("rw-------"));
        EtcdSecurity good = new EtcdSecurity(null, c, k, null, null);
        TlsFiles.context(good);
        assertTrue(good.keyFileWarning().isEmpty(), "0600: no warning");
        Files.setPosixFilePermissions(k, PosixFilePermissions.fromString("rw-r--r--"));
        assertTrue(good.keyFileWarning().orElseThrow().contains("chmod 600 " + k), good.keyFileWarning().toString());

        var foreign = assertThrows(EtcdAuthException.class, () -> TlsFiles.context(new EtcdSecurity(null, c, other, null, null)));
        assertTrue(foreign.getMessage().contains("does not belong to the client certificate " + c), foreign.getMessage());

        Path expired = dir.resolve("expired.pem");
        expiredCertificate(k, expired);
        var old = assertThrows(EtcdAuthException.class, () -> TlsFiles.context(new EtcdSecurity(null, expired, k, null, null)));
        assertTrue(old.getMessage().contains("client certificate " + expired + " expired on 2020-01-02"), old.getMessage());

        Path enc = dir.resolve("enc.key");
        sh("openssl pkey -in " + k + " -aes256 -passout pass:x -out " + enc);
        var encrypted = assertThrows(EtcdAuthException.class, () -> TlsFiles.context(new EtcdSecurity(null, c, enc, null, null)));
        assertTrue(encrypted.getMessage().contains("encrypted"), encrypted.getMessage());

        var missing = assertThrows(EtcdAuthException.class, () -> TlsFiles.context(new EtcdSecurity(dir.resolve("nope.pem"), null, null, null, null)));
        assertTrue(missing.getMessage().contains("CA file " + dir.resolve("nope.pem") + ": cannot read"), missing.getMessage());
    }

    @Test
    void derLengthsAndWrappers() throws GeneralSecurityException {
        assertArrayEquals(new byte[] {0x04, 0x01, 0x07}, PemKeys.tlv(0x04, new byte[] {7}));
        byte[] big = PemKeys.tlv(0x04, new byte[300]);
        assertArrayEquals(new int[] {4, 300}, PemKeys.header(big, 0));
        assertEquals(0x82, big[1] & 0xff);
        assertThrows(GeneralSecurityException.class, () -> PemKeys.header(new byte[] {0x30, (byte) 0x85, 1, 1, 1, 1, 1}, 0));
        assertThrows(GeneralSecurityException.class, () -> PemKeys.header(new byte[] {0x30, 0x05, 1}, 0));
        // a SEC1 key without its curve cannot be wrapped: say so instead of guessing a curve
        byte[] noCurve = PemKeys.tlv(0x30, concat(new byte[] {0x02, 0x01, 0x01}, PemKeys.tlv(0x04, new byte[32])));
        assertTrue(assertThrows(GeneralSecurityException.class, () -> PemKeys.ecSec1ToPkcs8(noCurve)).getMessage().contains("curve"));
        assertThrows(GeneralSecurityException.class, () -> PemKeys.privateKey("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"));
    }

    /** A certificate for {@code key} valid only on 2020-01-01, signed with openssl's CA command (req -x509 cannot back-date). */
    private void expiredCertificate(Path key, Path out) throws Exception {
        Path ca = dir.resolve("ca");
        Files.createDirectories(ca);
        Files.writeString(ca.resolve("index.txt"), "");
        Files.writeString(ca.resolve("serial"), "01\n");
        Files.writeString(ca.resolve("ca.cnf"), "[ca]\ndefault_ca=c\n[c]\ndatabase=" + ca.resolve("index.txt") + "\nserial=" + ca.resolve("serial")
                + "\nnew_certs_dir=" + ca + "\ndefault_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\n");
        sh("openssl ecparam -name prime256v1 -genkey -noout -out " + ca.resolve("ca.key"));
        sh("openssl req -x509 -new -key " + ca.resolve("ca.key") + " -subj /CN=ca -days 1 -out " + ca.resolve("ca.pem"));
        sh("openssl req -new -key " + key + " -subj /CN=old -out " + ca.resolve("old.csr"));
        sh("openssl ca -batch -notext -config " + ca.resolve("ca.cnf") + " -cert " + ca.resolve("ca.pem") + " -keyfile " + ca.resolve("ca.key")
                + " -in " + ca.resolve("old.csr") + " -out " + out + " -startdate 20200101000000Z -enddate 20200102000000Z");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] o = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, o, a.length, b.length);
        return o;
    }

    private static void sh(String cmd) throws Exception {
        Process p = new ProcessBuilder(cmd.split(" ")).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), cmd);
        assertEquals(0, p.exitValue(), cmd + ": " + out);
    }
}
