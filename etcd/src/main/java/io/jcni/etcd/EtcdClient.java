package io.jcni.etcd;

import io.jcni.types.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * An etcd v3 client over etcd's JSON gateway ({@code /v3/...}, keys and values base64): the
 * handful of calls the overlay agent and the cluster-ipam plugin need. The unary calls go over
 * {@link GatewayHttp} (HTTP/1.1 on kept-alive sockets), the watch over {@code java.net.http}.
 * Why not jetcd, and why the hand-written transport: see the module README (measured).
 *
 * <p>Endpoints are tried in order; the one that answered last is tried first next time. Every call
 * is bounded by {@code timeout}; a watch runs until its handle is closed or the stream ends.
 * etcd encodes int64 as JSON strings and leaves out zero values (proto3), which the getters below absorb.
 */
public final class EtcdClient implements AutoCloseable {
    private final List<URI> endpoints;
    private final Duration timeout;
    private final EtcdSecurity security;
    private volatile GatewayHttp unary; // built on first use: reading the TLS files can fail, and then every call says why
    private HttpClient watchHttp; // the watch's, built on its first use
    private javax.net.ssl.SSLContext sslContext; // the one both use, for the handshake probe
    private volatile String token; // etcd's auth token once authenticated
    private volatile int preferred;

    public EtcdClient(List<String> endpoints, Duration timeout) {
        this(endpoints, timeout, EtcdSecurity.NONE);
    }

    /** With TLS files and/or a user ({@code https://} endpoints need the former unless the JDK's CAs trust etcd). */
    public EtcdClient(List<String> endpoints, Duration timeout, EtcdSecurity security) {
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
    private synchronized HttpClient watchHttp() throws EtcdAuthException {
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

    /** Splits flanneld's {@code --etcd-endpoints} value (comma-separated). */
    public static List<String> splitEndpoints(String csv) {
        List<String> out = new ArrayList<>();
        for (String s : csv.split(",")) if (!s.isBlank()) out.add(s.trim());
        return out;
    }

    // ------------------------------------------------------------------ KV

    /** The value at {@code key}, if any. */
    public Optional<KeyValue> get(String key) throws IOException {
        List<KeyValue> kvs = range(key, null).kvs();
        return kvs.isEmpty() ? Optional.empty() : Optional.of(kvs.getFirst());
    }

    /** Every key starting with {@code prefix}, and the store revision they were read at. */
    public RangeResult getPrefix(String prefix) throws IOException {
        return range(prefix, prefixEnd(prefix));
    }

    /** The keys read by a range, at {@code revision}. */
    public record RangeResult(List<KeyValue> kvs, long revision) {}

    private RangeResult range(String key, String rangeEnd) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(key));
        if (rangeEnd != null) body.put("range_end", b64(rangeEnd));
        Map<String, Object> r = call("/v3/kv/range", body, IDEMPOTENT);
        List<KeyValue> kvs = new ArrayList<>();
        if (r.get("kvs") instanceof List<?> l) for (Object o : l) kvs.add(KeyValue.fromGateway(Json.asObject(o)));
        return new RangeResult(kvs, revision(r));
    }

    /** The keys (no values) under {@code prefix}. */
    public List<String> keys(String prefix) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(prefix));
        body.put("range_end", b64(prefixEnd(prefix)));
        body.put("keys_only", true);
        Map<String, Object> r = call("/v3/kv/range", body, IDEMPOTENT);
        List<String> out = new ArrayList<>();
        if (r.get("kvs") instanceof List<?> l) for (Object o : l) out.add(unb64(Json.asObject(o).get("key")));
        return out;
    }

    public void put(String key, String value, long lease) throws IOException {
        call("/v3/kv/put", putRequest(key, value, lease), IDEMPOTENT);
    }

    /** Deletes {@code key}; returns how many keys went (0 or 1). */
    public long delete(String key) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(key));
        return num(call("/v3/kv/deleterange", body, CHANGES).get("deleted"));
    }

    /** Deletes every key under {@code prefix} (tests and tools). */
    public long deletePrefix(String prefix) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(prefix));
        body.put("range_end", b64(prefixEnd(prefix)));
        return num(call("/v3/kv/deleterange", body, CHANGES).get("deleted"));
    }

    /** Creates {@code key} only if it does not exist (one transaction); true when it was created. */
    public boolean putIfAbsent(String key, String value, long lease) throws IOException {
        return txn(compare(key, "CREATE", "create_revision", 0), key, value, lease);
    }

    /** Creates every key of {@code kvs} in one transaction if none of them exists; true when they were created. */
    public boolean createAll(Map<String, String> kvs) throws IOException {
        List<Object> cmp = new ArrayList<>(), puts = new ArrayList<>();
        for (Map.Entry<String, String> e : kvs.entrySet()) {
            cmp.add(compare(e.getKey(), "CREATE", "create_revision", 0));
            puts.add(Map.of("request_put", putRequest(e.getKey(), e.getValue(), 0)));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", cmp);
        body.put("success", puts);
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /**
     * Creates {@code kvs} in one transaction that requires each to be absent, writing
     * {@code alsoPut} in the same transaction whatever they hold (an index that may be stale);
     * true on success.
     */
    public boolean createAll(Map<String, String> kvs, Map<String, String> alsoPut) throws IOException {
        List<Object> cmp = new ArrayList<>(), puts = new ArrayList<>();
        for (Map.Entry<String, String> e : kvs.entrySet()) {
            cmp.add(compare(e.getKey(), "CREATE", "create_revision", 0));
            puts.add(Map.of("request_put", putRequest(e.getKey(), e.getValue(), 0)));
        }
        for (Map.Entry<String, String> e : alsoPut.entrySet()) puts.add(Map.of("request_put", putRequest(e.getKey(), e.getValue(), 0)));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", cmp);
        body.put("success", puts);
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /** What {@link #createOrRead} did: created the keys, or else read the keys asked for (absent ones left out). */
    public record CreateOrRead(boolean created, Map<String, KeyValue> read) {}

    /**
     * One transaction: creates {@code kvs} if none of them and none of {@code mustBeAbsent}
     * exists, writing {@code alsoPut} with them whatever they hold; otherwise reads
     * {@code readOnFailure}, so the caller learns why it lost without another round trip.
     * Concurrent calls on this client go to etcd together ({@link GroupCommit}), each with its own
     * outcome, as if alone.
     */
    public CreateOrRead createOrRead(Map<String, String> kvs, List<String> mustBeAbsent, Map<String, String> alsoPut,
            List<String> readOnFailure) throws IOException {
        List<Object> cmp = new ArrayList<>(), puts = new ArrayList<>(), reads = new ArrayList<>();
        Set<String> putKeys = new HashSet<>();
        for (Map.Entry<String, String> e : kvs.entrySet()) {
            cmp.add(compare(e.getKey(), "CREATE", "create_revision", 0));
            puts.add(Map.of("request_put", putRequest(e.getKey(), e.getValue(), 0)));
            putKeys.add(e.getKey());
        }
        for (String k : mustBeAbsent) cmp.add(compare(k, "CREATE", "create_revision", 0));
        for (Map.Entry<String, String> e : alsoPut.entrySet()) {
            puts.add(Map.of("request_put", putRequest(e.getKey(), e.getValue(), 0)));
            putKeys.add(e.getKey());
        }
        for (String k : readOnFailure) reads.add(Map.of("request_range", Map.of("key", b64(k))));
        Map<String, Object> txn = new LinkedHashMap<>();
        txn.put("compare", cmp);
        txn.put("success", puts);
        txn.put("failure", reads);
        return createOrReads.submit(new TxnPart(txn, putKeys));
    }

    /** One createOrRead transaction (the gateway's TxnRequest) and the keys it puts. */
    private record TxnPart(Map<String, Object> txn, Set<String> puts) implements GroupCommit.Part {}

    private final GroupCommit<TxnPart, CreateOrRead> createOrReads = new GroupCommit<>(new GroupCommit.Sender<>() {
        @Override
        public CreateOrRead alone(TxnPart part) throws IOException {
            return createOrRead(call("/v3/kv/txn", part.txn(), CHANGES));
        }

        @Override
        public List<CreateOrRead> together(List<TxnPart> parts) throws IOException {
            List<Object> nested = new ArrayList<>(parts.size());
            for (TxnPart p : parts) nested.add(Map.of("request_txn", p.txn()));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("compare", List.of());
            body.put("success", nested);
            Map<String, Object> r = call("/v3/kv/txn", body, CHANGES);
            List<CreateOrRead> out = new ArrayList<>(parts.size());
            List<?> responses = r.get("responses") instanceof List<?> l ? l : List.of();
            if (responses.size() != parts.size()) {
                throw new IOException("etcd answered " + responses.size() + " of " + parts.size() + " nested transactions");
            }
            for (Object o : responses) {
                Object txn = Json.asObject(o).get("response_txn");
                out.add(createOrRead(txn instanceof Map<?, ?> m ? Json.asObject(m) : Map.of()));
            }
            return out;
        }
    });

    /** A createOrRead's outcome from its TxnResponse. */
    private static CreateOrRead createOrRead(Map<String, Object> txnResponse) {
        if (Boolean.TRUE.equals(txnResponse.get("succeeded"))) return new CreateOrRead(true, Map.of());
        return new CreateOrRead(false, rangeResponses(txnResponse));
    }

    /** The values of {@code keys} (absent ones left out), read in one transaction at one revision. */
    public Map<String, KeyValue> getAll(List<String> keys) throws IOException {
        if (keys.size() == 1) return get(keys.getFirst()).map(kv -> Map.of(kv.key(), kv)).orElse(Map.of());
        List<Object> reads = new ArrayList<>();
        for (String k : keys) reads.add(Map.of("request_range", Map.of("key", b64(k))));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of());
        body.put("success", reads);
        return rangeResponses(call("/v3/kv/txn", body, IDEMPOTENT));
    }

    /** The keys read by the range operations of a transaction's answer. */
    private static Map<String, KeyValue> rangeResponses(Map<String, Object> txn) {
        Map<String, KeyValue> out = new LinkedHashMap<>();
        if (!(txn.get("responses") instanceof List<?> responses)) return out;
        for (Object o : responses) {
            if (!(Json.asObject(o).get("response_range") instanceof Map<?, ?> range)) continue;
            if (!(range.get("kvs") instanceof List<?> kvs)) continue;
            for (Object kv : kvs) {
                KeyValue v = KeyValue.fromGateway(Json.asObject(kv));
                out.put(v.key(), v);
            }
        }
        return out;
    }

    /**
     * Deletes {@code keys} in one transaction if {@code revisionKey} is still at {@code modRevision}
     * and {@code guardKey} still holds {@code guardValue}; true on success.
     */
    public boolean deleteAllIfUnchanged(String revisionKey, long modRevision, String guardKey, String guardValue, List<String> keys)
            throws IOException {
        Map<String, Object> value = compare(guardKey, "VALUE", "value", 0);
        value.put("value", b64(guardValue));
        List<Object> dels = new ArrayList<>();
        for (String k : keys) dels.add(Map.of("request_delete_range", Map.of("key", b64(k))));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(compare(revisionKey, "MOD", "mod_revision", modRevision), value));
        body.put("success", dels);
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /** Deletes {@code key} only if it is still at {@code modRevision}; true on success. */
    public boolean deleteIfModRevision(String key, long modRevision) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(compare(key, "MOD", "mod_revision", modRevision)));
        body.put("success", List.of(Map.of("request_delete_range", Map.of("key", b64(key)))));
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /** Deletes {@code keys} in one transaction if {@code guardKey} still holds {@code guardValue}; true on success. */
    public boolean deleteAllIfValue(String guardKey, String guardValue, List<String> keys) throws IOException {
        Map<String, Object> cmp = compare(guardKey, "VALUE", "value", 0);
        cmp.put("value", b64(guardValue));
        List<Object> dels = new ArrayList<>();
        for (String k : keys) dels.add(Map.of("request_delete_range", Map.of("key", b64(k))));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(cmp));
        body.put("success", dels);
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /** Overwrites {@code key} only if it is still at {@code modRevision} (compare-and-swap); true on success. */
    public boolean putIfModRevision(String key, long modRevision, String value, long lease) throws IOException {
        return txn(compare(key, "MOD", "mod_revision", modRevision), key, value, lease);
    }

    /** Deletes {@code key} only if its value is still {@code value}; true on success. */
    public boolean deleteIfValue(String key, String value) throws IOException {
        return deleteAllIfValue(key, value, List.of(key));
    }

    private boolean txn(Map<String, Object> cmp, String key, String value, long lease) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(cmp));
        body.put("success", List.of(Map.of("request_put", putRequest(key, value, lease))));
        return Boolean.TRUE.equals(call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    private static Map<String, Object> compare(String key, String target, String field, long v) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("result", "EQUAL");
        c.put("target", target);
        c.put("key", b64(key));
        c.put(field, Long.toString(v));
        return c;
    }

    private static Map<String, Object> putRequest(String key, String value, long lease) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("key", b64(key));
        p.put("value", b64(value));
        if (lease != 0) p.put("lease", Long.toString(lease));
        return p;
    }

    // ------------------------------------------------------------------ leases

    /** Grants a lease of {@code ttlSeconds}; returns its id. */
    public long grantLease(long ttlSeconds) throws IOException {
        Map<String, Object> r = call("/v3/lease/grant", Map.of("TTL", Long.toString(ttlSeconds)), CHANGES);
        long id = num(r.get("ID"));
        if (id == 0) throw new EtcdException("lease grant returned no ID: " + r.get("error"));
        return id;
    }

    /** Renews a lease once; returns the TTL left, or 0 when the lease no longer exists. */
    public long keepAlive(long lease) throws IOException {
        Map<String, Object> r = call("/v3/lease/keepalive", Map.of("ID", Long.toString(lease)), IDEMPOTENT);
        Object result = r.get("result");
        return result instanceof Map<?, ?> m ? num(Json.asObject(m).get("TTL")) : 0;
    }

    /** Revokes a lease: every key attached to it goes at once. Unknown leases are no error. */
    public void revokeLease(long lease) throws IOException {
        try {
            call("/v3/lease/revoke", Map.of("ID", Long.toString(lease)), IDEMPOTENT);
        } catch (EtcdException e) {
            if (!e.getMessage().contains("not found")) throw e;
        }
    }

    // ------------------------------------------------------------------ watch

    /**
     * Watches every key under {@code prefix} from {@code fromRevision}; events go to {@code sink} on
     * the calling thread, which this method blocks until the stream ends (returns normally),
     * fails (IOException) or the thread is interrupted / {@code cancel} closes it.
     * A compacted start revision is reported as {@link EtcdException} so the caller re-lists.
     */
    public void watch(String prefix, long fromRevision, Consumer<WatchEvent> sink, Consumer<AutoCloseable> cancel)
            throws IOException {
        watch(prefix, fromRevision, sink, cancel, () -> {});
    }

    /**
     * {@link #watch(String, long, Consumer, Consumer)}, asking etcd for progress notifications (an
     * empty response on an idle watch, every 10 minutes by etcd's default) and calling
     * {@code alive} on every message etcd sends: so a caller can tell a quiet watch from a dead one.
     */
    public void watch(String prefix, long fromRevision, Consumer<WatchEvent> sink, Consumer<AutoCloseable> cancel, Runnable alive)
            throws IOException {
        Map<String, Object> create = new LinkedHashMap<>();
        create.put("key", b64(prefix));
        create.put("range_end", b64(prefixEnd(prefix)));
        if (fromRevision > 0) create.put("start_revision", Long.toString(fromRevision));
        create.put("progress_notify", true);
        String body = Json.write(Map.of("create_request", create));
        IOException last = null;
        for (URI ep : order()) {
            HttpResponse<InputStream> resp;
            try {
                String auth = ensureToken(ep);
                HttpRequest.Builder req = HttpRequest.newBuilder(ep.resolve("/v3/watch"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body));
                if (auth != null) req.header("Authorization", auth);
                resp = watchHttp().send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (EtcdAuthException e) {
                throw e;
            } catch (IOException e) {
                last = explain(ep, "/v3/watch", e);
                if (last instanceof EtcdAuthException) throw last;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("watch interrupted");
            }
            try (InputStream in = resp.body()) {
                cancel.accept(in);
                if (resp.statusCode() != 200) {
                    String text = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
                    IOException plain = plainHttpToTls(ep, text);
                    if (plain != null) throw plain;
                    if (tokenRejected(text)) token = null; // the caller's next call (its re-list) authenticates again
                    throw new EtcdException("etcd " + ep + " watch: HTTP " + resp.statusCode() + ": " + text.strip());
                }
                JsonObjectStream objects = new JsonObjectStream(in);
                String text;
                while ((text = objects.next()) != null) {
                    alive.run();
                    Map<String, Object> msg = Json.parseObject(text);
                    if (msg.get("error") != null) {
                        if (tokenRejected(text)) token = null;
                        throw new EtcdException("etcd " + ep + " watch: " + Json.write(msg.get("error")));
                    }
                    Map<String, Object> res = msg.get("result") instanceof Map<?, ?> m ? Json.asObject(m) : Map.of();
                    if (num(res.get("compact_revision")) > 0) {
                        throw new EtcdException("watch: revision " + fromRevision + " compacted");
                    }
                    if (Boolean.TRUE.equals(res.get("canceled"))) throw new EtcdException("watch canceled by etcd");
                    long rev = revision(res);
                    if (res.get("events") instanceof List<?> evs) {
                        for (Object o : evs) sink.accept(WatchEvent.fromGateway(Json.asObject(o), rev));
                    }
                }
                return;
            }
        }
        throw last != null ? last : new IOException("no etcd endpoint");
    }

    // ------------------------------------------------------------------ transport

    /** Calls that change nothing when repeated (reads, a put of the same value, a renewal, a revocation). */
    private static final boolean IDEMPOTENT = true, CHANGES = false;

    private Map<String, Object> call(String path, Map<String, Object> body, boolean idempotent) throws IOException {
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
            throw new EtcdException("etcd " + ep + path + ": " + msg);
        }
        return r;
    }

    /** The Authorization header value, authenticating first when there is a user and no token yet. */
    private String ensureToken(URI ep) throws IOException {
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

    /**
     * The most of one answer (or one watch message) the client reads. An answer without end (a
     * broken or hostile endpoint, a proxy looping) would otherwise fill the heap, and jcnid, which
     * hosts the caller, exits on OutOfMemoryError: one bad peer would take down every service. The
     * largest real answer is a listing of every lease of a big cluster (10,000 flannel leases are
     * about 4 MB of JSON).
     */
    static final int MAX_ANSWER = 16 << 20;

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
    private static IOException plainHttpToTls(URI ep, String body) {
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
    private static boolean tokenRejected(String msg) {
        return msg.contains("invalid auth token") || msg.contains("auth token is expired") || msg.contains("user name is empty")
                || msg.contains("\"code\":16") || msg.contains("\"code\": 16");
    }

    private List<URI> order() {
        int p = preferred;
        List<URI> out = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) out.add(endpoints.get((p + i) % endpoints.size()));
        return out;
    }

    /** Waits for the calls in flight, then closes the connections; later calls fail. */
    @Override
    public void close() {
        GatewayHttp u;
        HttpClient w;
        synchronized (this) {
            u = unary;
            w = watchHttp;
        }
        if (u != null) u.close();
        if (w != null) w.close();
    }

    /**
     * Closes at once, failing the calls and watches in flight ({@code close} waits for them): for
     * a caller that gave up on this client because a call hung past its deadline.
     */
    public void abort() {
        GatewayHttp u;
        HttpClient w;
        synchronized (this) {
            u = unary;
            w = watchHttp;
        }
        if (u != null) u.abort();
        if (w != null) w.shutdownNow();
    }

    // ------------------------------------------------------------------ encoding

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static String unb64(Object s) {
        return s == null ? "" : new String(Base64.getDecoder().decode((String) s), StandardCharsets.UTF_8);
    }

    /** int64 fields come as strings; absent means 0. */
    static long num(Object v) {
        if (v == null) return 0;
        if (v instanceof Number n) return n.longValue();
        return Long.parseLong(v.toString());
    }

    private static long revision(Map<String, Object> r) {
        return r.get("header") instanceof Map<?, ?> h ? num(Json.asObject(h).get("revision")) : 0;
    }

    /** The smallest key greater than every key with this prefix (etcd's range_end for a prefix); keys are ASCII paths. */
    static String prefixEnd(String prefix) {
        for (int i = prefix.length() - 1; i >= 0; i--) {
            char c = prefix.charAt(i);
            if (c >= 0x7f) throw new IllegalArgumentException("non-ASCII etcd key prefix: " + prefix);
            if (c < 0x7e) return prefix.substring(0, i) + (char) (c + 1);
        }
        return "\0";
    }
}
