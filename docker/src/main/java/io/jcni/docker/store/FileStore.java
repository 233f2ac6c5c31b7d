package io.jcni.docker.store;

import io.jcni.common.AtomicFile;
import io.jcni.docker.api.DriverException;
import io.jcni.types.Json;
import io.jcni.types.StateDoc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@link StateStore} as one small file per document, {@code DIR/KIND/KEY.json}, written to a
 * temporary file, fsynced and renamed over the old one. A few hundred documents of a few hundred
 * bytes need no database; a crash leaves the old or the new file, and at worst a stray
 * temporary file ({@link AtomicFile}) that the next listing removes. A file that is not a JSON object is
 * reported by name (jcni's one state reader, {@link StateDoc#parse}); {@link #quarantine} renames it aside.
 */
public final class FileStore implements StateStore {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.:-]{0,200}");
    private final Path dir;

    public FileStore(Path dir) {
        this.dir = dir.toAbsolutePath();
        try {
            if (!Files.isDirectory(this.dir)) {
                Files.createDirectories(this.dir);
                Files.setPosixFilePermissions(this.dir, PosixFilePermissions.fromString("rwx------"));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + this.dir, e);
        }
    }

    public Path dir() {
        return dir;
    }

    private Path file(String kind, String key) {
        if (!NAME.matcher(kind).matches() || !NAME.matcher(key).matches()) {
            throw new DriverException("state: not a safe name: " + kind + "/" + key);
        }
        return dir.resolve(kind).resolve(key + ".json");
    }

    @Override
    public Optional<Map<String, Object>> get(String kind, String key) {
        try {
            Path f = file(kind, key);
            return Optional.of(StateDoc.parse(f.toString(), Files.readString(f)).fields());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void put(String kind, String key, Map<String, Object> doc) {
        Path f = file(kind, key);
        try {
            Files.createDirectories(f.getParent());
            byte[] bytes = (Json.writePretty(doc) + "\n").getBytes(StandardCharsets.UTF_8);
            AtomicFile.write(f, bytes, AtomicFile.PRIVATE, AtomicFile.Durability.DURABLE);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + f, e);
        }
    }

    @Override
    public void delete(String kind, String key) {
        try {
            Files.deleteIfExists(file(kind, key));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public List<String> keys(String kind) {
        List<String> out = new ArrayList<>();
        Path d = dir.resolve(kind);
        if (!Files.isDirectory(d)) return out;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            AtomicFile.removeAbandoned(d);
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(".json.tmp")) {
                    Files.deleteIfExists(p); // a write that a crash interrupted; the old file is still there
                } else if (n.endsWith(".json") && NAME.matcher(n.substring(0, n.length() - 5)).matches()) {
                    out.add(n.substring(0, n.length() - 5));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Collections.sort(out);
        return out;
    }

    @Override
    public String location(String kind, String key) {
        return file(kind, key).toString();
    }

    @Override
    public String quarantine(String kind, String key) {
        Path f = file(kind, key);
        String stamp = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC).format(Instant.now());
        Path aside = f.resolveSibling(f.getFileName() + ".damaged-" + stamp);
        try {
            Files.move(f, aside, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot move " + f + " aside", e);
        }
        return aside.toString();
    }
}
