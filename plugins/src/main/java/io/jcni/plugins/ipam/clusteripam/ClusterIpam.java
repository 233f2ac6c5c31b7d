package io.jcni.plugins.ipam.clusteripam;

import io.jcni.etcd.EtcdAuthException;
import io.jcni.etcd.EtcdClient;
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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * {@code cluster-ipam}: addresses from ranges shared by every host of a cluster (IPv4 and IPv6, one
 * address per range set as host-local), held in etcd (one key per address, owner = container ID + interface; layout in {@link Allocations}), for any
 * plugin that takes an {@code ipam} section (bridge, macvlan, ptp, the flannel delegate...).
 *
 * <ul>
 *   <li>ADD: the attachment's existing address if it has one (a retried ADD), else a free address
 *       taken with a create-if-absent transaction on both keys; on a lost race another address,
 *       at most {@code retries} times (default 100), with a short random pause.</li>
 *   <li>DEL: deletes the keys of each address, guarded by the address key still naming this attachment;
 *       nothing allocated is success.</li>
 *   <li>GC (CNI 1.1): releases every allocation of the ranges whose attachment is not in
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
        try {
            List<Result.IpConfig> ips = new ArrayList<>();
            for (Allocated a : Clients.with(cfg, req.log(), etcd -> allocate(etcd, cfg, me, req.netns()))) {
                ips.add(new Result.IpConfig(new Cidr(a.ip(), a.range().subnet().prefix()), a.range().gateway(), null));
            }
            return new Result(CniVersion.CURRENT.toString(), List.of(), ips, cfg.routes(), cfg.dns());
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    /** One address of the attachment, and the range it came from. */
    record Allocated(ClusterIpamConfig.Range range, IpAddr ip) {}

    /** Blind guesses that met a taken address before a set's addresses are listed. */
    private static final int GUESSES_BEFORE_LISTING = 2;

    /** The first address of the attachment (tests of the single-range layout). */
    static IpAddr allocate(EtcdClient etcd, ClusterIpamConfig cfg, Attachment me) throws IOException {
        return allocate(etcd, cfg, me, "").getFirst().ip();
    }

    /**
     * One address from each range set, all in one etcd transaction: it creates each address key
     * and owner key, requires every owner key of the attachment (in every range of the set) and
     * every address key to be absent, and writes this host's index entries with them. The
     * transaction's failure branch reads those owner and address keys, so a lost attempt learns in
     * the same round trip whether the attachment has addresses already (a retried ADD: they are
     * returned) or which guessed address was taken (another guess avoids it).
     *
     * <p>Addresses are guessed, not read first: from this process's knowledge of taken addresses
     * ({@link TakenAddresses}, empty in a fresh plugin process), so the usual allocation is one
     * round trip. After {@value #GUESSES_BEFORE_LISTING} taken guesses the set's address keys are
     * listed (one read per range) and guesses avoid them. A guess never makes a duplicate: only
     * the transaction, guarded on the keys' absence, gives an address.
     *
     * @param netns the container's CNI_NETNS, recorded in this host's index for its reconcile
     */
    static List<Allocated> allocate(EtcdClient etcd, ClusterIpamConfig cfg, Attachment me, String netns) throws IOException {
        long netnsInode = inodeOf(netns);
        List<ClusterIpamConfig.RangeSet> sets = cfg.rangeSets();
        int n = sets.size();
        Allocated[] done = new Allocated[n];
        List<Set<IpAddr>> known = new ArrayList<>();
        int[] misses = new int[n];
        boolean[] listed = new boolean[n];
        for (int i = 0; i < n; i++) known.add(new HashSet<>());
        RandomGenerator random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < cfg.retries(); attempt++) {
            Map<String, String> create = new LinkedHashMap<>(), index = new LinkedHashMap<>();
            List<String> absent = new ArrayList<>(), read = new ArrayList<>();
            Allocated[] picks = new Allocated[n];
            for (int i = 0; i < n; i++) {
                if (done[i] != null) continue;
                ClusterIpamConfig.RangeSet set = sets.get(i);
                IpAddr pick = guess(etcd, cfg, set, known.get(i), misses[i] >= GUESSES_BEFORE_LISTING && !listed[i], random);
                listed[i] |= misses[i] >= GUESSES_BEFORE_LISTING;
                if (pick == null) {
                    listed[i] = true;
                    pick = guess(etcd, cfg, set, known.get(i), true, random); // our knowledge may be stale: list, then decide
                    if (pick == null) {
                        throw new CniException(ErrorCode.INTERNAL, "cluster-ipam: no free address left in " + describe(set));
                    }
                }
                ClusterIpamConfig.Range r = set.rangeOf(pick);
                picks[i] = new Allocated(r, pick);
                TakenAddresses.claim(cfg, set, pick);
                String ipKey = Allocations.ipKey(cfg.etcdPrefix(), r.subnet(), pick);
                String ownerKey = Allocations.ownerKey(cfg.etcdPrefix(), r.subnet(), me);
                create.put(ipKey, Allocations.ownerValue(me));
                create.put(ownerKey, pick.toString());
                read.add(ipKey);
                for (ClusterIpamConfig.Range other : set.ranges()) {
                    String k = Allocations.ownerKey(cfg.etcdPrefix(), other.subnet(), me);
                    read.add(k);
                    if (!k.equals(ownerKey)) absent.add(k);
                }
                if (cfg.host() != null) {
                    index.put(Allocations.hostKey(cfg.etcdPrefix(), cfg.host(), r.subnet(), me),
                            new HostRecord(pick, netns == null ? "" : netns, netnsInode, System.currentTimeMillis()).encode());
                }
            }
            if (create.isEmpty()) return List.of(done); // every set had an address already
            EtcdClient.CreateOrRead outcome = etcd.createOrRead(create, absent, index, read);
            if (outcome.created()) {
                for (int i = 0; i < n; i++) if (picks[i] != null) done[i] = picks[i];
                return List.of(done);
            }
            if (learnFromLoss(cfg, me, outcome.read(), picks, done, known, misses, listed)) pause(attempt);
        }
        throw new CniException(ErrorCode.TRY_AGAIN_LATER,
                "cluster-ipam: no address after " + cfg.retries() + " attempts (too much contention in " + describe(cfg) + ")");
    }

    /**
     * What a lost attempt's reads tell, set by set: the attachment's addresses already there go to
     * {@code done}; a guessed address found taken joins {@code known} and counts a miss, one not
     * taken is given back to this process's free addresses. True when an address taken was one
     * listed as free: another host won the same address, and the next attempt waits a little.
     */
    private static boolean learnFromLoss(ClusterIpamConfig cfg, Attachment me, Map<String, KeyValue> read, Allocated[] picks,
            Allocated[] done, List<Set<IpAddr>> known, int[] misses, boolean[] listed) {
        List<ClusterIpamConfig.RangeSet> sets = cfg.rangeSets();
        boolean raced = false;
        for (int i = 0; i < picks.length; i++) {
            if (picks[i] == null) continue;
            for (ClusterIpamConfig.Range r : sets.get(i).ranges()) {
                String ownerKey = Allocations.ownerKey(cfg.etcdPrefix(), r.subnet(), me);
                KeyValue owner = read.get(ownerKey);
                if (owner == null) continue;
                IpAddr ip = IpAddr.tryParse(owner.value());
                // No transaction can succeed while the key is there (each requires it absent), so
                // retrying would only spin until "contention": name the key instead.
                if (ip == null) throw damagedOwner(ownerKey, owner.value());
                done[i] = new Allocated(r, ip);
            }
            IpAddr pick = picks[i].ip();
            if (read.containsKey(Allocations.ipKey(cfg.etcdPrefix(), picks[i].range().subnet(), pick))) {
                known.get(i).add(pick);
                misses[i]++;
                raced |= listed[i]; // taken since we listed: another host won the same address
            } else {
                TakenAddresses.unclaim(cfg, sets.get(i), pick);
            }
        }
        return raced;
    }

    /**
     * A free-looking address of the set, avoiding {@code known} and this process's taken addresses;
     * with {@code list}, address keys are read first ({@link #listWindows}, then, if those hold nothing
     * free, the whole set): what they show taken joins {@code known}, and a whole listing replaces this
     * process's taken addresses. Null when none is left.
     */
    private static IpAddr guess(EtcdClient etcd, ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, Set<IpAddr> known, boolean list,
            RandomGenerator random) throws IOException {
        if (list) {
            IpAddr inWindow = listWindows(etcd, cfg, set, known, random);
            if (inWindow != null) return inWindow;
            Set<IpAddr> used = SharedListing.taken(cfg.etcdEndpoints() + " " + TakenAddresses.key(cfg, set), () -> {
                Set<IpAddr> taken = new HashSet<>();
                for (ClusterIpamConfig.Range r : set.ranges()) addTaken(etcd, cfg, r, Allocations.rangeDir(cfg.etcdPrefix(), r.subnet()) + "ips/", taken);
                return taken;
            });
            // The call's own misses stay known: a shared listing may have started before one of them.
            known.addAll(used);
            TakenAddresses.replace(cfg, set, used);
            return Allocations.pickFree(cfg, set, known::contains, random).orElse(null);
        }
        Set<IpAddr> process = TakenAddresses.of(cfg, set);
        return Allocations.pickFree(cfg, set, a -> known.contains(a) || process.contains(a), random).orElse(null);
    }

    /** Windows of a set listed, one after another, before the whole set is. */
    private static final int WINDOWS_BEFORE_LISTING_ALL = 3;

    /**
     * A free address found by listing only the IPv4 /24 around a free-looking guess
     * ({@link Allocations#windowPrefix}: at most 256 keys) instead of the whole set: a listing of a
     * large, busy range is thousands of keys that etcd writes as JSON and the client reads (and,
     * over TLS, decrypts), for one address. What a window shows taken joins {@code known} and this
     * process's taken addresses. Null when the guess is IPv6 or in a range no larger than a window,
     * or when {@value #WINDOWS_BEFORE_LISTING_ALL} windows held nothing free: then the whole set is listed.
     */
    private static IpAddr listWindows(EtcdClient etcd, ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, Set<IpAddr> known,
            RandomGenerator random) throws IOException {
        for (int w = 0; w < WINDOWS_BEFORE_LISTING_ALL; w++) {
            Set<IpAddr> process = TakenAddresses.of(cfg, set);
            IpAddr guess = Allocations.pickFree(cfg, set, a -> known.contains(a) || process.contains(a), random).orElse(null);
            if (guess == null || guess.isV6()) return null;
            ClusterIpamConfig.Range r = set.rangeOf(guess);
            if (r.last().toBigInteger().subtract(r.first().toBigInteger()).longValue() < Allocations.WINDOW) return null;
            String window = Allocations.windowPrefix(cfg.etcdPrefix(), r.subnet(), guess);
            Set<IpAddr> taken = SharedListing.taken(cfg.etcdEndpoints() + " " + window, () -> addTaken(etcd, cfg, r, window, new HashSet<>()));
            known.addAll(taken);
            for (IpAddr a : taken) TakenAddresses.claim(cfg, set, a);
            IpAddr free = Allocations.pickFreeInWindow(cfg, r, guess, a -> known.contains(a) || process.contains(a), random).orElse(null);
            if (free != null) return free;
        }
        return null;
    }

    /** Adds to {@code into} the addresses of range {@code r} whose ip keys start with {@code keyPrefix}; returns {@code into}. */
    private static Set<IpAddr> addTaken(EtcdClient etcd, ClusterIpamConfig cfg, ClusterIpamConfig.Range r, String keyPrefix, Set<IpAddr> into)
            throws IOException {
        for (String k : etcd.keys(keyPrefix)) {
            IpAddr a = Allocations.ipOf(cfg.etcdPrefix(), r.subnet(), k);
            if (a != null) into.add(a);
        }
        return into;
    }

    private static void pause(int attempt) throws java.io.InterruptedIOException {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(1, 5 + Math.min(attempt, 20) * 2L)); // spread the racers
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("cluster-ipam: interrupted");
        }
    }

    private static String describe(ClusterIpamConfig.RangeSet set) {
        List<String> s = new ArrayList<>();
        for (ClusterIpamConfig.Range r : set.ranges()) s.add(r.subnet().toString());
        return String.join(",", s);
    }

    private static String describe(ClusterIpamConfig cfg) {
        List<String> s = new ArrayList<>();
        for (ClusterIpamConfig.RangeSet set : cfg.rangeSets()) s.add(describe(set));
        return String.join(" ", s);
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
        try {
            Clients.with(cfg, req.log(), etcd -> release(etcd, cfg, new Attachment(req.containerId(), req.ifname())));
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    /** The attachment's owner keys in every range, read in one round trip (absent ones left out). */
    static Map<String, KeyValue> owners(EtcdClient etcd, ClusterIpamConfig cfg, Attachment a) throws IOException {
        List<String> keys = new ArrayList<>();
        for (ClusterIpamConfig.Range r : cfg.allRanges()) keys.add(Allocations.ownerKey(cfg.etcdPrefix(), r.subnet(), a));
        return etcd.getAll(keys);
    }

    /**
     * Releases the attachment's addresses; true if it had one. Each address goes with its owner key
     * and this host's index entry in one transaction, guarded by the address key still naming the
     * attachment; another host's index entry (a GC releasing its allocation) is dropped by that
     * host's reconcile, which finds the allocation gone.
     */
    static boolean release(EtcdClient etcd, ClusterIpamConfig cfg, Attachment a) throws IOException {
        Map<String, KeyValue> owners = owners(etcd, cfg, a);
        for (ClusterIpamConfig.Range r : cfg.allRanges()) {
            String ownerKey = Allocations.ownerKey(cfg.etcdPrefix(), r.subnet(), a);
            KeyValue owner = owners.get(ownerKey);
            if (owner == null) continue;
            IpAddr ip = IpAddr.tryParse(owner.value());
            List<String> mine = cfg.host() == null ? List.of() : List.of(Allocations.hostKey(cfg.etcdPrefix(), cfg.host(), r.subnet(), a));
            if (ip != null) {
                String ipKey = Allocations.ipKey(cfg.etcdPrefix(), r.subnet(), ip);
                List<String> keys = new ArrayList<>(List.of(ipKey, ownerKey));
                keys.addAll(mine);
                TakenAddresses.released(cfg, ip);
                if (etcd.deleteAllIfValue(ipKey, Allocations.ownerValue(a), keys)) continue;
            }
            etcd.delete(ownerKey); // the address key is not ours (or unreadable): drop only the stale index
            for (String k : mine) etcd.delete(k);
        }
        return !owners.isEmpty();
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
        try {
            Map<String, KeyValue> owners = Clients.with(cfg, req.log(), etcd -> owners(etcd, cfg, new Attachment(req.containerId(), req.ifname())));
            if (owners.isEmpty()) throw new CniException(ErrorCode.INTERNAL, "cluster-ipam: no allocation for " + req.containerId() + "/" + req.ifname());
            for (KeyValue owner : owners.values()) {
                boolean found = prev.ips().stream().anyMatch(i -> i.ip().toString().equals(owner.value()));
                if (!found) throw new CniException(ErrorCode.INTERNAL, "cluster-ipam: " + owner.value() + " is allocated but not in prevResult");
            }
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    @Override
    public void gc(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        Set<Attachment> valid = new HashSet<>(req.validAttachments());
        try {
            Clients.with(cfg, req.log(), etcd -> {
                Set<Attachment> gone = new java.util.LinkedHashSet<>();
                for (ClusterIpamConfig.Range r : cfg.allRanges()) {
                    for (String k : etcd.keys(Allocations.rangeDir(cfg.etcdPrefix(), r.subnet()) + "owners/")) {
                        Attachment a = Allocations.ownerOf(cfg.etcdPrefix(), r.subnet(), k);
                        if (a != null && !valid.contains(a)) gone.add(a);
                    }
                }
                for (Attachment a : gone) release(etcd, cfg, a);
                return gone.size();
            });
        } catch (IOException e) {
            throw unreachable(cfg, e);
        }
    }

    @Override
    public void status(PluginRequest req) throws Exception {
        ClusterIpamConfig cfg = ClusterIpamConfig.parse(req.conf());
        try {
            Clients.with(cfg, req.log(), etcd -> etcd.get(cfg.etcdPrefix() + "/"));
        } catch (EtcdAuthException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: " + e.getMessage(), "", e);
        } catch (EtcdException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: etcd error: " + e.getMessage(), "", e);
        } catch (IOException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "cluster-ipam: etcd unreachable at " + cfg.etcdEndpoints(), e.getMessage(), e);
        }
    }

    /**
     * Unreachable, a TLS or authentication failure, or etcd giving up on the request (twice, see
     * {@link Clients#with}): code 11 (try again later), since a runtime retries and a fixed file or
     * password, or a less loaded etcd, then succeeds; the message says what is wrong.
     */
    private static CniException unreachable(ClusterIpamConfig cfg, IOException e) {
        if (e instanceof EtcdAuthException) return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: " + e.getMessage(), "", e);
        if (e instanceof EtcdException refused && refused.isTransient()) {
            return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: etcd gave up on the request: " + e.getMessage(), "", e);
        }
        if (e instanceof EtcdException) return new CniException(ErrorCode.INTERNAL, "cluster-ipam: etcd error: " + e.getMessage(), "", e);
        return new CniException(ErrorCode.TRY_AGAIN_LATER, "cluster-ipam: etcd unreachable at " + String.join(",", cfg.etcdEndpoints()),
                e.getMessage(), e);
    }
}
