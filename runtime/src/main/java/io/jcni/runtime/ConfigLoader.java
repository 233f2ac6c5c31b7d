package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Loads network configurations from a directory the way libcni does: {@code *.conflist} files first,
 * then legacy single-plugin {@code *.conf} and {@code *.json} files lifted into one-plugin lists, each
 * group in lexical order; a conflist also gets the plugins in {@code <dir>/<network>/*.conf} unless it
 * sets {@code loadOnlyInlinedPlugins}.
 *
 * <p>Unlike libcni, problems are never silent: {@link #list} reports every file it skipped and why, and
 * {@link #load} refuses to guess. It fails, naming the file and the field, when the requested network's
 * file is malformed, when a file is so malformed that its network name cannot be read, or when two files
 * define the same network. Nothing is ever written.
 *
 * <p>Only regular files are read ({@link DirectoryFile}): a FIFO, a device or a symlink leading out of
 * the directory is skipped with the reason, never opened, so neither a listing nor a load can hang or
 * read someone else's file.
 */
public final class ConfigLoader {
    private ConfigLoader() {}

    /** The default configuration directory (cnitool's NETCONFPATH default). */
    public static final Path DEFAULT_DIR = Path.of("/etc/cni/net.d");

    /** A network found in a file. */
    public record Network(String name, Path file, NetConfList config) {}

    /**
     * A file that was not used.
     *
     * @param networkName the name it declares when that much could be read, else null
     * @param error the error, for callers that want the code
     */
    public record Skipped(Path file, String networkName, String reason, CniException error) {}

    /** All networks in a directory, in the order libcni would consider them, and the files skipped. */
    public record Listing(Path dir, List<Network> networks, List<Skipped> skipped) {
        public Listing {
            networks = List.copyOf(networks);
            skipped = List.copyOf(skipped);
        }

        public Network find(String name) {
            for (Network n : networks) if (n.name().equals(name)) return n;
            return null;
        }
    }

    /** Scans a directory. Bad files are reported in {@link Listing#skipped()}, never thrown. */
    public static Listing list(Path dir) {
        List<Network> networks = new ArrayList<>();
        List<Skipped> skipped = new ArrayList<>();
        Map<String, Path> seen = new LinkedHashMap<>();
        for (Path file : candidateFiles(dir)) {
            try {
                NetConfList conf = loadFile(file);
                Path first = seen.putIfAbsent(conf.name(), file);
                if (first != null) {
                    skipped.add(new Skipped(file, conf.name(), "network \"" + conf.name() + "\" is already defined in " + first,
                            duplicate(conf.name(), first, file)));
                } else {
                    networks.add(new Network(conf.name(), file, conf));
                }
            } catch (CniException e) {
                skipped.add(new Skipped(file, peekName(file), describe(e), e));
            }
        }
        return new Listing(dir, networks, skipped);
    }

    /**
     * The network called {@code name}.
     *
     * @throws CniException when it is not there, when its file (or one of its extra plugin files) is
     *     malformed, when another file defines it too, or when a malformed file's name cannot be read
     */
    public static NetConfList load(Path dir, String name) {
        List<Path> files = candidateFiles(dir);
        if (files.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "no net configurations found in " + dir);
        }
        Listing listing = list(dir);
        for (Skipped s : listing.skipped()) {
            if (s.networkName() == null || s.networkName().equals(name)) {
                CniException e = s.error();
                throw new CniException(e.code(), e.msg(), e.details().contains(s.file().toString())
                        ? e.details() : s.file() + ": " + e.details());
            }
        }
        Network n = listing.find(name);
        if (n == null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "no net configuration with name \"" + name + "\" in " + dir);
        }
        return n.config();
    }

    /** Loads one file: a conflist (with its extra plugins) or, for .conf/.json, a single plugin lifted into a list. */
    public static NetConfList loadFile(Path file) {
        String text = read(file);
        String source = file.toString();
        if (file.getFileName().toString().endsWith(".conflist")) {
            NetConfList conf = NetConfList.parse(text, source);
            if (!conf.loadOnlyInlinedPlugins()) {
                Path parent = file.toAbsolutePath().getParent();
                conf = conf.withExtraPlugins(extraPlugins(parent.resolve(conf.name())));
            }
            if (conf.plugins().isEmpty()) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "no plugin configs found",
                        source + ": no 'plugins' and no *.conf files in " + file.toAbsolutePath().getParent().resolve(conf.name()));
            }
            return conf;
        }
        return NetConfList.parseSingle(text, source);
    }

    /** Plugin configs from {@code <dir>/<network>/*.conf}, lexical order; a missing dir means none. */
    public static List<PluginConf> extraPlugins(Path pluginDir) {
        List<PluginConf> out = new ArrayList<>();
        if (!Files.isDirectory(pluginDir)) return out;
        for (Path f : filesWith(pluginDir, List.of(".conf"))) {
            String text = read(f);
            Map<String, Object> raw;
            try {
                raw = Json.parseObject(text);
            } catch (Json.JsonException e) {
                throw new CniException(ErrorCode.DECODING_FAILURE, "error parsing configuration", f + ": " + e.getMessage(), e);
            }
            out.add(PluginConf.parse(raw, f.toString()));
        }
        return out;
    }

    /** Conflists first, then .conf and .json files; each group sorted by name. */
    static List<Path> candidateFiles(Path dir) {
        List<Path> out = new ArrayList<>(filesWith(dir, List.of(".conflist")));
        out.addAll(filesWith(dir, List.of(".conf", ".json")));
        return out;
    }

    private static List<Path> filesWith(Path dir, List<String> extensions) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                int dot = n.lastIndexOf('.');
                if (dot < 0 || !extensions.contains(n.substring(dot))) continue;
                if (Files.isDirectory(p)) continue;
                out.add(p);
            }
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "cannot read configuration directory " + dir, e);
        }
        out.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
        return out;
    }

    /** The file's text; anything but a regular file inside its own directory is an I/O failure, never read. */
    private static String read(Path file) {
        try {
            return DirectoryFile.readUtf8(directoryOf(file), file, DirectoryFile.CONFIG_LIMIT);
        } catch (DirectoryFile.RefusedException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "refused to read " + file, String.valueOf(e.getMessage()), e);
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "error reading " + file, String.valueOf(e.getMessage()), e);
        }
    }

    private static Path directoryOf(Path file) {
        return file.toAbsolutePath().getParent();
    }

    /** The network name a (possibly malformed) file declares, when it can be read. */
    private static String peekName(Path file) {
        try {
            Object v = Json.parse(DirectoryFile.readUtf8(directoryOf(file), file, DirectoryFile.CONFIG_LIMIT));
            if (v instanceof Map<?, ?> m && m.get("name") instanceof String s && !s.isEmpty()) return s;
        } catch (IOException | RuntimeException ignored) {
            // unreadable: the name is unknown
        }
        return null;
    }

    private static CniException duplicate(String name, Path first, Path second) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "duplicate network name",
                second + ": name \"" + name + "\" is already defined in " + first);
    }

    private static String describe(CniException e) {
        return e.details().isEmpty() ? e.msg() : e.msg() + ": " + e.details();
    }
}
