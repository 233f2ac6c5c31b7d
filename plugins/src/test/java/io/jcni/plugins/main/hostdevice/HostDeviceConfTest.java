package io.jcni.plugins.main.hostdevice;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Config decoding and sysfs resolution against a fake sysfs tree; no root, no kernel. */
class HostDeviceConfTest {
    @TempDir
    Path root;

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    private HostDeviceConf parse(String json, boolean lenient) {
        Map<String, Object> conf = Json.parseObject(json);
        @SuppressWarnings("unchecked")
        Map<String, Object> rc = conf.containsKey("runtimeConfig") ? (Map<String, Object>) conf.get("runtimeConfig") : Map.of();
        return HostDeviceConf.parse(conf, rc, new Sysfs(root), lenient, new PrintStream(log));
    }

    private HostDeviceConf parse(String json) {
        return parse(json, false);
    }

    /** A PCI device with the given driver and net interfaces in the fake tree. */
    private Path pci(String id, String driver, String... ifaces) throws IOException {
        Path dev = Files.createDirectories(root.resolve("sys/devices/pci0000:00").resolve(id));
        Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        Files.createSymbolicLink(bus.resolve(id), dev);
        if (driver != null) {
            Path drv = Files.createDirectories(root.resolve("sys/bus/pci/drivers").resolve(driver));
            Files.createSymbolicLink(dev.resolve("driver"), drv);
        }
        for (String i : ifaces) Files.createDirectories(dev.resolve("net").resolve(i));
        return dev;
    }

    @Test
    void oneSelectorIsRequired() {
        CniException e = assertThrows(CniException.class, () -> parse("{\"name\":\"n\"}"));
        assertEquals("specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\"", e.msg());
        assertEquals(999, e.code(), "as the reference answers");
        assertThrows(CniException.class, () -> parse("{\"device\":\"\"}"));
    }

    @Test
    void keysDecodeAsGoDecodesThem() {
        HostDeviceConf c = parse("{\"Device\":\"eth9\",\"HWADDR\":\"02:00:00:00:00:01\",\"dataDir\":\"/tmp/x\"}");
        assertEquals("eth9", c.device());
        assertArrayEquals(HexFormat.of().parseHex("020000000001"), c.hwaddr());
        assertEquals(Path.of("/tmp/x"), c.dataDir());
        assertFalse(c.dpdk());
        assertEquals(HostDeviceConf.DEFAULT_DATA_DIR, parse("{\"device\":\"x\"}").dataDir());
        // The reference's untagged DPDKMode field is a config key too.
        assertTrue(parse("{\"device\":\"x\",\"dpdkmode\":true}").dpdk());
        assertThrows(CniException.class, () -> parse("{\"device\":5}"));
    }

    @Test
    void macsAsGoParsesThem() {
        assertArrayEquals(HexFormat.of().parseHex("0a0b0c0d0e0f"), HostDeviceConf.parseMac("0A-0b-0c-0d-0e-0f"));
        assertArrayEquals(HexFormat.of().parseHex("0a0b0c0d0e0f"), HostDeviceConf.parseMac("0a0b.0c0d.0e0f"));
        assertEquals(8, HostDeviceConf.parseMac("00:00:00:00:fe:80:00:01").length);
        assertEquals(20, HostDeviceConf.parseMac("00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01").length);
        for (String bad : new String[] {"", "0a:0b:0c:0d:0e", "0a:0b:0c:0d:0e:0g", "0a:0b-0c:0d:0e:0f", "0a:0b:0c:0d:0e:0f:",
            "0a0b0c0d0e0f", "0a:0b:0c:0d:0e:0f:10", "٠a:0b:0c:0d:0e:0f"}) {
            CniException e = assertThrows(CniException.class, () -> HostDeviceConf.parseMac(bad), bad);
            assertTrue(e.msg().startsWith("failed to find host device: failed to parse MAC address \"" + bad + "\""), e.msg());
        }
    }

    @Test
    void deviceIdNamesAPciDeviceAndOverridesPciBusId() throws IOException {
        pci("0000:00:19.0", "e1000e", "enp0s25");
        pci("0000:00:1a.0", "e1000e", "enp0s26");
        HostDeviceConf c = parse("{\"pciBusID\":\"0000:00:1a.0\",\"runtimeConfig\":{\"deviceID\":\"0000:00:19.0\"}}");
        assertEquals("0000:00:19.0", c.pciBusId());
        assertFalse(c.dpdk());
        assertEquals(List.of("enp0s25"), new Sysfs(root).pciNetDevices(c.pciBusId()));
    }

    @Test
    void deviceIdNamesAnAuxiliaryDevice() throws IOException {
        Files.createDirectories(root.resolve("sys/bus/auxiliary/devices/mlx5_core.sf.4/net/enp3s0f0s4"));
        HostDeviceConf c = parse("{\"pciBusID\":\"0000:00:1a.0\",\"runtimeConfig\":{\"deviceID\":\"mlx5_core.sf.4\"}}");
        assertEquals("", c.pciBusId());
        assertEquals("mlx5_core.sf.4", c.auxDevice());
        assertEquals(List.of("enp3s0f0s4"), new Sysfs(root).auxNetDevices("mlx5_core.sf.4"));
    }

    @Test
    void anUnknownDeviceIdIsAnErrorOnAddAndIgnoredOnDel() {
        String json = "{\"device\":\"eth1\",\"runtimeConfig\":{\"deviceID\":\"0000:99:00.0\"}}";
        assertEquals("runtime config DeviceID 0000:99:00.0 not found or unsupported", assertThrows(CniException.class, () -> parse(json)).msg());
        assertEquals("eth1", parse(json, true).device());
        assertTrue(log.toString().contains("ignoring deviceID"), log.toString());
    }

    @Test
    void delDoesNotFailOnAWronglyTypedDeviceIdOrDataDir() {
        String json = "{\"device\":\"eth1\",\"dataDir\":7,\"runtimeConfig\":{\"deviceID\":42}}";
        assertThrows(CniException.class, () -> parse(json));
        HostDeviceConf c = parse(json, true);
        assertEquals("eth1", c.device());
        assertEquals(HostDeviceConf.DEFAULT_DATA_DIR, c.dataDir());
    }

    @Test
    void aUserspaceDriverMeansDpdkMode() throws IOException {
        pci("0000:03:00.1", "vfio-pci");
        pci("0000:03:00.2", "igb_uio");
        pci("0000:03:00.3", "ixgbevf", "eth7");
        assertTrue(parse("{\"pciBusID\":\"0000:03:00.1\"}").dpdk());
        assertTrue(parse("{\"pciBusID\":\"0000:03:00.2\"}").dpdk());
        assertFalse(parse("{\"pciBusID\":\"0000:03:00.3\"}").dpdk());
    }

    @Test
    void aPciDeviceWithoutDriverFailsAddButNotDel() throws IOException {
        pci("0000:04:00.0", null);
        CniException e = assertThrows(CniException.class, () -> parse("{\"pciBusID\":\"0000:04:00.0\"}"));
        assertEquals("error with host device: lstat /sys/bus/pci/devices/0000:04:00.0/driver: no such file or directory", e.msg());
        e = assertThrows(CniException.class, () -> parse("{\"pciBusID\":\"0000:99:00.0\"}"));
        assertEquals("error with host device: lstat /sys/bus/pci/devices/0000:99:00.0: no such file or directory", e.msg());
        assertFalse(parse("{\"pciBusID\":\"0000:04:00.0\"}", true).dpdk());
    }

    @Test
    void aVirtioPciDeviceHasItsNetDirectoryOneLevelDown() throws IOException {
        Path dev = pci("0000:00:03.0", "virtio-pci");
        Files.createDirectories(dev.resolve("virtio0/net/ens3"));
        assertEquals(List.of("ens3"), new Sysfs(root).pciNetDevices("0000:00:03.0"));
        pci("0000:00:04.0", "virtio-pci");
        CniException e = assertThrows(CniException.class, () -> new Sysfs(root).pciNetDevices("0000:00:04.0"));
        assertEquals("failed to find host device: no net directory under pci device 0000:00:04.0", e.msg());
    }

    @Test
    void netDirectoryNamesAreSorted() throws IOException {
        pci("0000:05:00.0", "mlx4_core", "ib1", "eth5", "ib0");
        assertEquals(List.of("eth5", "ib0", "ib1"), new Sysfs(root).pciNetDevices("0000:05:00.0"));
    }

    @Test
    void kernelPathMustStayUnderSysDevices() throws IOException {
        Files.createDirectories(root.resolve("sys/devices/pci0000:00/0000:00:19.0/net/eth3"));
        Sysfs s = new Sysfs(root);
        assertEquals(List.of("eth3"), s.kernelPathNetDevices("/sys/devices/pci0000:00/0000:00:19.0"));
        assertEquals(List.of("eth3"), s.kernelPathNetDevices("/sys/devices/pci0000:00/x/../0000:00:19.0/"));
        for (String bad : new String[] {"sys/devices/pci0000:00", "/sys/class/net/eth0", "/sys/devices/../../etc", "/sys/devices",
            "/sys/devices/", "/sys/devices/a\u0000b"}) {
            CniException e = assertThrows(CniException.class, () -> parse("{\"kernelpath\":\"" + bad.replace("\u0000", "\\u0000") + "\"}"), bad);
            assertEquals("failed to find host device: kernel device path \"" + bad + "\" must be absolute and begin with /sys/devices/", e.msg());
        }
        CniException e = assertThrows(CniException.class, () -> s.kernelPathNetDevices("/sys/devices/none"));
        assertEquals("failed to find host device: failed to find network devices at \"/sys/devices/none/net\"", e.msg());
    }

    @Test
    void idsThatAreNotOneDirectoryNameAreRefused() {
        for (String bad : new String[] {"..", ".", "../../etc", "0000:00:19.0/../x"}) {
            CniException e = assertThrows(CniException.class, () -> parse("{\"pciBusID\":\"" + bad + "\"}"), bad);
            assertEquals(7, e.code());
            e = assertThrows(CniException.class, () -> parse("{\"device\":\"x\",\"runtimeConfig\":{\"deviceID\":\"" + bad + "\"}}"), bad);
            assertEquals(7, e.code());
        }
    }

    @Test
    void savedStateRoundTrips(@TempDir Path dir) {
        SavedDevice s = new SavedDevice("net1", "ctr", "eth0", "/var/run/netns/c", "enp1s0", "uplink", "02:00:00:00:00:01", null,
                true, 9000, List.of(Cidr.parse("10.1.2.3/24"), Cidr.parse("fd00::3/64")));
        s.save(dir);
        Path f = dir.resolve("net1/ctr_eth0.json");
        assertEquals(s, SavedDevice.load(f));
        assertEquals(List.of(f), SavedDevice.filesOf(dir, "net1"));
        SavedDevice v = new SavedDevice("net1", "c2", "net0", "", "veth1", "", "02:00:00:00:00:02", "veth", false, 1500, List.of());
        assertEquals(v, SavedDevice.fromJson(v.toJson()));
        SavedDevice.delete(f);
        assertNull(SavedDevice.load(f));
        SavedDevice.delete(f);
    }
}
