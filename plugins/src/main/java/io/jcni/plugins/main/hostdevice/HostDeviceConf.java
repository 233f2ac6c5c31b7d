package io.jcni.plugins.main.hostdevice;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;

/**
 * The host-device config, read as the reference's NetConf decodes it. Exactly one way of naming the
 * device is used, the first set of: {@code device} (a name), {@code hwaddr} (a MAC), {@code kernelpath}
 * (a {@code /sys/devices/...} directory), {@code pciBusID} (a PCI address). The {@code deviceID}
 * runtimeConfig (capability {@code deviceID}, set by SR-IOV device plugins) replaces {@code pciBusID}
 * when it names a PCI device, or names an auxiliary device (/sys/bus/auxiliary); anything else is an
 * error. A PCI device bound to a userspace driver is in DPDK mode: nothing is moved, only IPAM runs.
 *
 * @param hwaddr the MAC's bytes, or null
 * @param auxDevice an auxiliary device id from deviceID, or null
 * @param dpdk the reference's {@code DPDKMode}: from the PCI driver, or (untagged Go field) the config
 * @param dataDir jcni extension: where the device's original state is kept between ADD and DEL
 */
record HostDeviceConf(String device, byte[] hwaddr, String hwaddrText, String kernelPath, String pciBusId, String auxDevice,
                      boolean dpdk, Path dataDir) {

    static final Path DEFAULT_DATA_DIR = Path.of("/run/jcni/host-device");

    /**
     * Reads the config. On DEL ({@code lenient}) a deviceID or PCI driver that sysfs no longer
     * shows is logged and ignored: DEL must still be able to return the device.
     */
    static HostDeviceConf parse(Map<String, Object> conf, Map<String, Object> runtimeConfig, Sysfs sysfs, boolean lenient,
                                PrintStream log) {
        String device = str(conf, "device");
        String hwaddrText = str(conf, "hwaddr");
        String kernelPath = str(conf, "kernelpath");
        String pci = str(conf, "pciBusID");
        boolean dpdk = Fields.bool(conf, "DPDKMode", "", false);
        String aux = null;

        String deviceId;
        try {
            deviceId = str(runtimeConfig, "deviceID");
        } catch (CniException e) {
            if (!lenient) throw e;
            log.println("host-device: ignoring runtimeConfig.deviceID on DEL: " + e.getMessage());
            deviceId = "";
        }
        if (!deviceId.isEmpty()) {
            try {
                if (sysfs.isPciDevice(deviceId)) {
                    pci = deviceId;
                } else if (sysfs.isAuxDevice(deviceId)) {
                    pci = "";
                    aux = deviceId;
                } else {
                    throw new CniException(ErrorCode.INTERNAL, "runtime config DeviceID " + deviceId + " not found or unsupported");
                }
            } catch (CniException e) {
                if (!lenient) throw e;
                log.println("host-device: ignoring deviceID on DEL: " + e.getMessage());
            }
        }
        if (device.isEmpty() && hwaddrText.isEmpty() && kernelPath.isEmpty() && pci.isEmpty() && aux == null) {
            throw new CniException(ErrorCode.INTERNAL, "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\"");
        }
        if (!pci.isEmpty()) {
            try {
                dpdk = sysfs.hasDpdkDriver(pci);
            } catch (CniException e) {
                if (!lenient) throw e;
                log.println("host-device: " + e.getMessage() + " (" + e.details() + "); DEL treats the device as a kernel one");
                dpdk = false;
            }
        }
        if (!kernelPath.isEmpty()) Sysfs.relativeKernelPath(kernelPath); // refused before anything moves
        byte[] hwaddr = hwaddrText.isEmpty() ? null : parseMac(hwaddrText);
        Path dataDir;
        try {
            dataDir = dataDir(conf);
        } catch (CniException e) {
            if (!lenient) throw e;
            dataDir = DEFAULT_DATA_DIR; // ADD refused it, so nothing was saved under it
        }
        return new HostDeviceConf(device, hwaddr, hwaddrText, kernelPath, pci, aux, dpdk, dataDir);
    }

    /** {@code dataDir}, or the default: all GC needs of the config. */
    static Path dataDir(Map<String, Object> conf) {
        String dir = Fields.string(conf, "dataDir", "");
        return dir == null || dir.isEmpty() ? DEFAULT_DATA_DIR : Path.of(dir);
    }

    private static String str(Map<String, Object> m, String key) {
        String s = Fields.string(m, key, "");
        return s == null ? "" : s;
    }

    /**
     * A MAC as Go's net.ParseMAC reads it: 6, 8 or 20 bytes written as two-digit hex groups joined
     * by ':' or '-', or as four-digit groups joined by '.'.
     */
    static byte[] parseMac(String s) {
        CniException bad = new CniException(ErrorCode.INTERNAL,
                "failed to find host device: failed to parse MAC address \"" + s + "\": address " + s + ": invalid MAC address");
        if (s.length() < 14) throw bad;
        int n;
        int group;
        char sep;
        if (s.charAt(2) == ':' || s.charAt(2) == '-') {
            sep = s.charAt(2);
            group = 2;
            if ((s.length() + 1) % 3 != 0) throw bad;
            n = (s.length() + 1) / 3;
        } else if (s.charAt(4) == '.') {
            sep = '.';
            group = 4;
            if ((s.length() + 1) % 5 != 0) throw bad;
            n = 2 * (s.length() + 1) / 5;
        } else {
            throw bad;
        }
        if (n != 6 && n != 8 && n != 20) throw bad;
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < s.length(); i += group + 1) {
            if (i + group < s.length() && s.charAt(i + group) != sep) throw bad;
            String part = s.substring(i, i + group);
            for (char c : part.toCharArray()) if ("0123456789abcdefABCDEF".indexOf(c) < 0) throw bad;
            hex.append(part);
        }
        return HexFormat.of().parseHex(hex);
    }
}
