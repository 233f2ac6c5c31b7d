package io.jcni.plugins.ipam.hostlocal;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.SmallFile;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * host-local's reservation files read by someone other than the plugin (jcni doctor): the same
 * file names and format as {@link DiskStore}, with every file held to what the plugin writes. A
 * file that is no regular file, is larger than any reservation, or does not hold a container ID and
 * an interface name is reported as malformed, with a reason that never quotes its content.
 */
public final class Reservations {
    private Reservations() {}

    /** Container ID, CR LF, interface name: far below this for any name the plugin accepts. */
    static final int LIMIT = 4096;

    /** A reservation: the address (the file's name) and its attachment; ifname null in the legacy format. */
    public record Reservation(Path file, IpAddr ip, String containerId, String ifname) {}

    /** A file named like a reservation that is not one, and why (never its content). */
    public record Malformed(Path file, String reason) {}

    /**
     * What a network directory holds.
     *
     * @param unreadable why the directory itself could not be listed (permission, say), or null
     */
    public record Scan(Path dir, List<Reservation> reservations, List<Malformed> malformed, String unreadable) {}

    /** Every reservation in {@code dataDir/network}; a missing directory holds none. */
    public static Scan scan(Path networkDir) {
        List<Reservation> ok = new ArrayList<>();
        List<Malformed> bad = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(networkDir)) {
            for (Path f : files) {
                IpAddr ip = DiskStore.reservationName(f);
                if (ip == null) continue;
                String problem = null;
                String[] parts = null;
                try {
                    parts = ReservationFormat.parse(read(f));
                    if (parts == null) problem = "does not hold a container ID and an interface name";
                } catch (IOException | ErrnoException e) {
                    problem = e instanceof NoSuchFileException ? null : String.valueOf(e.getMessage());
                    if (problem == null) continue; // released while we looked
                }
                if (problem != null) bad.add(new Malformed(f, problem));
                else ok.add(new Reservation(f, ip, parts[0], parts[1]));
            }
        } catch (NoSuchFileException e) {
            return new Scan(networkDir, ok, bad, null);
        } catch (IOException e) {
            return new Scan(networkDir, ok, bad, e.getClass().getSimpleName().equals("AccessDeniedException")
                    ? "permission denied" : String.valueOf(e.getMessage()));
        }
        return new Scan(networkDir, ok, bad, null);
    }

    /**
     * A reservation file's trimmed content, read as the plugin reads it, but only from a regular
     * file that is not a symlink (the plugin creates each with O_EXCL; a link was put there by
     * someone else), without blocking on a FIFO and never more than {@link #LIMIT} bytes.
     */
    static String read(Path f) throws IOException {
        return ReservationFormat.trimSpace(readSmall(f, LIMIT));
    }

    /** A small state file of host-local's, as {@link #read} reads it: regular, no symlink, non-blocking, bounded. */
    static String readSmall(Path f, int limit) throws IOException {
        BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink()) throw new IOException("is a symlink, not a file the plugin wrote; not read");
        if (!a.isRegularFile()) throw new IOException("is not a regular file; not read");
        try {
            return new String(SmallFile.read(f, limit), StandardCharsets.UTF_8);
        } catch (ErrnoException e) {
            if (e.errno() == Errno.ENOENT) throw new NoSuchFileException(f.toString());
            if (e.errno() == Errno.EFBIG) throw new IOException("is larger than " + limit + " bytes; not read");
            throw new IOException(Errno.message(e.errno()).toLowerCase(java.util.Locale.ROOT));
        }
    }

}
