package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** A container image as a tarball: Debian's busybox-static and its applets, for podman or docker to import. */
final class BusyboxImage {
    private BusyboxImage() {}

    /** Builds DIR/rootfs and returns DIR/bb.tar. */
    static Path tarball(Path dir) throws IOException {
        Path rootfs = dir.resolve("rootfs");
        for (String d : List.of("bin", "etc", "proc", "sys", "dev", "tmp", "root")) Files.createDirectories(rootfs.resolve(d));
        Files.copy(Path.of("/bin/busybox"), rootfs.resolve("bin/busybox"));
        for (String applet : Sh.lines(Sh.ok("/bin/busybox", "--list"))) {
            if (!applet.equals("busybox")) Files.createSymbolicLink(rootfs.resolve("bin").resolve(applet), Path.of("busybox"));
        }
        Files.writeString(rootfs.resolve("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
        Files.writeString(rootfs.resolve("etc/group"), "root:x:0:\n");
        Path tar = dir.resolve("bb.tar");
        Sh.ok("tar", "-C", rootfs.toString(), "-cf", tar.toString(), ".");
        return tar;
    }
}
