package io.jcni.plugins.meta.tuning;

import io.jcni.common.AtomicFile;
import io.jcni.linux.Link;
import io.jcni.linux.MacAddress;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The interface attributes ADD is about to change, saved so DEL can put them back. Only what the
 * config changes is recorded. The file is upstream's: {@code <dataDir>/<containerID>_<ifname>.json},
 * mode 0600, Go's {@code json.MarshalIndent(v, "", " ")} of
 * {@code {"mac","promisc","mtu","allmulti","txQLen"}} with absent fields omitted, so either
 * implementation can restore what the other saved.
 *
 * @param mac null: not saved
 * @param mtu 0: not saved
 */
record Backup(String mac, Boolean promisc, int mtu, Boolean allmulti, Integer txQLen) {

    static Path file(String dataDir, String containerId, String ifname) {
        return Path.of(dataDir, containerId + "_" + ifname + ".json");
    }

    /** The current values of what {@code conf} is going to change. */
    static Backup of(Link link, TuningConf conf) {
        return new Backup(conf.mac() != null ? link.mac().toString() : null,
                conf.promisc() ? link.promisc() : null,
                conf.mtu() != 0 ? link.mtu() : 0,
                conf.allmulti() != null ? link.allmulti() : null,
                conf.txQLen() != null ? link.txqlen() : null);
    }

    String toJson() {
        List<String> fields = new ArrayList<>();
        if (mac != null && !mac.isEmpty()) fields.add("\"mac\": " + Json.write(mac));
        if (promisc != null) fields.add("\"promisc\": " + promisc);
        if (mtu != 0) fields.add("\"mtu\": " + mtu);
        if (allmulti != null) fields.add("\"allmulti\": " + allmulti);
        if (txQLen != null) fields.add("\"txQLen\": " + txQLen);
        if (fields.isEmpty()) return "{}";
        return "{\n " + String.join(",\n ", fields) + "\n}";
    }

    static Backup fromJson(String text) {
        Map<String, Object> m = Json.parseObject(text);
        Long mtu = Fields.integer(m, "mtu", "backup");
        Long txQLen = Fields.integer(m, "txQLen", "backup");
        return new Backup(Fields.string(m, "mac", "backup"),
                Fields.bool(m, "promisc", "backup"),
                mtu == null ? 0 : Math.toIntExact(mtu),
                Fields.bool(m, "allmulti", "backup"),
                txQLen == null ? null : Math.toIntExact(txQLen));
    }

    MacAddress macAddress() {
        return mac == null || mac.isEmpty() ? null : TuningConf.parseMac(mac);
    }

    /** Writes the file, creating {@code dataDir} (mode 0600, as upstream) when missing. */
    void save(Path file) {
        try {
            Path dir = file.getParent();
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
            // Replaced, not written in place: a DEL after a crash mid-write must not find half a backup.
            AtomicFile.write(file, toJson(), AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to save file " + file, e);
        }
    }

    /**
     * The saved values, or null when there is no file. A damaged file counts as one that saved
     * nothing (as upstream, whose DEL restores nothing then), and is named on {@code log}.
     */
    static Backup load(Path file, PrintStream log) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to open file \"" + file + "\"", e);
        }
        try {
            return fromJson(text);
        } catch (RuntimeException e) {
            // Fields, not StateDoc: the reference tuning plugin writes the same file, decoded by Go's rules.
            log.println("tuning: damaged state file " + file + ": " + e.getMessage() + "; nothing restored from it");
            return new Backup(null, null, 0, null, null);
        }
    }
}
