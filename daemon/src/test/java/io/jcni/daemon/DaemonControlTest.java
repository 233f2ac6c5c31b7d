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
    void failedServicesAreFoundInTheHealthAnswer() {
        String health = "status ok\npid 1\nsocket /s\nservices failed 1 of 2\nservice dhcp running\ndhcp /d leases=0\n"
                + "service docker-driver failed: cannot create /x: Not a directory\n";
        assertEquals(List.of("docker-driver failed: cannot create /x: Not a directory"), DaemonControl.failedServices(health));
        assertEquals(List.of(), DaemonControl.failedServices("status ok\nservices ok 1\nservice dhcp running\n"));
    }
}
