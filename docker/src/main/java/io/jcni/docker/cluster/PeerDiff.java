package io.jcni.docker.cluster;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a host changes on a cluster network's VXLAN device to match what etcd says: remote peers
 * to program and programmed peers to take away (gone, or moved to another host or MAC). A host's
 * own containers are on its bridge and are never programmed.
 *
 * @param remove programmed entries to delete, first (a peer that changed is removed, then added again)
 * @param add    entries to program
 */
public record PeerDiff(List<Peer> remove, List<Peer> add) {

    public static PeerDiff between(Set<Peer> programmed, Collection<Peer> published, String ownHost) {
        Set<Peer> wanted = new LinkedHashSet<>();
        for (Peer p : published) if (!p.host().equals(ownHost)) wanted.add(p);
        List<Peer> remove = new ArrayList<>();
        for (Peer p : programmed) if (!wanted.contains(p)) remove.add(p);
        List<Peer> add = new ArrayList<>();
        for (Peer p : wanted) if (!programmed.contains(p)) add.add(p);
        return new PeerDiff(List.copyOf(remove), List.copyOf(add));
    }

    public boolean isEmpty() {
        return remove.isEmpty() && add.isEmpty();
    }
}
