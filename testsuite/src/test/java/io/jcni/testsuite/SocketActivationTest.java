package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import io.jcni.testkit.Installed;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The installed jcnid launcher started by socket activation (LISTEN_FDS), without systemd. Root: jcnid serves uid 0 only. */
@Tag("root")
class SocketActivationTest {
    @Test
    void activatedDaemonServesTheShimsAndKeepsItsSocket() throws Exception {
        Installed jcni = Installed.get();
        Path dir = Files.createTempDirectory("jcni-act-");
        try {
            SocketActivation.check(jcni.root.resolve("jcni/bin/jcnid"), jcni.bin, dir, List.of());
        } finally {
            Sh.quiet("rm", "-rf", dir.toString());
        }
    }
}
