package io.jcni.runtime;

import io.jcni.common.AtomicFile;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import io.jcni.types.Names;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * libcni's result cache: one file per attachment at {@code <cacheDir>/results/<network>-<containerID>-<ifname>},
 * mode 0600 in a 0700 directory, replaced atomically (write a temporary file, then rename).
 */
public final class ResultCache {

    public static final Path DEFAULT_DIR = Path.of("/var/lib/cni");

    private final Path cacheDir;

    public ResultCache(Path cacheDir) {
        this.cacheDir = cacheDir == null ? DEFAULT_DIR : cacheDir;
    }

    public Path cacheDir() {
        return cacheDir;
    }

    public Path resultsDir() {
        return cacheDir.resolve("results");
    }

    public Path file(String network, String containerId, String ifName) {
        if (network == null || network.isEmpty() || containerId == null || containerId.isEmpty() || ifName == null || ifName.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "cache file path requires network name, container ID and interface name",
                    "got network \"" + network + "\", container ID \"" + containerId + "\", interface \"" + ifName + "\"");
        }
        // The parts become a file name: hold them to the rules ADD enforced, so no input walks out of the cache.
        Names.checkNetworkName(network);
        Names.checkContainerId(containerId);
        Names.checkInterfaceName(ifName);
        return resultsDir().resolve(fileName(network + "-" + containerId + "-" + ifName));
    }

    /** Longest name used as libcni names it: NAME_MAX is 255, and put() adds a prefix and suffix to its temporary file. */
    static final int MAX_FILE_NAME = 200;

    /**
     * libcni's name, or, when too long for a file name (the reference accepts container IDs and
     * network names of any length; libcni then fails to cache), its start, '~' and its SHA-256.
     * Entries carry their attachment, so nothing is read back from the name.
     */
    static String fileName(String name) {
        return Names.shortened(name, MAX_FILE_NAME);
    }

    /** Writes (or replaces) the entry for its network, container and interface. */
    public void put(CacheEntry e) {
        Path target = file(e.networkName(), e.containerId(), e.ifName());
        byte[] bytes = Json.write(e.toJson()).getBytes(StandardCharsets.UTF_8);
        try {
            createDirs(target.getParent());
            // The writer's pid in the temporary name: GC removes the temporary file of a writer that was killed.
            AtomicFile.write(target, bytes, AtomicFile.PRIVATE, AtomicFile.Durability.DURABLE);
        } catch (IOException ex) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to write cached result " + target, String.valueOf(ex.getMessage()), ex);
        }
    }

    /** The entry, or empty when there is no cache file. A file that cannot be decoded is an error. */
    public Optional<CacheEntry> get(String network, String containerId, String ifName) {
        Path f = file(network, containerId, ifName);
        String text;
        try {
            text = DirectoryFile.readUtf8(f.getParent(), f, ENTRY_LIMIT);
        } catch (NoSuchFileException ex) {
            return Optional.empty();
        } catch (IOException ex) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to read cached result " + f, String.valueOf(ex.getMessage()), ex);
        }
        try {
            return Optional.of(CacheEntry.fromJson(Json.parseObject(text), f.toString()));
        } catch (Json.JsonException ex) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "failed to decode cached result", f + ": " + ex.getMessage(), ex);
        }
    }

    /** A cache entry is a config and a result: a few KiB; a file far larger is not one of ours. */
    static final int ENTRY_LIMIT = 4 << 20;

    /**
     * Removes the temporary files of writers that are no longer running (a runtime killed inside
     * {@link #put}, whose attachment's DEL may never come); returns how many. A live writer's file,
     * and one whose name carries no pid, is left alone.
     */
    public int removeAbandonedTemporaries() {
        try {
            return AtomicFile.removeAbandoned(resultsDir());
        } catch (IOException ex) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to list cached results in " + resultsDir(), String.valueOf(ex.getMessage()), ex);
        }
    }

    /**
     * Removes the entry; true when there was one. Also removes the entry's temporary files: a
     * runtime killed inside {@link #put} leaves one, and only the attachment's DEL knows its name.
     */
    public boolean remove(String network, String containerId, String ifName) {
        Path f = file(network, containerId, ifName);
        try {
            AtomicFile.removeTemporaries(f);
        } catch (IOException ex) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to remove cached result " + f, String.valueOf(ex.getMessage()), ex);
        }
        try {
            return Files.deleteIfExists(f);
        } catch (IOException ex) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to remove cached result " + f, String.valueOf(ex.getMessage()), ex);
        }
    }

    /**
     * Every readable cniCacheV1 entry (libcni's GetCachedAttachments), in file-name order, optionally only
     * those of one container. Unreadable, legacy and incomplete files are skipped.
     */
    public List<CacheEntry> list(String containerId) {
        Scan s = scan(containerId);
        if (s.unreadable() != null) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to list cached results in " + resultsDir(), s.unreadable());
        }
        return s.entries();
    }

    /**
     * What {@link #list} found, and what it passed over that a checker should hear of.
     *
     * @param refused    files that are no cache entry and were not read (a FIFO, a device, a symlink out of
     *                   the directory, an oversized file), each with the reason; legacy and incomplete
     *                   entries are not in it (libcni skips them too)
     * @param unreadable why the directory could not be listed (permission denied, say), or null
     */
    public record Scan(List<CacheEntry> entries, List<Map.Entry<Path, String>> refused, String unreadable) {}

    /** As {@link #list}, reporting instead of throwing; a missing directory holds nothing. */
    public Scan scan(String containerId) {
        List<Path> files = new ArrayList<>();
        List<Map.Entry<Path, String>> refused = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(resultsDir())) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.startsWith(".") || Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) continue;
                if (containerId != null && !containerId.isEmpty() && !n.contains("~") && !n.contains("-" + containerId + "-")) continue;
                files.add(p);
            }
        } catch (NoSuchFileException ex) {
            return new Scan(List.of(), List.of(), null);
        } catch (AccessDeniedException ex) {
            return new Scan(List.of(), List.of(), "permission denied");
        } catch (IOException ex) {
            return new Scan(List.of(), List.of(), String.valueOf(ex.getMessage()));
        }
        files.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
        List<CacheEntry> out = new ArrayList<>();
        for (Path f : files) {
            String text;
            try {
                text = DirectoryFile.readUtf8(f.getParent(), f, ENTRY_LIMIT);
            } catch (NoSuchFileException ex) {
                continue;
            } catch (IOException ex) {
                refused.add(Map.entry(f, ex instanceof AccessDeniedException ? "permission denied" : String.valueOf(ex.getMessage())));
                continue;
            }
            try {
                Object v = Json.parse(text);
                if (!(v instanceof Map<?, ?> m) || !CacheEntry.KIND.equals(m.get("kind"))) continue;
                CacheEntry e = CacheEntry.fromJson(Json.asObject(m), f.toString());
                if (containerId != null && !containerId.isEmpty() && !e.containerId().equals(containerId)) continue;
                if (e.ifName().isEmpty() || e.networkName().isEmpty()) continue;
                out.add(e);
            } catch (RuntimeException ignored) {
                // skipped, as libcni does
            }
        }
        return new Scan(out, refused, null);
    }

    private static void createDirs(Path dir) throws IOException {
        if (Files.isDirectory(dir)) return;
        Path parent = dir.getParent();
        if (parent != null) createDirs(parent);
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (FileAlreadyExistsException ignored) {
            // raced with another writer
        }
    }
}
