package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Netns;
import io.jcni.linux.nft.Nft;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ElementStore against nft in scratch namespaces: state of namespaces that are gone, long names. */
@Tag("root")
class ElementStoreNetnsTest {
    private static final String SKELETON = "add table inet jcni\nadd set inet jcni es_test { type ipv4_addr; }\n";

    @TempDir
    Path base;

    /**
     * The kernel reuses a dead namespace's inode, so state found under a
     * namespace's inode but recorded with another namespace's cookie is dropped, not adopted.
     */
    @Test
    void stateOfANamespaceThatIsGoneIsNotAdopted() {
        String a = uniqueName();
        String b = uniqueName();
        ElementStore.Owner dead = new ElementStore.Owner("test", "net", "dead", "eth0");
        ElementStore.Owner alive = new ElementStore.Owner("test", "net", "alive", "eth0");
        try (Netns nsA = Netns.create(a); Netns nsB = Netns.create(b)) {
            ElementStore inA = new ElementStore(Nft.in(nsA), base);
            inA.put(dead, els -> SKELETON, List.of(new ElementStore.Element("es_test", "10.0.0.1", null)));
            long cookieA = Nft.in(nsA).netnsCookie();
            long cookieB = Nft.in(nsB).netnsCookie();
            assertNotEquals(0, cookieA, "kernel 5.14+ gives namespaces cookies");
            assertNotEquals(cookieA, cookieB);

            // Namespace B "gets A's inode": A's state directory appears under B's inode.
            Path dirB = new ElementStore(Nft.in(nsB), base).dir();
            copyTree(inA.dir(), dirB);
            ElementStore inB = new ElementStore(Nft.in(nsB), base);
            assertEquals(List.of(new ElementStore.Element("es_test", "10.0.0.1", null)), inB.elements(dead), "before B's first change");

            inB.put(alive, els -> SKELETON, List.of(new ElementStore.Element("es_test", "10.0.0.2", null)));
            assertEquals(List.of(), inB.elements(dead), "the dead namespace's state is gone");
            assertEquals(List.of(), inB.owners("test", "net").stream().filter(o -> o.equals(dead)).toList());
            assertEquals(List.of(new ElementStore.Element("es_test", "10.0.0.2", null)), inB.elements(alive));
            assertEquals(Long.toString(cookieB), read(dirB.resolve(StateFiles.COOKIE_FILE)));

            // A's own state is untouched, and a second store on A keeps it.
            ElementStore again = new ElementStore(Nft.in(nsA), base);
            assertEquals(1, again.remove(dead, els -> SKELETON).size());
        } finally {
            Netns.delete(a);
            Netns.delete(b);
        }
    }

    /** A 4,096-character container ID and a 300-character network name get state files. */
    @Test
    void longContainerIdsAndNetworkNamesWork() {
        String n = uniqueName();
        ElementStore.Owner owner = new ElementStore.Owner("test", "n".repeat(300), "c".repeat(4096), "eth0");
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            store.put(owner, els -> SKELETON, List.of(new ElementStore.Element("es_test", "10.0.0.3", null)));
            assertEquals(List.of(owner), store.owners("test", "n".repeat(300)));
            assertTrue(exec(List.of("ip", "netns", "exec", n, "nft", "list", "set", "inet", "jcni", "es_test")).contains("10.0.0.3"));
            assertEquals(1, store.gc("test", "n".repeat(300), o -> false, els -> SKELETON).size());
            assertEquals(List.of(), store.owners("test", "n".repeat(300)));
        } finally {
            Netns.delete(n);
        }
    }

    /** A writer killed between writing a state file's temporary copy and renaming it leaves the copy: GC removes it. */
    @Test
    void gcRemovesTemporaryFilesOfKilledWriters() throws Exception {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            ElementStore.Owner owner = new ElementStore.Owner("test", "net", "c1", "eth0");
            store.put(owner, els -> SKELETON, List.of(new ElementStore.Element("es_test", "10.0.0.4", null)));
            java.nio.file.Path dir;
            try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk(base)) {
                dir = s.filter(p -> p.getFileName().toString().equals("att")).findFirst().orElseThrow();
            }
            java.nio.file.Path orphan = dir.resolve("test").resolve("net").resolve("killed@eth0.tmp");
            java.nio.file.Files.createDirectories(orphan.getParent());
            java.nio.file.Files.writeString(orphan, "{\"scope\":\"test\"");
            assertEquals(1, store.gc("test", "net", o -> false, els -> SKELETON).size());
            assertFalse(java.nio.file.Files.exists(orphan), "the abandoned temporary file is gone");
        } finally {
            Netns.delete(n);
        }
    }

    /** A store for another table (bridge jcni) shares the directory, but a set of the same name and key is its own. */
    @Test
    void anotherTablesElementsAreKeptApart() {
        String n = uniqueName();
        ElementStore.Owner inetOwner = new ElementStore.Owner("test", "net", "c1", "eth0");
        ElementStore.Owner bridgeOwner = new ElementStore.Owner("test2", "net", "c2", "eth0");
        String bridgeSkeleton = "add table bridge jcni\nadd set bridge jcni es_test { type ipv4_addr; }\n";
        ElementStore.Element e = new ElementStore.Element("es_test", "10.0.0.4", null);
        try (Netns ns = Netns.create(n)) {
            ElementStore inet = new ElementStore(Nft.in(ns), base);
            ElementStore bridge = new ElementStore(Nft.in(ns), base, "bridge jcni");
            inet.put(inetOwner, els -> SKELETON, List.of(e));
            bridge.put(bridgeOwner, els -> bridgeSkeleton, List.of(e));
            assertEquals(List.of(e), inet.elements(inetOwner), "not taken over by the other table's owner");
            assertTrue(exec(List.of("ip", "netns", "exec", n, "nft", "list", "set", "bridge", "jcni", "es_test")).contains("10.0.0.4"));

            assertEquals(List.of(e), bridge.remove(bridgeOwner, els -> bridgeSkeleton));
            assertTrue(!exec(List.of("ip", "netns", "exec", n, "nft", "list", "set", "bridge", "jcni", "es_test")).contains("10.0.0.4"));
            assertTrue(exec(List.of("ip", "netns", "exec", n, "nft", "list", "set", "inet", "jcni", "es_test")).contains("10.0.0.4"));
            assertEquals(List.of(e), inet.remove(inetOwner, els -> SKELETON));
        } finally {
            Netns.delete(n);
        }
    }

    /**
     * Found by chaos kill points: a plugin killed between writing a state file's temporary file and
     * renaming it. DEL removes it by name; one an earlier version named by its writer's pid goes at GC.
     */
    @Test
    void removeTakesTheTemporaryFileAKilledWriterLeft() throws Exception {
        String n = uniqueName();
        ElementStore.Owner owner = new ElementStore.Owner("test", "net", "killed", "eth0");
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            store.put(owner, els -> SKELETON, List.of(new ElementStore.Element("es_test", "10.0.0.4", null)));
            Path att = store.dir().resolve("att/test/net/killed@eth0");
            assertTrue(Files.isRegularFile(att), att.toString());
            Files.writeString(att.resolveSibling(att.getFileName() + ".tmp"), "{"); // as versions before AtomicFile named it
            Files.writeString(io.jcni.common.AtomicFile.lockedTemporary(att), "{");
            Path byPid = att.resolveSibling(io.jcni.common.AtomicFile.temporaryPrefix(att) + "4194304-ab");
            Files.writeString(byPid, "{");
            assertEquals(1, store.remove(owner, els -> SKELETON).size());
            try (var files = Files.walk(store.dir().resolve("att"))) {
                assertEquals(List.of(byPid), files.filter(Files::isRegularFile).toList());
            }
            store.gc("test", "net", o -> true, els -> SKELETON);
            try (var files = Files.walk(store.dir().resolve("att"))) {
                assertEquals(List.of(), files.filter(Files::isRegularFile).toList());
            }
        } finally {
            Netns.delete(n);
        }
    }

    /**
     * Found by chaos kill points (about 1 in 1,000 kills): an ADD killed between writing a key
     * record's temporary file and renaming it. Its record names the key (written first), but the key
     * record does not name it, so it never claimed the key; its DEL still leaves nothing, and the
     * holder's state is untouched. The same for a killed first write of the attachment's record.
     */
    @Test
    void delRemovesTheTemporaryFilesOfAnAddKilledBetweenWriteAndRename() throws Exception {
        String n = uniqueName();
        ElementStore.Owner holder = new ElementStore.Owner("test", "net", "holder", "eth0");
        ElementStore.Owner killed = new ElementStore.Owner("test", "net", "killed", "eth0");
        ElementStore.Owner killedFirst = new ElementStore.Owner("test", "net", "killed-first", "eth0");
        ElementStore.Element held = port("10.0.0.2");
        ElementStore.Element fresh = new ElementStore.Element("es_map", "9090", "10.0.0.3");
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            store.put(holder, els -> MAP_SKELETON, List.of(held));
            java.util.SortedSet<String> holderOnly = stateFiles(store.dir());

            // killed's ADD: its record (intent first), then it dies writing each key record.
            StateFiles files = new StateFiles(store.dir(), ElementStore.TABLE, System.err);
            List<ElementStore.Element> wanted = List.of(new ElementStore.Element("es_map", "8080", "10.0.0.3"), fresh);
            files.write(killed, wanted);
            for (ElementStore.Element e : wanted) {
                Files.writeString(io.jcni.common.AtomicFile.lockedTemporary(files.keyFile(e)), "half a claim");
            }
            // killedFirst's ADD dies in the first write of its record: no record, its temporary file only.
            Path att = store.dir().resolve("att/test/net/killed-first@eth0");
            Files.writeString(io.jcni.common.AtomicFile.lockedTemporary(att), "{");

            assertEquals(List.of(), store.remove(killed, els -> MAP_SKELETON), "it claimed nothing");
            assertEquals(List.of(), store.remove(killedFirst, els -> MAP_SKELETON));
            assertEquals(holderOnly, stateFiles(store.dir()), "nothing of the killed ADDs is left");
            assertEquals(List.of(held), store.elements(holder));
            assertTrue(listMap(n).contains("8080 comment \"test net holder eth0\" : 10.0.0.2"), listMap(n));

            // A later writer of the key replaces a temporary file a killed one left.
            Files.writeString(io.jcni.common.AtomicFile.lockedTemporary(files.keyFile(fresh)), "half a claim");
            store.put(killed, els -> MAP_SKELETON, List.of(fresh));
            assertEquals(List.of(fresh), store.remove(killed, els -> MAP_SKELETON));
            assertEquals(holderOnly, stateFiles(store.dir()));
            assertEquals(List.of(held), store.remove(holder, els -> MAP_SKELETON));
        } finally {
            Netns.delete(n);
        }
    }

    /** The state files under {@code dir}, but the lock, cookie and structure records, relative to it. */
    private static java.util.SortedSet<String> stateFiles(Path dir) throws java.io.IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return new java.util.TreeSet<>(s.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).toList());
        }
    }

    /**
     * Found by the chaos reboot: the namespace the plugins ran in is deleted for good; a GC in another
     * namespace under the same base removes its whole state directory, and keeps a live one's.
     */
    @Test
    void gcCollectsTheStateOfANamespaceThatIsGone() throws Exception {
        String gone = uniqueName(), alive = uniqueName(), gcHere = uniqueName();
        ElementStore.Owner owner = new ElementStore.Owner("test", "net", "c1", "eth0");
        List<ElementStore.Element> one = List.of(new ElementStore.Element("es_test", "10.0.0.5", null));
        Path goneDir, aliveDir;
        try (Netns nsGone = Netns.create(gone)) {
            ElementStore s = new ElementStore(Nft.in(nsGone), base);
            s.put(owner, els -> SKELETON, one);
            goneDir = s.dir();
        } finally {
            Netns.delete(gone);
        }
        try (Netns nsAlive = Netns.create(alive); Netns nsGc = Netns.create(gcHere)) {
            ElementStore a = new ElementStore(Nft.in(nsAlive), base);
            a.put(owner, els -> SKELETON, one);
            aliveDir = a.dir();
            if (aliveDir.equals(goneDir)) return; // the kernel gave the new namespace the dead one's inode: covered above
            assertTrue(Files.isDirectory(goneDir));

            new ElementStore(Nft.in(nsGc), base).gc("test", "net", o -> true, els -> SKELETON);
            assertTrue(!Files.exists(goneDir), "state of the namespace that is gone: " + goneDir);
            assertEquals(List.of(owner), new ElementStore(Nft.in(nsAlive), base).owners("test", "net"), "a live namespace's state stays");
            assertEquals(1, a.remove(owner, els -> SKELETON).size());
        } finally {
            Netns.delete(alive);
            Netns.delete(gcHere);
        }
    }

    private static final String MAP_SKELETON = "add table inet jcni\nadd map inet jcni es_map { type inet_service : ipv4_addr; }\n";

    private static ElementStore.Element port(String ip) {
        return new ElementStore.Element("es_map", "8080", ip);
    }

    /** A DEL killed after its transaction handed the key on, before its records: the next DEL completes it. */
    @Test
    void aDelKilledAfterItsTransactionIsCompletedByTheNextDel() {
        String n = uniqueName();
        ElementStore.Owner a = new ElementStore.Owner("test", "net", "a", "eth0");
        ElementStore.Owner b = new ElementStore.Owner("test", "net", "b", "eth0");
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            store.put(a, els -> MAP_SKELETON, List.of(port("10.0.0.2")));
            store.put(b, els -> MAP_SKELETON, List.of(port("10.0.0.3")));
            assertTrue(listMap(n).contains("8080 comment \"test net a eth0\" : 10.0.0.2"), listMap(n));
            // What a's DEL sends, applied without its records being written (killed in between).
            Nft.in(ns).run(ElementScript.script("", b.comment(), List.of(), java.util.Map.of(port("10.0.0.3"), "10.0.0.2")));

            assertEquals(List.of(port("10.0.0.2")), store.remove(a, els -> MAP_SKELETON));
            assertTrue(listMap(n).contains("8080 comment \"test net b eth0\" : 10.0.0.3"), listMap(n));
            assertEquals(List.of(port("10.0.0.3")), store.elements(b));
            assertEquals(List.of(port("10.0.0.3")), store.remove(b, els -> MAP_SKELETON));
            assertFalse(listMap(n).contains("8080"), listMap(n));
        } finally {
            Netns.delete(n);
        }
    }

    /** GC of the holder and of the next claimant: the key goes straight to the claimant that stays. */
    @Test
    void gcHandsTheKeyToTheClaimantThatStays() {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            String[] ips = {"10.0.0.2", "10.0.0.3", "10.0.0.4"};
            for (int i = 0; i < 3; i++) store.put(new ElementStore.Owner("test", "net", "c" + i, "eth0"), els -> MAP_SKELETON, List.of(port(ips[i])));
            List<ElementStore.Owner> gone = store.gc("test", "net", o -> o.containerId().equals("c2"), els -> MAP_SKELETON);
            assertEquals(2, gone.size());
            assertTrue(listMap(n).contains("8080 comment \"test net c2 eth0\" : 10.0.0.4"), listMap(n));
            assertEquals(List.of(port("10.0.0.4")), store.elements(new ElementStore.Owner("test", "net", "c2", "eth0")));
        } finally {
            Netns.delete(n);
        }
    }

    /**
     * A damaged attachment record (every shape of {@link DamagedRecordTest#SHAPES}): its DEL still
     * succeeds and removes what the key records say it claims (the element, handed to the next
     * claimant), names the file and moves it aside; the other claimant's state is untouched.
     */
    @Test
    void delOfAnAttachmentWithADamagedRecordSucceedsAndRemovesWhatItClaims() throws Exception {
        for (String damage : DamagedRecordTest.SHAPES.keySet()) {
            String n = uniqueName();
            ElementStore.Owner a = new ElementStore.Owner("test", "net", "a", "eth0");
            ElementStore.Owner b = new ElementStore.Owner("test", "net", "b", "eth0");
            ElementStore.Element mine = new ElementStore.Element("es_map", "9090", "10.0.0.2");
            java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
            try (Netns ns = Netns.create(n)) {
                ElementStore store = new ElementStore(Nft.in(ns), base.resolve(n), ElementStore.TABLE,
                        new java.io.PrintStream(log, true, java.nio.charset.StandardCharsets.UTF_8));
                store.put(a, els -> MAP_SKELETON, List.of(port("10.0.0.2"), mine));
                store.put(b, els -> MAP_SKELETON, List.of(port("10.0.0.3")));
                Path att = store.dir().resolve("att/test/net/a@eth0");
                Files.writeString(att, damage);

                assertEquals(List.of(port("10.0.0.2"), mine), store.remove(a, els -> MAP_SKELETON), damage);
                String map = listMap(n);
                assertTrue(map.contains("8080 comment \"test net b eth0\" : 10.0.0.3") && !map.contains("9090"), map);
                assertEquals(List.of(port("10.0.0.3")), store.elements(b));
                String said = log.toString(java.nio.charset.StandardCharsets.UTF_8);
                assertTrue(said.contains("damaged state file " + att + ": ") && said.contains("moved to " + store.dir().resolve("damaged")), said);
                assertEquals(List.of(), store.remove(a, els -> MAP_SKELETON), "a second DEL finds nothing and succeeds");
                assertEquals(List.of(port("10.0.0.3")), store.remove(b, els -> MAP_SKELETON));
                assertFalse(listMap(n).contains("8080"), listMap(n));
                assertEquals(List.of("damaged", "lock", "netns-cookie", "skeletons"), stateFiles(store.dir()).stream()
                        .map(f -> f.startsWith("damaged/") ? "damaged" : f).distinct().toList(), "only the record moved aside is left");
            } finally {
                Netns.delete(n);
            }
        }
    }

    /** GC of an attachment whose record is damaged: its elements go, the damage is named, the attachment GC keeps is untouched. */
    @Test
    void gcOfAnAttachmentWithADamagedRecordRemovesWhatItClaims() throws Exception {
        String n = uniqueName();
        ElementStore.Owner gone = new ElementStore.Owner("test", "net", "gone", "eth0");
        ElementStore.Owner kept = new ElementStore.Owner("test", "net", "kept", "eth0");
        ElementStore.Element other = new ElementStore.Element("es_map", "9090", "10.0.0.3");
        java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base, ElementStore.TABLE,
                    new java.io.PrintStream(log, true, java.nio.charset.StandardCharsets.UTF_8));
            store.put(gone, els -> MAP_SKELETON, List.of(port("10.0.0.2")));
            store.put(kept, els -> MAP_SKELETON, List.of(other));
            Path att = store.dir().resolve("att/test/net/gone@eth0");
            Files.writeString(att, "{\"scope\":\"test\",\"elements\":[[\"es_map\",8080]]}");

            assertEquals(List.of(gone), store.gc("test", "net", o -> o.equals(kept), els -> MAP_SKELETON));
            String map = listMap(n);
            assertTrue(!map.contains("8080") && map.contains("9090 comment \"test net kept eth0\" : 10.0.0.3"), map);
            String said = log.toString(java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(said.contains("damaged state file " + att + ": elements[0][1]: expected a string"), said);
            assertEquals(List.of(kept), store.owners("test", "net"));
            assertEquals(List.of(other), store.elements(kept));
        } finally {
            Netns.delete(n);
        }
    }

    private static String listMap(String ns) {
        return exec(List.of("ip", "netns", "exec", ns, "nft", "list", "map", "inet", "jcni", "es_map"));
    }

    private static String uniqueName() {
        return "jes-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    private static String exec(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out;
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p).strip();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void copyTree(Path from, Path to) {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.sorted(Comparator.naturalOrder()).toList()) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else if (!p.getFileName().toString().equals("lock")) Files.copy(p, t, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
