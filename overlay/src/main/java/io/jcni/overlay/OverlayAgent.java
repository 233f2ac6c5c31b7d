package io.jcni.overlay;

import io.jcni.linux.Address;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.LiveNetns;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.nft.Nft;
import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.KeyValue;
import io.jcni.etcd.WatchEvent;
import io.jcni.plugins.ipam.clusteripam.HostReconcile;
import io.jcni.plugins.meta.flannel.SubnetFile;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The overlay agent of one host (flanneld's job), in the network namespace of the process:
 * reads the network config from etcd, leases a subnet (create-if-absent transaction, attached to
 * an etcd lease kept alive at a third of its TTL), sets up the backend, writes subnet.env, and
 * keeps every other host's subnet programmed from a list + watch of {@code <prefix>/subnets/}.
 *
 * <p>etcd down: nothing is torn down (pods keep their routes); the agent retries with an
 * exponential back-off (1 s doubling up to the lease TTL, at most 30 s) and, when etcd is back, renews or re-takes its subnet (the same one: its lease carries our
 * PublicIP, or subnet.env names it) and re-lists to catch up with what it missed.
 */
public final class OverlayAgent implements AutoCloseable {
    private final AgentOptions opts;
    private final PrintStream log;
    private final EtcdClient etcd;
    private final Rtnl rt;
    private final Random random = new Random();
    private final CountDownLatch ready = new CountDownLatch(1);
    private final Map<Cidr, Lease> programmed = new HashMap<>();
    private final Object lock = new Object();
    private volatile boolean closed;
    private volatile AutoCloseable watchStream;
    private volatile long leaseId;
    private volatile Cidr subnet;
    private NetworkConfig cfg;
    private Dataplane dp;
    private IpAddr publicIp;
    private Thread syncThread, keepAliveThread, ipamThread;

    private OverlayAgent(AgentOptions opts, PrintStream log) {
        this.opts = opts;
        this.log = log;
        this.etcd = new EtcdClient(opts.etcdEndpoints(), opts.etcdTimeout(), opts.etcdSecurity());
        opts.etcdSecurity().keyFileWarning().ifPresent(w -> log(w, ""));
        this.rt = Rtnl.open();
    }

    /** Starts the agent's threads and returns at once; {@link #awaitReady} waits for the first lease. */
    public static OverlayAgent start(AgentOptions opts, PrintStream log) {
        OverlayAgent a = new OverlayAgent(opts, log);
        a.syncThread = Thread.ofPlatform().name("overlay-sync").daemon().start(a::run);
        return a;
    }

    public boolean awaitReady(Duration d) throws InterruptedException {
        return ready.await(d.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Our subnet, once leased. */
    public Cidr subnet() {
        return subnet;
    }

    private void run() {
        try {
            cfg = untilDone("read network config " + opts.configKey(), () -> {
                Optional<KeyValue> kv = etcd.get(opts.configKey());
                if (kv.isEmpty()) throw new IOException("no network config at " + opts.configKey());
                return NetworkConfig.parse(kv.get().value());
            });
            Link underlay = underlay();
            publicIp = publicIp(underlay);
            dp = switch (cfg.backend()) {
                case NetworkConfig.Vxlan v -> new Dataplane.Vxlan(rt, v, publicIp, underlay, n -> log("vxlan device", "notice=\"" + n + "\""));
                case NetworkConfig.HostGw h -> new Dataplane.HostGw(rt, publicIp, underlay);
            };
            acquire();
            keepAliveThread = Thread.ofVirtual().name("overlay-keepalive").start(this::keepAlive);
            if (!opts.ipamReconcile().isZero() && opts.ipamHost() != null) {
                ipamThread = Thread.ofPlatform().name("overlay-ipam-reconcile").daemon().start(this::ipamReconcileLoop);
            }
            syncLoop();
        } catch (InterruptedException e) {
            // closing
        } catch (RuntimeException e) {
            if (!closed) log("fatal", "error=\"" + e + "\"");
        }
    }

    // ------------------------------------------------------------------ our subnet

    private void acquire() throws InterruptedException {
        Cidr previous = subnet;
        if (previous == null && Files.isRegularFile(opts.subnetFile())) {
            try {
                previous = SubnetEnv.read(opts.subnetFile()).subnet().masked();
            } catch (IOException | IllegalArgumentException e) {
                log("ignoring unreadable subnet file", "file=" + opts.subnetFile());
            }
        }
        Cidr prev = previous;
        Lease mine = untilDone("lease a subnet", () -> tryAcquire(prev));
        synchronized (lock) {
            subnet = mine.subnet();
            dp.activate(subnet);
        }
        try {
            SubnetEnv.write(opts.subnetFile(), new SubnetFile(cfg.network(), subnet, dp.podMtu(), opts.ipMasq()));
        } catch (IOException e) {
            log("writing subnet file failed", "file=" + opts.subnetFile() + " error=\"" + e.getMessage() + "\"");
        }
        if (opts.ipMasq()) {
            try {
                Nft.current().run(OverlayMasq.setup(cfg.network(), subnet));
            } catch (RuntimeException e) {
                log("masquerade setup failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        log("leased", "subnet=" + subnet + " public_ip=" + publicIp + " backend=" + cfg.backend().type() + " lease=" + Long.toHexString(leaseId));
        ready.countDown();
    }

    /** One attempt; throws IOException to retry (etcd unreachable, or another host won the race). */
    private Lease tryAcquire(Cidr previous) throws IOException {
        Map<Cidr, KeyValue> kvs = new LinkedHashMap<>();
        Map<Cidr, Lease> leases = new LinkedHashMap<>();
        for (KeyValue kv : etcd.getPrefix(Lease.subnetsDir(opts.etcdPrefix())).kvs()) {
            Lease l = parse(kv);
            if (l != null) {
                leases.put(l.subnet(), l);
                kvs.put(l.subnet(), kv);
            }
        }
        Optional<Lease> own = SubnetChoice.ownLease(leases.values(), publicIp).filter(l -> cfg.leasable(l.subnet()));
        long id = etcd.grantLease(opts.leaseTtl().toSeconds());
        boolean ok;
        Lease mine;
        if (own.isPresent()) {
            // A restart: take over our own lease (new etcd lease id) unless it changed meanwhile.
            mine = dp.local(own.get().subnet());
            ok = etcd.putIfModRevision(Lease.key(opts.etcdPrefix(), mine.subnet()), kvs.get(mine.subnet()).modRevision(), mine.value(), id);
        } else {
            Cidr pick = SubnetChoice.pick(cfg, leases.values(), previous, random)
                    .orElseThrow(() -> new IOException("no free subnet left in " + cfg.network()));
            mine = dp.local(pick);
            ok = etcd.putIfAbsent(Lease.key(opts.etcdPrefix(), pick), mine.value(), id);
        }
        if (!ok) {
            etcd.revokeLease(id);
            throw new IOException("subnet " + mine.subnet() + " was taken meanwhile");
        }
        leaseId = id;
        return mine;
    }

    private void keepAlive() {
        long period = Math.max(500, opts.leaseTtl().toMillis() / 3);
        Backoff backoff = backoff(opts.leaseTtl().dividedBy(3));
        boolean failing = false;
        while (!closed) {
            try {
                Thread.sleep(failing ? backoff.nextMillis() : period);
                long ttl = etcd.keepAlive(leaseId);
                if (failing) log("etcd reachable again", "");
                failing = false;
                backoff.reset();
                if (ttl <= 0) {
                    log("lease expired; leasing again", "subnet=" + subnet);
                    acquire();
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                if ((!failing || e instanceof io.jcni.etcd.EtcdAuthException) && !closed) log("lease keep-alive failed; retrying", "error=\"" + e.getMessage() + "\"");
                failing = true;
            }
        }
    }

    // ------------------------------------------------------------------ the other hosts

    private void syncLoop() throws InterruptedException {
        String dir = Lease.subnetsDir(opts.etcdPrefix());
        Backoff backoff = backoff(opts.leaseTtl());
        boolean failing = false;
        while (!closed) {
            try {
                EtcdClient.RangeResult all = etcd.getPrefix(dir);
                Map<Cidr, Lease> wanted = new HashMap<>();
                for (KeyValue kv : all.kvs()) {
                    Lease l = parse(kv);
                    if (l != null && isRemote(l)) wanted.put(l.subnet(), l);
                }
                apply(LeaseDiff.between(snapshot(), wanted));
                if (failing) log("watching again", "revision=" + all.revision());
                failing = false;
                backoff.reset();
                etcd.watch(dir, all.revision() + 1, this::onEvent, s -> watchStream = s);
            } catch (IOException | RuntimeException e) {
                if (closed) return;
                if (!failing || e instanceof io.jcni.etcd.EtcdAuthException) log("lost the lease watch; re-listing", "error=\"" + e.getMessage() + "\"");
                failing = true;
                Thread.sleep(backoff.nextMillis());
            }
        }
    }

    /** One key changed: diff just that subnet (O(1) per event, so 1,000 new leases cost 1,000 small steps). */
    private void onEvent(WatchEvent ev) {
        Cidr sn = Lease.subnetOfKey(opts.etcdPrefix(), ev.kv().key());
        if (sn == null || sn.masked().equals(subnet)) return; // our own lease: the keep-alive looks after it
        sn = sn.masked();
        Lease wanted = null;
        if (!ev.deleted()) {
            Lease l = parse(ev.kv());
            if (l != null && isRemote(l)) wanted = l;
        }
        Lease have;
        synchronized (lock) {
            have = programmed.get(sn);
        }
        apply(LeaseDiff.between(have == null ? Map.of() : Map.of(sn, have), wanted == null ? Map.of() : Map.of(sn, wanted)));
    }

    private boolean isRemote(Lease l) {
        if (l.publicIp().equals(publicIp) || l.subnet().equals(subnet)) return false;
        if (!l.backendType().equals(cfg.backend().type())) {
            log("ignoring a lease of another backend", "subnet=" + l.subnet() + " backend=" + l.backendType());
            return false;
        }
        return true;
    }

    private Map<Cidr, Lease> snapshot() {
        synchronized (lock) {
            return new HashMap<>(programmed);
        }
    }

    private void apply(LeaseDiff d) {
        synchronized (lock) {
            for (Lease l : d.removes()) {
                try {
                    dp.remove(l);
                    programmed.remove(l.subnet());
                    log("removed remote", "subnet=" + l.subnet() + " public_ip=" + l.publicIp());
                } catch (RuntimeException e) {
                    log("removing a remote failed", "subnet=" + l.subnet() + " error=\"" + e.getMessage() + "\"");
                }
            }
            for (Lease l : d.adds()) {
                try {
                    dp.add(l);
                    programmed.put(l.subnet(), l);
                    log("added remote", "subnet=" + l.subnet() + " public_ip=" + l.publicIp());
                } catch (RuntimeException e) {
                    log("adding a remote failed", "subnet=" + l.subnet() + " error=\"" + e.getMessage() + "\"");
                }
            }
        }
    }

    private Lease parse(KeyValue kv) {
        Cidr sn = Lease.subnetOfKey(opts.etcdPrefix(), kv.key());
        if (sn == null) return null;
        try {
            return Lease.parse(sn, kv.value());
        } catch (IllegalArgumentException e) {
            log("ignoring a malformed lease", "key=" + kv.key() + " error=\"" + e.getMessage() + "\"");
            return null;
        }
    }

    // ------------------------------------------------------------------ cluster-ipam reconcile

    /**
     * Every {@code --ipam-reconcile-every}: releases this host's cluster-ipam allocations whose
     * container network namespace is gone ({@link HostReconcile}), so that a runtime that crashed
     * or forgot a container does not hold its address until someone sends GC. A namespace is gone
     * when no task, descriptor or bind mount on the machine holds it ({@link LiveNetns}); when its
     * inode could not be recorded, when its path is gone. From a PID namespace other than the
     * initial one the agent cannot see every holder, so it does not reconcile at all.
     */
    private void ipamReconcileLoop() {
        if (!LiveNetns.seesEveryProcess()) {
            log("cluster-ipam reconcile off: not in the initial PID namespace (namespaces held by other processes are invisible)", "");
            return;
        }
        boolean failing = false;
        while (!closed) {
            try {
                Thread.sleep(opts.ipamReconcile().toMillis());
                var live = new java.util.concurrent.atomic.AtomicReference<Map<Long, String>>();
                HostReconcile.Outcome o = HostReconcile.reconcile(etcd, opts.ipamPrefix(), opts.ipamHost(), opts.ipamGrace(), r -> {
                    if (r.netnsInode() == 0) return r.netns().isEmpty() || Files.exists(java.nio.file.Path.of(r.netns()));
                    if (live.get() == null) live.set(LiveNetns.scan()); // once per round, and only when needed
                    return live.get().containsKey(r.netnsInode());
                });
                if (failing) log("cluster-ipam reconcile: etcd reachable again", "");
                failing = false;
                if (o.released() + o.forgotten() > 0) {
                    log("cluster-ipam reconcile", "host=" + opts.ipamHost() + " released=" + o.released() + " forgotten=" + o.forgotten()
                            + " kept=" + o.kept());
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if ((!failing || e instanceof io.jcni.etcd.EtcdAuthException) && !closed) log("cluster-ipam reconcile failed; next round later", "error=\"" + e.getMessage() + "\"");
                failing = true;
            }
        }
    }

    // ------------------------------------------------------------------ underlay

    private Link underlay() {
        String want = opts.iface();
        if (!want.isEmpty()) {
            IpAddr asIp = IpAddr.tryParse(want);
            if (asIp == null) return rt.link(want);
            for (Link l : rt.links()) {
                for (Address a : rt.addresses(l.index(), Family.INET)) {
                    if (a.address().equals(asIp)) return l;
                }
            }
            throw new IllegalArgumentException("--iface " + want + ": no interface has this address");
        }
        for (Route r : rt.routes(Family.INET, Route.TABLE_MAIN)) {
            if (r.isDefault() && r.oif() > 0) return rt.link(r.oif());
        }
        throw new IllegalArgumentException("no --iface given and no default route to find one");
    }

    private IpAddr publicIp(Link underlay) {
        if (!opts.publicIp().isEmpty()) return IpAddr.parse(opts.publicIp());
        IpAddr fromIface = IpAddr.tryParse(opts.iface());
        if (fromIface != null) return fromIface;
        List<Address> addrs = rt.addresses(underlay.index(), Family.INET);
        if (addrs.isEmpty()) throw new IllegalArgumentException("interface " + underlay.name() + " has no IPv4 address");
        return addrs.getFirst().address();
    }

    // ------------------------------------------------------------------ plumbing

    private interface EtcdStep<T> {
        T run() throws IOException;
    }

    /** Retries {@code step} with back-off until it succeeds (logging the first failure of a streak). */
    private <T> T untilDone(String what, EtcdStep<T> step) throws InterruptedException {
        boolean logged = false;
        Backoff backoff = backoff(opts.leaseTtl());
        while (true) {
            if (closed) throw new InterruptedException();
            try {
                return step.run();
            } catch (IOException | IllegalArgumentException e) {
                // A TLS or authentication failure is logged every time: it is a wrong file or password, not a blip.
                if (!logged || e instanceof io.jcni.etcd.EtcdAuthException) {
                    log(what + " failed; retrying with back-off", "error=\"" + e.getMessage() + "\"");
                }
                logged = true;
                Thread.sleep(backoff.nextMillis());
            }
        }
    }

    /**
     * Retries back off exponentially from 1 s (plus jitter) up to {@code bound}, at most 30 s
     * ({@link Backoff}): the lease TTL for re-reading and re-watching, a third of it for keep-alives.
     */
    private Backoff backoff(Duration bound) {
        return new Backoff(Backoff.FIRST, Backoff.capWithin(bound), random);
    }

    private void log(String msg, String fields) {
        log.println(Instant.now() + " jcnid overlay msg=\"" + msg + "\"" + (fields.isEmpty() ? "" : " " + fields));
    }

    /** Clean shutdown: stop watching, release our subnet (revoke the etcd lease), remove the masquerade chain. Routes stay. */
    @Override
    public void close() {
        closed = true;
        if (keepAliveThread != null) keepAliveThread.interrupt();
        if (ipamThread != null) ipamThread.interrupt();
        syncThread.interrupt();
        AutoCloseable w = watchStream;
        if (w != null) {
            try {
                w.close();
            } catch (Exception ignored) {
                // closing a broken stream
            }
        }
        try {
            syncThread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (leaseId != 0) {
            try {
                etcd.revokeLease(leaseId);
                log("released", "subnet=" + subnet);
            } catch (IOException e) {
                log("releasing the lease failed; it expires by itself", "error=\"" + e.getMessage() + "\"");
            }
        }
        if (opts.ipMasq() && subnet != null) {
            try {
                Nft.current().run(OverlayMasq.teardown());
            } catch (RuntimeException e) {
                log("masquerade teardown failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        etcd.close();
        rt.close();
    }
}
