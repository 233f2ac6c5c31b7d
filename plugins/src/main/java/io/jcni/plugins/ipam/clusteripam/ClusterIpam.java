package io.jcni.plugins.ipam.clusteripam;

import io.jcni.etcd.EtcdAuthException;
import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.EtcdSecurity;
import io.jcni.etcd.EtcdException;
import io.jcni.etcd.KeyValue;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Names;
import io.jcni.types.Result;
import java.io.IOException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code cluster-ipam}: addresses from one range shared by every host of a cluster, held in etcd
 * (one key per address, owner = container ID + interface; layout in {@link Allocations}), for any
 * plugin that takes an {@code ipam} section (bridge, macvlan, ptp, the flannel delegate...).
 *
 * <ul>
 *   <li>ADD: the attachment's existing address if it has one (a retried ADD), else a free address
 *       taken with a create-if-absent transaction on both keys; on a lost race another address,
 *       at most {@code retries} times (default 100), with a short random pause.</li>
 *   <li>DEL: deletes both keys, guarded by the address key still naming this attachment;
 *       nothing allocated is success.</li>
 *   <li>GC (CNI 1.1): releases every allocation of the range whose attachment is not in
 *       {@code cni.dev/valid-attachments}. CHECK: the prevResult address is ours. STATUS: etcd answers.</li>
 * </ul>
 * etcd unreachable: error 11 "try again later" once every endpoint has failed (each bounded by
 * {@code timeout}), so a runtime retries; existing pods are not affected.
 */
public final class ClusterIpam implements Plugin {

    @Override
    public Result add(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        Attachment me = new Attachment(req.containerId(), req.ifname());
        try (EtcdClient etcd = client(cfg, req.log())) {
            IpAddr ip = allocate(etcd, cfg, me, req.netns());
            Result.IpConfig ipc = new Result.IpConfig(new Cidr(ip, cfg.range().prefix()), cfg.gateway(), null);
            return new Result(CniVersion.CURRENT.toString(), List.of(), List.of(ipc), cfg.routes(), cfg.dns());
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    static IpAddr allocate(EtcdClient etcd, ClusterIpamConfig cfg, Attachment me) throws IOException {
        return allocate(etcd, cfg, me, "");
    }

    /** @param netns the container's CNI_NETNS, recorded in this host's index for its reconcile */
    static IpAddr allocate(EtcdClient etcd, ClusterIpamConfig cfg, Attachment me, String netns) throws IOException {
        long netnsInode = inodeOf(netns);
        String ownerKey = Allocations.ownerKey(cfg.etcdPrefix(), cfg.range(), me);
        String ipsDir = Allocations.rangeDir(cfg.etcdPrefix(), cfg.range()) + "ips/";
        for (int attempt = 0; attempt < cfg.retries(); attempt++) {
            Optional<KeyValue> existing = etcd.get(ownerKey);
            if (existing.isPresent()) {
                IpAddr ip = IpAddr.tryParse(existing.get().value());
                if (ip != null) return ip;
                // No transaction can succeed while the key is there (each requires it absent), so
                // retrying would only spin until "contention": name the key instead.
                throw damagedOwner(ownerKey, existing.get().value());
            }
            Set<IpAddr> used = new HashSet<>();
            for (String k : etcd.keys(ipsDir)) {
                IpAddr a = Allocations.ipOf(cfg.etcdPrefix(), cfg.range(), k);
                if (a != null) used.add(a);
            }
            IpAddr pick = Allocations.pickFree(cfg, used, ThreadLocalRandom.current())
                    .orElseThrow(() -> new CniException(ErrorCode.INTERNAL, "cluster-ipam: no free address left in " + cfg.range()));
            Map<String, String> kvs = new LinkedHashMap<>();
            kvs.put(Allocations.ipKey(cfg.etcdPrefix(), cfg.range(), pick), Allocations.ownerValue(me));
            kvs.put(ownerKey, pick.toString());
            Map<String, String> index = cfg.host() == null ? Map.of() : Map.of(Allocations.hostKey(cfg.etcdPrefix(), cfg.host(), cfg.range(), me),
                    new HostRecord(pick, netns == null ? "" : netns, netnsInode, System.currentTimeMillis()).encode());
            if (etcd.createAll(kvs, index)) return pick;
            try {
                Thread.sleep(ThreadLocalRandom.current().nextLong(1, 5 + Math.min(attempt, 20) * 2L)); // spread the racers
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("cluster-ipam: interrupted");
            }
        }
        throw new CniException(ErrorCode.TRY_AGAIN_LATER,
                "cluster-ipam: no address after " + cfg.retries() + " attempts (too much contention in " + cfg.range() + ")");
    }

    /** An owner key that holds no address: written by something else, or damaged. DEL of the attachment removes it. */
    static CniException damagedOwner(String ownerKey, String value) {
        String shown = value.length() > 64 ? value.substring(0, 64) + "..." : value;
        return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: damaged allocation record " + ownerKey,
                "the key holds \"" + Names.printable(shown) + "\", not an address; DEL this attachment "
                        + "(or etcdctl del " + ownerKey + ") to clear it, then ADD again");
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        try (EtcdClient etcd = client(cfg, req.log())) {
            release(etcd, cfg, new Attachment(req.containerId(), req.ifname()));
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    /**
     * Releases the attachment's address; true if it had one. This host's index entry goes in the
     * same transaction; another host's (a GC releasing its allocation) is dropped by that host's
     * reconcile, which finds the allocation gone.
     */
    static boolean release(EtcdClient etcd, ClusterIpamConfig cfg, Attachment a) throws IOException {
        String ownerKey = Allocations.ownerKey(cfg.etcdPrefix(), cfg.range(), a);
        Optional<KeyValue> owner = etcd.get(ownerKey);
        if (owner.isEmpty()) return false;
        IpAddr ip = IpAddr.tryParse(owner.get().value());
        List<String> mine = cfg.host() == null ? List.of() : List.of(Allocations.hostKey(cfg.etcdPrefix(), cfg.host(), cfg.range(), a));
        if (ip != null) {
            String ipKey = Allocations.ipKey(cfg.etcdPrefix(), cfg.range(), ip);
            List<String> keys = new java.util.ArrayList<>(List.of(ipKey, ownerKey));
            keys.addAll(mine);
            if (etcd.deleteAllIfValue(ipKey, Allocations.ownerValue(a), keys)) return true;
        }
        etcd.delete(ownerKey); // the address key is not ours (or unreadable): drop only the stale index
        for (String k : mine) etcd.delete(k);
        return true;
    }

    /** The inode of the namespace at {@code netns} (stat follows /proc/PID/ns/net), 0 when it cannot be read. */
    static long inodeOf(String netns) {
        if (netns == null || netns.isEmpty()) return 0;
        try {
            return java.nio.file.Files.getAttribute(java.nio.file.Path.of(netns), "unix:ino") instanceof Long l ? l : 0;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        try (EtcdClient etcd = client(cfg, req.log())) {
            Optional<KeyValue> owner = etcd.get(Allocations.ownerKey(cfg.etcdPrefix(), cfg.range(), new Attachment(req.containerId(), req.ifname())));
            if (owner.isEmpty()) throw new CniException(ErrorCode.INTERNAL, "cluster-ipam: no allocation for " + req.containerId() + "/" + req.ifname());
            boolean found = prev.ips().stream().anyMatch(i -> i.ip().toString().equals(owner.get().value()));
            if (!found) throw new CniException(ErrorCode.INTERNAL, "cluster-ipam: " + owner.get().value() + " is allocated but not in prevResult");
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    @Override
    public void gc(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        Set<Attachment> valid = new HashSet<>(req.validAttachments());
        try (EtcdClient etcd = client(cfg, req.log())) {
            for (String k : etcd.keys(Allocations.rangeDir(cfg.etcdPrefix(), cfg.range()) + "owners/")) {
                Attachment a = Allocations.ownerOf(cfg.etcdPrefix(), cfg.range(), k);
                if (a != null && !valid.contains(a)) release(etcd, cfg, a);
            }
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    @Override
    public void status(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        try (EtcdClient etcd = client(cfg, req.log())) {
            etcd.get(cfg.etcdPrefix() + "/");
        } catch (EtcdAuthException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: " + e.getMessage(), "", e);
        } catch (EtcdException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: etcd error: " + e.getMessage(), "", e);
        } catch (IOException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: etcd unreachable at " + cfg.etcdEndpoints(), e.getMessage(), e);
        }
    }

    /** The client; the key file's loose permissions are warned about on the call's stderr (never stdout: that is the result). */
    private static EtcdClient client(ClusterIpamConfig cfg, java.io.PrintStream warnings) {
        EtcdSecurity sec = cfg.etcdSecurity();
        if (cfg.etcdPasswordFile() != null) {
            try {
                String pw = java.nio.file.Files.readString(cfg.etcdPasswordFile()).lines().findFirst().orElse("");
                sec = new EtcdSecurity(sec.caFile(), sec.certFile(), sec.keyFile(), sec.username(), pw);
            } catch (IOException e) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cluster-ipam: ipam.etcdPasswordFile " + cfg.etcdPasswordFile()
                        + ": cannot read: " + e.getMessage(), "", e);
            }
        }
        sec.keyFileWarning().ifPresent(w -> warnings.println("cluster-ipam: " + w));
        try {
            return new EtcdClient(cfg.etcdEndpoints(), cfg.timeout(), sec);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cluster-ipam: " + e.getMessage(), "", e);
        }
    }

    /**
     * Unreachable, a TLS or authentication failure: code 11 (try again later), since a runtime
     * retries and a fixed file or password then succeeds; the message says what is wrong.
     */
    private static CniException unreachable(ClusterIpamConfig cfg, IOException e) {
        if (e instanceof EtcdAuthException) return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: " + e.getMessage(), "", e);
        if (e instanceof EtcdException) return new CniException(ErrorCode.INTERNAL, "cluster-ipam: etcd error: " + e.getMessage(), "", e);
        return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: etcd unreachable at " + String.join(",", cfg.etcdEndpoints()),
                e.getMessage(), e);
    }
}
