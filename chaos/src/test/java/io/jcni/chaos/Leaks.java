package io.jcni.chaos;

import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Sh;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Everything a chain can leave behind, counted category by category: IPAM reservations (address
 * files), links (host veths, ifbs, interfaces left in container namespaces), nft set and map
 * elements, tc qdiscs of the kinds bandwidth adds, result cache files, and other state files (nft
 * ownership state, host-local's attachment index and any stray temporary file). A
 * difference of two counts is what one operation left (positive) or took from others (negative).
 */
record Leaks(int addresses, int links, int nftElements, int tcObjects, int cacheFiles, int stateFiles) {

    static Leaks count(ChainNetwork net, List<String> containerNetns) {
        // DEL retires veths and ifbs (with their qdiscs), deleted a moment after its answer: count after that.
        RetiredLinks.awaitNone(net.world.host);
        return new Leaks(
                files(net.ipamDir.resolve(net.name), Leaks::isReservation),
                hostLinks(net.world.host) + containerLinks(containerNetns),
                nftElements(net.world.host),
                tcObjects(net.world.host),
                files(net.cacheDir, n -> true),
                files(net.nftDir, n -> !isNamespaceBookkeeping(n))
                        + files(net.ipamDir, n -> !n.equals("lock") && !n.startsWith("last_reserved_ip") && !isReservation(n)));
    }

    /** host-local names a reservation file after its address (IPv6 colons as '_' on some systems). */
    static boolean isReservation(String fileName) {
        return fileName.matches("[0-9.]+|[0-9a-fA-F:_]+") && (fileName.contains(".") || fileName.contains(":") || fileName.contains("_"));
    }

    /**
     * The nft state's lock, netns-cookie and skeletons (which table structures are in force) belong
     * to a namespace, not to an attachment (like host-local's lock).
     */
    static boolean isNamespaceBookkeeping(String fileName) {
        return fileName.equals("lock") || fileName.equals("netns-cookie") || fileName.equals("skeletons") || fileName.equals("skeletons.tmp")
                || fileName.startsWith(".skeletons.tmp-");
    }

    Leaks minus(Leaks base) {
        return new Leaks(addresses - base.addresses, links - base.links, nftElements - base.nftElements,
                tcObjects - base.tcObjects, cacheFiles - base.cacheFiles, stateFiles - base.stateFiles);
    }

    boolean isZero() {
        return equals(new Leaks(0, 0, 0, 0, 0, 0));
    }

    int total() {
        return Math.abs(addresses) + Math.abs(links) + Math.abs(nftElements) + Math.abs(tcObjects)
                + Math.abs(cacheFiles) + Math.abs(stateFiles);
    }

    @Override
    public String toString() {
        return "addresses=" + addresses + " links=" + links + " nftElements=" + nftElements + " tcObjects=" + tcObjects
                + " cacheFiles=" + cacheFiles + " stateFiles=" + stateFiles;
    }

    /** The state, reservation and cache files of the network, relative to the world's directory: what a leak is made of. */
    static java.util.SortedSet<String> fileNames(ChainNetwork net) {
        java.util.SortedSet<String> names = new java.util.TreeSet<>();
        for (Path dir : List.of(net.ipamDir, net.nftDir, net.cacheDir)) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> s = Files.walk(dir)) {
                s.filter(Files::isRegularFile).filter(p -> !isNamespaceBookkeeping(p.getFileName().toString())
                                && !p.getFileName().toString().startsWith("last_reserved_ip"))
                        .forEach(p -> names.add(net.world.dir.relativize(p).toString()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return names;
    }

    /** Regular files below {@code dir} (recursively) whose name {@code counts}; a missing dir has none. */
    static int files(Path dir, java.util.function.Predicate<String> counts) {
        if (!Files.isDirectory(dir)) return 0;
        try (Stream<Path> s = Files.walk(dir)) {
            return (int) s.filter(Files::isRegularFile).filter(p -> counts.test(p.getFileName().toString())).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Host veths and ifbs: the bridge itself stays after DEL by design, as in the reference plugin. */
    static int hostLinks(String host) {
        return Sh.lines(Sh.ok("ip", "-n", host, "-o", "link", "show", "type", "veth")).size()
                + Sh.lines(Sh.ok("ip", "-n", host, "-o", "link", "show", "type", "ifb")).size();
    }

    /** Interfaces other than lo in the container namespaces that still exist. */
    static int containerLinks(List<String> netnsPaths) {
        int n = 0;
        for (String path : netnsPaths) {
            String name = Path.of(path).getFileName().toString();
            if (!Files.exists(Path.of(path))) continue;
            Sh.Run r = Sh.run("ip", "-n", name, "-o", "link", "show");
            if (r.rc() != 0) continue;
            for (String l : Sh.lines(r.out())) if (!l.matches("\\d+: lo: .*")) n++;
        }
        return n;
    }

    static int nftElements(String host) {
        return nftElementsBySet(host).values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Elements of each non-empty set and map of jcni's table in the namespace. */
    static Map<String, Integer> nftElementsBySet(String host) {
        Sh.Run r = Sh.run("ip", "netns", "exec", host, "nft", "-j", "list", "table", "inet", "jcni");
        Map<String, Integer> n = new java.util.TreeMap<>();
        if (r.rc() != 0) return n; // no table: nothing in it
        for (Object o : Json.asList(Json.parseObject(r.out()).get("nftables"))) {
            Map<String, Object> entry = Json.asObject(o);
            for (String kind : List.of("set", "map")) {
                if (entry.get(kind) instanceof Map<?, ?> set && set.get("elem") instanceof List<?> elems && !elems.isEmpty()) {
                    n.merge(String.valueOf(set.get("name")), elems.size(), Integer::sum);
                }
            }
        }
        return n;
    }

    /** tbf and ingress qdiscs (bandwidth's); the default qdiscs of a link are not counted. */
    static int tcObjects(String host) {
        int n = 0;
        for (String l : Sh.lines(Sh.ok("ip", "netns", "exec", host, "tc", "qdisc", "show"))) {
            if (l.startsWith("qdisc tbf") || l.startsWith("qdisc ingress") || l.startsWith("qdisc htb") || l.startsWith("qdisc clsact")) n++;
        }
        return n;
    }

}
