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
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.io.InterruptedIOException;
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
import java.util.Set;
import java.util.HashSet;
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
    private final Rtnl rt;
    private final Random random = new Random();
    private final CountDownLatch ready = new CountDownLatch(1);
    private final Object lock = new Object();
    // Under lock: the remote leases programmed, every remote lease read (by key, in creation
    // order) with what the validator found, the host facts they were checked against, what was logged.
    private final Map<Cidr, Lease> programmed = new HashMap<>();
    private final LeaseBook book = new LeaseBook();
    private final Map<String, String> malformed = new HashMap<>();
    private final Map<String, String> rejectionsLogged = new HashMap<>();
    private final Set<Cidr> foreignRoutesLogged = new HashSet<>();
    private LeaseValidator.Local checkedAgainst;
    private volatile List<Cidr> underlayNets = List.of();
    /** Replaced by the watchdog when a call hangs past its deadline (a client that hung once is not trusted again). */
    private volatile EtcdClient etcd;
    private final Object clientSwap = new Object();
    /**
     * Memory held for the watchdog: an etcd answer that fills the heap stays reachable while the
     * call reading it hangs, and then nothing can be allocated, not even the log line or the new
     * client that would end it. Freed when lease work is stuck or an Error was caught; taken again
     * after the next successful keep-alive.
     */
    private static final int RESERVE_BYTES = 2 << 20;
    @SuppressWarnings("unused")
    private volatile byte[] reserve = new byte[RESERVE_BYTES];
    private final LeaseWatchdog.Clock leaseWork = new LeaseWatchdog.Clock();
    private final LeaseWatchdog.Clock watchTraffic = new LeaseWatchdog.Clock();
    private volatile boolean closed;
    private volatile AutoCloseable watchStream;
    private volatile long leaseId;
    /** Our IPv4 subnet (null in an IPv6-only network), our IPv6 subnet (null without IPv6), our lease's key; set together. */
    private volatile Cidr subnet, subnet6;
    private volatile String ownKey;
    private volatile int keepAliveGeneration;
    private NetworkConfig cfg;
    private Dataplane dp;
    private Link underlay;
    private IpAddr publicIp, publicIpv6;
    private volatile Thread syncThread, keepAliveThread, ipamThread, watchdogThread, configThread;
    private volatile AutoCloseable configWatchStream;

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

    /** Our IPv4 subnet, once leased (null in an IPv6-only network). */
    public Cidr subnet() {
        return subnet;
    }

    /** Our IPv6 subnet, once leased (null without IPv6). */
    public Cidr subnet6() {
        return subnet6;
    }

    private void run() {
        try {
            watchdogThread = Thread.ofPlatform().name("overlay-watchdog").daemon().start(this::watchdog);
            KeyValue cfgKv = untilDone("read network config " + opts.configKey(), () -> {
                Optional<KeyValue> kv = leaseCall(() -> etcd.get(opts.configKey()));
                if (kv.isEmpty()) throw new IOException("no network config at " + opts.configKey());
                return kv.get();
            });
            // A config the agent cannot honour stops it here, naming the key (not retried: it would not change by itself).
            cfg = NetworkConfig.parse(cfgKv.value());
            log("network config", describe(cfg));
            UnderlayChoice.Picked picked = underlay();
            underlay = rt.link(picked.iface().index());
            publicIp = cfg.ipv4() ? publicIp(underlay, picked.address()) : null;
            publicIpv6 = cfg.ipv6() ? publicIpv6(underlay) : null;
            underlayNets = underlayNetworks();
            NexthopIds nexthops = NexthopIds.of(cfg);
            if (!nexthops.coversAll(cfg)) log("network has more than 2^23 subnets; its routes are plain gateway routes, without nexthop objects", "");
            dp = switch (cfg.backend()) {
                case NetworkConfig.Vxlan v -> new Dataplane.Vxlan(rt, v, publicIp, publicIpv6, underlay,
                        n -> log("vxlan device", "notice=\"" + n + "\""), () -> underlayNets, nexthops);
                case NetworkConfig.HostGw h -> new Dataplane.HostGw(rt, publicIp, publicIpv6, underlay, nexthops,
                        n -> log("routes", "notice=\"" + n + "\""));
            };
            configThread = Thread.ofPlatform().name("overlay-config-watch").daemon().start(() -> configWatchLoop(cfgKv));
            acquire(0);
            startKeepAlive(false);
            if (!opts.ipamReconcile().isZero() && opts.ipamHost() != null) {
                ipamThread = Thread.ofPlatform().name("overlay-ipam-reconcile").daemon().start(this::ipamReconcileLoop);
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

    // ------------------------------------------------------------------ the network config

    /** What the agent runs with, for the log (flanneld logs its VXLAN config the same way). */
    private static String describe(NetworkConfig c) {
        String s = "";
        if (c.ipv4()) s += "network=" + c.network() + " subnet_len=" + c.subnetLen() + " subnet_min=" + c.subnetMin() + " subnet_max=" + c.subnetMax() + " ";
        if (c.ipv6()) {
            s += "ipv6_network=" + c.v6().network() + " ipv6_subnet_len=" + c.v6().subnetLen() + " ipv6_subnet_min=" + c.v6().subnetMin()
                    + " ipv6_subnet_max=" + c.v6().subnetMax() + " ";
        }
        s += "backend=" + c.backend().type();
        if (c.backend() instanceof NetworkConfig.Vxlan v) {
            s += " vni=" + v.vni() + " port=" + v.port() + " mtu=" + (v.mtu() == 0 ? "underlay" : Integer.toString(v.mtu())) + " gbp=" + v.gbp()
                    + " learning=" + v.learning() + " direct_routing=" + v.directRouting();
        }
        return s;
    }

    /**
     * Watches {@code <prefix>/config} after start: flanneld reads it once, so a change is not
     * applied while running (nothing is torn down or rebuilt); it is judged and logged once per
     * new value: refused (with the key), or valid but needing a restart, or deleted.
     */
    private void configWatchLoop(KeyValue running) {
        String runningText = running.value();
        String judged = runningText;
        long from = running.modRevision() + 1;
        Backoff backoff = backoff(opts.leaseTtl());
        while (!closed) {
            try {
                Optional<KeyValue> now = etcd.get(opts.configKey()); // catches up after a lost watch (compaction included)
                judged = judgeConfig(now.map(KeyValue::value).orElse(null), runningText, judged);
                long rev = now.map(KeyValue::modRevision).orElse(from - 1);
                from = Math.max(from, rev + 1);
                String[] last = {judged};
                long[] next = {from};
                etcd.watch(opts.configKey(), from, ev -> {
                    if (!ev.kv().key().equals(opts.configKey())) return; // the watch is by prefix
                    last[0] = judgeConfig(ev.deleted() ? null : ev.kv().value(), runningText, last[0]);
                    next[0] = ev.revision() + 1;
                }, s -> configWatchStream = s);
                judged = last[0];
                from = next[0];
                backoff.reset();
            } catch (Throwable e) {
                if (closed) return;
                if (e instanceof InterruptedIOException) Thread.interrupted();
            }
            try {
                Thread.sleep(backoff.nextMillis());
            } catch (InterruptedException e) {
                if (closed) return;
            }
        }
    }

    /** Logs what a new value of the config key means for the running agent, unless it was judged already; returns the value judged. */
    private String judgeConfig(String text, String runningText, String judged) {
        if (java.util.Objects.equals(text, judged)) return judged;
        if (text == null) {
            log("network config deleted from etcd; keeping the running one", "key=" + opts.configKey());
        } else if (!text.equals(runningText)) {
            try {
                NetworkConfig changed = NetworkConfig.parse(text);
                if (!changed.equals(cfg)) {
                    log("network config changed in etcd; not applied while running (flanneld reads it at start too): restart the agent to apply it",
                            "key=" + opts.configKey() + " " + describe(changed));
                }
            } catch (IllegalArgumentException e) {
                log("network config in etcd refused; keeping the running one", "key=" + opts.configKey() + " error=\"" + e.getMessage() + "\"");
            }
        }
        return text;
    }

    // ------------------------------------------------------------------ our subnet

    /** Leases a subnet; {@code generation}: the keep-alive loop doing it (0: the first lease), which gives up once replaced. */
    private void acquire(int generation) throws InterruptedException {
        Cidr previous = subnet, previous6 = subnet6;
        if (ownKey == null && Files.isRegularFile(opts.subnetFile())) {
            // As flanneld: FLANNEL_SUBNET and FLANNEL_IPV6_SUBNET of the last run, each read on its own.
            Cidr p4 = SubnetEnv.cidr(opts.subnetFile(), "FLANNEL_SUBNET"), p6 = SubnetEnv.cidr(opts.subnetFile(), "FLANNEL_IPV6_SUBNET");
            if ((cfg.ipv4() && p4 == null) || (cfg.ipv6() && p6 == null)) log("ignoring unreadable subnet file", "file=" + opts.subnetFile());
            previous = p4 == null || p4.isV6() ? null : p4.masked();
            previous6 = p6 == null || !p6.isV6() ? null : p6.masked();
        }
        Cidr prev = previous, prev6 = previous6;
        Lease mine = untilDone("lease a subnet", () -> {
            if (generation != 0 && generation != keepAliveGeneration) throw new InterruptedIOException("replaced by the watchdog");
            return tryAcquire(prev, prev6);
        });
        if (generation != 0 && generation != keepAliveGeneration) throw new InterruptedException();
        synchronized (lock) {
            subnet = mine.hasV4() ? mine.subnet() : null;
            subnet6 = mine.ipv6Subnet();
            ownKey = mine.key(opts.etcdPrefix());
            dp.activate(subnet, subnet6);
            if (checkedAgainst != null && !local().equals(checkedAgainst)) { // our subnet is another now: judge every lease again
                recheckAll();
                reconcileAll();
            }
        }
        try {
            SubnetEnv.write(opts.subnetFile(), SubnetEnv.format(cfg.network(), subnet, cfg.ipv6() ? cfg.v6().network() : null, subnet6,
                    dp.podMtu(), opts.ipMasq()));
        } catch (IOException e) {
            log("writing subnet file failed", "file=" + opts.subnetFile() + " error=\"" + e.getMessage() + "\"");
        }
        if (opts.ipMasq()) {
            try {
                Nft.current().run(OverlayMasq.setup(cfg.network(), subnet, cfg.ipv6() ? cfg.v6().network() : null, subnet6));
            } catch (RuntimeException e) {
                log("masquerade setup failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        log("leased", "subnet=" + subnet + " public_ip=" + publicIp + (cfg.ipv6() ? " ipv6_subnet=" + subnet6 + " public_ipv6=" + publicIpv6 : "")
                + " backend=" + cfg.backend().type() + " lease=" + Long.toHexString(leaseId));
        ready.countDown();
    }

    /** One attempt; throws IOException to retry (etcd unreachable, or another host won the race). */
    private Lease tryAcquire(Cidr previous, Cidr previous6) throws IOException {
        Map<Cidr, KeyValue> kvs = new LinkedHashMap<>();
        Map<Cidr, Lease> leases = new LinkedHashMap<>();
        for (KeyValue kv : leaseCall(() -> etcd.getPrefix(Lease.subnetsDir(opts.etcdPrefix()))).kvs()) {
            Lease l = parse(kv);
            if (l != null) {
                leases.put(l.id(), l);
                kvs.put(l.id(), kv);
            }
        }
        List<Cidr> avoid = underlayNets;
        Optional<Lease> own = SubnetChoice.ownLease(leases.values(), cfg.ipv4() ? publicIp : publicIpv6)
                .filter(l -> compatible(l, avoid) && l.key(opts.etcdPrefix()).equals(kvs.get(l.id()).key()));
        long id = leaseCall(() -> etcd.grantLease(opts.leaseTtl().toSeconds()));
        boolean ok;
        Lease mine;
        if (own.isPresent()) {
            // A restart: take over our own lease (new etcd lease id) unless it changed meanwhile.
            Lease o = own.get();
            mine = dp.local(o.hasV4() ? o.subnet() : null, o.ipv6Subnet());
            long rev = kvs.get(o.id()).modRevision();
            ok = leaseCall(() -> etcd.putIfModRevision(mine.key(opts.etcdPrefix()), rev, mine.value(), id));
        } else {
            Cidr pick = !cfg.ipv4() ? null : SubnetChoice.pick(cfg, leases.values(), previous, avoid, random)
                    .orElseThrow(() -> new IOException("no free subnet left in " + cfg.network()));
            Cidr pick6 = !cfg.ipv6() ? null : SubnetChoice.pickV6(cfg, leases.values(), previous6, avoid, random)
                    .orElseThrow(() -> new IOException("no free subnet left in " + cfg.v6().network()));
            mine = dp.local(pick, pick6);
            ok = leaseCall(() -> etcd.putIfAbsent(mine.key(opts.etcdPrefix()), mine.value(), id));
        }
        if (!ok) {
            leaseCall(() -> {
                etcd.revokeLease(id);
                return null;
            });
            throw new IOException("subnet " + mine.id() + " was taken meanwhile");
        }
        leaseId = id;
        return mine;
    }

    /** Whether our old lease still fits the network: each family the network has, leasable and off the underlay; none it lacks. */
    private boolean compatible(Lease l, List<Cidr> avoid) {
        if (cfg.ipv4() != l.hasV4() || cfg.ipv6() != l.hasV6()) return false;
        if (l.hasV4() && (!cfg.leasable(l.subnet()) || SubnetChoice.overlapsAny(l.subnet(), avoid))) return false;
        return !l.hasV6() || (cfg.leasable(l.ipv6Subnet()) && !SubnetChoice.overlapsAny(l.ipv6Subnet(), avoid));
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
        Backoff backoff = backoff(opts.leaseTtl().dividedBy(3));
        boolean failing = false;
        int failures = 0;
        boolean lease = leaseFirst;
        while (!closed && generation == keepAliveGeneration) {
            try {
                if (lease) {
                    acquire(generation);
                    lease = false;
                }
                Thread.sleep(failing ? backoff.nextMillis() : period);
                if (generation != keepAliveGeneration) return;
                long id = leaseId;
                long ttl = leaseCall(() -> etcd.keepAlive(id));
                if (failing) log("etcd reachable again", "");
                failing = false;
                failures = 0;
                if (reserve == null) reserve = new byte[RESERVE_BYTES];
                backoff.reset();
                if (ttl <= 0) {
                    log("lease expired; leasing again", "subnet=" + (subnet != null ? subnet : subnet6));
                    lease = true;
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
                if (!(e instanceof IOException) || ++failures % 3 == 0) replaceEtcdClient(etcd);
            }
        }
    }

    /**
     * Every second: is the lease work (a keep-alive or a leasing step) stuck in one etcd call past
     * its deadline, has the keep-alive thread ended, has the watch been silent past its deadline?
     * A stuck call: the etcd client is replaced (the stuck call fails) and the keep-alive starts
     * over with a re-lease; a silent watch is closed, so the sync loop re-lists and watches again.
     */
    private void watchdog() {
        LeaseWatchdog dog = new LeaseWatchdog(leaseCallDeadline(), watchDeadline());
        while (!closed) {
            try {
                Thread.sleep(1000);
                long now = System.nanoTime();
                Thread ka = keepAliveThread;
                switch (dog.leaseVerdict(leaseWork, ka == null || ka.isAlive(), now)) {
                    case OK -> {}
                    case STUCK -> {
                        long stuckMs = leaseWork.busyMillis(now);
                        reserve = null; // room to act in, should the heap be full of what the stuck client read
                        replaceEtcdClient(etcd);
                        if (ka != null) startKeepAlive(true);
                        log("lease keep-alive stalled; new etcd client, leasing again", "stuck_ms=" + stuckMs + " deadline_ms=" + leaseCallDeadline().toMillis());
                    }
                    case DEAD -> {
                        reserve = null;
                        replaceEtcdClient(etcd);
                        startKeepAlive(true);
                        log("lease keep-alive thread ended; new etcd client, leasing again", "");
                    }
                }
                if (dog.watchStalled(watchTraffic, now)) {
                    log("lease watch silent past its deadline; re-listing", "deadline_s=" + watchDeadline().toSeconds());
                    watchTraffic.idle();
                    closeWatch();
                }
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                reserve = null;
                if (!closed) log("watchdog round failed", "error=\"" + e + "\"");
            }
        }
    }

    /** Replaces {@code old} (unless someone already did): calls in flight on it fail, the next ones use a fresh client. */
    private void replaceEtcdClient(EtcdClient old) {
        synchronized (clientSwap) {
            if (etcd != old) return;
            etcd = new EtcdClient(opts.etcdEndpoints(), opts.etcdTimeout(), opts.etcdSecurity());
        }
        leaseWork.idle();
        try {
            old.abort();
        } catch (Throwable e) {
            log("aborting the old etcd client failed", "error=\"" + e + "\"");
        }
    }

    /** One etcd call of the lease work, timed for the watchdog. */
    private <T> T leaseCall(EtcdStep<T> call) throws IOException {
        long token = leaseWork.busy(System.nanoTime());
        try {
            return call.run();
        } finally {
            leaseWork.idle(token);
        }
    }

    /** How long one etcd call may take before it counts as stuck: each endpoint may use the request timeout twice (connect, answer), plus 2 s. */
    private Duration leaseCallDeadline() {
        return opts.etcdTimeout().multipliedBy(2L * opts.etcdEndpoints().size()).plusSeconds(2);
    }

    /** etcd sends a progress notification on an idle watch every 10 minutes by default; a watch silent for longer is dead. */
    private Duration watchDeadline() {
        return opts.watchDeadline();
    }

    // ------------------------------------------------------------------ the other hosts

    private void syncLoop() throws InterruptedException {
        String dir = Lease.subnetsDir(opts.etcdPrefix());
        Backoff backoff = backoff(opts.leaseTtl());
        boolean failing = false;
        while (!closed) {
            try {
                EtcdClient.RangeResult all = etcd.getPrefix(dir);
                List<KeyValue> byCreation = new java.util.ArrayList<>(all.kvs());
                byCreation.sort(java.util.Comparator.comparingLong(KeyValue::createRevision));
                List<Cidr> nets = underlayNetworks();
                synchronized (lock) {
                    underlayNets = nets;
                    book.clear();
                    malformed.clear();
                    checkedAgainst = local();
                    for (KeyValue kv : byCreation) read(kv);
                    reconcileAll();
                    sweepNexthops();
                }
                if (failing) log("watching again", "revision=" + all.revision());
                failing = false;
                backoff.reset();
                watchTraffic.busy(System.nanoTime());
                try {
                    etcd.watch(dir, all.revision() + 1, this::onEvent, s -> watchStream = s, () -> watchTraffic.busy(System.nanoTime()));
                } finally {
                    watchTraffic.idle();
                }
            } catch (Throwable e) {
                // An Error too (out of memory inside the HTTP client): this loop is the only one watching.
                if (closed) return;
                if (e instanceof InterruptedIOException) Thread.interrupted(); // not closing: a stray interrupt, not a reason to stop
                if (!failing || e instanceof io.jcni.etcd.EtcdAuthException) log("lost the lease watch; re-listing", "error=\"" + e + "\"");
                failing = true;
                if (!(e instanceof IOException)) replaceEtcdClient(etcd);
                Thread.sleep(backoff.nextMillis());
            }
        }
    }

    /** One key changed: re-judge the leases it can conflict with (not the others) and program what changed for their subnets. */
    private void onEvent(WatchEvent ev) {
        synchronized (lock) {
            if (!local().equals(checkedAgainst)) {
                recheckAll();
                if (ev.deleted()) remove(ev.kv().key());
                else read(ev.kv());
                reconcileAll();
                return;
            }
            LeaseBook.Change ch = ev.deleted() ? remove(ev.kv().key()) : read(ev.kv());
            if (ch != null) reconcile(ch);
        }
    }

    private LeaseBook.Change remove(String key) {
        malformed.remove(key);
        return book.remove(key);
    }

    /**
     * Records one key's lease (under lock), checked against this host; returns what changed.
     * Not a subnet key, or our own: nothing (the keep-alive looks after ours).
     */
    private LeaseBook.Change read(KeyValue kv) {
        Lease.SubnetKey keySubnets = Lease.parseKey(opts.etcdPrefix(), kv.key());
        if (keySubnets == null || isOwnKey(kv.key())) return null;
        Lease l;
        try {
            l = Lease.parse(keySubnets, kv.value()).forNetwork(cfg.ipv4(), cfg.ipv6());
        } catch (IllegalArgumentException e) {
            LeaseBook.Change ch = book.remove(kv.key());
            malformed.put(kv.key(), "malformed: " + e.getMessage());
            ch.keys().add(kv.key());
            return ch;
        }
        malformed.remove(kv.key());
        var c = new LeaseValidator.Candidate(kv.key(), keySubnets.v4(), kv.createRevision(), l, keySubnets.v6());
        return book.put(new LeaseValidator.Checked(c, LeaseValidator.problem(checkedAgainst, c)));
    }

    private boolean isOwnKey(String key) {
        String own = ownKey;
        return own != null && key.equals(own);
    }

    /** What this host is now, for the validator. */
    private LeaseValidator.Local local() {
        return new LeaseValidator.Local(cfg, subnet, publicIp, underlayNets, dp.vtepMac(), subnet6, publicIpv6, dp.vtepMacV6());
    }

    /** This host's facts changed (our subnet, the underlay): every lease is checked again, and our own key leaves the book. */
    private void recheckAll() {
        LeaseValidator.Local local = local();
        List<LeaseValidator.Checked> all = new java.util.ArrayList<>(book.all());
        all.sort(java.util.Comparator.comparingLong(ch -> ch.candidate().createRevision()));
        book.clear();
        checkedAgainst = local;
        for (LeaseValidator.Checked ch : all) {
            if (!isOwnKey(ch.candidate().key())) book.put(new LeaseValidator.Checked(ch.candidate(), LeaseValidator.problem(local, ch.candidate())));
        }
    }

    /** Under lock, after a full list or a re-check: logs each new rejection once and programs the whole difference. */
    private void reconcileAll() {
        Map<String, String> rejected = new LinkedHashMap<>(malformed);
        rejected.putAll(book.rejected());
        LeaseValidator.newlyRejected(rejectionsLogged, rejected)
                .forEach((key, why) -> log("ignoring a lease", "key=" + key + " reason=\"" + why + "\""));
        Map<Cidr, Lease> wanted = new HashMap<>();
        book.accepted().forEach((sn, ch) -> wanted.put(sn, ch.candidate().lease()));
        apply(LeaseDiff.between(programmed, wanted));
    }

    /** Under lock, after a full list: nexthop objects of subnets that went while the agent was not running go, with their routes. */
    private void sweepNexthops() {
        try {
            int gone = dp.sweep(programmed.values());
            if (gone > 0) log("removed stale nexthops", "count=" + gone);
        } catch (RuntimeException e) {
            log("removing stale nexthops failed", "error=\"" + e.getMessage() + "\"");
        }
    }

    /** Under lock, after one change: the same, for the keys and subnets it touched only. */
    private void reconcile(LeaseBook.Change ch) {
        for (String key : ch.keys()) {
            String why = malformed.containsKey(key) ? malformed.get(key) : book.rejected().get(key);
            if (why == null) {
                rejectionsLogged.remove(key);
            } else if (!why.equals(rejectionsLogged.get(key))) {
                rejectionsLogged.put(key, why);
                log("ignoring a lease", "key=" + key + " reason=\"" + why + "\"");
            }
        }
        Map<Cidr, Lease> have = new HashMap<>(), wanted = new HashMap<>();
        for (Cidr sn : ch.subnets()) {
            Lease h = programmed.get(sn);
            if (h != null) have.put(sn, h);
            LeaseValidator.Checked w = book.accepted().get(sn);
            if (w != null) wanted.put(sn, w.candidate().lease());
        }
        apply(LeaseDiff.between(have, wanted));
    }

    private void apply(LeaseDiff d) {
        for (Lease l : d.removes()) {
            try {
                dp.remove(l);
                programmed.remove(l.id());
                log("removed remote", describe(l));
            } catch (RuntimeException e) {
                log("removing a remote failed", "subnet=" + l.id() + " error=\"" + e.getMessage() + "\"");
            }
        }
        for (Lease l : d.adds()) {
            try {
                if (dp.add(l)) {
                    programmed.put(l.id(), l);
                    foreignRoutesLogged.remove(l.id());
                    log("added remote", describe(l));
                } else if (foreignRoutesLogged.add(l.id())) {
                    log("not adding a remote: a route jcni did not install holds its subnet", describe(l));
                }
            } catch (RuntimeException e) {
                log("adding a remote failed", "subnet=" + l.id() + " error=\"" + e.getMessage() + "\"");
            }
        }
    }

    /** A remote lease for the log: its subnets and public addresses. */
    private static String describe(Lease l) {
        String s = l.hasV4() ? "subnet=" + l.subnet() + " public_ip=" + l.publicIp() : "";
        if (l.hasV6()) s += (s.isEmpty() ? "" : " ") + "ipv6_subnet=" + l.ipv6Subnet() + " public_ipv6=" + l.publicIpv6();
        return s;
    }

    private Lease parse(KeyValue kv) {
        Lease.SubnetKey sn = Lease.parseKey(opts.etcdPrefix(), kv.key());
        if (sn == null) return null;
        try {
            return Lease.parse(sn, kv.value());
        } catch (IllegalArgumentException e) {
            return null; // the sync loop logs it, once
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

    /** The underlay interface as flanneld picks it ({@link UnderlayChoice}), from the kernel's links, addresses and main table now. */
    private UnderlayChoice.Picked underlay() {
        UnderlayChoice choice = opts.underlayChoice();
        List<UnderlayChoice.Iface> links = new java.util.ArrayList<>();
        for (Link l : rt.links()) {
            links.add(new UnderlayChoice.Iface(l.index(), l.name(), rt.addresses(l.index(), Family.INET).stream().map(Address::address).toList()));
        }
        List<UnderlayChoice.RouteFact> routes = new java.util.ArrayList<>();
        for (Route r : rt.routes(Family.INET, Route.TABLE_MAIN)) {
            routes.add(new UnderlayChoice.RouteFact(r.dst(), r.oif(), Math.max(0, r.priority()), r.src()));
        }
        return choice.pick(links, routes, miss -> log("underlay", "notice=\"" + miss + "\"")).orElseThrow(() -> new IllegalArgumentException(
                choice.isDefaultRoute() ? "no --iface given and no default route to find one"
                        : "failed to find interface to use that matches the interfaces and/or regexes provided"));
    }

    /** --public-ip; else the address the choice found (an --iface IP, a regex match, the route's source); else the interface's first. */
    private IpAddr publicIp(Link underlay, IpAddr found) {
        if (!opts.publicIp().isEmpty()) return IpAddr.parse(opts.publicIp());
        if (found != null) return found;
        List<Address> addrs = rt.addresses(underlay.index(), Family.INET);
        if (addrs.isEmpty()) throw new IllegalArgumentException("interface " + underlay.name() + " has no IPv4 address");
        return addrs.getFirst().address();
    }

    /**
     * {@code --public-ipv6}; else, as flanneld, the underlay interface's first IPv6 address of
     * global scope (not link-local: an FDB destination needs no zone).
     */
    private IpAddr publicIpv6(Link underlay) {
        if (!opts.publicIpv6().isEmpty()) return IpAddr.parse(opts.publicIpv6());
        for (Address a : rt.addresses(underlay.index(), Family.INET6)) {
            if (!a.address().isLinkLocalUnicast() && !a.address().isLoopback()) return a.address();
        }
        throw new IllegalArgumentException("interface " + underlay.name() + " has no global IPv6 address (EnableIPv6 needs one, or --public-ipv6)");
    }

    /**
     * The underlay device's connected networks of both families (its addresses' networks and its
     * routes without a gateway; not IPv6 link-local or multicast): no lease may cover one.
     */
    private List<Cidr> underlayNetworks() {
        Set<Cidr> nets = new java.util.LinkedHashSet<>();
        for (Family f : new Family[] {Family.INET, Family.INET6}) {
            for (Address a : rt.addresses(underlay.index(), f)) {
                if (!a.address().isLinkLocalUnicast()) nets.add(new Cidr(a.address(), a.prefixLength()).masked());
            }
            for (Route r : rt.routes(f, Route.TABLE_MAIN)) {
                if (r.oif() != underlay.index() || r.gateway() != null || r.dst().prefix() == 0) continue;
                IpAddr d = r.dst().network();
                if (d.isLinkLocalUnicast() || (d.isV6() && (d.bytes()[0] & 0xff) == 0xff)) continue;
                nets.add(r.dst().masked());
            }
        }
        return List.copyOf(nets);
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
            } catch (InterruptedIOException e) {
                throw new InterruptedException(e.getMessage());
            } catch (IOException | IllegalArgumentException e) {
                // A TLS or authentication failure is logged every time: it is a wrong file or password, not a blip.
                if (!logged || e instanceof io.jcni.etcd.EtcdAuthException) {
                    log(what + " failed; retrying with back-off", "error=\"" + e.getMessage() + "\"");
                }
                logged = true;
                Thread.sleep(backoff.nextMillis());
            } catch (Throwable e) {
                // An Error inside the HTTP client: logged, a fresh client, and try again.
                log(what + " failed; retrying with back-off", "error=\"" + e + "\"");
                replaceEtcdClient(etcd);
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

    /** Never throws: a log line that cannot be built (heap full) is dropped, not allowed to end the loop that logs it. */
    private void log(String msg, String fields) {
        try {
            log.println(Instant.now() + " jcnid overlay msg=\"" + msg + "\"" + (fields.isEmpty() ? "" : " " + fields));
        } catch (Throwable ignored) {
            // out of memory: the watchdog frees its reserve and acts; the next line gets through
        }
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
        AutoCloseable cw = configWatchStream;
        if (cw != null) {
            try {
                cw.close();
            } catch (Exception ignored) {
                // closing a broken stream
            }
        }
        syncThread.interrupt();
        closeWatch();
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
        if (opts.ipMasq() && ownKey != null) {
            try {
                Nft.current().run(OverlayMasq.teardown());
            } catch (RuntimeException e) {
                log("masquerade teardown failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        etcd.abort(); // not close(): it would wait for a call that hangs
        rt.close();
    }
}
