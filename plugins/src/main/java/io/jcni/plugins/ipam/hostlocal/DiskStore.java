package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Attachment;
import io.jcni.types.IpAddr;
import io.jcni.types.Names;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The on-disk store, byte-compatible with the reference plugin's (backend/disk/backend.go), so
 * either plugin can take over the other's state:
 *
 * <pre>
 * &lt;dataDir&gt;/&lt;network&gt;/                 mode 0755
 *     lock                           taken exclusively for every operation
 *     &lt;ip&gt;                           one per reservation; name is Go's net.IP.String()
 *                                    (IPv6 RFC 5952), content "&lt;containerID&gt;\r\n&lt;ifname&gt;",
 *                                    no trailing newline; created O_CREAT|O_EXCL, mode 0644
 *     last_reserved_ip.&lt;n&gt;           the last address reserved in range set n, no newline
 * </pre>
 *
 * <p>On top of that jcni keeps an {@link AttachmentIndex} outside the network directory. ADD's
 * duplicate check ({@link #getById}) consults only the index, so an ADD reads a handful of files
 * however many reservations exist (upstream reads them all). Each indexed address is confirmed by
 * reading its reservation file. The price: a reservation made by the reference plugin is not in
 * the index, so a duplicate ADD for an attachment the reference plugin set up is not detected.
 * DEL, CHECK and GC fall back to reading every reservation when the index has nothing, and so
 * handle reference-written (and legacy) reservations fully.
 */
public final class DiskStore implements Store {
    static final String LAST_IP_FILE_PREFIX = "last_reserved_ip.";
    static final String LOCK_FILE = "lock";

    // Spelled out rather than PosixFilePermissions.fromString, whose EnumSet reads the enum's
    // constants by reflection: ~1 ms of every standalone host-local call for two constants.
    private static final FileAttribute<Set<PosixFilePermission>> FILE_MODE = PosixFilePermissions.asFileAttribute(Set.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OTHERS_READ));
    private static final FileAttribute<Set<PosixFilePermission>> DIR_MODE = PosixFilePermissions.asFileAttribute(Set.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE,
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_EXECUTE));

    private final Path dir;
    private final AttachmentIndex index;
    private final StoreLock lock;
    private final AtomicLong reservationReads = new AtomicLong();
    private final AtomicLong directoryScans = new AtomicLong();

    private DiskStore(Path dir, AttachmentIndex index, StoreLock lock) {
        this.dir = dir;
        this.index = index;
        this.lock = lock;
    }

    /** Opens (creating if needed, as upstream's {@code disk.New}) the store of one network. */
    public static DiskStore open(Path dataDir, String network) throws IOException {
        checkNetworkName(network);
        Path dir = dataDir.resolve(network);
        Files.createDirectories(dir, DIR_MODE);
        return new DiskStore(dir, new AttachmentIndex(dataDir, network), StoreLock.open(dir.resolve(LOCK_FILE)));
    }

    /**
     * The name becomes a path component: it must be a CNI network name (as the reference's skel
     * checks it), which can neither escape the data directory nor be the index's ".jcni-index".
     */
    static void checkNetworkName(String network) {
        Names.checkNetworkName(network);
    }

    public Path directory() {
        return dir;
    }

    /** Reservation files read so far (diagnostics: shows ADD does not read them all). */
    public long reservationReads() {
        return reservationReads.get();
    }

    /** Full passes over the network directory so far (diagnostics). */
    public long directoryScans() {
        return directoryScans.get();
    }

    @Override
    public void lock() throws IOException {
        lock.lock();
    }

    @Override
    public void unlock() throws IOException {
        lock.unlock();
    }

    @Override
    public void close() throws IOException {
        lock.close();
    }

    @Override
    public boolean reserve(String containerId, String ifname, IpAddr ip, String rangeId) throws IOException {
        Path f = dir.resolve(ip.toString());
        // Callers hold the network's lock, which every writer (the reference plugin too) takes:
        // a name that exists now stays taken, and a free one stays free until we create it.
        if (Files.exists(f, LinkOption.NOFOLLOW_LINKS)) return false;

        // The index entry first, as an intent: a crash after the reservation is created still
        // finds it through the index on DEL (an intent whose reservation never came is discarded
        // by confirmation), so a killed ADD over several range sets cannot leave one unfound.
        String id = ReservationFormat.trimSpace(containerId);
        List<IpAddr> indexed = new ArrayList<>(confirmed(id, ifname, index.get(id, ifname)));
        indexed.add(ip);
        index.put(id, ifname, indexed);

        byte[] content = ReservationFormat.content(containerId, ifname).getBytes(StandardCharsets.UTF_8);
        try (SeekableByteChannel ch = Files.newByteChannel(f,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), FILE_MODE)) {
            try {
                writeFully(ch, content);
            } catch (IOException e) {
                Files.deleteIfExists(f);
                throw e;
            }
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        try {
            writeLastReserved(rangeId, ip);
        } catch (IOException | RuntimeException e) {
            // A reservation whose bookkeeping failed (ENOSPC, say) is given back, so the caller's
            // failure leaves nothing behind.
            Files.deleteIfExists(f);
            throw e;
        }
        return true;
    }

    private void writeLastReserved(String rangeId, IpAddr ip) throws IOException {
        // Rewritten in place like upstream's os.WriteFile: a rename would leave temporary files
        // in the network directory, where the reference plugin reads everything.
        try (SeekableByteChannel ch = Files.newByteChannel(dir.resolve(LAST_IP_FILE_PREFIX + rangeId),
                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING),
                FILE_MODE)) {
            writeFully(ch, ip.toString().getBytes(StandardCharsets.US_ASCII));
        }
    }

    private static void writeFully(SeekableByteChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) ch.write(buf);
    }

    @Override
    public Optional<IpAddr> lastReservedIp(String rangeId) throws IOException {
        try {
            String s = Reservations.readSmall(dir.resolve(LAST_IP_FILE_PREFIX + rangeId), 256);
            return Optional.ofNullable(IpAddr.tryParse(s.strip()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // only where the search starts: a FIFO or junk there must not stop ADD
        }
    }

    @Override
    public List<IpAddr> getById(String containerId, String ifname) throws IOException {
        String id = ReservationFormat.trimSpace(containerId);
        return confirmed(id, ifname, index.get(id, ifname));
    }

    @Override
    public List<IpAddr> findById(String containerId, String ifname) throws IOException {
        List<IpAddr> found = getById(containerId, ifname);
        if (!found.isEmpty()) return found;
        Matches m = scanFor(containerId, ifname);
        List<IpAddr> all = new ArrayList<>(m.current());
        all.addAll(m.legacy());
        return all;
    }

    @Override
    public List<IpAddr> releaseById(String containerId, String ifname) throws IOException {
        String id = ReservationFormat.trimSpace(containerId);
        List<IpAddr> hinted = index.get(id, ifname);
        List<IpAddr> victims = new ArrayList<>(confirmed(id, ifname, hinted));
        // An ADD killed between creating its reservation and writing it leaves an empty file; the
        // index entry written before it (under the same lock, for a name that was free) says whose.
        for (IpAddr ip : hinted) {
            if (!victims.contains(ip) && "".equals(readReservation(dir.resolve(ip.toString())))) victims.add(ip);
        }
        if (victims.isEmpty()) {
            // Not indexed: written by the reference plugin, or by a crashed jcni. Upstream's rule:
            // current-format matches, or else legacy (container ID only) matches.
            Matches m = scanFor(containerId, ifname);
            victims = m.current().isEmpty() ? m.legacy() : m.current();
        }
        List<IpAddr> released = new ArrayList<>();
        for (IpAddr ip : victims) {
            if (Files.deleteIfExists(dir.resolve(ip.toString()))) released.add(ip);
        }
        index.delete(id, ifname);
        return released;
    }

    @Override
    public boolean releaseByIp(IpAddr ip) throws IOException {
        Path f = dir.resolve(ip.toString());
        String content = readReservation(f);
        if (content == null || !Files.deleteIfExists(f)) return false;
        int br = content.indexOf(ReservationFormat.LINE_BREAK);
        if (br >= 0) {
            String id = content.substring(0, br);
            String ifname = content.substring(br + ReservationFormat.LINE_BREAK.length());
            List<IpAddr> rest = new ArrayList<>(index.get(id, ifname));
            if (rest.remove(ip)) index.put(id, ifname, confirmed(id, ifname, rest));
        }
        return true;
    }

    @Override
    public List<IpAddr> releaseAllExcept(Set<Attachment> valid) throws IOException {
        Set<String> keep = new HashSet<>();
        Set<Attachment> keepIndexed = new HashSet<>();
        for (Attachment a : valid) {
            keep.add(ReservationFormat.content(a.containerId(), a.ifname()));
            keep.add(ReservationFormat.legacyContent(a.containerId()));
            keepIndexed.add(new Attachment(ReservationFormat.trimSpace(a.containerId()), a.ifname()));
        }
        List<IpAddr> released = new ArrayList<>();
        for (Map.Entry<IpAddr, String> r : scanAll().entrySet()) {
            if (!keep.contains(r.getValue()) && Files.deleteIfExists(dir.resolve(r.getKey().toString()))) {
                released.add(r.getKey());
            }
        }
        index.retainOnly(keepIndexed);
        return released;
    }

    @Override
    public Set<IpAddr> reservedIps() throws IOException {
        Set<IpAddr> out = new LinkedHashSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                IpAddr ip = reservationName(f);
                if (ip != null) out.add(ip);
            }
        }
        return out;
    }

    /** The address a file name stands for, when it is a reservation (not lock, last_reserved_ip...). */
    static IpAddr reservationName(Path f) {
        String name = f.getFileName().toString();
        IpAddr ip = IpAddr.tryParse(name);
        return ip != null && ip.toString().equals(name) ? ip : null;
    }

    /** The indexed addresses whose reservation file really holds this attachment. */
    private List<IpAddr> confirmed(String id, String ifname, List<IpAddr> hinted) throws IOException {
        if (hinted.isEmpty()) return List.of();
        String expected = ReservationFormat.content(id, ifname);
        List<IpAddr> out = new ArrayList<>(hinted.size());
        for (IpAddr ip : hinted) {
            if (!out.contains(ip) && expected.equals(readReservation(dir.resolve(ip.toString())))) out.add(ip);
        }
        return out;
    }

    /** Trimmed content of a reservation file, or null when it does not exist; IOException when it is no regular file. */
    private String readReservation(Path f) throws IOException {
        try {
            reservationReads.incrementAndGet();
            // Lenient decoding: odd bytes simply never match, as in Go's byte comparison. A FIFO or
            // device named like an address is an error here, never a read that blocks or never ends.
            return Reservations.read(f);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private record Matches(List<IpAddr> current, List<IpAddr> legacy) {}

    private Matches scanFor(String containerId, String ifname) throws IOException {
        String current = ReservationFormat.content(containerId, ifname);
        String legacy = ReservationFormat.legacyContent(containerId);
        List<IpAddr> c = new ArrayList<>();
        List<IpAddr> l = new ArrayList<>();
        for (Map.Entry<IpAddr, String> r : scanAll().entrySet()) {
            if (r.getValue().equals(current)) c.add(r.getKey());
            else if (r.getValue().equals(legacy)) l.add(r.getKey());
        }
        return new Matches(c, l);
    }

    /** Every reservation with its trimmed content: the expensive path, never taken by ADD. */
    private Map<IpAddr, String> scanAll() throws IOException {
        directoryScans.incrementAndGet();
        Map<IpAddr, String> out = new LinkedHashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                IpAddr ip = reservationName(f);
                if (ip == null) continue;
                try {
                    String content = readReservation(f);
                    if (content != null) out.put(ip, content);
                } catch (IOException e) {
                    // Unreadable or a directory: not a reservation we can match (upstream skips too).
                }
            }
        }
        return out;
    }
}
