package io.jcni.daemon.dhcp;

import io.jcni.common.AtomicFile;
import io.jcni.types.DamagedStateException;
import io.jcni.types.Json;
import io.jcni.types.StateDoc;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * One small JSON file per lease in a directory (default {@code /var/lib/cni/jcni/dhcp}), written
 * to a temporary file, synced and renamed over the old one, so a jcnid killed at any moment leaves
 * either the old or the new lease, never half of one. The file name is the hex of the client id:
 * ids hold '/' and may be long, names must not.
 */
public final class LeaseStore {
    private final Path dir;

    public LeaseStore(Path dir) throws IOException {
        this.dir = dir;
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        }
    }

    public Path dir() {
        return dir;
    }

    Path fileOf(String clientId) {
        String name = HexFormat.of().formatHex(clientId.getBytes(StandardCharsets.UTF_8));
        if (name.length() > 200) name = name.substring(0, 120) + "-" + Integer.toHexString(clientId.hashCode());
        return dir.resolve(name + ".json");
    }

    public void save(Lease lease) throws IOException {
        Path file = fileOf(lease.clientId());
        byte[] body = (Json.writePretty(lease.toJson()) + "\n").getBytes(StandardCharsets.UTF_8);
        AtomicFile.write(file, body, AtomicFile.PRIVATE, AtomicFile.Durability.DURABLE);
    }

    public void delete(String clientId) throws IOException {
        Files.deleteIfExists(fileOf(clientId));
    }

    /** Every stored lease; an unreadable file is reported on {@code log} and left for a person to look at. */
    public List<Lease> loadAll(PrintStream log) throws IOException {
        List<Lease> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.json")) {
            for (Path p : ds) {
                try {
                    out.add(Lease.fromJson(StateDoc.parse(p.toString(), Files.readString(p))));
                } catch (DamagedStateException e) {
                    log.println("jcnid dhcp: " + e.getMessage() + "; lease skipped, the file is left for a person to look at");
                } catch (RuntimeException | IOException e) {
                    // unreadable bytes (not UTF-8) or a read error: skipped all the same, one lease never stops the others
                    log.println("jcnid dhcp: skipping unreadable lease file " + p + ": " + e);
                }
            }
        }
        return out;
    }
}
