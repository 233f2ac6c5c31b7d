package io.jcni.plugins.main.hostdevice;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What sysfs says about a device: the network interface(s) under a PCI device, an auxiliary device
 * or a {@code /sys/devices/...} path, and whether a PCI device is bound to a userspace (DPDK) driver.
 * The root is a parameter so that tests read a fake tree; the plugin uses {@link #REAL}.
 *
 * <p>Names from the config never leave sysfs: a PCI or auxiliary id must be one path element, and a
 * kernel path must stay under {@code /sys/devices/} once "." and ".." are resolved (the reference
 * checks only the prefix of the raw string).
 */
final class Sysfs {
    static final Sysfs REAL = new Sysfs(Path.of("/"));

    /** Drivers that hand the device to userspace: it has no kernel network interface to move. */
    static final Set<String> USERSPACE_DRIVERS = Set.of("vfio-pci", "uio_pci_generic", "igb_uio");

    private final Path root;

    Sysfs(Path root) {
        this.root = root;
    }

    private Path pciDevices() {
        return root.resolve("sys/bus/pci/devices");
    }

    private Path auxDevices() {
        return root.resolve("sys/bus/auxiliary/devices");
    }

    boolean isPciDevice(String id) {
        return Files.exists(pciDevices().resolve(element(id, "PCI device")));
    }

    boolean isAuxDevice(String id) {
        return Files.exists(auxDevices().resolve(element(id, "auxiliary device")));
    }

    /**
     * Whether the PCI device's driver is a userspace one (vfio-pci, uio_pci_generic, igb_uio).
     *
     * @throws CniException when the device has no driver link (no such device, or no driver bound)
     */
    boolean hasDpdkDriver(String pciId) {
        Path dev = pciDevices().resolve(element(pciId, "PCI device"));
        Path link = dev.resolve("driver");
        try {
            Path driver = link.toRealPath();
            return USERSPACE_DRIVERS.contains(driver.getFileName().toString());
        } catch (IOException e) {
            // Worded as Go's filepath.EvalSymlinks fails, on the first missing element.
            Path missing = Files.exists(dev) ? link : dev;
            throw new CniException(ErrorCode.INTERNAL, "error with host device: lstat " + displayed(missing) + ": " + reason(e));
        }
    }

    /** The interface names under a PCI device's {@code net} directory (or its virtio child's), sorted. */
    List<String> pciNetDevices(String pciId) {
        Path dev = pciDevices().resolve(element(pciId, "PCI device"));
        Path net = dev.resolve("net");
        if (!Files.exists(net, LinkOption.NOFOLLOW_LINKS)) {
            net = firstVirtioNet(dev);
            if (net == null) throw notFound("no net directory under pci device " + pciId, null);
        }
        return names(net);
    }

    List<String> auxNetDevices(String auxId) {
        return names(auxDevices().resolve(element(auxId, "auxiliary device")).resolve("net"));
    }

    /** The interface names under {@code <kernelPath>/net}, sorted. */
    List<String> kernelPathNetDevices(String kernelPath) {
        Path net = root.resolve(relativeKernelPath(kernelPath)).resolve("net");
        if (!Files.isDirectory(net)) throw notFound("failed to find network devices at \"" + displayed(net) + "\"", null);
        return names(net);
    }

    /**
     * A {@code kernelpath} as a path relative to the sysfs root: it must be absolute and lie under
     * /sys/devices/ after normalisation.
     */
    static Path relativeKernelPath(String kernelPath) {
        Path p = kernelPath.indexOf('\0') < 0 ? Path.of(kernelPath).normalize() : Path.of("/");
        if (!kernelPath.startsWith("/") || !p.startsWith("/sys/devices/") || p.getNameCount() < 3) {
            throw new CniException(ErrorCode.INTERNAL,
                    "failed to find host device: kernel device path \"" + kernelPath + "\" must be absolute and begin with /sys/devices/");
        }
        return Path.of("/").relativize(p);
    }

    private static Path firstVirtioNet(Path dev) {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dev, "virtio*")) {
            for (Path p : ds) if (Files.isDirectory(p.resolve("net"))) found.add(p.resolve("net"));
        } catch (IOException e) {
            return null;
        }
        return found.stream().sorted().findFirst().orElse(null);
    }

    private List<String> names(Path netDir) {
        try (Stream<Path> s = Files.list(netDir)) {
            List<String> names = s.map(p -> p.getFileName().toString()).sorted().toList();
            if (names.isEmpty()) throw notFound("failed to find network device in path " + displayed(netDir), null);
            return names;
        } catch (IOException e) {
            throw notFound("failed to read directory " + displayed(netDir), reason(e));
        }
    }

    /** A path as the user would see it on the real system (without the test root). */
    private String displayed(Path p) {
        return "/" + root.relativize(p);
    }

    private static CniException notFound(String msg, String details) {
        return new CniException(ErrorCode.INTERNAL, "failed to find host device: " + msg, details);
    }

    private static String element(String id, String what) {
        if (id.isEmpty() || id.equals(".") || id.equals("..") || id.indexOf('/') >= 0 || id.indexOf('\0') >= 0) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid " + what + " id \"" + id + "\"",
                    "an id is one sysfs directory name");
        }
        return id;
    }

    private static String reason(IOException e) {
        return e instanceof java.nio.file.NoSuchFileException ? "no such file or directory" : String.valueOf(e.getMessage());
    }
}
