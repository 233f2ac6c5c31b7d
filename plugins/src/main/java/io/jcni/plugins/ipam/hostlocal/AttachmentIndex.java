package io.jcni.plugins.ipam.hostlocal;

import io.jcni.common.AtomicFile;
import io.jcni.types.Attachment;
import io.jcni.types.DamagedStateException;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.StateDoc;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * jcni's attachment → addresses index: one small JSON file per attachment, so that ADD can find
 * an attachment's addresses without reading every reservation in the network.
 *
 * <p><b>It is a hint, never the truth.</b> The reservation files are the truth; every address read
 * from here must be confirmed against its reservation file before it is used (see
 * {@link DiskStore}). That is what makes it crash-safe: an address enters the index before its
 * reservation is created and leaves it after the reservation is removed, so every reservation of
 * an attachment is always indexed, and a crash leaves at worst an entry naming addresses that are
 * no longer (or never became) the attachment's, which the confirmation discards.
 *
 * <p><b>Where it lives:</b> {@code <dataDir>/.jcni-index/<network>/}, outside the network
 * directory. The reference plugin walks the network directory recursively and reads every file
 * in it, comparing contents with a container ID: an index inside would cost it extra reads and
 * could, for a container ID that looks like index content, be matched and deleted by it. A
 * directory starting with "." can never be a network's directory, since CNI network names must
 * start with a letter or digit.
 */
final class AttachmentIndex {
    static final String DIR_NAME = ".jcni-index";
    private static final int MAX_NAME = 200;

    private final Path dir;

    AttachmentIndex(Path dataDir, String network) {
        this.dir = dataDir.resolve(DIR_NAME).resolve(network);
    }

    Path directory() {
        return dir;
    }

    /** The addresses recorded for the attachment, unconfirmed; empty when none or unreadable. */
    List<IpAddr> get(String containerId, String ifname) {
        Entry e = read(file(containerId, ifname));
        return e != null && e.attachment().equals(new Attachment(containerId, ifname)) ? e.ips() : List.of();
    }

    void put(String containerId, String ifname, List<IpAddr> ips) throws IOException {
        Path f = file(containerId, ifname);
        if (ips.isEmpty()) {
            AtomicFile.deleteLocked(f);
            return;
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("containerID", containerId);
        json.put("ifname", ifname);
        List<String> names = new ArrayList<>(ips.size()); // no stream: see Cidr.isDecimal
        for (IpAddr ip : ips) names.add(ip.toString());
        json.put("ips", names);
        Files.createDirectories(dir);
        // No fsync, as the reference's address files: on every ADD it would cost more than the ADD (see common/README.md).
        // Every caller holds the network's lock, so the temporary file has one fixed name: the DEL of
        // this attachment removes what a writer killed before its rename left, not only the next GC.
        AtomicFile.writeLocked(f, Json.write(json), AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
    }

    void delete(String containerId, String ifname) throws IOException {
        AtomicFile.deleteLocked(file(containerId, ifname));
    }

    /** Drops every entry (and leftover temporary file) of an attachment not in {@code keep}. */
    void retainOnly(Set<Attachment> keep) throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                Entry e = AtomicFile.isTemporary(n) || n.endsWith(".tmp") ? null : read(f);
                if (e == null || !keep.contains(e.attachment())) Files.deleteIfExists(f);
            }
        } catch (NoSuchFileException e) {
            // no index yet
        }
    }

    private record Entry(Attachment attachment, List<IpAddr> ips) {}

    private static Entry read(Path f) {
        try {
            StateDoc json = StateDoc.parse(f.toString(), Reservations.readSmall(f, 1 << 16));
            List<IpAddr> ips = new ArrayList<>();
            for (String s : json.strings("ips")) {
                IpAddr ip = IpAddr.tryParse(s);
                if (ip != null) ips.add(ip);
            }
            return new Entry(new Attachment(json.string("containerID"), json.string("ifname")), ips);
        } catch (IOException | DamagedStateException e) {
            return null; // missing or damaged: no hint, callers fall back to the truth (and the next put or GC replaces it)
        }
    }

    /**
     * {@code <id>+<ifname>} with every byte outside {@code [A-Za-z0-9_-]} percent-encoded, so the
     * mapping is one-to-one and names never contain "." (no clash with ".tmp" or ".."); a SHA-256
     * name when that would be too long for a file name. Collisions of the hashed form would be
     * harmless anyway: entries carry the attachment and are checked on read.
     */
    private Path file(String containerId, String ifname) {
        String name = encode(containerId) + "+" + encode(ifname);
        if (name.length() > MAX_NAME) {
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256")
                        .digest((containerId + "\0" + ifname).getBytes(StandardCharsets.UTF_8));
                name = "sha256-" + HexFormat.of().formatHex(digest);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
        return dir.resolve(name);
    }

    private static String encode(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                sb.append((char) c);
            } else {
                sb.append('%').append(HexFormat.of().withUpperCase().toHexDigits((byte) c));
            }
        }
        return sb.toString();
    }
}
