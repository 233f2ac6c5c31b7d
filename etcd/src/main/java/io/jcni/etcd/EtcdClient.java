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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * An etcd v3 client over etcd's JSON gateway ({@code /v3/...}, keys and values base64) and
 * {@code java.net.http}: the handful of calls the overlay agent and the cluster-ipam plugin need.
 * Why not jetcd: see the module README (start-up cost and memory, measured).
 *
 * <p>Endpoints are tried in order; the one that answered last is tried first next time. Every call
 * is bounded by {@code timeout}; a watch runs until its handle is closed or the stream ends.
 * etcd encodes int64 as JSON strings and leaves out zero values (proto3), which the getters below absorb.
 */
public final class EtcdClient implements AutoCloseable {
    private final List<URI> endpoints;
    private final Duration timeout;
    private final HttpClient http;
    private volatile int preferred;

    public EtcdClient(List<String> endpoints, Duration timeout) {
        if (endpoints.isEmpty()) throw new IllegalArgumentException("no etcd endpoints");
        List<URI> eps = new ArrayList<>();
        for (String e : endpoints) {
            String s = e.trim();
            while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
            if (!s.startsWith("http://")) throw new IllegalArgumentException("etcd endpoint must be http://host:port: " + e);
            eps.add(URI.create(s));
        }
        this.endpoints = List.copyOf(eps);
        this.timeout = timeout;
        // HTTP/1.1: the gateway streams watch results as chunked JSON; no h2c upgrade dance.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
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
        Map<String, Object> r = call("/v3/kv/range", body);
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
        Map<String, Object> r = call("/v3/kv/range", body);
        List<String> out = new ArrayList<>();
        if (r.get("kvs") instanceof List<?> l) for (Object o : l) out.add(unb64(Json.asObject(o).get("key")));
        return out;
    }

    public void put(String key, String value, long lease) throws IOException {
        call("/v3/kv/put", putRequest(key, value, lease));
    }

    /** Deletes {@code key}; returns how many keys went (0 or 1). */
    public long delete(String key) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(key));
        return num(call("/v3/kv/deleterange", body).get("deleted"));
    }

    /** Deletes every key under {@code prefix} (tests and tools). */
    public long deletePrefix(String prefix) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(prefix));
        body.put("range_end", b64(prefixEnd(prefix)));
        return num(call("/v3/kv/deleterange", body).get("deleted"));
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
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
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
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
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
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
    }

    /** Deletes {@code key} only if it is still at {@code modRevision}; true on success. */
    public boolean deleteIfModRevision(String key, long modRevision) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(compare(key, "MOD", "mod_revision", modRevision)));
        body.put("success", List.of(Map.of("request_delete_range", Map.of("key", b64(key)))));
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
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
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
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
        return Boolean.TRUE.equals(call("/v3/kv/txn", body).get("succeeded"));
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
        Map<String, Object> r = call("/v3/lease/grant", Map.of("TTL", Long.toString(ttlSeconds)));
        long id = num(r.get("ID"));
        if (id == 0) throw new EtcdException("lease grant returned no ID: " + r.get("error"));
        return id;
    }

    /** Renews a lease once; returns the TTL left, or 0 when the lease no longer exists. */
    public long keepAlive(long lease) throws IOException {
        Map<String, Object> r = call("/v3/lease/keepalive", Map.of("ID", Long.toString(lease)));
        Object result = r.get("result");
        return result instanceof Map<?, ?> m ? num(Json.asObject(m).get("TTL")) : 0;
    }

    /** Revokes a lease: every key attached to it goes at once. Unknown leases are no error. */
    public void revokeLease(long lease) throws IOException {
        try {
            call("/v3/lease/revoke", Map.of("ID", Long.toString(lease)));
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
            HttpRequest req = HttpRequest.newBuilder(ep.resolve("/v3/watch"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            HttpResponse<InputStream> resp;
            try {
                resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                last = e;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("watch interrupted");
            }
            try (InputStream in = resp.body()) {
                cancel.accept(in);
                if (resp.statusCode() != 200) throw new EtcdException("watch: HTTP " + resp.statusCode());
                JsonObjectStream objects = new JsonObjectStream(in);
                String text;
                while ((text = objects.next()) != null) {
                    alive.run();
                    Map<String, Object> msg = Json.parseObject(text);
                    if (msg.get("error") != null) throw new EtcdException("watch: " + Json.write(msg.get("error")));
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

    private Map<String, Object> call(String path, Map<String, Object> body) throws IOException {
        String json = Json.write(body);
        IOException last = null;
        List<URI> order = order();
        for (int i = 0; i < order.size(); i++) {
            URI ep = order.get(i);
            HttpRequest req = HttpRequest.newBuilder(ep.resolve(path)).timeout(timeout)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build();
            HttpResponse<String> resp;
            try {
                resp = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            } catch (IOException e) {
                last = new IOException("etcd " + ep + path + ": " + e, e);
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("etcd call interrupted");
            }
            preferred = endpoints.indexOf(ep);
            Map<String, Object> r;
            try {
                r = Json.parseObject(resp.body());
            } catch (RuntimeException e) {
                throw new EtcdException("etcd " + path + ": HTTP " + resp.statusCode() + ": unreadable answer");
            }
            if (resp.statusCode() != 200 || r.get("error") != null) {
                Object msg = r.getOrDefault("message", r.get("error"));
                throw new EtcdException("etcd " + path + ": " + msg);
            }
            return r;
        }
        throw last;
    }

    private List<URI> order() {
        int p = preferred;
        List<URI> out = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) out.add(endpoints.get((p + i) % endpoints.size()));
        return out;
    }

    @Override
    public void close() {
        http.close();
    }

    /**
     * Closes at once, failing the calls and watches in flight ({@code close} waits for them): for
     * a caller that gave up on this client because a call hung past its deadline.
     */
    public void abort() {
        http.shutdownNow();
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
