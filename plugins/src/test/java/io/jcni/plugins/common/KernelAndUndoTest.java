package io.jcni.plugins.common;

import static io.jcni.plugins.common.Kernel.kernel;
import static io.jcni.plugins.common.Kernel.kernelIgnoring;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.types.CniException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KernelAndUndoTest {
    private static ErrnoException eexist() {
        return new ErrnoException(Errno.EEXIST, "add link veth0");
    }

    @Test
    void aKernelErrorBecomes999WithItsMessageAsDetailsAndStaysTheCause() {
        ErrnoException eexist = eexist();
        CniException e = assertThrows(CniException.class, () -> kernel("failed to create veth", () -> {
            throw eexist;
        }));
        assertEquals(999, e.code());
        assertEquals("failed to create veth", e.msg());
        assertEquals(eexist.getMessage(), e.details());
        assertSame(eexist, e.getCause());
        assertEquals(42, kernel("not reached", () -> 42));
    }

    @Test
    void anIgnoredErrnoIsSuccessAndOthersAreNot() {
        kernelIgnoring(Errno.EEXIST, "could not add", () -> {
            throw eexist();
        });
        ErrnoException other = new ErrnoException(Errno.ENODEV, "add address");
        CniException e = assertThrows(CniException.class, () -> kernelIgnoring(Errno.EEXIST, "could not add", () -> {
            throw other;
        }));
        assertSame(other, e.getCause());
    }

    @Test
    void undoRunsInReverseUnlessCommittedAndLogsAFailingStep() {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        List<String> ran = new ArrayList<>();
        try (Undo undo = new Undo(new PrintStream(log, true, StandardCharsets.UTF_8))) {
            undo.add("first", () -> ran.add("first"));
            undo.add("second", () -> {
                throw new IllegalStateException("boom");
            });
            undo.add("third", () -> ran.add("third"));
        }
        assertEquals(List.of("third", "first"), ran);
        assertEquals("second after a failed ADD failed: boom\n", log.toString(StandardCharsets.UTF_8));

        ran.clear();
        try (Undo undo = new Undo(new PrintStream(log))) {
            undo.add("first", () -> ran.add("first"));
            undo.commit();
        }
        assertEquals(List.of(), ran);
    }
}
