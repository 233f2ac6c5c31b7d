package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The on-disk format, checked byte for byte against what the reference plugin writes and reads
 * (host_local_test.go, backend/disk/backend.go), plus the jcni index and GC.
 */
class DiskStoreTest {
    @TempDir
    Path dataDir;

    IpamConfig config(String ipam) {
        return IpamConfig.load("{\"cniVersion\":\"1.1.0\",\"name\":\"mynet\",\"ipam\":{\"type\":\"host-local\","
                + "\"dataDir\":\"" + dataDir + "\"," + ipam + "}}", null);
    }

    Path net() {
        return dataDir.resolve("mynet");
    }

    String read(String name) throws Exception {
        return Files.readString(net().resolve(name), StandardCharsets.UTF_8);
    }

    /** A reservation as the Go plugin writes it. */
    void goReservation(String ip, String content) throws Exception {
        Files.createDirectories(net());
        Files.write(net().resolve(ip), content.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void writesExactlyTheReferenceFiles() throws Exception {
        IpamConfig c = config("\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"},{\"subnet\":\"10.2.2.0/24\"}],"
                + "[{\"subnet\":\"2001:db8:1::0/64\"}]]");
        HostLocal.AddResult r = HostLocal.add(c, "dummy", "eth0");
        assertEquals(List.of("10.1.2.2/24", "2001:db8:1::2/64"), r.ips().stream().map(Allocation::cidr).toList());
        assertEquals(List.of("10.1.2.1", "2001:db8:1::1"), r.ips().stream().map(a -> a.gateway().toString()).toList());
        assertEquals(List.of(0, 1), r.ips().stream().map(Allocation::rangeSetIndex).toList());

        assertArrayEquals("dummy\r\neth0".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(net().resolve("10.1.2.2")));
        assertEquals("dummy\r\neth0", read("2001:db8:1::2"));
        assertEquals("10.1.2.2", read("last_reserved_ip.0"));
        assertEquals("2001:db8:1::2", read("last_reserved_ip.1"));
        assertTrue(Files.exists(net().resolve("lock")));
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(net().resolve("10.1.2.2"))));
        try (Stream<Path> s = Files.list(net())) {
            assertEquals(Set.of("10.1.2.2", "2001:db8:1::2", "last_reserved_ip.0", "last_reserved_ip.1", "lock"),
                    s.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet()));
        }
        // the index lives beside, not inside, the network directory
        assertTrue(Files.isDirectory(dataDir.resolve(".jcni-index").resolve("mynet")));

        assertEquals(List.of(IpAddr.parse("10.1.2.2"), IpAddr.parse("2001:db8:1::2")),
                HostLocal.release(c, "dummy", "eth0"));
        assertFalse(Files.exists(net().resolve("10.1.2.2")));
        assertFalse(Files.exists(net().resolve("2001:db8:1::2")));
        assertTrue(Files.exists(net().resolve("last_reserved_ip.0")));
    }

    /**
     * An ADD killed between creating its reservation file and writing it (found by the testsuite's
     * SIGKILL test once the JVM got fast enough to be killed there): the file is empty, the index
     * intent names the attachment, and DEL releases it.
     */
    @Test
    void delReleasesAReservationWhoseWriteWasKilled() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "killed", "eth0");
        Files.write(net().resolve("10.1.2.2"), new byte[0]); // as left by a kill after CREATE_NEW
        goReservation("10.1.2.9", ""); // an empty file nobody indexed stays (not ours to judge)

        assertEquals(List.of(IpAddr.parse("10.1.2.2")), HostLocal.release(c, "killed", "eth0"));
        assertFalse(Files.exists(net().resolve("10.1.2.2")));
        assertTrue(Files.exists(net().resolve("10.1.2.9")));
    }

    @Test
    void trimsContainerIdLikeUpstream() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        Allocation a = HostLocal.add(c, "   dummy\n ", "eth0").ips().get(0);
        assertEquals("dummy\r\neth0", read(a.address().toString()));
        HostLocal.release(c, "   dummy\n ", "eth0");
        assertFalse(Files.exists(net().resolve(a.address().toString())));
    }

    @Test
    void continuesRoundRobinFromReferenceState() throws Exception {
        goReservation("10.1.2.2", "gocontainer\r\neth0");
        goReservation("10.1.2.3", "gocontainer2\r\neth0");
        Files.writeString(net().resolve("last_reserved_ip.0"), "10.1.2.3");
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        assertEquals("10.1.2.4", HostLocal.add(c, "jcni", "eth0").ips().get(0).address().toString());
        assertEquals("10.1.2.4", read("last_reserved_ip.0"));
    }

    @Test
    void releasesReferenceWrittenReservations() throws Exception {
        goReservation("10.1.2.2", "gocontainer\r\neth0");
        goReservation("10.1.2.3", "gocontainer\r\neth1");
        goReservation("2001:db8::5", "gocontainer\r\neth0");
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        assertEquals(List.of(IpAddr.parse("10.1.2.2"), IpAddr.parse("2001:db8::5")).size(),
                HostLocal.release(c, "gocontainer", "eth0").size());
        assertFalse(Files.exists(net().resolve("10.1.2.2")));
        assertFalse(Files.exists(net().resolve("2001:db8::5")));
        assertEquals("gocontainer\r\neth1", read("10.1.2.3"));
    }

    @Test
    void legacyReservationsAreReleasedOnlyWhenNothingCurrentMatches() throws Exception {
        goReservation("10.1.2.2", "old");                 // legacy: container ID only
        goReservation("10.1.2.3", "old\r\neth0");
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        assertEquals(List.of(IpAddr.parse("10.1.2.3")), HostLocal.release(c, "old", "eth0"));
        assertTrue(Files.exists(net().resolve("10.1.2.2")));
        assertEquals(List.of(IpAddr.parse("10.1.2.2")), HostLocal.release(c, "old", "eth0"));
        assertFalse(Files.exists(net().resolve("10.1.2.2")));
        assertEquals(List.of(), HostLocal.release(c, "unknown", "eth0")); // DEL of unknown ID is fine
    }

    @Test
    void checkFindsJcniAndReferenceReservations() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "mine", "eth0");
        assertEquals(List.of(IpAddr.parse("10.1.2.2")), HostLocal.check(c, "mine", "eth0"));
        goReservation("10.1.2.50", "theirs\r\neth0");
        assertEquals(List.of(IpAddr.parse("10.1.2.50")), HostLocal.check(c, "theirs", "eth0"));
        goReservation("10.1.2.51", "legacy");
        assertEquals(List.of(IpAddr.parse("10.1.2.51")), HostLocal.check(c, "legacy", "eth0"));
        assertEquals("host-local: Failed to find address added by container nobody",
                assertThrows(CniException.class, () -> HostLocal.check(c, "nobody", "eth0")).msg());
    }

    @Test
    void duplicateAddIsRejectedAndOtherInterfacesAreIndependent() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "dummy", "eth0");
        assertEquals("failed to allocate for range 0: 10.1.2.2 has been allocated to dummy, duplicate allocation is not allowed",
                assertThrows(CniException.class, () -> HostLocal.add(c, "dummy", "eth0")).msg());
        assertEquals("10.1.2.3", HostLocal.add(c, "dummy", "eth1").ips().get(0).address().toString());
        assertEquals("10.1.2.4", HostLocal.add(c, "dummy1", "eth0").ips().get(0).address().toString());
        HostLocal.release(c, "dummy", "eth0");
        assertFalse(Files.exists(net().resolve("10.1.2.2")));
        assertEquals("dummy\r\neth1", read("10.1.2.3"));
    }

    @Test
    void staleIndexEntriesAreNotTrusted() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "a", "eth0"); // 10.1.2.2, indexed
        // The reference plugin releases it and hands the address to someone else.
        Files.delete(net().resolve("10.1.2.2"));
        goReservation("10.1.2.2", "b\r\neth0");
        // a's index entry now points at b's reservation: a may allocate again, and DEL of a
        // must not touch b.
        assertEquals("10.1.2.3", HostLocal.add(c, "a", "eth0").ips().get(0).address().toString());
        assertEquals(List.of(IpAddr.parse("10.1.2.3")), HostLocal.release(c, "a", "eth0"));
        assertEquals("b\r\neth0", read("10.1.2.2"));
    }

    @Test
    void requestedIpsAndRollback() throws Exception {
        IpamConfig c = IpamConfig.load("{\"cniVersion\":\"1.0.0\",\"name\":\"mynet\",\"ipam\":{\"dataDir\":\""
                + dataDir + "\",\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[{\"subnet\":\"10.1.3.0/24\"}]]},"
                + "\"args\":{\"cni\":{\"ips\":[\"10.1.2.88\",\"10.1.3.77\"]}}}", null);
        HostLocal.AddResult r = HostLocal.add(c, "dummy", "eth0");
        assertEquals(List.of("10.1.2.88/24", "10.1.3.77/24"), r.ips().stream().map(Allocation::cidr).toList());

        // Second range set cannot give its requested address: the first one is rolled back.
        String msg = assertThrows(CniException.class, () -> HostLocal.add(
                IpamConfig.load("{\"cniVersion\":\"1.0.0\",\"name\":\"mynet\",\"ipam\":{\"dataDir\":\""
                        + dataDir + "\",\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[{\"subnet\":\"10.1.3.0/24\"}]]}}",
                        "IP=10.1.2.90,10.1.3.77"), "other", "eth0")).msg();
        assertEquals("failed to allocate for range 1: requested IP address 10.1.3.77 is not available in range set "
                + "10.1.3.1-10.1.3.254", msg);
        assertFalse(Files.exists(net().resolve("10.1.2.90")));

        // A requested address outside every range set.
        msg = assertThrows(CniException.class, () -> HostLocal.add(IpamConfig.load("{\"cniVersion\":\"1.0.0\","
                + "\"name\":\"mynet\",\"ipam\":{\"dataDir\":\"" + dataDir + "\",\"subnet\":\"10.1.2.0/24\"}}",
                "IP=192.168.0.1"), "x", "eth0")).msg();
        assertEquals("failed to allocate all requested IPs: 192.168.0.1", msg);
        assertEquals(Set.of(IpAddr.parse("10.1.2.88"), IpAddr.parse("10.1.3.77")),
                DiskStore.open(dataDir, "mynet").reservedIps());
    }

    @Test
    void releaseByIpUpdatesTheIndex() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "a", "eth0");
        try (DiskStore s = DiskStore.open(dataDir, "mynet")) {
            assertTrue(s.releaseByIp(IpAddr.parse("10.1.2.2")));
            assertFalse(s.releaseByIp(IpAddr.parse("10.1.2.2")));
            assertEquals(List.of(), s.getById("a", "eth0"));
        }
        try (Stream<Path> idx = Files.list(dataDir.resolve(".jcni-index/mynet"))) {
            assertEquals(0, idx.count());
        }
    }

    @Test
    void gcKeepsValidAttachmentsAndBookkeeping() throws Exception {
        IpamConfig c = config("\"subnet\":\"10.1.2.0/24\"");
        HostLocal.add(c, "keep-me", "eth0");   // .2
        HostLocal.add(c, "gone", "eth0");      // .3
        HostLocal.add(c, "twoif", "eth0");     // .4
        HostLocal.add(c, "twoif", "eth1");     // .5
        goReservation("10.1.2.9", "legacy-id");
        goReservation("10.1.2.10", "stale-legacy");
        goReservation("10.1.2.11", "go-valid\r\neth0");
        goReservation("10.1.2.12", "go-stale\r\neth0");

        List<IpAddr> released = HostLocal.gc(c, Set.of(new Attachment("keep-me", "eth0"),
                new Attachment("twoif", "eth0"), new Attachment("legacy-id", "eth0"), new Attachment("go-valid", "eth0")));
        assertEquals(Set.of("10.1.2.3", "10.1.2.5", "10.1.2.10", "10.1.2.12"),
                released.stream().map(IpAddr::toString).collect(java.util.stream.Collectors.toSet()));
        for (String kept : List.of("10.1.2.2", "10.1.2.4", "10.1.2.9", "10.1.2.11", "lock", "last_reserved_ip.0")) {
            assertTrue(Files.exists(net().resolve(kept)), kept);
        }
        try (DiskStore s = DiskStore.open(dataDir, "mynet")) {
            assertEquals(List.of(IpAddr.parse("10.1.2.2")), s.getById("keep-me", "eth0"));
            assertEquals(List.of(), s.getById("gone", "eth0"));
            assertTrue(s.reserve("newcomer", "eth0", IpAddr.parse("10.1.2.3"), "0"));
        }
        try (Stream<Path> idx = Files.list(dataDir.resolve(".jcni-index/mynet"))) {
            assertEquals(3, idx.count()); // keep-me/eth0, twoif/eth0, newcomer/eth0
        }
        IpamConfig other = IpamConfig.load("{\"name\":\"nonet\",\"ipam\":{\"dataDir\":\"" + dataDir
                + "\",\"subnet\":\"10.1.2.0/24\"}}", null);
        assertEquals(List.of(), HostLocal.gc(other, Set.of()));
        assertFalse(Files.exists(dataDir.resolve("nonet")), "GC of an unknown network creates nothing");
    }

    @Test
    void statusReportsExhaustionAndUnwritableDirectories() throws Exception {
        IpamConfig c = config("\"ranges\":[[{\"subnet\":\"10.1.2.0/30\"}],[{\"subnet\":\"10.1.3.0/24\"}]]");
        HostLocalStatus st = HostLocal.status(c);
        assertTrue(st.available());
        assertFalse(Files.exists(net()), "status creates nothing");
        HostLocal.add(c, "a", "eth0");
        st = HostLocal.status(c);
        assertFalse(st.available());
        assertTrue(st.rangeSets().get(0).exhausted());
        assertFalse(st.rangeSets().get(1).exhausted());
        assertEquals(1, st.rangeSets().get(1).reserved());

        Path ro = dataDir.resolve("ro");
        Files.createDirectories(ro, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r-xr-xr-x")));
        IpamConfig roCfg = IpamConfig.load("{\"name\":\"n\",\"ipam\":{\"dataDir\":\"" + ro + "\",\"subnet\":\"10.0.0.0/24\"}}", null);
        if (!"root".equals(System.getProperty("user.name"))) {
            HostLocalStatus bad = HostLocal.status(roCfg);
            assertFalse(bad.dataDirUsable());
            assertFalse(bad.available());
        }
        IpamConfig fileCfg = IpamConfig.load("{\"name\":\"n\",\"ipam\":{\"dataDir\":\"" + net().resolve("10.1.2.2")
                + "\",\"subnet\":\"10.0.0.0/24\"}}", null);
        assertFalse(HostLocal.status(fileCfg).dataDirUsable());
    }

    @Test
    void refusesNetworkNamesThatEscapeTheDataDir() {
        for (String bad : List.of("..", ".", "a/b", "")) {
            assertThrows(CniException.class, () -> DiskStore.open(dataDir, bad));
        }
    }
}
