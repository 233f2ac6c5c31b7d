package io.jcni.plugins.common.nft;

import io.jcni.linux.nft.Nft;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which feature structures ({@link Skeleton}s) are in force in the namespace, recorded in
 * {@value StateFiles#SKELETONS_FILE} as lines of "HASH CHAIN,CHAIN..." (the chains each flushes
 * and refills), so that a structure is applied with {@code nft -f} only when it is not: after the
 * first call of a feature, ADD and DEL start no process. Called under the namespace's lock.
 */
final class StructureCache {
    private final Nft nft;
    private final StateFiles files;

    StructureCache(Nft nft, StateFiles files) {
        this.nft = nft;
        this.files = files;
    }

    /** Whether {@code skel} is recorded as in force (applied by nft and not replaced since). */
    boolean inForce(Skeleton skel) {
        return read().containsKey(skel.hash());
    }

    /** Applies {@code skel}'s structure unless it is recorded as in force; true when it applied it. */
    boolean ensure(Skeleton skel) {
        Map<String, Set<String>> inForce = read();
        if (inForce.containsKey(skel.hash())) return false;
        nft.run(skel.structure());
        // A structure that refilled a chain replaced the rules other structures put there.
        inForce.values().removeIf(chains -> chains.stream().anyMatch(skel.flushedChains()::contains));
        inForce.put(skel.hash(), skel.flushedChains());
        StringBuilder b = new StringBuilder();
        inForce.forEach((h, chains) -> b.append(h).append(' ').append(String.join(",", chains)).append('\n'));
        files.writeSkeletons(b.toString());
        return true;
    }

    /** Takes no structure as in force any more: the next change applies its own again. */
    void forget() {
        files.forgetSkeletons();
    }

    private Map<String, Set<String>> read() {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        String s = files.readSkeletons();
        if (s == null) return out;
        for (String line : s.split("\n")) {
            String[] f = line.split(" ", 2);
            if (f[0].isEmpty()) continue;
            Set<String> chains = new LinkedHashSet<>();
            if (f.length > 1) for (String c : f[1].split(",")) if (!c.isEmpty()) chains.add(c);
            out.put(f[0], chains);
        }
        return out;
    }
}
