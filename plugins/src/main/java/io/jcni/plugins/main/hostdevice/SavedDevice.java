package io.jcni.plugins.main.hostdevice;

import io.jcni.common.AtomicFile;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What a device looked like on the host before ADD took it, so DEL can give it back as it was: the
 * reference keeps only the name (in the device's alias, which jcni writes too so either plugin can
 * undo the other's ADD) and leaves the device down without addresses. jcni also restores its
 * previous alias, up/down state, MTU and permanent addresses. {@code kind} (IFLA_INFO_KIND, null for
 * a physical device) tells DEL what the kernel did with the device if the container namespace died.
 *
 * <p>One JSON file per attachment, {@code <dataDir>/<network>/<containerID>_<ifname>.json}, written
 * atomically; it also names the attachment and its netns so GC can return devices of attachments
 * that are gone.
 *
 * @param alias the device's alias before ADD, "" for none
 * @param addresses its permanent addresses ("10.1.2.3/24"), IPv6 link-local ones excluded
 */
record SavedDevice(String network, String containerId, String ifname, String netns, String name, String alias, String mac,
                   String kind, boolean up, int mtu, List<Cidr> addresses) {

    static Path file(Path dataDir, String network, String containerId, String ifname) {
        return dataDir.resolve(network).resolve(containerId + "_" + ifname + ".json");
    }

    Path file(Path dataDir) {
        return file(dataDir, network, containerId, ifname);
    }

    String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("network", network);
        m.put("containerID", containerId);
        m.put("ifname", ifname);
        m.put("netns", netns);
        m.put("name", name);
        m.put("alias", alias);
        m.put("mac", mac);
        if (kind != null) m.put("kind", kind);
        m.put("up", up);
        m.put("mtu", (long) mtu);
        m.put("addresses", addresses.stream().map(Cidr::toString).toList());
        return Json.writePretty(m);
    }

    static SavedDevice fromJson(String text) {
        Map<String, Object> m = Json.parseObject(text);
        List<Cidr> addrs = new ArrayList<>();
        List<String> raw = Fields.stringList(m, "addresses", "saved device");
        if (raw != null) for (String a : raw) addrs.add(Cidr.parse(a));
        Long mtu = Fields.integer(m, "mtu", "saved device");
        return new SavedDevice(Fields.requireString(m, "network", "saved device"), Fields.requireString(m, "containerID", "saved device"),
                Fields.requireString(m, "ifname", "saved device"), orEmpty(Fields.string(m, "netns", "saved device")),
                Fields.requireString(m, "name", "saved device"), orEmpty(Fields.string(m, "alias", "saved device")),
                orEmpty(Fields.string(m, "mac", "saved device")), Fields.string(m, "kind", "saved device"),
                Fields.bool(m, "up", "saved device", false), mtu == null ? 0 : Math.toIntExact(mtu), addrs);
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** Writes the file (0600) through a temporary file and a rename, so a reader never sees half of it. */
    void save(Path dataDir) {
        Path file = file(dataDir);
        try {
            Files.createDirectories(file.getParent());
            AtomicFile.write(file, toJson(), AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to save the state of host device " + name + " to " + file, e);
        }
    }

    /** The saved device of an attachment, or null when there is none (or the file is unreadable: logged by the caller). */
    static SavedDevice load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to read " + file, e);
        }
        try {
            return fromJson(text);
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to parse " + file, e.getMessage());
        }
    }

    static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".tmp")); // written by earlier versions
            AtomicFile.removeTemporaries(file);
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to delete " + file, e);
        }
    }

    /** Every saved device of {@code network} (files that do not parse are skipped). */
    static List<Path> filesOf(Path dataDir, String network) {
        Path dir = dataDir.resolve(network);
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to list " + dir, e);
        }
    }
}
