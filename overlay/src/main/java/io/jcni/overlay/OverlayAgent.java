package io.jcni.overlay;

import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.KeyValue;
import io.jcni.linux.Link;
import io.jcni.linux.Rtnl;
import io.jcni.linux.nft.Nft;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
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
    private final AgentLog log;
    private final Rtnl rt;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final AgentEtcd etcd;
    /**
     * Memory held for the watchdog: an etcd answer that fills the heap stays reachable while the
     * call reading it hangs, and then nothing can be allocated, not even the log line or the new
     * client that would end it. Freed when lease work is stuck or an Error was caught; taken again
     * after the next successful keep-alive.
     */
    private static final int RESERVE_BYTES = 2 << 20;
    @SuppressWarnings("unused")
    private volatile byte[] reserve = new byte[RESERVE_BYTES];
    private final LeaseWatchdog.Clock watchTraffic = new LeaseWatchdog.Clock();
    private volatile boolean closed;
    private volatile AutoCloseable watchStream;
    private volatile int keepAliveGeneration;
    /** Set by the sync thread once the network config is read, before the other threads start. */
    private volatile HostFacts facts;
    private volatile RemoteHosts remotes;
    private volatile SubnetLease lease;
    private volatile ConfigWatch configWatch;
    private final Underlay underlay;
    /** The underlay interface, as picked at start. */
    private volatile Link underlayLink;
    private volatile Thread syncThread, keepAliveThread, ipamThread, watchdogThread, configThread;

    private OverlayAgent(AgentOptions opts, PrintStream log) {
        this.opts = opts;
        this.log = new AgentLog(log);
        this.etcd = new AgentEtcd(opts, this.log, () -> closed);
        opts.etcdSecurity().keyFileWarning().ifPresent(w -> log(w, ""));
        this.rt = Rtnl.open();
        this.underlay = new Underlay(opts, rt, this.log);
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

    /** Our IPv4 subnet, once leased (null in an IPv6-only network). */
    public Cidr subnet() {
        HostFacts f = facts;
        return f == null ? null : f.subnet;
    }

    /** Our IPv6 subnet, once leased (null without IPv6). */
    public Cidr subnet6() {
        HostFacts f = facts;
        return f == null ? null : f.subnet6;
    }

    private void run() {
        try {
            watchdogThread = Thread.ofPlatform().name("overlay-watchdog").daemon().start(this::watchdog);
            KeyValue cfgKv = etcd.untilDone("read network config " + opts.configKey(), () -> {
                Optional<KeyValue> kv = etcd.leaseCall(() -> etcd.client().get(opts.configKey()));
                if (kv.isEmpty()) throw new IOException("no network config at " + opts.configKey());
                return kv.get();
            });
            // A config the agent cannot honour stops it here, naming the key (not retried: it would not change by itself).
            NetworkConfig cfg = NetworkConfig.parse(cfgKv.value());
            log("network config", ConfigWatch.describe(cfg));
            HostFacts f = setUpDataplane(cfg);
            facts = f;
            remotes = new RemoteHosts(opts, f, log);
            lease = new SubnetLease(opts, f, etcd, remotes, log, ready, () -> keepAliveGeneration);
            configWatch = new ConfigWatch(opts, cfg, etcd, log, () -> closed);
            configThread = Thread.ofPlatform().name("overlay-config-watch").daemon().start(() -> configWatch.run(cfgKv));
            lease.acquire(0);
            startKeepAlive(false);
            if (!opts.ipamReconcile().isZero() && opts.ipamHost() != null) {
                IpamReconcileLoop ipam = new IpamReconcileLoop(opts, etcd, log, () -> closed);
                ipamThread = Thread.ofPlatform().name("overlay-ipam-reconcile").daemon().start(ipam::run);
            }
            syncLoop();
        } catch (InterruptedException e) {
            // closing
        } catch (RuntimeException e) {
            if (!closed) log("fatal", "error=\"" + e + "\"");
        } catch (Error e) {
            if (!closed) log("fatal", "error=\"" + e + "\"");
            throw e;
        }
    }

    /** The underlay, the public addresses and the backend's dataplane for {@code cfg}: this host's facts before its lease. */
    private HostFacts setUpDataplane(NetworkConfig cfg) {
        UnderlayChoice.Picked picked = underlay.pick(UnderlayChoice.Stack.of(cfg.ipv4(), cfg.ipv6()));
        underlayLink = rt.link(picked.iface().index());
        IpAddr publicIp = cfg.ipv4() ? underlay.publicIp(underlayLink, picked.address()) : null;
        IpAddr publicIpv6 = cfg.ipv6() ? underlay.publicIpv6(picked) : null;
        // flanneld's "Using interface with name ... and (v6) address ...": which interface and addresses the choice settled on
        log("underlay", "iface=" + underlayLink.name() + (publicIp != null ? " public_ip=" + publicIp : "")
                + (publicIpv6 != null ? " public_ipv6=" + publicIpv6 : ""));
        HostFacts f = new HostFacts(cfg, publicIp, publicIpv6, underlay.networks(underlayLink));
        NexthopIds nexthops = NexthopIds.of(cfg);
        if (!nexthops.coversAll(cfg)) log("network has more than 2^23 subnets; its routes are plain gateway routes, without nexthop objects", "");
        f.dp = switch (cfg.backend()) {
            case NetworkConfig.Vxlan v -> new Dataplane.Vxlan(rt, v, publicIp, publicIpv6, underlayLink,
                    n -> log("vxlan device", "notice=\"" + n + "\""), () -> f.underlayNets, nexthops);
            case NetworkConfig.HostGw h -> new Dataplane.HostGw(rt, publicIp, publicIpv6, underlayLink, nexthops,
                    n -> log("routes", "notice=\"" + n + "\""));
        };
        return f;
    }

    /**
     * Starts a keep-alive loop; the one before it (if any) ends at its next step. Synchronized: the
     * start-up and the watchdog may both start one, and each must get a generation of its own.
     */
    private synchronized void startKeepAlive(boolean leaseFirst) {
        int generation = ++keepAliveGeneration;
        keepAliveThread = Thread.ofPlatform().name("overlay-keepalive-" + generation).daemon().start(() -> keepAlive(generation, leaseFirst));
    }

    /**
     * Renews our etcd lease every third of its TTL; takes the subnet again when the lease is gone.
     * Any Throwable (an Error inside the HTTP client too) is logged and retried with back-off, never
     * left to end the thread silently; and should the thread end or hang anyway, the watchdog
     * starts another ({@code leaseFirst}: re-lease before renewing).
     */
    private void keepAlive(int generation, boolean leaseFirst) {
        long period = Math.max(500, opts.leaseTtl().toMillis() / 3);
        Backoff backoff = etcd.backoff(opts.leaseTtl().dividedBy(3));
        boolean failing = false;
        int failures = 0;
        boolean leaseAgain = leaseFirst;
        while (!closed && generation == keepAliveGeneration) {
            try {
                if (leaseAgain) {
                    lease.acquire(generation);
                    leaseAgain = false;
                }
                Thread.sleep(failing ? backoff.nextMillis() : period);
                if (generation != keepAliveGeneration) return;
                long id = lease.leaseId();
                long ttl = etcd.leaseCall(() -> etcd.client().keepAlive(id));
                if (failing) log("etcd reachable again", "");
                failing = false;
                failures = 0;
                if (reserve == null) reserve = new byte[RESERVE_BYTES];
                backoff.reset();
                if (ttl <= 0) {
                    log("lease expired; leasing again", "subnet=" + (facts.subnet != null ? facts.subnet : facts.subnet6));
                    leaseAgain = true;
                }
            } catch (InterruptedException e) {
                if (closed || generation != keepAliveGeneration) return;
            } catch (Throwable e) {
                if (closed || generation != keepAliveGeneration) return;
                if (!(e instanceof IOException)) reserve = null;
                if (!failing) log("lease keep-alive failed; retrying", "error=\"" + e + "\"");
                failing = true;
                // After an Error inside it, or a streak of failures, the client itself is suspect
                // (an HttpClient whose selector thread died fails every call): a new one is cheap.
                if (!(e instanceof IOException) || ++failures % 3 == 0) etcd.replace(etcd.client());
            }
        }
    }

    /**
     * Every second: is the lease work (a keep-alive or a leasing step) stuck in one etcd call past
     * its deadline, has the keep-alive thread ended, has the watch been silent past its deadline?
     * A stuck call: the etcd client is replaced (the stuck call fails) and the keep-alive starts
     * over with a re-lease; a silent watch is closed, so the sync loop re-lists and watches again.
     * Last, the remote subnets whose programming failed are tried again when their back-off is up,
     * and every 10 s the kernel is compared with what is programmed and lost entries are added
     * again (the only periodic kernel work; it never waits for a change being applied).
     */
    private void watchdog() {
        LeaseWatchdog dog = new LeaseWatchdog(etcd.leaseCallDeadline(), watchDeadline());
        while (!closed) {
            try {
                Thread.sleep(1000);
                long now = System.nanoTime();
                Thread ka = keepAliveThread;
                switch (dog.leaseVerdict(etcd.leaseWork, ka == null || ka.isAlive(), now)) {
                    case OK -> {}
                    case STUCK -> {
                        long stuckMs = etcd.leaseWork.busyMillis(now);
                        reserve = null; // room to act in, should the heap be full of what the stuck client read
                        etcd.replace(etcd.client());
                        if (ka != null) startKeepAlive(true);
                        log("lease keep-alive stalled; new etcd client, leasing again", "stuck_ms=" + stuckMs + " deadline_ms=" + etcd.leaseCallDeadline().toMillis());
                    }
                    case DEAD -> {
                        reserve = null;
                        etcd.replace(etcd.client());
                        startKeepAlive(true);
                        log("lease keep-alive thread ended; new etcd client, leasing again", "");
                    }
                }
                if (dog.watchStalled(watchTraffic, now)) {
                    log("lease watch silent past its deadline; re-listing", "deadline_s=" + watchDeadline().toSeconds());
                    watchTraffic.idle();
                    closeWatch();
                }
                RemoteHosts r = remotes;
                if (r != null) r.keepProgrammed(System.nanoTime());
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                reserve = null;
                if (!closed) log("watchdog round failed", "error=\"" + e + "\"");
            }
        }
    }

    /** etcd sends a progress notification on an idle watch every 10 minutes by default; a watch silent for longer is dead. */
    private Duration watchDeadline() {
        return opts.watchDeadline();
    }

    // ------------------------------------------------------------------ the other hosts

    private void syncLoop() throws InterruptedException {
        String dir = Lease.subnetsDir(opts.etcdPrefix());
        Backoff backoff = etcd.backoff(opts.leaseTtl());
        boolean failing = false;
        while (!closed) {
            try {
                EtcdClient.RangeResult all = etcd.client().getPrefix(dir);
                List<KeyValue> byCreation = new ArrayList<>(all.kvs());
                byCreation.sort(Comparator.comparingLong(KeyValue::createRevision));
                remotes.relist(byCreation, underlay.networks(underlayLink));
                if (failing) log("watching again", "revision=" + all.revision());
                failing = false;
                backoff.reset();
                watchTraffic.busy(System.nanoTime());
                try {
                    etcd.client().watch(dir, all.revision() + 1, remotes::onEvent, s -> watchStream = s, () -> watchTraffic.busy(System.nanoTime()));
                } finally {
                    watchTraffic.idle();
                }
            } catch (Throwable e) {
                // An Error too (out of memory inside the HTTP client): this loop is the only one watching.
                if (closed) return;
                if (e instanceof InterruptedIOException) Thread.interrupted(); // not closing: a stray interrupt, not a reason to stop
                if (!failing || e instanceof io.jcni.etcd.EtcdAuthException) log("lost the lease watch; re-listing", "error=\"" + e + "\"");
                failing = true;
                if (!(e instanceof IOException)) etcd.replace(etcd.client());
                Thread.sleep(backoff.nextMillis());
            }
        }
    }

    // ------------------------------------------------------------------ plumbing

    private void log(String msg, String fields) {
        log.log(msg, fields);
    }

    private void closeWatch() {
        AutoCloseable w = watchStream;
        if (w != null) {
            try {
                w.close();
            } catch (Exception ignored) {
                // closing a broken stream
            }
        }
    }

    /** Clean shutdown: stop watching, release our subnet (revoke the etcd lease), remove the masquerade chain. Routes stay. */
    @Override
    public void close() {
        closed = true;
        if (watchdogThread != null) watchdogThread.interrupt();
        if (keepAliveThread != null) keepAliveThread.interrupt();
        if (ipamThread != null) ipamThread.interrupt();
        if (configThread != null) configThread.interrupt();
        ConfigWatch cw = configWatch;
        if (cw != null) cw.close();
        syncThread.interrupt();
        closeWatch();
        try {
            syncThread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        SubnetLease l = lease;
        if (l != null && l.leaseId() != 0) {
            try {
                etcd.client().revokeLease(l.leaseId());
                log("released", "subnet=" + facts.subnet);
            } catch (IOException e) {
                log("releasing the lease failed; it expires by itself", "error=\"" + e.getMessage() + "\"");
            }
        }
        if (opts.ipMasq() && facts != null && facts.ownKey != null) {
            try {
                Nft.current().run(OverlayMasq.teardown());
            } catch (RuntimeException e) {
                log("masquerade teardown failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        etcd.client().abort(); // not close(): it would wait for a call that hangs
        rt.close();
    }
}
