package io.jcni.plugins.common.nft;

import io.jcni.common.AtomicFile;
import io.jcni.linux.Errno;
import io.jcni.linux.Flock;
import io.jcni.linux.nft.NfTables;
import io.jcni.linux.nft.NftBatch;
import io.jcni.linux.nft.NftBatch.Family;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftException;
import io.jcni.types.Json;
import io.jcni.types.Names;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Set and map elements in jcni's nftables table, each owned by one attachment, added and removed
 * without ever reading the ruleset.
 *
 * <p><b>Why not read nft.</b> nft 1.0.6 loads the whole table before {@code get element},
 * {@code list ...} or even {@code list tables} (measured: 5 ms with an empty map, 30 ms with
 * 2,000 elements), so any read makes ADD and DEL grow with the number of mappings. Writes with
 * {@code add/delete element} to hash sets and maps do not. (Interval sets with concatenated keys
 * do: the kernel's pipapo backend rebuilds its lookup tables on every commit, measured 2 ms to
 * 30 ms per transaction from 0 to 4,000 elements; so per-attachment data never goes into them.) So ownership lives here, in small files, and every change is
 * one write-only transaction whose size depends only on the attachment's own elements, sent to
 * nf_tables over netlink ({@link NftBatch}); {@code nft -f} only puts a feature's structure in place
 * when it is not in force (see {@link #apply}).
 *
 * <p><b>Layout</b> (one directory per network namespace, named by its inode, so state for a test
 * namespace never mixes with the host's; the host's init namespace has a fixed inode; inodes of
 * namespaces that are gone are reused, so the directory also records the namespace's cookie, and
 * state found under another cookie is dropped; the directory of a namespace that is gone for good
 * is removed by the next {@link #gc} under the same base, see {@code DeadNamespaceState}):
 * <pre>
 *   BASE/NSINODE/lock                                flock(2) serialising every change
 *   BASE/NSINODE/netns-cookie                        the namespace the state below belongs to
 *   BASE/NSINODE/skeletons                           the table structures in force ({@link Skeleton})
 *   BASE/NSINODE/att/SCOPE/NET/CID@IFNAME            JSON: the attachment's elements
 *   BASE/NSINODE/key/SET/KEY                         "OWNER-ID\nVALUE": who holds a key now
 * </pre>
 * Names are %-encoded. A key taken over by a later attachment (last writer wins, as in the
 * reference portmap) is not removed by the earlier owner's DEL: it is no longer that owner's.
 *
 * <p><b>Tolerance.</b> State files survive a reboot, the ruleset does not; a crash may fall between
 * the two writes. Every removal is therefore written as {@code add element K : V; delete element K},
 * which succeeds whether or not the element is there, and every addition as {@code add K : HELD;
 * delete K; add K : V}, which also replaces an element held by another owner. Each element carries
 * a comment naming its owner, for humans reading {@code nft list table inet jcni}.
 */
public final class ElementStore {
    /** Default base directory (the reference plugins keep their state under /var/lib/cni too). */
    public static final Path DEFAULT_BASE = Path.of("/var/lib/cni/jcni/nft");
    /** The table every jcni feature shares. */
    public static final String TABLE = "inet jcni";

    /** Who owns elements: a feature ({@code scope}: portmap, masq, firewall) for one attachment. */
    public record Owner(String scope, String network, String containerId, String ifname) {
        public Owner {
            Objects.requireNonNull(scope);
            Objects.requireNonNull(network);
            Objects.requireNonNull(containerId);
            Objects.requireNonNull(ifname);
        }

        /** Unique id, also the file path below att/ (each part one file name, hashed when too long). */
        String id() {
            return enc(scope) + "/" + fileName(enc(network)) + "/" + fileName(enc(containerId) + "@" + enc(ifname));
        }

        /** The element comment: readable, quote-free, at most 128 bytes. */
        public String comment() {
            String s = scope + " " + network + " " + containerId + " " + ifname;
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < s.length() && b.length() < 120; i++) {
                char c = s.charAt(i);
                b.append(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '_');
            }
            return b.toString();
        }
    }

    /**
     * One element in nft syntax: {@code key} as in {@code tcp . 8080}, {@code value} as in
     * {@code 10.0.0.2 . 80} for a map, null for a set.
     */
    public record Element(String set, String key, String value) {
        public Element {
            Objects.requireNonNull(set);
            Objects.requireNonNull(key);
        }
    }

    /** Holds the cookie of the namespace the state belongs to (see {@link #forgetDeadNamespace}). */
    static final String COOKIE_FILE = "netns-cookie";

    private final Nft nft;
    private final Path dir;
    private final String table;
    private boolean cookieChecked;

    /** Elements of {@value #TABLE}. */
    public ElementStore(Nft nft, Path base) {
        this(nft, base, TABLE);
    }

    /**
     * Elements of another jcni table, e.g. {@code bridge jcni} (filtering bridged frames needs a
     * bridge-family table). Its state shares the directory and lock of {@value #TABLE}; its key
     * files are kept apart by the table's name, so set names need not differ between tables.
     *
     * @param table family and name as nft writes them ({@code bridge jcni}); from code, never from input
     */
    public ElementStore(Nft nft, Path base, String table) {
        this.nft = nft;
        this.dir = base.resolve(Long.toString(nft.netnsInode()));
        this.table = Objects.requireNonNull(table);
    }

    public Path dir() {
        return dir;
    }

    public Nft nft() {
        return nft;
    }

    /**
     * Makes {@code owner} hold exactly {@code elements}: adds them (taking over keys held by
     * others), removes what it held before and no longer wants. {@code skeleton} is the feature's
     * table structure, applied in the same transaction (it must be idempotent: {@code add} for
     * sets and chains, {@code flush} before re-adding rules); it is given every element the
     * transaction touches.
     */
    public void put(Owner owner, Function<List<Element>, String> skeleton, List<Element> elements) {
        checkDistinct(elements);
        try (Flock lock = lock()) {
            List<Element> before = read(owner);
            Map<Element, String> held = new LinkedHashMap<>();
            for (Element e : elements) held.put(e, heldValue(e));
            List<Element> drop = new ArrayList<>();
            Set<String> newKeys = new LinkedHashSet<>();
            for (Element e : elements) newKeys.add(e.set() + "\0" + e.key());
            for (Element e : before) {
                if (!newKeys.contains(e.set() + "\0" + e.key()) && ownedBy(e, owner)) drop.add(e);
            }
            List<Element> touched = new ArrayList<>(drop);
            touched.addAll(elements);
            if (touched.isEmpty()) return;
            Skeleton skel = Skeleton.parse(table, skeleton.apply(touched));
            NftBatch batch = batch(table, skel, owner.comment(), drop, held);
            // Intent first: if we die after nft, the state still names every element we may hold.
            List<Element> union = new ArrayList<>(elements);
            for (Element e : before) if (!union.contains(e) && !drop.contains(e)) union.add(e);
            union.addAll(drop);
            Map<Element, String[]> keysBefore = new LinkedHashMap<>();
            for (Element e : elements) keysBefore.put(e, readKey(e));
            write(owner, union);
            for (Element e : elements) writeKey(e, owner);
            try {
                apply(skel, batch);
            } catch (NftException e) {
                // nft applied nothing (one transaction): put the state back as it was, so a
                // refused ADD leaves no state naming elements that were never added.
                keysBefore.forEach(this::restoreKey);
                if (before.isEmpty()) deleteAttFile(owner);
                else write(owner, before);
                throw e;
            }
            for (Element e : drop) deleteKey(e);
            write(owner, elements);
        }
    }

    /**
     * Removes everything {@code owner} still holds; nothing held is no error. Returns what was
     * removed. {@code skeleton} gives the structure those elements need (so that removal works
     * even when the table is gone, e.g. after a reboot).
     */
    public List<Element> remove(Owner owner, Function<List<Element>, String> skeleton) {
        try (Flock lock = lock()) {
            return removeLocked(owner, skeleton);
        }
    }

    /** What {@code owner} holds, per its state, or an empty list. */
    public List<Element> elements(Owner owner) {
        List<Element> out = new ArrayList<>();
        for (Element e : read(owner)) if (ownedBy(e, owner)) out.add(e);
        return out;
    }

    /**
     * Verifies in nf_tables, over netlink, that every element {@code owner} holds is present (one
     * lookup per element) and that each chain {@code skeleton} fills holds its number of rules
     * (one dump of that chain). {@code skeleton} also gives the sets' types. Throws NftException
     * naming the first thing missing; a structure found changed is no longer taken as in force,
     * so the next ADD applies it again.
     */
    public void verifyPresent(Owner owner, Function<List<Element>, String> skeleton) {
        List<Element> mine = elements(owner);
        if (mine.isEmpty()) return;
        Skeleton skel = Skeleton.parse(table, skeleton.apply(mine));
        Family family = Family.of(table.substring(0, table.indexOf(' ')));
        String name = table.substring(table.indexOf(' ') + 1);
        try (NfTables t = nft.tables()) {
            for (var chain : skel.rules().entrySet()) {
                String[] f = chain.getKey().split(" ");
                if (!(f[0] + " " + f[1]).equals(table)) continue;
                int have = t.ruleCount(family, name, f[2]);
                if (have != chain.getValue()) {
                    try (Flock lock = lock()) {
                        forgetStructures();
                    }
                    throw new NftException("list chain " + chain.getKey(), -1,
                            have + " rules where jcni put " + chain.getValue() + "; the next ADD puts them back");
                }
            }
            for (Element e : mine) {
                if (!t.hasElement(family, name, e.set(), skel.key(table, e))) {
                    throw new NftException("get element " + table + " " + e.set() + " { " + e.key() + " }", -1, "not in nftables");
                }
            }
        }
    }

    /** Every attachment that holds state in this namespace, of every scope and network (for {@code jcni doctor}). */
    public List<Owner> owners() {
        List<Owner> out = new ArrayList<>();
        Path att = dir.resolve("att");
        if (!Files.isDirectory(att)) return out;
        try (DirectoryStream<Path> scopes = Files.newDirectoryStream(att, Files::isDirectory)) {
            for (Path scope : scopes) {
                try (DirectoryStream<Path> nets = Files.newDirectoryStream(scope, Files::isDirectory)) {
                    for (Path net : nets) out.addAll(owners(dec(scope.getFileName().toString()), dec(net.getFileName().toString())));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The attachments of {@code scope} in {@code network} that hold state. */
    public List<Owner> owners(String scope, String network) {
        Path d = dir.resolve("att").resolve(enc(scope)).resolve(fileName(enc(network)));
        List<Owner> out = new ArrayList<>();
        if (!Files.isDirectory(d)) return out;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (isTemporary(n)) continue;
                if (n.indexOf(HASH_MARK) >= 0) {
                    // A hashed name: the owner is only in the file (written with it).
                    Owner o = ownerIn(p, scope, network);
                    if (o != null) out.add(o);
                    continue;
                }
                int at = n.indexOf('@');
                if (at < 0) continue;
                out.add(new Owner(scope, network, dec(n.substring(0, at)), dec(n.substring(at + 1))));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static Owner ownerIn(Path f, String scope, String network) throws IOException {
        try {
            Map<String, Object> m = Json.parseObject(Files.readString(f, StandardCharsets.UTF_8));
            if (m.get("containerId") instanceof String id && m.get("ifname") instanceof String ifname) {
                return new Owner(scope, network, id, ifname);
            }
        } catch (NoSuchFileException | Json.JsonException e) {
            // gone meanwhile, or damaged: not an owner we can name
        }
        return null;
    }

    /** Longest file name used as is: NAME_MAX is 255 bytes, and a temporary name adds up to {@link AtomicFile#MAX_TEMPORARY_EXTRA} while writing. */
    static final int MAX_FILE_NAME = 200;
    /** Marks a hashed name ({@link Names#shortened}); {@link #enc} never produces it. */
    static final char HASH_MARK = '~';

    /**
     * {@code encoded} (an {@link #enc} result) as one file name: as is when short enough, else its
     * first characters, {@value #HASH_MARK} and its SHA-256, so long container IDs and network
     * names (which the reference accepts) still get a file of their own.
     */
    static String fileName(String encoded) {
        return Names.shortened(encoded, MAX_FILE_NAME);
    }

    /**
     * Removes the elements of every attachment of {@code scope}/{@code network} that {@code keep}
     * rejects; then removes the state of every namespace under the same base that is gone for good
     * ({@link DeadNamespaceState}): GC is where a runtime expects leftovers to be collected.
     */
    public List<Owner> gc(String scope, String network, Predicate<Owner> keep,
                          Function<List<Element>, String> skeleton) {
        List<Owner> removed = new ArrayList<>();
        try (Flock lock = lock()) {
            for (Owner o : owners(scope, network)) {
                if (keep.test(o)) continue;
                removeLocked(o, skeleton);
                removed.add(o);
            }
            deleteAbandonedTemporaries();
        }
        DeadNamespaceState.sweep(dir.getParent(), Long.parseLong(dir.getFileName().toString()));
        return removed;
    }

    /**
     * Under the lock: the temporary files of attachment and key state, which only a writer killed
     * between write and rename leaves (every write holds the lock). One killed before its first
     * rename leaves no state file by which GC would find the attachment (chaos KillPointsTest).
     */
    private void deleteAbandonedTemporaries() {
        for (String sub : List.of("att", "key")) {
            Path root = dir.resolve(sub);
            if (!Files.isDirectory(root)) continue;
            try (Stream<Path> files = Files.walk(root)) {
                for (Path p : files.filter(f -> isTemporary(f.getFileName().toString())).toList()) Files.deleteIfExists(p);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private List<Element> removeLocked(Owner owner, Function<List<Element>, String> skeleton) {
        List<Element> mine = new ArrayList<>();
        for (Element e : read(owner)) if (ownedBy(e, owner)) mine.add(e);
        if (!mine.isEmpty()) {
            Skeleton skel = Skeleton.parse(table, skeleton.apply(mine));
            apply(skel, batch(table, skel, owner.comment(), mine, Map.of()));
        }
        for (Element e : mine) deleteKey(e);
        deleteAttFile(owner);
        return mine;
    }

    /**
     * The element changes of a transaction, as {@link #script} writes them, for netlink: the
     * structure's own elements (added, never removed), tolerant removals, then additions that
     * replace whatever holds the key. Pure.
     */
    static NftBatch batch(String table, Skeleton skel, String comment, List<Element> remove, Map<Element, String> add) {
        Family family = Family.of(table.substring(0, table.indexOf(' ')));
        String name = table.substring(table.indexOf(' ') + 1);
        NftBatch b = new NftBatch();
        for (Element e : skel.elements()) b.addElement(family, name, e.set(), skel.key(table, e), null, null, e.key());
        for (Element e : remove) {
            byte[] key = skel.key(table, e);
            b.addElement(family, name, e.set(), key, skel.data(table, e, e.value()), null, text(e, e.value()));
            b.deleteElement(family, name, e.set(), key, e.key());
        }
        for (var en : add.entrySet()) {
            Element e = en.getKey();
            String held = en.getValue() == null ? e.value() : en.getValue();
            byte[] key = skel.key(table, e);
            b.addElement(family, name, e.set(), key, skel.data(table, e, held), null, text(e, held));
            b.deleteElement(family, name, e.set(), key, e.key());
            b.addElement(family, name, e.set(), key, skel.data(table, e, e.value()), comment, text(e, e.value()));
        }
        return b;
    }

    private static String text(Element e, String value) {
        return value == null ? e.key() : e.key() + " : " + value;
    }

    /**
     * Sends {@code batch} over netlink once {@code skel}'s structure is in place. The structure
     * (tables, sets, chains, rules) is applied with {@code nft -f} only when it is not known to be
     * in force in this namespace ({@value #SKELETONS_FILE}); so after the first call of a
     * feature, ADD and DEL start no process. If the kernel says a table or set is missing (ENOENT:
     * a reboot, {@code nft flush ruleset}), the structure is applied again and the batch resent once.
     */
    private void apply(Skeleton skel, NftBatch batch) {
        boolean fresh = ensureStructure(skel);
        try (NfTables t = nft.tables()) {
            try {
                t.apply(batch);
            } catch (NftException e) {
                if (fresh || e.errno() != Errno.ENOENT) throw e;
                forgetStructures();
                ensureStructure(skel);
                t.apply(batch);
            }
        }
    }

    /**
     * Whether the structure of {@code skeleton} is recorded as in force here (applied by nft and
     * not replaced since): then nft has accepted every name in it.
     */
    public boolean inForce(String skeleton) {
        return readStructures().containsKey(Skeleton.parse(table, skeleton).hash());
    }

    /** Records which structures are in force: lines of "HASH CHAIN,CHAIN..." (the chains each flushes and refills). */
    static final String SKELETONS_FILE = "skeletons";

    /** Applies {@code skel}'s structure unless it is recorded as in force; true when it applied it. */
    private boolean ensureStructure(Skeleton skel) {
        Map<String, Set<String>> inForce = readStructures();
        if (inForce.containsKey(skel.hash())) return false;
        nft.run(skel.structure());
        // A structure that refilled a chain replaced the rules other structures put there.
        inForce.values().removeIf(chains -> chains.stream().anyMatch(skel.flushedChains()::contains));
        inForce.put(skel.hash(), skel.flushedChains());
        StringBuilder b = new StringBuilder();
        inForce.forEach((h, chains) -> b.append(h).append(' ').append(String.join(",", chains)).append('\n'));
        atomicWrite(dir.resolve(SKELETONS_FILE), b.toString());
        return true;
    }

    private Map<String, Set<String>> readStructures() {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        String s;
        try {
            s = Files.readString(dir.resolve(SKELETONS_FILE), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String line : s.split("\n")) {
            String[] f = line.split(" ", 2);
            if (f[0].isEmpty()) continue;
            Set<String> chains = new LinkedHashSet<>();
            if (f.length > 1) for (String c : f[1].split(",")) if (!c.isEmpty()) chains.add(c);
            out.put(f[0], chains);
        }
        return out;
    }

    private void forgetStructures() {
        deleteWithTemporary(dir.resolve(SKELETONS_FILE));
    }

    /**
     * The transaction: skeleton, then tolerant removals, then additions that replace whatever holds
     * the key. Pure: its size depends only on the arguments, never on what else the table holds.
     *
     * @param add each element to add, with the value the key is believed to hold now (the new
     *            value when nobody holds it)
     */
    public static String script(String skeleton, String comment, List<Element> remove, Map<Element, String> add) {
        return script(TABLE, skeleton, comment, remove, add);
    }

    /** {@link #script(String, String, List, Map)} for the elements of {@code table}. */
    public static String script(String table, String skeleton, String comment, List<Element> remove, Map<Element, String> add) {
        StringBuilder b = new StringBuilder(skeleton);
        if (!skeleton.isEmpty() && !skeleton.endsWith("\n")) b.append('\n');
        for (Element e : remove) {
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key());
            if (e.value() != null) b.append(" : ").append(e.value());
            b.append(" }\n");
            b.append("delete element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key()).append(" }\n");
        }
        for (var en : add.entrySet()) {
            Element e = en.getKey();
            String held = en.getValue() == null ? e.value() : en.getValue();
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key());
            if (e.value() != null) b.append(" : ").append(held);
            b.append(" }\n");
            b.append("delete element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key()).append(" }\n");
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key())
                    .append(" comment \"").append(comment).append('"');
            if (e.value() != null) b.append(" : ").append(e.value());
            b.append(" }\n");
        }
        return b.toString();
    }

    private static void checkDistinct(List<Element> elements) {
        Set<String> seen = new LinkedHashSet<>();
        for (Element e : elements) {
            if (!seen.add(e.set() + "\0" + e.key())) {
                throw new IllegalArgumentException("element " + e.key() + " of " + e.set() + " given twice");
            }
        }
    }

    private Flock lock() {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Flock lock = Flock.lock(dir.resolve("lock"));
        // The lock file may have been deleted while we waited (a sweep of a dead namespace's
        // state, DeadNamespaceState): lock the file that is there now.
        for (int i = 0; !lock.stillAtPath(); i++) {
            lock.close();
            if (i == 100) throw new IllegalStateException("lock file " + dir.resolve("lock") + " keeps being replaced");
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            lock = Flock.lock(dir.resolve("lock"));
        }
        try {
            forgetDeadNamespace();
            return lock;
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /**
     * The directory is named by the namespace's inode, which the kernel reuses once a namespace is
     * gone: a new namespace could find a dead one's state and take its elements for its own. The
     * namespace's cookie is never reused, so the state records it; state of another cookie belongs
     * to a namespace that is gone, and its elements went with that namespace's ruleset: it is
     * dropped. (The host's namespace keeps its cookie across reboots: init_net is the first one.)
     */
    private void forgetDeadNamespace() {
        if (cookieChecked) return;
        long cookie = nft.netnsCookie();
        cookieChecked = true;
        if (cookie == 0) return; // kernel before 5.14: nothing to compare with
        Path f = dir.resolve(COOKIE_FILE);
        String now = Long.toString(cookie);
        String was;
        try {
            was = Files.readString(f, StandardCharsets.US_ASCII).strip();
        } catch (NoSuchFileException e) {
            was = null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (now.equals(was)) return;
        if (was != null) {
            deleteTree(dir.resolve("att"));
            deleteTree(dir.resolve("key"));
            forgetStructures();
        }
        atomicWrite(f, now);
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (NoSuchFileException e) {
            // nothing there
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path attFile(Owner o) {
        return dir.resolve("att").resolve(o.id());
    }

    private Path keyFile(Element e) {
        // Sets of TABLE keep their historical directory; another table's are prefixed with its name.
        String set = table.equals(TABLE) ? e.set() : table + " " + e.set();
        return dir.resolve("key").resolve(fileName(enc(set))).resolve(fileName(enc(e.key())));
    }

    /** The value the key holds now per our records, or null when nobody holds it. */
    private String heldValue(Element e) {
        String[] k = readKey(e);
        if (k == null || e.value() == null) return null;
        return k[1].isEmpty() ? null : k[1];
    }

    private boolean ownedBy(Element e, Owner o) {
        String[] k = readKey(e);
        return k != null && k[0].equals(o.id());
    }

    private String[] readKey(Element e) {
        try {
            String s = Files.readString(keyFile(e), StandardCharsets.UTF_8);
            int nl = s.indexOf('\n');
            return nl < 0 ? new String[] {s, ""} : new String[] {s.substring(0, nl), s.substring(nl + 1)};
        } catch (NoSuchFileException ex) {
            return null;
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private void writeKey(Element e, Owner o) {
        atomicWrite(keyFile(e), o.id() + "\n" + (e.value() == null ? "" : e.value()));
    }

    private void restoreKey(Element e, String[] held) {
        if (held == null) deleteKey(e);
        else atomicWrite(keyFile(e), held[0] + "\n" + held[1]);
    }

    private void deleteAttFile(Owner o) {
        deleteWithTemporary(attFile(o));
    }

    private void deleteKey(Element e) {
        deleteWithTemporary(keyFile(e));
    }

    /**
     * Deletes a state file and its temporary sibling: every write holds the lock, so a temporary
     * file found under it is what a writer killed between write and rename left.
     */
    private static void deleteWithTemporary(Path p) {
        try {
            Files.deleteIfExists(p.resolveSibling(p.getFileName() + ".tmp"));
            AtomicFile.removeTemporaries(p);
            Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<Element> read(Owner o) {
        String s;
        try {
            s = Files.readString(attFile(o), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Element> out = new ArrayList<>();
        Object els = Json.parseObject(s).get("elements");
        if (els instanceof List<?> l) {
            for (Object x : l) {
                if (x instanceof List<?> t && t.size() >= 2) {
                    out.add(new Element((String) t.get(0), (String) t.get(1), t.size() > 2 ? (String) t.get(2) : null));
                }
            }
        }
        return out;
    }

    private void write(Owner o, List<Element> elements) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scope", o.scope());
        m.put("network", o.network());
        m.put("containerId", o.containerId());
        m.put("ifname", o.ifname());
        List<Object> els = new ArrayList<>();
        for (Element e : elements) {
            List<Object> t = new ArrayList<>(List.of(e.set(), e.key()));
            if (e.value() != null) t.add(e.value());
            els.add(t);
        }
        m.put("elements", els);
        atomicWrite(attFile(o), Json.write(m));
    }

    private static void atomicWrite(Path p, String content) {
        try {
            Files.createDirectories(p.getParent());
            // No fsync: on every portmap/firewall ADD it would cost more than the ADD (see common/README.md).
            AtomicFile.write(p, content, AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A temporary file of {@link AtomicFile}, or one ending in ".tmp" as earlier versions wrote them. */
    static boolean isTemporary(String fileName) {
        return fileName.endsWith(".tmp") || AtomicFile.isTemporary(fileName);
    }

    /** %-encodes everything but [A-Za-z0-9_-] and non-leading dots, so any string is one safe file name. */
    static String enc(String s) {
        StringBuilder b = new StringBuilder();
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xff;
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '-' || (c == '.' && i > 0);
            if (plain) b.append((char) c);
            else b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                    .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
        }
        if (b.isEmpty()) b.append("%");
        return b.toString();
    }

    static String dec(String s) {
        if (s.equals("%")) return "";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
