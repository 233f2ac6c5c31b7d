package io.jcni.testfixtures;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** What a directory holds, for assertions on state directories; each listing's directory handle is closed at once. */
public final class Dirs {
    private Dirs() {}

    /** The number of entries in {@code dir}. */
    public static long count(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The names of the entries in {@code dir}, sorted; none when it does not exist. */
    public static List<String> names(Path dir) {
        if (!Files.exists(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
