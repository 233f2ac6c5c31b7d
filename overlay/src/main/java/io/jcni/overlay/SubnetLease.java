package io.jcni.overlay;

import io.jcni.etcd.KeyValue;
import io.jcni.linux.nft.Nft;
import io.jcni.types.Cidr;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntSupplier;

/**
 * Our subnet: leased with a create-if-absent transaction attached to an etcd lease (or our own
 * lease of the last run taken over), then subnet.env and the masquerade rules that go with it.
 */
final class SubnetLease {
    private final AgentOptions opts;
    private final HostFacts facts;
    private final AgentEtcd etcd;
    private final RemoteHosts remotes;
    private final AgentLog log;
    private final CountDownLatch ready;
    /** The keep-alive loop's generation now: a loop that was replaced stops leasing. */
    private final IntSupplier currentGeneration;
    private final Random random = new Random();
    /** Our etcd lease; 0 before the first. */
    private volatile long leaseId;

    SubnetLease(AgentOptions opts, HostFacts facts, AgentEtcd etcd, RemoteHosts remotes, AgentLog log, CountDownLatch ready,
                IntSupplier currentGeneration) {
        this.opts = opts;
        this.facts = facts;
        this.etcd = etcd;
        this.remotes = remotes;
        this.log = log;
        this.ready = ready;
        this.currentGeneration = currentGeneration;
    }

    long leaseId() {
        return leaseId;
    }

    /** Leases a subnet; {@code generation}: the keep-alive loop doing it (0: the first lease), which gives up once replaced. */
    void acquire(int generation) throws InterruptedException {
        Cidr previous = facts.subnet, previous6 = facts.subnet6;
        if (facts.ownKey == null && Files.isRegularFile(opts.subnetFile())) {
            // As flanneld: FLANNEL_SUBNET and FLANNEL_IPV6_SUBNET of the last run, each read on its own.
            Cidr p4 = SubnetEnv.cidr(opts.subnetFile(), "FLANNEL_SUBNET"), p6 = SubnetEnv.cidr(opts.subnetFile(), "FLANNEL_IPV6_SUBNET");
            if ((facts.cfg.ipv4() && p4 == null) || (facts.cfg.ipv6() && p6 == null)) log.log("ignoring unreadable subnet file", "file=" + opts.subnetFile());
            previous = p4 == null || p4.isV6() ? null : p4.masked();
            previous6 = p6 == null || !p6.isV6() ? null : p6.masked();
        }
        Cidr prev = previous, prev6 = previous6;
        Lease mine = etcd.untilDone("lease a subnet", () -> {
            if (generation != 0 && generation != currentGeneration.getAsInt()) throw new InterruptedIOException("replaced by the watchdog");
            return tryAcquire(prev, prev6);
        });
        if (generation != 0 && generation != currentGeneration.getAsInt()) throw new InterruptedException();
        remotes.ownSubnetChanged(() -> {
            facts.subnet = mine.hasV4() ? mine.subnet() : null;
            facts.subnet6 = mine.ipv6Subnet();
            facts.ownKey = mine.key(opts.etcdPrefix());
            facts.dp.activate(facts.subnet, facts.subnet6);
        });
        Cidr subnet = facts.subnet, subnet6 = facts.subnet6;
        try {
            SubnetEnv.write(opts.subnetFile(), SubnetEnv.format(facts.cfg.network(), subnet, facts.cfg.ipv6() ? facts.cfg.v6().network() : null, subnet6,
                    facts.dp.podMtu(), opts.ipMasq()));
        } catch (IOException e) {
            log.log("writing subnet file failed", "file=" + opts.subnetFile() + " error=\"" + e.getMessage() + "\"");
        }
        if (opts.ipMasq()) {
            try {
                Nft.current().run(OverlayMasq.setup(facts.cfg.network(), subnet, facts.cfg.ipv6() ? facts.cfg.v6().network() : null, subnet6));
            } catch (RuntimeException e) {
                log.log("masquerade setup failed", "error=\"" + e.getMessage() + "\"");
            }
        }
        log.log("leased", "subnet=" + subnet + " public_ip=" + facts.publicIp + (facts.cfg.ipv6() ? " ipv6_subnet=" + subnet6 + " public_ipv6=" + facts.publicIpv6 : "")
                + " backend=" + facts.cfg.backend().type() + " lease=" + Long.toHexString(leaseId));
        ready.countDown();
    }

    /** One attempt; throws IOException to retry (etcd unreachable, or another host won the race). */
    private Lease tryAcquire(Cidr previous, Cidr previous6) throws IOException {
        Map<Cidr, KeyValue> kvs = new LinkedHashMap<>();
        Map<Cidr, Lease> leases = new LinkedHashMap<>();
        for (KeyValue kv : etcd.leaseCall(() -> etcd.client().getPrefix(Lease.subnetsDir(opts.etcdPrefix()))).kvs()) {
            Lease l = parse(kv);
            if (l != null) {
                leases.put(l.id(), l);
                kvs.put(l.id(), kv);
            }
        }
        List<Cidr> avoid = facts.underlayNets;
        Optional<Lease> own = SubnetChoice.ownLease(leases.values(), facts.cfg.ipv4() ? facts.publicIp : facts.publicIpv6)
                .filter(l -> compatible(l, avoid) && l.key(opts.etcdPrefix()).equals(kvs.get(l.id()).key()));
        long id = etcd.leaseCall(() -> etcd.client().grantLease(opts.leaseTtl().toSeconds()));
        boolean ok;
        Lease mine;
        if (own.isPresent()) {
            // A restart: take over our own lease (new etcd lease id) unless it changed meanwhile.
            Lease o = own.get();
            mine = facts.dp.local(o.hasV4() ? o.subnet() : null, o.ipv6Subnet());
            long rev = kvs.get(o.id()).modRevision();
            ok = etcd.leaseCall(() -> etcd.client().putIfModRevision(mine.key(opts.etcdPrefix()), rev, mine.value(), id));
        } else {
            Cidr pick = !facts.cfg.ipv4() ? null : SubnetChoice.pick(facts.cfg, leases.values(), previous, avoid, random)
                    .orElseThrow(() -> new IOException("no free subnet left in " + facts.cfg.network()));
            Cidr pick6 = !facts.cfg.ipv6() ? null : SubnetChoice.pickV6(facts.cfg, leases.values(), previous6, avoid, random)
                    .orElseThrow(() -> new IOException("no free subnet left in " + facts.cfg.v6().network()));
            mine = facts.dp.local(pick, pick6);
            ok = etcd.leaseCall(() -> etcd.client().putIfAbsent(mine.key(opts.etcdPrefix()), mine.value(), id));
        }
        if (!ok) {
            etcd.leaseCall(() -> {
                etcd.client().revokeLease(id);
                return null;
            });
            throw new IOException("subnet " + mine.id() + " was taken meanwhile");
        }
        leaseId = id;
        return mine;
    }

    /** Whether our old lease still fits the network: each family the network has, leasable and off the underlay; none it lacks. */
    private boolean compatible(Lease l, List<Cidr> avoid) {
        if (facts.cfg.ipv4() != l.hasV4() || facts.cfg.ipv6() != l.hasV6()) return false;
        if (l.hasV4() && (!facts.cfg.leasable(l.subnet()) || SubnetChoice.overlapsAny(l.subnet(), avoid))) return false;
        return !l.hasV6() || (facts.cfg.leasable(l.ipv6Subnet()) && !SubnetChoice.overlapsAny(l.ipv6Subnet(), avoid));
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
}
