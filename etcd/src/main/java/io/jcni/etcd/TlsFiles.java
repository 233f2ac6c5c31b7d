package io.jcni.etcd;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS context for etcd, built from {@link EtcdSecurity}'s PEM files. What can be checked
 * before talking to etcd is checked here, so the error names the file: an unreadable or
 * malformed file, a client certificate outside its validity, a key that does not belong to the
 * certificate (a test signature with the key must verify with the certificate's public key).
 */
final class TlsFiles {
    private TlsFiles() {}

    /** Contexts by their files' identity, so that many clients in one process (jcnid) share one. */
    private static final java.util.concurrent.ConcurrentHashMap<String, SSLContext> CACHE = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The context for {@code sec}, shared while its files are unchanged (path, size, mtime): every
     * cluster-ipam call in jcnid builds a new client, and a shared context means the files are
     * parsed once and TLS sessions resume (the context holds the session cache) instead of a full
     * handshake per call. A file replaced on disk gives a new key, hence a new context.
     */
    static SSLContext cached(EtcdSecurity sec) throws EtcdAuthException {
        StringBuilder key = new StringBuilder(sec.toString());
        for (Path f : new Path[] {sec.caFile(), sec.certFile(), sec.keyFile()}) {
            if (f == null) continue;
            try {
                key.append('|').append(Files.size(f)).append('@').append(Files.getLastModifiedTime(f).toMillis());
            } catch (IOException e) {
                return context(sec); // says what is wrong with the file
            }
        }
        SSLContext c = CACHE.get(key.toString());
        if (c != null) return c;
        c = context(sec);
        if (CACHE.size() > 16) CACHE.clear(); // rotated files: old keys are never asked for again
        CACHE.put(key.toString(), c);
        return c;
    }

    static SSLContext context(EtcdSecurity sec) throws EtcdAuthException {
        return context(sec, null);
    }

    /**
     * What a probe's key manager saw: whether etcd asked for a client certificate and none of ours
     * was issued by a CA it named. The JDK then sends no certificate at all, and etcd closes the
     * connection, often with a reset that overtakes its alert.
     */
    static final class Noted {
        private final java.util.concurrent.atomic.AtomicBoolean asked = new java.util.concurrent.atomic.AtomicBoolean();
        private final java.util.concurrent.atomic.AtomicBoolean chosen = new java.util.concurrent.atomic.AtomicBoolean();
        private volatile String issuers = "";

        /** The CAs etcd named, when it asked and none matched; null otherwise. */
        String unmatchedIssuers() {
            return asked.get() && !chosen.get() ? issuers : null;
        }
    }

    /** {@link #context(EtcdSecurity)} whose key manager notes its choices in {@code noted} (the handshake probe's). */
    static SSLContext noting(EtcdSecurity sec, Noted noted) throws EtcdAuthException {
        return context(sec, noted);
    }

    private static SSLContext context(EtcdSecurity sec, Noted noted) throws EtcdAuthException {
        try {
            TrustManagerFactory tmf = null;
            if (sec.caFile() != null) {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                int i = 0;
                for (X509Certificate ca : certs(sec.caFile(), "CA file")) trust.setCertificateEntry("ca" + i++, ca);
                tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
            }
            KeyManagerFactory kmf = null;
            if (sec.hasClientCert()) {
                List<X509Certificate> chain = certs(sec.certFile(), "client certificate");
                X509Certificate leaf = chain.getFirst();
                try {
                    leaf.checkValidity();
                } catch (CertificateExpiredException e) {
                    throw new EtcdAuthException("client certificate " + sec.certFile() + " expired on " + leaf.getNotAfter().toInstant());
                } catch (CertificateNotYetValidException e) {
                    throw new EtcdAuthException("client certificate " + sec.certFile() + " is not valid before " + leaf.getNotBefore().toInstant()
                            + " (now " + java.time.Instant.now() + ": is the clock right?)");
                }
                PrivateKey key = key(sec.keyFile());
                if (!belongsTo(key, leaf)) {
                    throw new EtcdAuthException("key " + sec.keyFile() + " does not belong to the client certificate " + sec.certFile());
                }
                char[] none = new char[0];
                // JKS, not PKCS12: this store lives in memory only, and a PKCS12 store encrypts the key
                // on setKeyEntry and decrypts it in the factory's init with PBKDF2 (10,000 rounds each):
                // about 85 ms of CPU in a cold C1-only JVM, which a standalone plugin pays on every TLS call.
                KeyStore ks = KeyStore.getInstance("JKS");
                ks.load(null, null);
                ks.setKeyEntry("client", key, none, chain.toArray(new X509Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(ks, none);
            }
            javax.net.ssl.KeyManager[] kms = kmf == null ? null : kmf.getKeyManagers();
            if (kms != null && noted != null && kms[0] instanceof javax.net.ssl.X509ExtendedKeyManager km) {
                kms = new javax.net.ssl.KeyManager[] {new NotingKeyManager(km, noted)};
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kms, tmf == null ? null : tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            if (e instanceof EtcdAuthException a) throw a;
            throw new EtcdAuthException("TLS setup: " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certs(Path file, String what) throws EtcdAuthException {
        String pem = read(file, what);
        try {
            return PemKeys.certificates(pem);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new EtcdAuthException(what + " " + file + ": not a PEM certificate: " + e.getMessage());
        }
    }

    private static PrivateKey key(Path file) throws EtcdAuthException {
        String pem = read(file, "key");
        try {
            return PemKeys.privateKey(pem);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new EtcdAuthException("key " + file + ": not a usable private key: " + e.getMessage());
        }
    }

    private static String read(Path file, String what) throws EtcdAuthException {
        try {
            return Files.readString(file, java.nio.charset.StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new EtcdAuthException(what + " " + file + ": cannot read: " + e, e);
        }
    }

    /** Delegates, noting whether a client alias was asked for and whether one was found. */
    private static final class NotingKeyManager extends javax.net.ssl.X509ExtendedKeyManager {
        private final javax.net.ssl.X509ExtendedKeyManager km;
        private final Noted noted;

        NotingKeyManager(javax.net.ssl.X509ExtendedKeyManager km, Noted noted) {
            this.km = km;
            this.noted = noted;
        }

        private String note(String alias, java.security.Principal[] issuers) {
            noted.asked.set(true);
            if (alias != null) noted.chosen.set(true);
            else if (issuers != null) noted.issuers = String.join("; ", java.util.Arrays.stream(issuers).map(java.security.Principal::getName).toList());
            return alias;
        }

        @Override
        public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return note(km.chooseClientAlias(keyType, issuers, socket), issuers);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers, javax.net.ssl.SSLEngine engine) {
            return note(km.chooseEngineClientAlias(keyType, issuers, engine), issuers);
        }

        @Override
        public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
            return km.getClientAliases(keyType, issuers);
        }

        @Override
        public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
            return km.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return km.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return km.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return km.getPrivateKey(alias);
        }
    }

    static boolean belongsTo(PrivateKey key, X509Certificate cert) {
        String alg = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> null;
        };
        if (alg == null || !alg.endsWith(cert.getPublicKey().getAlgorithm().replace("EC", "ECDSA"))) return false;
        try {
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(probe);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(cert.getPublicKey());
            v.update(probe);
            return v.verify(sig);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
