package io.jcni.plugins.common.nft;

import io.jcni.common.AtomicFile;
import io.jcni.linux.Flock;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.types.DamagedStateException;
import io.jcni.types.StateDoc;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The files of one namespace's element ownership ({@code BASE/NSINODE/}, see {@link ElementStore}
 * for the layout): where each record lives, how it is encoded, and the lock that serialises every
 * change. Every write is write-then-rename under the lock, through one fixed temporary name per
 * file ({@link AtomicFile#writeLocked}, {@code .NAME.tmp-locked}), so a temporary file found under
 * the lock is what a writer killed between the two left: the next write of that file replaces it,
 * and whoever deletes the file deletes it by name, without listing a directory whose size grows
 * with the state. (Temporary files of earlier versions, named by their writer's pid, go at GC:
 * {@link #deleteAbandonedTemporaries}.)
 */
final class StateFiles {
    /** Holds the cookie of the namespace the state belongs to. */
    static final String COOKIE_FILE = "netns-cookie";
    /** Records which structures are in force ({@link StructureCache}). */
    static final String SKELETONS_FILE = "skeletons";

    private final Path dir;
    private final String table;
    private final PrintStream log;

    /**
     * The files under {@code dir}, with key files of {@code table} ({@code inet jcni}, {@code bridge jcni});
     * damaged records are reported on {@code log}.
     */
    StateFiles(Path dir, String table, PrintStream log) {
        this.dir = dir;
        this.table = table;
        this.log = log;
    }

    Path dir() {
        return dir;
    }

    /** Takes the namespace's lock, on the lock file that is at its path once taken. */
    Flock lock() {
        createDirectories(dir);
        Flock lock = Flock.lock(dir.resolve("lock"));
        // The lock file may have been deleted while we waited (a sweep of a dead namespace's
        // state, DeadNamespaceState): lock the file that is there now.
        for (int i = 0; !lock.stillAtPath(); i++) {
            lock.close();
            if (i == 100) throw new IllegalStateException("lock file " + dir.resolve("lock") + " keeps being replaced");
            createDirectories(dir);
            lock = Flock.lock(dir.resolve("lock"));
        }
        return lock;
    }

    /** The namespace cookie the state was recorded under, or null when none is recorded. */
    String recordedCookie() {
        String s = readOrNull(dir.resolve(COOKIE_FILE), StandardCharsets.US_ASCII);
        return s == null ? null : s.strip();
    }

    void recordCookie(String cookie) {
        atomicWrite(dir.resolve(COOKIE_FILE), cookie);
    }

    /** Drops every attachment and key record and the structure records (a dead namespace's). */
    void dropOwnership() {
        deleteTree(dir.resolve("att"));
        deleteTree(dir.resolve("key"));
        deleteWithTemporary(dir.resolve(SKELETONS_FILE));
    }

    /** The structure records, or null when there are none. */
    String readSkeletons() {
        return readOrNull(dir.resolve(SKELETONS_FILE), StandardCharsets.UTF_8);
    }

    void writeSkeletons(String content) {
        atomicWrite(dir.resolve(SKELETONS_FILE), content);
    }

    void forgetSkeletons() {
        deleteWithTemporary(dir.resolve(SKELETONS_FILE));
    }

    // ---- attachment records: att/SCOPE/NET/CID@IFNAME, JSON with the owner and its elements

    private Path attFile(Owner o) {
        return attFile(o.id());
    }

    private Path attFile(String ownerId) {
        return dir.resolve("att").resolve(ownerId);
    }

    /**
     * The elements {@code o}'s record lists, or an empty list.
     *
     * @throws DamagedStateException when the record is there but damaged (see {@link #recover})
     */
    List<Element> read(Owner o) {
        Path f = attFile(o);
        String s = readOrNull(f, StandardCharsets.UTF_8);
        return s == null ? List.of() : AttRecord.elements(StateDoc.parse(f.toString(), s));
    }

    /** The record of the attachment with {@code ownerId} ({@code Owner#id()}), or null when there is none or it is damaged. */
    AttRecord record(String ownerId) {
        Path f = attFile(ownerId);
        String s = readOrNull(f, StandardCharsets.UTF_8);
        if (s == null) return null;
        try {
            StateDoc d = StateDoc.parse(f.toString(), s);
            Owner o = new Owner(d.string("scope"), d.string("network"), d.string("containerId"), d.string("ifname"));
            return new AttRecord(o, AttRecord.elements(d));
        } catch (DamagedStateException e) {
            return null; // no claimant we can name: its own DEL or GC reports the file
        }
    }

    /**
     * Under the lock, for an attachment whose record is damaged: the elements it claims per the key
     * records, which name their claimants (all but keys of hashed file names, which cannot be read
     * back); the record goes to {@code damaged/} (kept for a person to look at, never read again)
     * and the damage is reported on the log, naming both files. So its DEL still removes what
     * can be found and succeeds: a DEL that failed on the file forever would make the runtime keep
     * every other plugin's state of the attachment too.
     */
    List<Element> recover(Owner o, DamagedStateException damage) {
        List<Element> found = claimedBy(o.id());
        String moved;
        try {
            Path to = dir.resolve("damaged").resolve(o.id().replace('/', '+') + ".damaged-" + System.currentTimeMillis());
            Files.createDirectories(to.getParent());
            Files.move(attFile(o), to);
            moved = "moved to " + to;
        } catch (IOException e) {
            moved = "could not be moved aside (" + e + ")";
        }
        log.println("nft state: " + damage.getMessage() + "; " + moved + "; " + found.size()
                + " element(s) of " + o.comment() + " found in the key records instead");
        return found;
    }

    /** The elements whose key records list {@code ownerId} as a claimant (keys of this table with readable names), by set and key. */
    List<Element> claimedBy(String ownerId) {
        List<Element> out = new ArrayList<>();
        Path keys = dir.resolve("key");
        if (!Files.isDirectory(keys)) return out;
        String prefix = table.equals(ElementStore.TABLE) ? "" : table + " ";
        try (DirectoryStream<Path> sets = Files.newDirectoryStream(keys, Files::isDirectory)) {
            for (Path setDir : sets) {
                String name = setDir.getFileName().toString();
                if (name.indexOf(StateNames.HASH_MARK) >= 0) continue;
                String set = StateNames.dec(name);
                // Sets of TABLE have no prefix (and set names no space); another table's carry its name.
                if (prefix.isEmpty() ? set.indexOf(' ') >= 0 : !set.startsWith(prefix)) continue;
                set = set.substring(prefix.length());
                try (DirectoryStream<Path> files = Files.newDirectoryStream(setDir)) {
                    for (Path f : files) {
                        String n = f.getFileName().toString();
                        if (isTemporary(n) || n.indexOf(StateNames.HASH_MARK) >= 0) continue;
                        for (KeyClaims.Claim c : KeyClaims.parse(readOrNull(f, StandardCharsets.UTF_8)).claims()) {
                            if (c.ownerId().equals(ownerId)) out.add(new Element(set, StateNames.dec(n), c.value()));
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(Comparator.comparing(Element::set).thenComparing(Element::key)); // not the directories' order
        return out;
    }

    void write(Owner o, List<Element> elements) {
        atomicWrite(attFile(o), AttRecord.json(o, elements));
    }

    void deleteAttFile(Owner o) {
        deleteWithTemporary(attFile(o));
    }

    /** Every attachment with a record, of every scope and network. */
    List<Owner> owners() {
        List<Owner> out = new ArrayList<>();
        Path att = dir.resolve("att");
        if (!Files.isDirectory(att)) return out;
        try (DirectoryStream<Path> scopes = Files.newDirectoryStream(att, Files::isDirectory)) {
            for (Path scope : scopes) {
                try (DirectoryStream<Path> nets = Files.newDirectoryStream(scope, Files::isDirectory)) {
                    for (Path net : nets) out.addAll(owners(StateNames.dec(scope.getFileName().toString()), StateNames.dec(net.getFileName().toString())));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The attachments of {@code scope} in {@code network} with a record. */
    List<Owner> owners(String scope, String network) {
        Path d = dir.resolve("att").resolve(StateNames.enc(scope)).resolve(StateNames.fileName(StateNames.enc(network)));
        List<Owner> out = new ArrayList<>();
        if (!Files.isDirectory(d)) return out;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (isTemporary(n)) continue;
                if (n.indexOf(StateNames.HASH_MARK) >= 0) {
                    // A hashed name: the owner is only in the file (written with it).
                    Owner o = ownerIn(p, scope, network);
                    if (o != null) out.add(o);
                    continue;
                }
                int at = n.indexOf('@');
                if (at < 0) continue;
                out.add(new Owner(scope, network, StateNames.dec(n.substring(0, at)), StateNames.dec(n.substring(at + 1))));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The owner a record of a hashed name names, or null when it is gone or damaged (reported: nobody can tell whose it is). */
    private Owner ownerIn(Path f, String scope, String network) throws IOException {
        String s = readOrNull(f, StandardCharsets.UTF_8);
        if (s == null) return null;
        try {
            StateDoc d = StateDoc.parse(f.toString(), s);
            return new Owner(scope, network, d.string("containerId"), d.string("ifname"));
        } catch (DamagedStateException e) {
            log.println("nft state: " + e.getMessage() + "; its name is hashed, so whose it is cannot be told: skipped");
            return null;
        }
    }

    // ---- key records: key/SET/KEY, the key's claims in order ({@link KeyClaims})

    /** The key record of {@code e}'s key. */
    Path keyFile(Element e) {
        // Sets of TABLE keep their historical directory; another table's are prefixed with its name.
        String set = table.equals(ElementStore.TABLE) ? e.set() : table + " " + e.set();
        return dir.resolve("key").resolve(StateNames.fileName(StateNames.enc(set))).resolve(StateNames.fileName(StateNames.enc(e.key())));
    }

    /** The claims of {@code e}'s key ({@link KeyClaims#NONE} when nobody claims it). */
    KeyClaims readClaims(Element e) {
        return KeyClaims.parse(readOrNull(keyFile(e), StandardCharsets.UTF_8));
    }

    /** Records the claims of {@code e}'s key; none removes the record. */
    void writeClaims(Element e, KeyClaims claims) {
        if (claims.isEmpty()) deleteWithTemporary(keyFile(e));
        else atomicWrite(keyFile(e), claims.format());
    }

    /**
     * Deletes the temporary file a writer of {@code e}'s key record killed between write and rename
     * left, if any; the record itself stays. An ADD records its elements before it writes their key
     * records, so the owner's record names every key whose temporary file it may have left, also
     * one it died before claiming.
     */
    void deleteKeyTemporary(Element e) {
        try {
            Files.deleteIfExists(AtomicFile.lockedTemporary(keyFile(e)));
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    /**
     * Under the lock: the temporary files of attachment and key records, which only a writer killed
     * between write and rename leaves (every write holds the lock). One killed before its first
     * rename leaves no record by which GC would find the attachment (chaos KillPointsTest).
     */
    void deleteAbandonedTemporaries() {
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

    // ---- mechanics

    private static String readOrNull(Path p, java.nio.charset.Charset cs) {
        try {
            return Files.readString(p, cs);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void createDirectories(Path p) {
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes a state file and its temporary siblings, by name: every write holds the lock, so a
     * temporary file found under it is what a writer killed between write and rename left.
     */
    private static void deleteWithTemporary(Path p) {
        try {
            Files.deleteIfExists(p.resolveSibling(p.getFileName() + ".tmp")); // as versions before AtomicFile named it
            AtomicFile.deleteLocked(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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

    private static void atomicWrite(Path p, String content) {
        try {
            Files.createDirectories(p.getParent());
            // No fsync: on every portmap/firewall ADD it would cost more than the ADD (see common/README.md).
            AtomicFile.writeLocked(p, content, AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A temporary file of {@link AtomicFile}, or one ending in ".tmp" as earlier versions wrote them. */
    static boolean isTemporary(String fileName) {
        return fileName.endsWith(".tmp") || AtomicFile.isTemporary(fileName);
    }
}
