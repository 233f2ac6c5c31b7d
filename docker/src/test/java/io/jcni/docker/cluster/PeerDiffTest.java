package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.docker.store.StateDoc;
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
}
