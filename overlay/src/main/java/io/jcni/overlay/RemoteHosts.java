package io.jcni.overlay;

import io.jcni.etcd.KeyValue;
import io.jcni.etcd.WatchEvent;
import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The other hosts' leases, as read from {@code <prefix>/subnets/}: each judged against this host
 * ({@link LeaseValidator}, kept per change in a {@link LeaseBook}), rejections logged once, and the
 * accepted ones programmed into the dataplane by difference ({@link LeaseDiff}), O(1) kernel work
 * per watch event; a subnet whose programming failed is tried again on its own
 * ({@link RemoteProgramming}, from the agent's watchdog round), and every 10 s the kernel is
 * compared with what is programmed: a remote whose entries it lost is added again ({@link RemoteCheck}).
 */
final class RemoteHosts {
    /** How often the kernel is compared with what is programmed: flanneld's route check's period ({@code routeCheckRetries} seconds). */
    static final long CHECK_EVERY_NANOS = 10_000_000_000L;

    private final AgentOptions opts;
    private final HostFacts facts;
    private final AgentLog log;
    /** A lock rather than a monitor: the retry round only tries it, so it never holds up the watchdog behind a long re-list. */
    private final ReentrantLock lock = new ReentrantLock();
    // Under lock: the remote leases programmed (and retried), every remote lease read (by key, in
    // creation order) with what the validator found, the host facts they were checked against, what was logged.
    private final RemoteProgramming programming;
    private final LeaseBook book = new LeaseBook();
    private final Map<String, String> malformed = new HashMap<>();
    private final Map<String, String> rejectionsLogged = new HashMap<>();
    private LeaseValidator.Local checkedAgainst;
    /** When the kernel is next compared with what is programmed; the failure of the last check, as logged. */
    private long nextCheckNanos = System.nanoTime() + CHECK_EVERY_NANOS;
    private String checkFailureLogged;

    RemoteHosts(AgentOptions opts, HostFacts facts, AgentLog log) {
        this.opts = opts;
        this.facts = facts;
        this.log = log;
        this.programming = new RemoteProgramming(facts.dp, log, new Random());
    }

    /** A full list (in creation order) with the underlay's networks now: the book is built again and the whole difference programmed. */
    void relist(List<KeyValue> byCreation, List<Cidr> underlayNets) {
        lock.lock();
        try {
            facts.underlayNets = underlayNets;
            book.clear();
            malformed.clear();
            checkedAgainst = facts.local();
            for (KeyValue kv : byCreation) read(kv);
            reconcileAll();
            sweepNexthops();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code change} to our own subnet under the lock; when it changed what this host is, every lease is judged again. */
    void ownSubnetChanged(Runnable change) {
        lock.lock();
        try {
            change.run();
            if (checkedAgainst != null && !facts.local().equals(checkedAgainst)) { // our subnet is another now: judge every lease again
                recheckAll();
                reconcileAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** One key changed: re-judge the leases it can conflict with (not the others) and program what changed for their subnets. */
    void onEvent(WatchEvent ev) {
        lock.lock();
        try {
            if (!facts.local().equals(checkedAgainst)) {
                recheckAll();
                if (ev.deleted()) remove(ev.kv().key());
                else read(ev.kv());
                reconcileAll();
                return;
            }
            LeaseBook.Change ch = ev.deleted() ? remove(ev.kv().key()) : read(ev.kv());
            if (ch != null) reconcile(ch);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The watchdog round's part: tries again the subnets whose programming failed and whose time
     * has come, against the leases accepted now; and every {@link #CHECK_EVERY_NANOS} compares the
     * kernel with what is programmed (one dump per kind) and adds again what it lost. Skipped when
     * a change is being applied (it programs what it touches, and the next round comes in a second).
     */
    void keepProgrammed(long nowNanos) {
        if (!lock.tryLock()) return;
        try {
            programming.retryDue(sn -> {
                LeaseValidator.Checked w = book.accepted().get(sn);
                return w == null ? null : w.candidate().lease();
            }, nowNanos);
            if (nowNanos - nextCheckNanos >= 0) {
                nextCheckNanos = nowNanos + CHECK_EVERY_NANOS;
                recoverLost(nowNanos);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Under lock: the programmed remotes the kernel lacks something of are added again; a failed dump is logged once per kind. */
    private void recoverLost(long nowNanos) {
        Map<Cidr, Set<RemoteCheck.Missing>> missing;
        try {
            missing = facts.dp.missing(programming.programmed().values());
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).equals(checkFailureLogged)) {
                checkFailureLogged = String.valueOf(e.getMessage());
                log.log("reading the kernel's routes failed; checking again later", "error=\"" + e.getMessage() + "\"");
            }
            return;
        }
        checkFailureLogged = null;
        programming.recover(missing, nowNanos);
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
        if (keySubnets == null || facts.isOwnKey(kv.key())) return null;
        Lease l;
        try {
            l = Lease.parse(keySubnets, kv.value()).forNetwork(facts.cfg.ipv4(), facts.cfg.ipv6());
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

    /** This host's facts changed (our subnet, the underlay): every lease is checked again, and our own key leaves the book. */
    private void recheckAll() {
        LeaseValidator.Local local = facts.local();
        List<LeaseValidator.Checked> all = new ArrayList<>(book.all());
        all.sort(Comparator.comparingLong(ch -> ch.candidate().createRevision()));
        book.clear();
        checkedAgainst = local;
        for (LeaseValidator.Checked ch : all) {
            if (!facts.isOwnKey(ch.candidate().key())) book.put(new LeaseValidator.Checked(ch.candidate(), LeaseValidator.problem(local, ch.candidate())));
        }
    }

    /** Under lock, after a full list or a re-check: logs each new rejection once and programs the whole difference. */
    private void reconcileAll() {
        Map<String, String> rejected = new LinkedHashMap<>(malformed);
        rejected.putAll(book.rejected());
        LeaseValidator.newlyRejected(rejectionsLogged, rejected)
                .forEach((key, why) -> log.log("ignoring a lease", "key=" + key + " reason=\"" + why + "\""));
        Map<Cidr, Lease> wanted = new HashMap<>();
        book.accepted().forEach((sn, ch) -> wanted.put(sn, ch.candidate().lease()));
        programming.apply(LeaseDiff.between(programming.programmed(), wanted), System.nanoTime());
    }

    /** Under lock, after a full list: nexthop objects of subnets that went while the agent was not running go, with their routes. */
    private void sweepNexthops() {
        try {
            int gone = facts.dp.sweep(programming.programmed().values());
            if (gone > 0) log.log("removed stale nexthops", "count=" + gone);
        } catch (RuntimeException e) {
            log.log("removing stale nexthops failed", "error=\"" + e.getMessage() + "\"");
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
                log.log("ignoring a lease", "key=" + key + " reason=\"" + why + "\"");
            }
        }
        Map<Cidr, Lease> have = new HashMap<>(), wanted = new HashMap<>();
        for (Cidr sn : ch.subnets()) {
            Lease h = programming.programmed().get(sn);
            if (h != null) have.put(sn, h);
            LeaseValidator.Checked w = book.accepted().get(sn);
            if (w != null) wanted.put(sn, w.candidate().lease());
        }
        programming.apply(LeaseDiff.between(have, wanted), System.nanoTime());
    }
}
