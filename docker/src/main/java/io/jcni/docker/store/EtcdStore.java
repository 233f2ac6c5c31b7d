package io.jcni.docker.store;

import io.jcni.docker.api.DriverException;
import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.KeyValue;
import io.jcni.types.Json;
import io.jcni.types.StateDoc;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@link SharedStore} on etcd: (kind, key) is the etcd key {@code PREFIX/KIND/KEY}, a version
 * is the key's {@code mod_revision}, and leased documents are attached to one lease of this host
 * ({@link #grantLease}, renewed by {@link #keepAlive}).
 *
 * <p>Every call is bounded by the client's timeout; an unreachable etcd is a {@link DriverException}
 * naming the endpoints, which Docker shows to the user as the failed command's error.
 */
public final class EtcdStore implements SharedStore {
    private final EtcdClient etcd;
    private final String prefix;
    private final String endpoints;
    private volatile long lease;

    /** @param prefix e.g. {@code /jcni/docker} (no trailing slash) */
    public EtcdStore(EtcdClient etcd, String prefix, String endpoints) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.endpoints = endpoints;
    }

    String etcdKey(String kind, String key) {
        return prefix + "/" + kind + "/" + key;
    }

    @Override
    public Optional<Map<String, Object>> get(String kind, String key) {
        return read(kind, key).map(Versioned::doc);
    }

    @Override
    public Optional<Versioned> read(String kind, String key) {
        String k = etcdKey(kind, key);
        Optional<KeyValue> kv = call(() -> etcd.get(k));
        if (kv.isEmpty()) return Optional.empty();
        return Optional.of(new Versioned(parse(k, kv.get().value()), kv.get().modRevision()));
    }

    @Override
    public void put(String kind, String key, Map<String, Object> doc) {
        call(() -> {
            etcd.put(etcdKey(kind, key), Json.write(doc), 0);
            return null;
        });
    }

    @Override
    public void putLeased(String kind, String key, Map<String, Object> doc) {
        // Without a lease the document would outlive this host: refuse until the lease keeper has one.
        if (lease == 0) throw new DriverException("etcd " + endpoints + ": this host has no lease yet (etcd was unreachable); try again");
        call(() -> {
            etcd.put(etcdKey(kind, key), Json.write(doc), lease);
            return null;
        });
    }

    @Override
    public boolean putIfVersion(String kind, String key, Map<String, Object> doc, long version) {
        String k = etcdKey(kind, key);
        String v = Json.write(doc);
        return call(() -> version == 0 ? etcd.putIfAbsent(k, v, 0) : etcd.putIfModRevision(k, version, v, 0));
    }

    @Override
    public boolean deleteIfVersion(String kind, String key, long version) {
        return call(() -> etcd.deleteIfModRevision(etcdKey(kind, key), version));
    }

    @Override
    public void delete(String kind, String key) {
        call(() -> etcd.delete(etcdKey(kind, key)));
    }

    /** The keys directly under the kind (not those of a sub-kind such as {@code KIND/x/y}), sorted. */
    @Override
    public List<String> keys(String kind) {
        String p = prefix + "/" + kind + "/";
        List<String> out = new ArrayList<>();
        for (String k : call(() -> etcd.keys(p))) {
            String rest = k.substring(p.length());
            if (!rest.isEmpty() && !rest.contains("/")) out.add(rest);
        }
        out.sort(null);
        return out;
    }

    @Override
    public String location(String kind, String key) {
        return "etcd " + etcdKey(kind, key);
    }

    /** A damaged shared document is not this host's to keep: it is left where it is for the operator, and skipped. */
    @Override
    public String quarantine(String kind, String key) {
        return location(kind, key) + " (left in place)";
    }

    /** Grants this host's lease (a new one each time: after an expiry, everything leased is written again). */
    public long grantLease(long ttlSeconds) {
        lease = call(() -> etcd.grantLease(ttlSeconds));
        return lease;
    }

    /** Renews this host's lease once; false when it has expired (its documents are gone). */
    public boolean keepAlive() {
        long l = lease;
        return l != 0 && call(() -> etcd.keepAlive(l)) > 0;
    }

    /** Revokes the lease: this host's leased documents go at once. */
    public void revokeLease() {
        long l = lease;
        if (l != 0) call(() -> {
            etcd.revokeLease(l);
            return null;
        });
        lease = 0;
    }

    public EtcdClient client() {
        return etcd;
    }

    public String etcdPrefix() {
        return prefix;
    }

    private static Map<String, Object> parse(String key, String value) {
        return StateDoc.parse("etcd " + key, value).fields();
    }

    private interface EtcdCall<T> {
        T run() throws IOException;
    }

    private <T> T call(EtcdCall<T> c) {
        try {
            return c.run();
        } catch (IOException e) {
            throw new DriverException("etcd " + endpoints + " unreachable: " + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        }
    }
}
