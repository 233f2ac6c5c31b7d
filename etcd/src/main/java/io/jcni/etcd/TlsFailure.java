package io.jcni.etcd;

import java.util.Locale;
import javax.net.ssl.SSLException;

/**
 * What a failed TLS exchange means for the operator, from the JDK's exception chain: which side
 * did not accept the other, and which flag to look at. Null when it was no TLS failure.
 */
final class TlsFailure {
    private TlsFailure() {}

    /**
     * Whether {@code host:port} answers a TLS handshake: asked only when a plain-http request got
     * the connection closed without a word, which is what etcd's TLS port does with one. A
     * server certificate we do not trust still proves the port speaks TLS.
     */
    static boolean speaksTls(String host, int port, java.time.Duration timeout) {
        int ms = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        try (java.net.Socket raw = new java.net.Socket()) {
            raw.connect(new java.net.InetSocketAddress(host, port), ms);
            raw.setSoTimeout(ms);
            try (javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) javax.net.ssl.SSLContext.getDefault().getSocketFactory()
                    .createSocket(raw, host, port, false)) {
                tls.startHandshake();
                return true;
            }
        } catch (javax.net.ssl.SSLHandshakeException e) {
            String m = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            return m.contains("pkix") || m.contains("certificate") || m.contains("fatal alert");
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * Why etcd closed a TLS connection without answering, or null if it was not the handshake.
     * With TLS 1.3 the server checks our certificate after our side of the handshake is done, so
     * its refusal can reach us as a bare end of stream (or as the alert: a race); one more
     * handshake limited to TLS 1.2, where the check happens inside the handshake, gets the alert.
     */
    static String probeHandshake(javax.net.ssl.SSLContext ctx, String host, int port, java.time.Duration timeout, EtcdSecurity sec) {
        // etcd (Go) refuses our certificate with an alert and closes while the rest of our flight may
        // still be on its way: the close is then a reset, which can reach us before the alert does.
        // So a handshake that ends in a bare reset or broken pipe is tried again, at most twice.
        for (int attempt = 0; attempt < 3; attempt++) {
            String[] verdict = probeOnce(ctx, host, port, timeout, sec);
            if (verdict != null) return verdict[0];
        }
        return null;
    }

    /** {verdict} (its element null: no verdict), or null when the probe met a bare reset and may be tried again. */
    private static String[] probeOnce(javax.net.ssl.SSLContext ctx, String host, int port, java.time.Duration timeout, EtcdSecurity sec) {
        int ms = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        try (java.net.Socket raw = new java.net.Socket()) {
            raw.connect(new java.net.InetSocketAddress(host, port), ms);
            raw.setSoTimeout(ms);
            try (javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) ctx.getSocketFactory().createSocket(raw, host, port, false)) {
                tls.setEnabledProtocols(new String[] {"TLSv1.2"});
                javax.net.ssl.SSLParameters p = tls.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                tls.setSSLParameters(p);
                tls.startHandshake();
                return new String[] {null};
            }
        } catch (java.io.IOException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("protocol_version")) return new String[] {null}; // a TLS 1.3-only etcd: no verdict
            String why = describe(e, sec);
            if (why == null && e instanceof java.net.SocketException && (m.contains("reset") || m.contains("Broken pipe"))) return null;
            return new String[] {why};
        }
    }

    static String describe(Throwable failure, EtcdSecurity sec) {
        boolean ssl = false;
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null && all.length() < 4000; t = t.getCause()) {
            if (t instanceof SSLException || t instanceof java.security.cert.CertificateException
                    || t instanceof java.security.cert.CertPathValidatorException) ssl = true;
            all.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append(" | ");
        }
        if (!ssl) return null;
        String m = all.toString().toLowerCase(Locale.ROOT);
        String ca = sec.caFile() == null ? "the JDK's trusted CAs (no CA file given)" : "the CA file " + sec.caFile();
        if (m.contains("pkix path") || m.contains("unable to find valid certification path") || m.contains("signature check failed")) {
            return "TLS: etcd's server certificate is not signed by " + ca;
        }
        if (m.contains("no subject alternative") || m.contains("no name matching")) {
            return "TLS: etcd's server certificate does not name this endpoint's host (its subjectAltName)";
        }
        if (m.contains("certificateexpiredexception") || m.contains("validity check failed") || m.contains("notafter")) {
            return "TLS: etcd's server certificate has expired or is not yet valid";
        }
        if (m.contains("certificate_required")) {
            return "TLS: etcd requires a client certificate: give a client certificate and its key";
        }
        if (m.contains("bad_certificate") || m.contains("unknown_ca") || m.contains("certificate_expired")
                || m.contains("certificate_unknown") || m.contains("decrypt_error")) {
            String alert = m.replaceAll("(?s).*received fatal alert: ([a-z_]+).*", "$1");
            return "TLS: etcd rejected our client certificate " + (sec.certFile() == null ? "(none given)" : sec.certFile())
                    + " (alert " + alert + "): is it signed by the CA etcd trusts (--trusted-ca-file) and still valid?";
        }
        if (m.contains("unsupported or unrecognized ssl message") || m.contains("plaintext connection")) {
            return "TLS: this endpoint does not speak TLS: use http:// (or turn on TLS in etcd)";
        }
        return "TLS handshake failed: " + failure.getMessage();
    }
}
