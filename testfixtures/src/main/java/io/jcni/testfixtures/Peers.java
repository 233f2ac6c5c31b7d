package io.jcni.testfixtures;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The peers an interop test runs beside jcni (the reference Go plugins, Go's libcni and go-cni,
 * dockerd, dnsmasq, etcd...). A test that cannot find its peer proves nothing of the drop-in claim,
 * so where the peers are supposed to be there ({@code -Djcni.require.interop=true}: scripts/test.sh
 * as root, which installs them, and so CI) a missing peer fails the test; elsewhere (a developer's
 * partial machine) it is skipped with the install hint.
 */
public final class Peers {
    /** The system property that turns a missing peer into a failure. */
    public static final String REQUIRE = "jcni.require.interop";

    private Peers() {}

    /** True when a missing peer must fail the test. */
    public static boolean required() {
        return Boolean.getBoolean(REQUIRE);
    }

    /** Fails (peers required) or skips (otherwise) the test unless {@code present}. */
    public static void require(boolean present, String missing) {
        if (present) return;
        if (required()) Assertions.fail(missing + " (" + REQUIRE + "=true: interop peers must be installed)");
        Assumptions.abort(missing);
    }

    /** {@link #require} for an executable, naming the Debian package that ships it. */
    public static void requireExecutable(Path executable, String debianPackage) {
        require(Files.isExecutable(executable), executable + " is not installed (apt-get install " + debianPackage + ")");
    }
}
