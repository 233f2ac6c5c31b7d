package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class DaemonControlTest {

    @Test
    void aDetachedJcnidIsBoundedAndCrashOnlyWhateverJvmStartsIt() {
        // jcni's own short-run flags: the daemon's two are added.
        assertEquals(List.of("-XX:+UseSerialGC", "-Xss1m", "-Xmx128m", "-XX:+ExitOnOutOfMemoryError"),
                DaemonControl.childJvmFlags(List.of("-XX:+UseSerialGC", "-Xss1m")));
        // The launcher's (or an admin's) own choices stay.
        List<String> chosen = List.of("-Xmx256m", "-XX:+CrashOnOutOfMemoryError");
        assertEquals(chosen, DaemonControl.childJvmFlags(chosen));
        assertEquals(List.of("-XX:MaxHeapSize=200m", "-XX:+ExitOnOutOfMemoryError"), DaemonControl.childJvmFlags(List.of("-XX:MaxHeapSize=200m")));
    }

    @Test
    void aDetachedJcnidCompilesAsTheDaemonLauncherSaysNotAsTheCommandThatStartedIt() {
        List<String> command = io.jcni.common.Launcher.jvmOptions(io.jcni.common.Launcher.Kind.PLUGIN, null);
        List<String> child = DaemonControl.childJvmFlags(command);
        assertTrue(child.containsAll(io.jcni.common.Launcher.DAEMON_COMPILE_SOONER), child.toString());
        assertFalse(child.contains("-XX:CompileThresholdScaling=10"), child.toString());
        // An admin's own threshold stays.
        assertEquals(List.of("-XX:CompileThresholdScaling=2", "-Xmx128m", "-XX:+ExitOnOutOfMemoryError"),
                DaemonControl.childJvmFlags(List.of("-XX:CompileThresholdScaling=2")));
    }

    @Test
    void failedServicesAreFoundInTheHealthAnswer() {
        String health = "status ok\npid 1\nsocket /s\nservices failed 1 of 2\nservice dhcp running\ndhcp /d leases=0\n"
                + "service docker-driver failed: cannot create /x: Not a directory\n";
        assertEquals(List.of("docker-driver failed: cannot create /x: Not a directory"), DaemonControl.failedServices(health));
        assertEquals(List.of(), DaemonControl.failedServices("status ok\nservices ok 1\nservice dhcp running\n"));
    }

    /** {@code jcnid status} exits {@link DaemonControl#SERVICE_DOWN} for these: a failed start, or a service that stalled since. */
    @Test
    void servicesDownAreTheFailedAndTheStalled() {
        String health = "status ok\npid 1\nsocket /s\nservices failed 1 of 3\nservice dhcp stalled: 3 requests waiting, the oldest for 12 s\n"
                + "dhcp /d leases=0 health=stalled\nservice overlay running\noverlay lease 10.5.1.0/24 failed: 0\n"
                + "service docker-driver failed: cannot create /x: Not a directory\n";
        DaemonControl.Status s = new DaemonControl.Status(true, 1, health);
        assertEquals(List.of("dhcp stalled: 3 requests waiting, the oldest for 12 s", "docker-driver failed: cannot create /x: Not a directory"),
                s.servicesDown());
        assertEquals(List.of("docker-driver failed: cannot create /x: Not a directory"), DaemonControl.failedServices(health));
        assertEquals(List.of(), new DaemonControl.Status(true, 1, "status ok\nservices starting\nservice dhcp starting\n").servicesDown());
        assertEquals(List.of(), new DaemonControl.Status(true, 1, "status ok\nservices ok 1\nservice dhcp running\n").servicesDown());
    }
}
