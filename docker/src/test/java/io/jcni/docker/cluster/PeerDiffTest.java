package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.StateDoc;
import io.jcni.types.IpAddr;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a host programs on its VXLAN device: the other hosts' containers, exactly. */
class PeerDiffTest {
    static final IpAddr A = IpAddr.parse("192.168.7.1"), B = IpAddr.parse("192.168.7.2");

    static Peer peer(String id, IpAddr vtep, String ip) {
        return new Peer(id, ClusterKeys.host(vtep), ClusterKeys.macFor(IpAddr.parse(ip)), List.of(IpAddr.parse(ip)), vtep);
    }

    @Test
    void ownContainersAreNeverProgrammed() {
        PeerDiff d = PeerDiff.between(Set.of(), List.of(peer("a1", A, "10.77.3.1"), peer("b1", B, "10.77.3.2")), ClusterKeys.host(A));
        assertEquals(List.of(peer("b1", B, "10.77.3.2")), d.add());
        assertEquals(List.of(), d.remove());
    }

    @Test
    void goneAndMovedPeersAreRemovedAndTheNewOnesAdded() {
        Set<Peer> programmed = new LinkedHashSet<>(List.of(peer("b1", B, "10.77.3.2"), peer("b2", B, "10.77.3.3")));
        IpAddr c = IpAddr.parse("192.168.7.3");
        // b1 is gone (its host died: the lease took it), b2 now lives on host c (same endpoint, another VTEP).
        PeerDiff d = PeerDiff.between(programmed, List.of(peer("b2", c, "10.77.3.3")), ClusterKeys.host(A));
        assertEquals(List.of(peer("b1", B, "10.77.3.2"), peer("b2", B, "10.77.3.3")), d.remove());
        assertEquals(List.of(peer("b2", c, "10.77.3.3")), d.add());
        assertTrue(PeerDiff.between(Set.of(peer("b2", c, "10.77.3.3")), List.of(peer("b2", c, "10.77.3.3")), ClusterKeys.host(A)).isEmpty());
    }

    @Test
    void peersRoundTripThroughTheirDocument() {
        Peer p = peer("b1", B, "10.77.3.2");
        assertEquals(p, Peer.fromJson(StateDoc.of("t", p.toJson())));
    }

    static Peer dualStack(String id, IpAddr vtep, String ip, String ip6) {
        return new Peer(id, ClusterKeys.host(vtep), ClusterKeys.macFor(IpAddr.parse(ip)), List.of(IpAddr.parse(ip), IpAddr.parse(ip6)), vtep);
    }

    @Test
    void dualStackPeersAreProgrammedWithBothAddressesAndAChangedIPv6AddressIsReplaced() {
        Peer b1 = dualStack("b1", B, "10.77.3.2", "fd77::102");
        PeerDiff first = PeerDiff.between(Set.of(), List.of(dualStack("a1", A, "10.77.3.1", "fd77::101"), b1), ClusterKeys.host(A));
        assertEquals(List.of(b1), first.add());
        // the same endpoint published again with another IPv6 address: the old neighbour entry goes, the new one comes
        Peer moved = dualStack("b1", B, "10.77.3.2", "fd77::1:2");
        PeerDiff d = PeerDiff.between(Set.of(b1), List.of(moved), ClusterKeys.host(A));
        assertEquals(List.of(b1), d.remove());
        assertEquals(List.of(moved), d.add());
        // and a dual-stack peer whose host went is removed with both its entries
        assertEquals(List.of(b1), PeerDiff.between(Set.of(b1), List.of(), ClusterKeys.host(A)).remove());
        assertEquals(b1, Peer.fromJson(StateDoc.of("t", b1.toJson())));
        assertTrue(PeerDiff.between(Set.of(b1), List.of(Peer.fromJson(StateDoc.of("t", b1.toJson()))), ClusterKeys.host(A)).isEmpty());
    }
}
