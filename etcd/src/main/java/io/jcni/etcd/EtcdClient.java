package io.jcni.etcd;

import static io.jcni.etcd.GatewayCodec.b64;
import static io.jcni.etcd.GatewayCodec.compare;
import static io.jcni.etcd.GatewayCodec.num;
import static io.jcni.etcd.GatewayCodec.prefixEnd;
import static io.jcni.etcd.GatewayCodec.putRequest;
import static io.jcni.etcd.GatewayCodec.revision;
import static io.jcni.etcd.GatewayCodec.unb64;
import static io.jcni.etcd.GatewaySession.CHANGES;
import static io.jcni.etcd.GatewaySession.IDEMPOTENT;

import io.jcni.types.Json;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
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
 * {@link GatewayHttp} (HTTP/1.1 on kept-alive sockets), the watch over {@code java.net.http}
 * ({@link GatewayWatch}); endpoints, token and TLS are the {@link GatewaySession}'s.
 * Why not jetcd, and why the hand-written transport: see the module README (measured).
 *
 * <p>Endpoints are tried in order; the one that answered last is tried first next time. Every call
 * is bounded by {@code timeout}; a watch runs until its handle is closed or the stream ends.
 * etcd encodes int64 as JSON strings and leaves out zero values (proto3), which the getters below absorb.
 */
public final class EtcdClient implements AutoCloseable {
    private final GatewaySession session;

    public EtcdClient(List<String> endpoints, Duration timeout) {
        this(endpoints, timeout, EtcdSecurity.NONE);
    }

    /** With TLS files and/or a user ({@code https://} endpoints need the former unless the JDK's CAs trust etcd). */
    public EtcdClient(List<String> endpoints, Duration timeout, EtcdSecurity security) {
        this.session = new GatewaySession(endpoints, timeout, security);
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
        Map<String, Object> r = session.call("/v3/kv/range", body, IDEMPOTENT);
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
        Map<String, Object> r = session.call("/v3/kv/range", body, IDEMPOTENT);
        List<String> out = new ArrayList<>();
        if (r.get("kvs") instanceof List<?> l) for (Object o : l) out.add(unb64(Json.asObject(o).get("key")));
        return out;
    }

    public void put(String key, String value, long lease) throws IOException {
        session.call("/v3/kv/put", putRequest(key, value, lease), IDEMPOTENT);
    }

    /** Deletes {@code key}; returns how many keys went (0 or 1). */
    public long delete(String key) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(key));
        return num(session.call("/v3/kv/deleterange", body, CHANGES).get("deleted"));
    }

    /** Deletes every key under {@code prefix} (tests and tools). */
    public long deletePrefix(String prefix) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", b64(prefix));
        body.put("range_end", b64(prefixEnd(prefix)));
        return num(session.call("/v3/kv/deleterange", body, CHANGES).get("deleted"));
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
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
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
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
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
            return createOrRead(session.call("/v3/kv/txn", part.txn(), CHANGES));
        }

        @Override
        public List<CreateOrRead> together(List<TxnPart> parts) throws IOException {
            List<Object> nested = new ArrayList<>(parts.size());
            for (TxnPart p : parts) nested.add(Map.of("request_txn", p.txn()));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("compare", List.of());
            body.put("success", nested);
            Map<String, Object> r = session.call("/v3/kv/txn", body, CHANGES);
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
        return rangeResponses(session.call("/v3/kv/txn", body, IDEMPOTENT));
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
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    /** Deletes {@code key} only if it is still at {@code modRevision}; true on success. */
    public boolean deleteIfModRevision(String key, long modRevision) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("compare", List.of(compare(key, "MOD", "mod_revision", modRevision)));
        body.put("success", List.of(Map.of("request_delete_range", Map.of("key", b64(key)))));
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
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
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
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
        return Boolean.TRUE.equals(session.call("/v3/kv/txn", body, CHANGES).get("succeeded"));
    }

    // ------------------------------------------------------------------ leases

    /** Grants a lease of {@code ttlSeconds}; returns its id. */
    public long grantLease(long ttlSeconds) throws IOException {
        Map<String, Object> r = session.call("/v3/lease/grant", Map.of("TTL", Long.toString(ttlSeconds)), CHANGES);
        long id = num(r.get("ID"));
        if (id == 0) throw new EtcdException("lease grant returned no ID: " + r.get("error"));
        return id;
    }

    /** Renews a lease once; returns the TTL left, or 0 when the lease no longer exists. */
    public long keepAlive(long lease) throws IOException {
        Map<String, Object> r = session.call("/v3/lease/keepalive", Map.of("ID", Long.toString(lease)), IDEMPOTENT);
        Object result = r.get("result");
        return result instanceof Map<?, ?> m ? num(Json.asObject(m).get("TTL")) : 0;
    }

    /** Revokes a lease: every key attached to it goes at once. Unknown leases are no error. */
    public void revokeLease(long lease) throws IOException {
        try {
            session.call("/v3/lease/revoke", Map.of("ID", Long.toString(lease)), IDEMPOTENT);
        } catch (EtcdException e) {
            if (!e.getMessage().contains("not found")) throw e;
        }
    }


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
        GatewayWatch.run(session, prefix, fromRevision, sink, cancel, alive);
    }

    // ------------------------------------------------------------------ limits and closing

    /**
     * The most of one answer (or one watch message) the client reads. An answer without end (a
     * broken or hostile endpoint, a proxy looping) would otherwise fill the heap, and jcnid, which
     * hosts the caller, exits on OutOfMemoryError: one bad peer would take down every service. The
     * largest real answer is a listing of every lease of a big cluster (10,000 flannel leases are
     * about 4 MB of JSON).
     */
    static final int MAX_ANSWER = 16 << 20;

    /** Waits for the calls in flight, then closes the connections; later calls fail. */
    @Override
    public void close() {
        session.close();
    }

    /**
     * Closes at once, failing the calls and watches in flight ({@code close} waits for them): for
     * a caller that gave up on this client because a call hung past its deadline.
     */
    public void abort() {
        session.abort();
    }
}
