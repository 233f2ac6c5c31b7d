package io.jcni.plugins.common.nft;

import io.jcni.linux.Flock;
import io.jcni.linux.nft.Nft;
import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.DamagedStateException;
import io.jcni.types.ErrorCode;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Set and map elements in jcni's nftables table, each held by one attachment at a time, added and
 * removed without ever reading the ruleset.
 *
 * <p><b>Why not read nft.</b> nft 1.0.6 loads the whole table before {@code get element},
 * {@code list ...} or even {@code list tables} (measured: 5 ms with an empty map, 30 ms with
 * 2,000 elements), so any read makes ADD and DEL grow with the number of mappings. Writes with
 * {@code add/delete element} to hash sets and maps do not. (Interval sets with concatenated keys
 * do: the kernel's pipapo backend rebuilds its lookup tables on every commit, measured 2 ms to
 * 30 ms per transaction from 0 to 4,000 elements; so per-attachment data never goes into them.)
 * So ownership lives here, in small files, and every change is one write-only transaction whose
 * size depends only on the attachment's own elements, sent to nf_tables over netlink
 * ({@link ElementTransactions}); {@code nft -f} only puts a feature's structure in place when it is
 * not in force ({@link StructureCache}).
 *
 * <p><b>Layout</b> ({@link StateFiles}: one directory per network namespace, named by its inode, so
 * state for a test namespace never mixes with the host's; the host's init namespace has a fixed inode; inodes of
 * namespaces that are gone are reused, so the directory also records the namespace's cookie, and
 * state found under another cookie is dropped; the directory of a namespace that is gone for good
 * is removed by the next {@link #gc} under the same base, see {@link ElementGc}):
 * <pre>
 *   BASE/NSINODE/lock                                flock(2) serialising every change
 *   BASE/NSINODE/netns-cookie                        the namespace the state below belongs to
 *   BASE/NSINODE/skeletons                           the table structures in force ({@link Skeleton})
 *   BASE/NSINODE/att/SCOPE/NET/CID@IFNAME            JSON: the attachment's elements
 *   BASE/NSINODE/key/SET/KEY                         who claims a key, in claim order ({@link KeyClaims})
 * </pre>
 * Names are %-encoded. <b>One owner at a time</b> ({@link Ownership}): the first attachment to
 * claim a key holds it; a later one waits, and takes the key when every earlier claimant is gone.
 * So the DEL of an attachment that waits never removes the holder's element, and the DEL of the
 * holder hands the key on instead of removing it (two pods publishing one host port: the first
 * keeps it, as the reference portmap's rules do).
 *
 * <p><b>Tolerance.</b> State files survive a reboot, the ruleset does not; a crash may fall between
 * the two writes. Every removal is therefore written as {@code add element K : V; delete element K},
 * which succeeds whether or not the element is there, and every addition as {@code add K : HELD;
 * delete K; add K : V}, HELD being the value the records say the key holds (the previous
 * holder's, when a key is handed on), which succeeds whether the key is absent or holds HELD. A
 * transaction refused because the key holds V already (the plugin was killed after nft, before
 * its records) is sent again as the one that went through. Each element carries a comment naming
 * its owner, for humans reading {@code nft list table inet jcni}.
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
            return StateNames.enc(scope) + "/" + StateNames.fileName(StateNames.enc(network)) + "/"
                    + StateNames.fileName(StateNames.enc(containerId) + "@" + StateNames.enc(ifname));
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

        /** Whether this attachment is one of {@code valid} (a runtime's cni.dev/valid-attachments). */
        public boolean in(Set<Attachment> valid) {
            return valid.contains(new Attachment(containerId, ifname));
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

        // By hand: a record's generated equals/hashCode are linked at run time (ObjectMethods), which
        // spun 8 classes in every standalone ADD that hashes elements (plugins/README.md, StartupRulesTest).
        @Override
        public boolean equals(Object o) {
            return o instanceof Element e && set.equals(e.set) && key.equals(e.key) && Objects.equals(value, e.value);
        }

        @Override
        public int hashCode() {
            return (set.hashCode() * 31 + key.hashCode()) * 31 + Objects.hashCode(value);
        }
    }

    private final Nft nft;
    private final String table;
    private final StateFiles files;
    private final StructureCache structures;
    private final ElementTransactions transactions;
    private final ElementClaims claims;
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
        this(nft, base, table, System.err);
    }

    /**
     * As {@link #ElementStore(Nft, Path, String)}, reporting damaged state files on {@code log}
     * (otherwise stderr: the plugin's, which the runtime logs, or jcnid's log).
     */
    public ElementStore(Nft nft, Path base, String table, PrintStream log) {
        this.nft = nft;
        this.table = Objects.requireNonNull(table);
        this.files = new StateFiles(base.resolve(Long.toString(nft.netnsInode())), table, Objects.requireNonNull(log));
        this.structures = new StructureCache(nft, files);
        this.transactions = new ElementTransactions(nft, table, structures);
        this.claims = new ElementClaims(table, files, transactions);
    }

    /** {@code table}'s store in {@code nft}'s namespace, under {@code dataDir} (null: {@link #DEFAULT_BASE}). */
    public static ElementStore at(Nft nft, Path dataDir, String table) {
        return new ElementStore(nft, dataDir == null ? DEFAULT_BASE : dataDir, table);
    }

    /**
     * What a plugin opens: {@code table}'s store in the calling thread's namespace, under
     * {@code dataDir} (null: {@link #DEFAULT_BASE}); a failure to reach nftables is a CNI error
     * naming {@code plugin}.
     */
    public static ElementStore forPlugin(String plugin, Path dataDir, String table) {
        try {
            return at(Nft.current(), dataDir, table);
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, plugin + ": cannot use nftables", e);
        }
    }

    public Path dir() {
        return files.dir();
    }

    public Nft nft() {
        return nft;
    }

    /**
     * Makes {@code owner} claim exactly {@code elements}: it holds each key nobody else claims (its
     * element goes into nftables), and waits for each key another attachment claimed first; it gives
     * up what it claimed before and no longer wants (see {@link Ownership}; the order of records and
     * transaction: {@link ElementClaims}). {@code skeleton} is the feature's table structure, applied
     * in the same transaction (it must be idempotent: {@code add} for sets and chains, {@code flush}
     * before re-adding rules); it is given every element the transaction touches.
     */
    public void put(Owner owner, Function<List<Element>, String> skeleton, List<Element> elements) {
        ElementClaims.checkDistinct(elements);
        try (Flock lock = lock()) {
            claims.put(owner, skeleton, elements);
        }
    }

    /**
     * Gives up everything {@code owner} still claims; nothing claimed is no error. A key it holds
     * goes to the next live claimant, or its element is removed. Returns what it claimed. {@code skeleton} gives the structure those elements need (so that removal works
     * even when the table is gone, e.g. after a reboot).
     */
    public List<Element> remove(Owner owner, Function<List<Element>, String> skeleton) {
        try (Flock lock = lock()) {
            return claims.remove(owner, skeleton, Set.of());
        }
    }

    /** What {@code owner} claims (holds, or waits for), per its records, or an empty list. */
    public List<Element> elements(Owner owner) {
        List<Element> recorded;
        try {
            recorded = files.read(owner);
        } catch (DamagedStateException e) {
            // Without the lock (CHECK): the key records alone; the next DEL or ADD moves the record aside.
            recorded = files.claimedBy(owner.id());
        }
        return claims.claimed(owner, recorded);
    }

    /** Those of {@code want} that {@code owner} does not hold per its state (CHECK: empty when all are set up). */
    public Set<Element> missing(Owner owner, Collection<Element> want) {
        Set<Element> out = new LinkedHashSet<>(want);
        elements(owner).forEach(out::remove);
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
        transactions.verifyPresent(skel, mine, () -> {
            try (Flock lock = lock()) {
                structures.forget();
            }
        });
    }

    /** Every attachment that holds state in this namespace, of every scope and network (for {@code jcni doctor}). */
    public List<Owner> owners() {
        return files.owners();
    }

    /** The attachments of {@code scope} in {@code network} that hold state. */
    public List<Owner> owners(String scope, String network) {
        return files.owners(scope, network);
    }

    /**
     * Removes the elements of every attachment of {@code scope}/{@code network} that {@code keep}
     * rejects; then removes the state of every namespace under the same base that is gone for good
     * ({@link ElementGc}).
     */
    public List<Owner> gc(String scope, String network, Predicate<Owner> keep,
                          Function<List<Element>, String> skeleton) {
        List<Owner> removed;
        try (Flock lock = lock()) {
            removed = ElementGc.orphans(files, scope, network, keep, (o, leaving) -> claims.remove(o, skeleton, leaving));
        }
        ElementGc.deadNamespaces(files.dir());
        return removed;
    }

    /** {@link #gc(String, String, Predicate, Function)} keeping the attachments in {@code valid} (CNI GC). */
    public List<Owner> gc(String scope, String network, Collection<Attachment> valid, Function<List<Element>, String> skeleton) {
        Set<Attachment> keep = new HashSet<>(valid);
        return gc(scope, network, o -> o.in(keep), skeleton);
    }

    /**
     * Whether the structure of {@code skeleton} is recorded as in force here (applied by nft and
     * not replaced since): then nft has accepted every name in it.
     */
    public boolean inForce(String skeleton) {
        return structures.inForce(Skeleton.parse(table, skeleton));
    }

    private Flock lock() {
        Flock lock = files.lock();
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
        String now = Long.toString(cookie);
        String was = files.recordedCookie();
        if (now.equals(was)) return;
        if (was != null) files.dropOwnership();
        files.recordCookie(now);
    }
}
