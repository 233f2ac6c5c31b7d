package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which remote leases this host may program. Pure. Any host can write under
 * {@code <prefix>/subnets/}, so a lease is a claim, checked before it becomes a route, an FDB entry
 * or a neighbour: a lease is accepted only when
 * <ol>
 *   <li>its backend is ours;</li>
 *   <li>its subnet is one the Network leases: IPv4, prefix length SubnetLen, the key naming the
 *       subnet's network address (no host bits), within SubnetMin..SubnetMax;</li>
 *   <li>its subnet overlaps neither this host's subnet nor a network of the underlay (the
 *       connected routes of the underlay device: replacing one cuts the host off etcd and its peers);</li>
 *   <li>its PublicIP is a unicast address another host can have ({@link #publicIpProblem});</li>
 *   <li>vxlan: its VtepMAC is a unicast Ethernet address (not zero, not multicast or broadcast),
 *       not our own device's, and its VNI (when given) is ours;</li>
 *   <li>no older lease (lower etcd create_revision; the key breaks a tie) overlaps its subnet or
 *       uses its VtepMAC (one FDB entry per MAC: a copied MAC would move another host's traffic).</li>
 * </ol>
 * The order of events never matters: the answer depends only on the set of leases, so every host
 * accepts the same ones; when the older of two claims goes, the newer is accepted.
 */
public final class LeaseValidator {
    private LeaseValidator() {}

    /**
     * One lease as read from etcd.
     *
     * @param keySubnet the subnet as the key spells it (host bits kept, to reject unaligned keys)
     */
    public record Candidate(String key, Cidr keySubnet, long createRevision, Lease lease, Cidr keySubnet6) {
        /** An IPv4-only key's lease. */
        public Candidate(String key, Cidr keySubnet, long createRevision, Lease lease) {
            this(key, keySubnet, createRevision, lease, null);
        }
    }

    /**
     * What this host is: the facts a lease is checked against.
     *
     * @param subnet   our leased subnet (null before we have one)
     * @param underlay the networks of the underlay device's connected routes
     * @param vtepMac  our VXLAN device's MAC (null for host-gw)
     * @param subnet6  our leased IPv6 subnet (null before we have one, or without IPv6)
     * @param publicIpv6 our IPv6 underlay address (null without IPv6)
     * @param vtepMacV6  our {@code flannel-v6.<VNI>}'s MAC (null for host-gw or without IPv6)
     */
    public record Local(NetworkConfig cfg, Cidr subnet, IpAddr publicIp, List<Cidr> underlay, String vtepMac, Cidr subnet6, IpAddr publicIpv6,
            String vtepMacV6) {
        /** An IPv4-only host. */
        public Local(NetworkConfig cfg, Cidr subnet, IpAddr publicIp, List<Cidr> underlay, String vtepMac) {
            this(cfg, subnet, publicIp, underlay, vtepMac, null, null, null);
        }
    }

    /** @param rejected key → why it was ignored */
    public record Verdict(Map<Cidr, Lease> accepted, Map<String, String> rejected) {}

    private static final Comparator<Checked> OLDEST_FIRST =
            Comparator.comparingLong((Checked c) -> c.candidate().createRevision()).thenComparing(c -> c.candidate().key());
    private static final Cidr LINK_LOCAL = Cidr.parse("169.254.0.0/16");

    /** A candidate with what {@link #problem} found (null: nothing); kept by the agent until what it was checked against changes. */
    public record Checked(Candidate candidate, String problem) {}

    public static Verdict judge(Local local, Collection<Candidate> candidates) {
        List<Checked> checked = new ArrayList<>(candidates.size());
        for (Candidate c : candidates) checked.add(new Checked(c, problem(local, c)));
        return resolve(checked);
    }

    /**
     * Accepts, oldest first, each candidate without a problem of its own whose subnet and VtepMAC
     * no older accepted lease holds. O(n) hash look-ups (plus a sort, linear when the input is
     * already nearly in creation order, as the agent keeps it).
     */
    public static Verdict resolve(Collection<Checked> candidates) {
        List<Checked> byAge = new ArrayList<>(candidates);
        byAge.sort(OLDEST_FIRST);
        Map<Cidr, Lease> accepted = new LinkedHashMap<>();
        Map<Cidr, String> subnetOwner = new HashMap<>();
        Map<String, String> macOwner = new HashMap<>();
        Map<String, String> rejected = new LinkedHashMap<>();
        for (Checked ch : byAge) {
            Candidate c = ch.candidate();
            String problem = ch.problem();
            // Subnets without a problem all have their family's length and are aligned: an overlap is an equal subnet.
            for (Cidr sn : subnets(c.lease())) {
                String older = subnetOwner.get(sn);
                if (problem == null && older != null) problem = "its subnet " + sn + " is already claimed by the older lease " + older;
            }
            List<String> macs = macs(c.lease());
            for (String mac : macs) {
                if (problem == null && macOwner.containsKey(mac)) problem = "its VtepMAC is already used by the older lease " + macOwner.get(mac);
            }
            if (problem != null) {
                rejected.put(c.key(), problem);
                continue;
            }
            accepted.put(c.lease().id(), c.lease());
            for (Cidr sn : subnets(c.lease())) subnetOwner.put(sn, c.key());
            for (String mac : macs) macOwner.put(mac, c.key());
        }
        return new Verdict(accepted, rejected);
    }

    /** The subnets a lease claims (its IPv4 one unless empty, its IPv6 one if any). */
    static List<Cidr> subnets(Lease l) {
        if (!l.hasV6()) return List.of(l.subnet());
        return l.hasV4() ? List.of(l.subnet(), l.ipv6Subnet()) : List.of(l.ipv6Subnet());
    }

    /** The VTEP MACs a lease uses, lower case, each once. */
    static List<String> macs(Lease l) {
        String a = l.vtepMac() == null ? null : l.vtepMac().toLowerCase(Locale.ROOT);
        String b = l.vtepMacV6() == null ? null : l.vtepMacV6().toLowerCase(Locale.ROOT);
        if (a == null) return b == null ? List.of() : List.of(b);
        return b == null || b.equals(a) ? List.of(a) : List.of(a, b);
    }

    /** Why {@code c} alone cannot be accepted, or null when it can (before comparing it with other leases). */
    static String problem(Local local, Candidate c) {
        NetworkConfig cfg = local.cfg();
        Lease l = c.lease();
        if (!l.backendType().equals(cfg.backend().type())) return "backend " + l.backendType() + ", not " + cfg.backend().type();
        if (cfg.ipv4()) {
            String p = problemV4(local, c);
            if (p != null) return p;
        }
        if (cfg.ipv6() && (l.hasV6() || !cfg.ipv4())) return problemV6(local, c);
        return null;
    }

    private static String problemV4(Local local, Candidate c) {
        NetworkConfig cfg = local.cfg();
        Lease l = c.lease();
        Cidr sn = c.keySubnet();
        if (sn.isV6()) return "not an IPv4 subnet";
        if (sn.prefix() != cfg.subnetLen()) return "prefix length " + sn.prefix() + ", the network leases /" + cfg.subnetLen();
        if (!sn.address().equals(sn.network())) return "the key is not a subnet's network address";
        if (!cfg.leasable(sn.masked())) return "not between SubnetMin " + cfg.subnetMin() + " and SubnetMax " + cfg.subnetMax() + " of " + cfg.network();
        if (local.subnet() != null && !local.subnet().isV6() && overlap(sn, local.subnet())) return "overlaps this host's subnet " + local.subnet();
        for (Cidr u : local.underlay()) {
            if (overlap(sn, u)) return "overlaps the underlay network " + u;
        }
        String ip = publicIpProblem(l.publicIp(), cfg.network(), local.publicIp(), local.underlay());
        if (ip != null) return "PublicIP " + l.publicIp() + " " + ip;
        if (cfg.backend() instanceof NetworkConfig.Vxlan v) {
            String mac = macProblem(l.vtepMac(), local.vtepMac());
            if (mac != null) return "VtepMAC " + l.vtepMac() + " " + mac;
            if (l.vni() != 0 && l.vni() != v.vni()) return "VNI " + l.vni() + ", ours is " + v.vni();
        }
        return null;
    }

    /** The same rules for the IPv6 half: IPv6SubnetLen, IPv6SubnetMin..Max, PublicIPv6, BackendV6Data's VtepMAC. */
    private static String problemV6(Local local, Candidate c) {
        NetworkConfig.Pool pool = local.cfg().v6();
        Lease l = c.lease();
        Cidr sn = c.keySubnet6() != null ? c.keySubnet6() : l.ipv6Subnet();
        if (sn == null) return "no IPv6 subnet, and the network is IPv6-only";
        if (!sn.isV6()) return "not an IPv6 subnet";
        if (sn.prefix() != pool.subnetLen()) return "IPv6 prefix length " + sn.prefix() + ", the network leases /" + pool.subnetLen();
        if (!sn.address().equals(sn.network())) return "the key's IPv6 subnet is not a subnet's network address";
        if (!pool.leasable(sn.masked())) {
            return "not between IPv6SubnetMin " + pool.subnetMin() + " and IPv6SubnetMax " + pool.subnetMax() + " of " + pool.network();
        }
        if (local.subnet6() != null && overlap(sn, local.subnet6())) return "overlaps this host's IPv6 subnet " + local.subnet6();
        for (Cidr u : local.underlay()) {
            if (overlap(sn, u)) return "overlaps the underlay network " + u;
        }
        String ip = publicIpv6Problem(l.publicIpv6(), pool.network(), local.publicIpv6());
        if (ip != null) return "PublicIPv6 " + l.publicIpv6() + " " + ip;
        if (local.cfg().backend() instanceof NetworkConfig.Vxlan v) {
            String mac = macProblem(l.vtepMacV6(), local.vtepMacV6());
            if (mac != null) return "BackendV6Data.VtepMAC " + l.vtepMacV6() + " " + mac;
            if (l.vni() != 0 && l.vni() != v.vni()) return "VNI " + l.vni() + ", ours is " + v.vni();
        }
        return null;
    }

    /**
     * Why {@code ip} cannot be another host's IPv6 underlay address, or null: this host's own;
     * :: (unspecified), ::1, fe80::/10 (link-local: no FDB destination without a
     * zone), ff00::/8 (multicast); an IPv4-mapped one reads as IPv4 (not IPv6); an address of the IPv6 overlay network.
     */
    static String publicIpv6Problem(IpAddr ip, Cidr network, IpAddr ownPublicIpv6) {
        if (ip == null || !ip.isV6()) return "is not IPv6";
        if (ip.equals(ownPublicIpv6)) return "is this host's";
        if (ip.equals(IpAddr.parse("::"))) return "is unspecified";
        if (ip.isLoopback()) return "is a loopback address";
        if (ip.isLinkLocalUnicast()) return "is link-local";
        if ((ip.bytes()[0] & 0xff) == 0xff) return "is a multicast address";
        if (network.contains(ip)) return "is inside the overlay network " + network;
        return null;
    }

    /**
     * Why {@code ip} cannot be another host's underlay address, or null. Refused: this host's own
     * PublicIP; 0.0.0.0/8 ("this network"), 127.0.0.0/8 (loopback), 169.254.0.0/16 (link-local),
     * 224.0.0.0/4 (multicast), 240.0.0.0/4 (reserved, with 255.255.255.255 the limited broadcast);
     * an address of the overlay Network (a VXLAN packet would be routed into the overlay itself);
     * the network or broadcast address of an underlay network.
     */
    static String publicIpProblem(IpAddr ip, Cidr network, IpAddr ownPublicIp, List<Cidr> underlay) {
        if (ip.isV6()) return "is not IPv4";
        if (ip.equals(ownPublicIp)) return "is this host's";
        int first = ip.bytes()[0] & 0xff;
        if (first == 0) return "is in 0.0.0.0/8";
        if (first == 127) return "is a loopback address";
        if (first >= 224 && first < 240) return "is a multicast address";
        if (first >= 240) return "is reserved or broadcast";
        if (LINK_LOCAL.contains(ip)) return "is link-local";
        if (network.contains(ip)) return "is inside the overlay network " + network;
        for (Cidr u : underlay) {
            if (u.prefix() < 31 && u.contains(ip) && (ip.equals(u.network()) || ip.equals(u.last()))) {
                return "is the network or broadcast address of " + u;
            }
        }
        return null;
    }

    /** Why {@code mac} cannot be a remote VTEP's MAC, or null. */
    static String macProblem(String mac, String ownMac) {
        byte[] b;
        try {
            b = HexFormat.ofDelimiter(":").parseHex(mac.trim().toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return "is not a MAC address";
        }
        if (b.length != 6) return "is not a 6-byte MAC address";
        if ((b[0] & 1) != 0) return "is a multicast or broadcast address";
        boolean zero = true;
        for (byte x : b) zero &= x == 0;
        if (zero) return "is all zeros";
        if (ownMac != null && mac.equalsIgnoreCase(ownMac)) return "is this host's own VTEP";
        return null;
    }

    static boolean overlap(Cidr a, Cidr b) {
        if (a.isV6() != b.isV6()) return false;
        return a.masked().contains(b.network()) || b.masked().contains(a.network());
    }

    /**
     * The rejections to log now: those whose key is new, or whose reason changed, since
     * {@code logged}, which is updated to {@code rejected} (so each is logged once, not on every resync).
     */
    public static Map<String, String> newlyRejected(Map<String, String> logged, Map<String, String> rejected) {
        Map<String, String> fresh = new LinkedHashMap<>();
        for (var e : rejected.entrySet()) {
            if (!e.getValue().equals(logged.get(e.getKey()))) fresh.put(e.getKey(), e.getValue());
        }
        logged.keySet().retainAll(rejected.keySet());
        logged.putAll(fresh);
        return fresh;
    }
}
