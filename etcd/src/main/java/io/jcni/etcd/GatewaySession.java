package io.jcni.etcd;

import io.jcni.types.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one {@link EtcdClient} calls through: its endpoints and the failover between them (the one
 * that answered last is tried first), etcd's auth token (authenticated on first use, again once
 * when etcd rejects it), the TLS context, the unary calls' {@link GatewayHttp} and the watch's
 * {@code java.net.http} client, and the failures explained as the operator should read them.
 */
final class GatewaySession {
    private final List<URI> endpoints;
    private final Duration timeout;
    private final EtcdSecurity security;
    private volatile GatewayHttp unary; // built on first use: reading the TLS files can fail, and then every call says why
    private HttpClient watchHttp; // the watch's, built on its first use
    private javax.net.ssl.SSLContext sslContext; // the one both use, for the handshake probe
    private volatile String token; // etcd's auth token once authenticated
    private volatile int preferred;

    GatewaySession(List<String> endpoints, Duration timeout, EtcdSecurity security) {
        if (endpoints.isEmpty()) throw new IllegalArgumentException("no etcd endpoints");
        List<URI> eps = new ArrayList<>();
        for (String e : endpoints) {
            String s = e.trim();
            while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
            if (!s.startsWith("http://") && !s.startsWith("https://")) {
                throw new IllegalArgumentException("etcd endpoint must be http://host:port or https://host:port: " + e);
            }
            eps.add(URI.create(s));
        }
        this.endpoints = List.copyOf(eps);
        this.timeout = timeout;
        this.security = security.validated();
    }

    /** The unary calls' transport. */
    private GatewayHttp unary() throws EtcdAuthException {
        GatewayHttp u = unary;
        if (u != null) return u;
        synchronized (this) {
            if (unary == null) {
                javax.net.ssl.SSLContext ctx = tlsContext();
                unary = new GatewayHttp(ctx == null ? null : ctx.getSocketFactory(), timeout);
            }
            return unary;
        }
    }

    /** The watch's client: java.net.http, long-lived and rare, so its cost per call does not matter. */
    synchronized HttpClient watchHttp() throws EtcdAuthException {
        if (watchHttp != null) return watchHttp;
        // HTTP/1.1: the gateway streams watch results as chunked JSON; no h2c upgrade dance.
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout);
        javax.net.ssl.SSLContext ctx = tlsContext();
        if (ctx != null) b.sslContext(ctx);
        watchHttp = b.build();
        return watchHttp;
    }

    /** The TLS context when TLS is asked for (files given or an https:// endpoint), else null. */
    private synchronized javax.net.ssl.SSLContext tlsContext() throws EtcdAuthException {
        if (sslContext != null) return sslContext;
        boolean tls = security.caFile() != null || security.hasClientCert() || endpoints.stream().anyMatch(u -> u.getScheme().equals("https"));
        if (!tls) return null;
        try {
            sslContext = TlsFiles.cached(security);
            return sslContext;
        } catch (EtcdAuthException e) {
            throw new EtcdAuthException("etcd " + String.join(",", endpoints.stream().map(URI::toString).toList()) + ": " + e.getMessage(), e);
        }
    }

    /** Calls that change nothing when repeated (reads, a put of the same value, a renewal, a revocation). */
    static final boolean IDEMPOTENT = true, CHANGES = false;

    /** POSTs {@code body} to {@code path}, trying the endpoints in order; etcd's refusals are not tried elsewhere. */
    Map<String, Object> call(String path, Map<String, Object> body, boolean idempotent) throws IOException {
        byte[] json = Json.write(body).getBytes(StandardCharsets.UTF_8);
        IOException last = null;
        List<URI> order = order();
        for (int i = 0; i < order.size(); i++) {
            URI ep = order.get(i);
            try {
                return callOnce(ep, path, json, idempotent, true);
            } catch (EtcdException | EtcdAuthException e) {
                throw e;
            } catch (IOException e) {
                last = e;
            }
        }
        throw last;
    }

    /**
     * One request to one endpoint. With a user, the token goes in the Authorization header; when
     * etcd rejects it (expired: simple tokens live 5 minutes by default; or etcd restarted) we
     * authenticate again and retry once, never more.
     */
    private Map<String, Object> callOnce(URI ep, String path, byte[] json, boolean idempotent, boolean mayReauth) throws IOException {
        String auth = ensureToken(ep);
        GatewayHttp.Answer resp = send(ep, path, json, auth, idempotent);
        preferred = endpoints.indexOf(ep);
        Map<String, Object> r = parsed(ep, path, resp);
        if (resp.statusCode() != 200 || r.get("error") != null) {
            Object msg = r.getOrDefault("message", r.get("error"));
            if (tokenRejected(String.valueOf(msg))) {
                if (security.username() == null) {
                    throw new EtcdAuthException("etcd " + ep + " requires authentication (" + msg + "): give a user and password (--etcd-username, ipam.etcdUsername)");
                }
                token = null;
                if (mayReauth) return callOnce(ep, path, json, idempotent, false);
            }
            if (String.valueOf(msg).contains("permission denied")) {
                throw new EtcdAuthException("etcd " + ep + path + ": permission denied for user "
                        + (security.username() == null ? "(none)" : security.username()) + " (its role must grant the key prefix)");
            }
            throw EtcdException.answered("etcd " + ep + path, String.valueOf(msg));
        }
        return r;
    }

    /** The Authorization header value, authenticating first when there is a user and no token yet. */
    String ensureToken(URI ep) throws IOException {
        if (security.username() == null) return null;
        String t = token;
        if (t != null) return t;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", security.username());
        body.put("password", security.password());
        GatewayHttp.Answer resp = send(ep, "/v3/auth/authenticate", Json.write(body).getBytes(StandardCharsets.UTF_8), null, IDEMPOTENT);
        Map<String, Object> r = parsed(ep, "/v3/auth/authenticate", resp);
        if (resp.statusCode() != 200 || r.get("error") != null || !(r.get("token") instanceof String tok) || tok.isEmpty()) {
            Object msg = r.getOrDefault("message", r.getOrDefault("error", "no token in the answer"));
            throw new EtcdAuthException("etcd " + ep + ": user " + security.username() + " could not authenticate: " + msg);
        }
        token = tok;
        return tok;
    }

    /**
     * The answer's JSON object: a plain-http answer from a TLS endpoint (or the reverse) is named as
     * such, anything that is not JSON as "unreadable answer" with its HTTP status.
     */
    private Map<String, Object> parsed(URI ep, String path, GatewayHttp.Answer resp) throws IOException {
        IOException plain = plainHttpToTls(ep, resp.body());
        if (plain != null) throw plain;
        try {
            return Json.parseObject(resp.body());
        } catch (RuntimeException e) {
            throw new EtcdException("etcd " + ep + path + ": HTTP " + resp.statusCode() + ": unreadable answer");
        }
    }


    private GatewayHttp.Answer send(URI ep, String path, byte[] json, String auth, boolean idempotent) throws IOException {
        try {
            return unary().post(ep, path, json, auth, idempotent);
        } catch (EtcdAuthException | EtcdException e) {
            throw e;
        } catch (IOException e) {
            throw explain(ep, path, e);
        }
    }

    /**
     * A failed exchange as the operator should read it: TLS failures become an
     * {@link EtcdAuthException} saying which side is wrong; anything else stays "unreachable".
     */
    IOException explain(URI ep, String path, IOException e) {
        String why = TlsFailure.describe(e, security);
        if (why != null) return new EtcdAuthException("etcd " + ep + ": " + why, e);
        String m = String.valueOf(e.getMessage());
        // The peer closed without a word: before our request was read ("Broken pipe": with TLS 1.3 etcd
        // checks our certificate after the handshake, and may close before our write) or after it.
        boolean silentClose = m.contains("received no bytes") || m.contains("Connection reset") || m.contains("EOF")
                || m.contains("Broken pipe");
        javax.net.ssl.SSLContext ctx;
        synchronized (this) {
            ctx = sslContext;
        }
        if (ep.getScheme().equals("https") && silentClose && ctx != null) {
            TlsFiles.Noted noted = new TlsFiles.Noted();
            javax.net.ssl.SSLContext probing = ctx;
            try {
                if (security.hasClientCert()) probing = TlsFiles.noting(security, noted);
            } catch (EtcdAuthException unreadable) {
                // the files changed since: probe with the context the call used
            }
            String probed = TlsFailure.probeHandshake(probing, ep.getHost(), ep.getPort() < 0 ? 443 : ep.getPort(), timeout, security);
            String issuers = noted.unmatchedIssuers();
            if (probed == null && issuers != null) {
                probed = "TLS: etcd rejected our client certificate " + security.certFile() + ": it is not issued by a CA etcd trusts"
                        + " (etcd asks for one issued by " + (issuers.isEmpty() ? "a CA it did not name" : issuers) + "; --trusted-ca-file)";
            }
            if (probed != null) return new EtcdAuthException("etcd " + ep + ": " + probed, e);
        }
        if (ep.getScheme().equals("http") && silentClose
                && TlsFailure.speaksTls(ep.getHost(), ep.getPort() < 0 ? 80 : ep.getPort(), timeout)) {
            return plainHttpToTls(ep, "HTTP request to an HTTPS server");
        }
        return new IOException("etcd " + ep + path + ": " + e, e);
    }

    /**
     * Plain-text refusals in front of the gateway: Go's TLS listener answers a plain-http request
     * with the first; etcd (3.4, 3.5) refuses, once authentication is on, any gateway request whose
     * client certificate has a CommonName (it would be taken as the user on gRPC but not here).
     */
    static IOException plainHttpToTls(URI ep, String body) {
        if (body == null) return null;
        if (body.contains("HTTP request to an HTTPS server")) {
            return new EtcdAuthException("etcd " + ep + " speaks TLS: use https:// in the endpoint (with the CA file and client certificate etcd wants)");
        }
        if (body.contains("CommonName of client sending a request against gateway")) {
            return new EtcdAuthException("etcd " + ep + " refuses a client certificate with a CommonName on its JSON gateway when authentication"
                    + " is on: give jcni a certificate without CN (e.g. openssl req -subj /O=jcni) and authenticate with the user and password");
        }
        return null;
    }

    /** etcd's answers for a missing, expired or unknown token (gRPC code 16, or the text of older versions). */
    static boolean tokenRejected(String msg) {
        return msg.contains("invalid auth token") || msg.contains("auth token is expired") || msg.contains("user name is empty")
                || msg.contains("\"code\":16") || msg.contains("\"code\": 16");
    }

    /** The endpoints, the one that answered last first. */
    List<URI> order() {
        int p = preferred;
        List<URI> out = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) out.add(endpoints.get((p + i) % endpoints.size()));
        return out;
    }

    /** Drops the token: the next call authenticates again. */
    void forgetToken() {
        token = null;
    }

    /** Waits for the calls in flight, then closes the connections; later calls fail. */
    void close() {
        GatewayHttp u;
        HttpClient w;
        synchronized (this) {
            u = unary;
            w = watchHttp;
        }
        if (u != null) u.close();
        if (w != null) w.close();
    }

    /** Closes at once, failing the calls and watches in flight. */
    void abort() {
        GatewayHttp u;
        HttpClient w;
        synchronized (this) {
            u = unary;
            w = watchHttp;
        }
        if (u != null) u.abort();
        if (w != null) w.shutdownNow();
    }
}
