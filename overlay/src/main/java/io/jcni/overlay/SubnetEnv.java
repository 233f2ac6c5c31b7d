package io.jcni.overlay;

import io.jcni.common.AtomicFile;
import io.jcni.plugins.meta.flannel.SubnetFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reading and writing {@code subnet.env}; the format is {@link SubnetFile}'s, shared with the
 * flannel plugin that reads it. Written to a temporary file and renamed, so a reader never sees half of it.
 */
public final class SubnetEnv {
    private SubnetEnv() {}

    public static void write(Path file, SubnetFile content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        // Not fsynced: the agent writes it again whenever it starts or its lease changes.
        AtomicFile.write(file, content.format(), AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
    }

    /** {@link IllegalArgumentException} if a variable is missing or malformed. */
    public static SubnetFile read(Path file) throws IOException {
        return SubnetFile.parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }
}
