package io.jcni.cli;

import io.jcni.common.Flags;
import io.jcni.daemon.DaemonControl;
import io.jcni.runtime.CacheEntry;
import io.jcni.runtime.Cni;
import io.jcni.runtime.ConfigLoader;
import io.jcni.runtime.PluginException;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.ProcessPluginExec;
import io.jcni.runtime.ResultCache;
import io.jcni.runtime.RuntimeConf;
import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import io.jcni.types.Names;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import io.jcni.types.Result;
import io.jcni.types.VersionInfo;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The {@code jcni} command: cnitool's interface ({@code add|check|del|gc|status <net> <netns>}, the same
 * environment variables, the same container ID) plus {@code list}, {@code validate} and {@code version}.
 */
public final class Main {

    static final String ENV_NETCONFPATH = "NETCONFPATH";
    static final String ENV_CNI_PATH = "CNI_PATH";
    static final String ENV_CNI_ARGS = "CNI_ARGS";
    static final String ENV_CAP_ARGS = "CAP_ARGS";
    static final String ENV_IFNAME = "CNI_IFNAME";
    static final String ENV_CACHE_DIR = "JCNI_CACHE_DIR";
    static final String ENV_TIMEOUT = "JCNI_PLUGIN_TIMEOUT";

    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;

    private final Map<String, String> env;
    private final PrintStream out;
    private final PrintStream err;

    Main(Map<String, String> env, PrintStream out, PrintStream err) {
        this.env = env;
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        int rc = new Main(System.getenv(), System.out, System.err).run(args);
        System.out.flush();
        System.exit(rc);
    }

    /** Parsed command line; {@code valid} is null when no {@code --valid} was given. */
    record Options(String command, List<String> positional, Path cacheDir, Path confDir, Duration timeout,
                   List<Attachment> valid, boolean help) {}

    static final class UsageException extends RuntimeException {
        UsageException(String msg) {
            super(msg);
        }
    }

    int run(String[] args) {
        // The daemon has its own options; its control code lives with it.
        if (args.length > 0 && args[0].equals("daemon")) {
            return DaemonControl.run(Arrays.copyOfRange(args, 1, args.length), out, err);
        }
        if (args.length > 0 && args[0].equals("doctor")) {
            return io.jcni.cli.doctor.Doctor.run(List.of(args).subList(1, args.length), env, out, err);
        }
        Options o;
        try {
            o = parse(args);
        } catch (UsageException e) {
            err.println("jcni: " + e.getMessage());
            err.println("Run 'jcni --help' for usage.");
            return EXIT_USAGE;
        }
        if (o.help() || o.command() == null) {
            (o.help() ? out : err).print(Usage.text(o.command()));
            return o.help() ? EXIT_OK : EXIT_USAGE;
        }
        try {
            return switch (o.command()) {
                case "add", "check", "del" -> attachmentCommand(o);
                case "gc" -> gc(o);
                case "status" -> status(o);
                case "list" -> list(o);
                case "validate" -> validate(o);
                case "version" -> version(o);
                default -> throw new UsageException("unknown command \"" + o.command() + "\"");
            };
        } catch (UsageException e) {
            err.println("jcni " + o.command() + ": " + e.getMessage());
            err.print(Usage.text(o.command()));
            return EXIT_USAGE;
        } catch (CniException e) {
            err.println("jcni " + o.command() + ": " + describe(e));
            return EXIT_FAILED;
        }
    }

    // ---------------------------------------------------------------- commands

    private int attachmentCommand(Options o) {
        requireArgs(o, 2, 2, "<net> <netns>");
        String netName = o.positional().get(0);
        NetConfList list = ConfigLoader.load(confDir(o), netName);
        String netns = absolute(o.positional().get(1));
        RuntimeConf rt = new RuntimeConf(containerId(netns), netns, ifName(), cniArgs(), capArgs());
        Cni cni = cni(o);
        switch (o.command()) {
            case "add" -> {
                Result r = cni.addNetworkList(list, rt);
                out.println(Json.writePretty(r.toJson()));
            }
            case "check" -> cni.checkNetworkList(list, rt);
            default -> cni.delNetworkList(list, rt);
        }
        return EXIT_OK;
    }

    private int gc(Options o) {
        requireArgs(o, 1, 2, "<net> [<netns>]");
        if (o.valid() == null) {
            // Without the list every attachment would look stale: say so rather than disconnect them all.
            throw new UsageException("give the attachments still in use with --valid CONTAINERID/IFNAME, or --valid "
                    + VALID_NONE + " to collect every attachment of the network");
        }
        NetConfList list = ConfigLoader.load(confDir(o), o.positional().get(0));
        cni(o).gcNetworkList(list, o.valid());
        return EXIT_OK;
    }

    private int status(Options o) {
        requireArgs(o, 1, 2, "<net> [<netns>]");
        NetConfList list = ConfigLoader.load(confDir(o), o.positional().get(0));
        cni(o).statusNetworkList(list);
        return EXIT_OK;
    }

    private int list(Options o) {
        requireArgs(o, 0, 0, "");
        Path dir = confDir(o);
        ConfigLoader.Listing l = ConfigLoader.list(dir);
        out.println("Networks in " + dir + ":");
        if (l.networks().isEmpty()) out.println("  (none)");
        int w = 7;
        for (ConfigLoader.Network n : l.networks()) w = Math.max(w, n.name().length());
        for (ConfigLoader.Network n : l.networks()) {
            List<String> types = new ArrayList<>();
            for (PluginConf p : n.config().plugins()) types.add(p.type());
            String v = n.config().cniVersion().isEmpty() ? "0.1.0" : n.config().cniVersion();
            out.printf("  %-" + w + "s  %-6s  %-40s  %s%n", n.name(), Names.printable(v), Names.printable(String.join(",", types)),
                    Names.printable(n.file().toString()));
        }
        // File names and reasons come from the directory: shown with control characters escaped,
        // so a file cannot add lines to this listing.
        if (!l.skipped().isEmpty()) {
            out.println("Skipped files:");
            for (ConfigLoader.Skipped s : l.skipped()) out.println("  " + Names.printable(s.file() + ": " + s.reason()));
        }
        ResultCache.Scan cached = new ResultCache(cacheDir(o)).scan(null);
        if (cached.unreadable() != null) {
            out.println("Cached attachments in " + cacheDir(o) + ": not read (" + cached.unreadable() + ")");
        } else if (!cached.entries().isEmpty() || !cached.refused().isEmpty()) {
            out.println("Cached attachments in " + cacheDir(o) + ":");
            for (CacheEntry e : cached.entries()) {
                out.println("  " + e.networkName() + "  " + e.containerId() + "  " + e.ifName()
                        + (e.netns().isEmpty() ? "" : "  " + Names.printable(e.netns())));
            }
            for (Map.Entry<Path, String> r : cached.refused()) out.println("  skipped " + Names.printable(r.getKey() + ": " + r.getValue()));
        }
        return EXIT_OK;
    }

    private int validate(Options o) {
        requireArgs(o, 1, 1, "<net>");
        NetConfList list = ConfigLoader.load(confDir(o), o.positional().get(0));
        List<String> caps = cni(o).validateNetworkList(list, capArgs().keySet());
        List<String> types = new ArrayList<>();
        for (PluginConf p : list.plugins()) types.add(p.type());
        out.println("network \"" + list.name() + "\" is valid: version " + list.cniVersion() + ", plugins " + types
                + ", capabilities " + caps);
        return EXIT_OK;
    }

    private int version(Options o) {
        requireArgs(o, 0, 1, "[<plugin-type>]");
        if (o.positional().isEmpty()) {
            String v = Main.class.getPackage().getImplementationVersion();
            out.println("jcni " + (v == null ? "(development build)" : v));
            out.println("CNI protocol versions supported: " + String.join(", ", CniVersion.supportedStrings()));
            return EXIT_OK;
        }
        VersionInfo vi = cni(o).versionInfo(o.positional().get(0));
        out.println(Json.writePretty(vi.toJson()));
        return EXIT_OK;
    }

    // ---------------------------------------------------------------- environment

    private Cni cni(Options o) {
        Duration timeout = o.timeout();
        if (timeout == null) {
            String t = env.get(ENV_TIMEOUT);
            timeout = t == null || t.isEmpty() ? ProcessPluginExec.DEFAULT_TIMEOUT : parseDuration(t, ENV_TIMEOUT);
        }
        PluginExec exec = new ProcessPluginExec(timeout, s -> {
            err.print(s);
            if (!s.endsWith("\n")) err.println();
        }, null);
        return new Cni(PluginExec.splitPath(env.get(ENV_CNI_PATH)), cacheDir(o), exec);
    }

    private Path confDir(Options o) {
        if (o.confDir() != null) return o.confDir();
        String d = env.get(ENV_NETCONFPATH);
        return d == null || d.isEmpty() ? ConfigLoader.DEFAULT_DIR : Path.of(d);
    }

    private Path cacheDir(Options o) {
        if (o.cacheDir() != null) return o.cacheDir();
        String d = env.get(ENV_CACHE_DIR);
        return d == null || d.isEmpty() ? ResultCache.DEFAULT_DIR : Path.of(d);
    }

    private String ifName() {
        String s = env.get(ENV_IFNAME);
        return s == null ? "eth0" : s;
    }

    private List<Map.Entry<String, String>> cniArgs() {
        return RuntimeConf.parseArgs(env.get(ENV_CNI_ARGS));
    }

    private Map<String, Object> capArgs() {
        String s = env.get(ENV_CAP_ARGS);
        if (s == null || s.isEmpty()) return Map.of();
        try {
            return Json.parseObject(s);
        } catch (Json.JsonException e) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid " + ENV_CAP_ARGS, "expected a JSON object: " + e.getMessage(), e);
        }
    }

    /** cnitool's netns path: made absolute and cleaned like Go's filepath.Abs. */
    static String absolute(String netns) {
        return Path.of(netns).toAbsolutePath().normalize().toString();
    }

    /** cnitool's container ID: "cnitool-" and the hex of the first 10 bytes of the SHA-512 of the netns path. */
    public static String containerId(String absNetns) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-512").digest(absNetns.getBytes(StandardCharsets.UTF_8));
            return "cnitool-" + HexFormat.of().formatHex(h, 0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- parsing and messages

    static Options parse(String[] args) {
        String command = null;
        List<String> pos = new ArrayList<>();
        Path cacheDir = null;
        Path confDir = null;
        Duration timeout = null;
        List<Attachment> valid = null;
        boolean help = false;
        boolean endOfOptions = false;
        Flags f = new Flags(List.of(args));
        while (f.next()) {
            String a = f.token();
            if (!endOfOptions && f.isFlag()) {
                String name = f.name();
                switch (name) {
                    case "-h", "--help", "-help" -> help = true;
                    case "--" -> endOfOptions = true;
                    case "--cache-dir", "--conf-dir", "--timeout", "--valid" -> {
                        String value;
                        try {
                            value = f.value();
                        } catch (IllegalArgumentException e) {
                            throw new UsageException(e.getMessage());
                        }
                        switch (name) {
                            case "--cache-dir" -> cacheDir = Path.of(value);
                            case "--conf-dir" -> confDir = Path.of(value);
                            case "--timeout" -> timeout = parseDuration(value, "--timeout");
                            default -> {
                                if (valid == null) valid = new ArrayList<>();
                                if (!value.equals(VALID_NONE)) valid.add(parseAttachment(value));
                            }
                        }
                    }
                    default -> throw new UsageException("unknown option \"" + a + "\"");
                }
                continue;
            }
            if (command == null) command = a;
            else pos.add(a);
        }
        if (command != null && command.equals("help")) {
            help = true;
            command = pos.isEmpty() ? null : pos.getFirst();
            pos = new ArrayList<>();
        }
        if (command != null && !COMMANDS.contains(command)) throw new UsageException("unknown command \"" + command + "\"");
        return new Options(command, pos, cacheDir, confDir, timeout, valid, help);
    }

    /** {@code --valid none}: no attachment is in use. */
    static final String VALID_NONE = "none";

    static final List<String> COMMANDS = List.of("add", "check", "del", "gc", "status", "list", "validate", "version", "doctor");

    /** The flag parser's durations (seconds, or 500ms, 1.5s, 2m, 1h), positive. */
    static Duration parseDuration(String s, String what) {
        try {
            return Flags.duration(what, s, Duration.ofMillis(1), Duration.ofDays(365));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    static Attachment parseAttachment(String s) {
        int slash = s.lastIndexOf('/');
        if (slash <= 0 || slash == s.length() - 1) {
            throw new UsageException("--valid: expected CONTAINERID/IFNAME, got \"" + s + "\"");
        }
        String id = s.substring(0, slash);
        String ifname = s.substring(slash + 1);
        if (!Names.isCniName(id) || Names.interfaceNameProblem(ifname) != null) {
            throw new UsageException("--valid: \"" + Names.printable(s) + "\" is no container ID and interface name");
        }
        return new Attachment(id, ifname);
    }

    private static void requireArgs(Options o, int min, int max, String shape) {
        int n = o.positional().size();
        if (n < min || n > max) {
            throw new UsageException("expected " + (shape.isEmpty() ? "no arguments" : shape) + ", got " + n + " argument" + (n == 1 ? "" : "s"));
        }
    }

    static String describe(CniException e) {
        if (e instanceof PluginException) return e.getMessage();
        StringBuilder sb = new StringBuilder();
        ErrorCode known = ErrorCode.of(e.code());
        sb.append("[").append(e.code());
        if (known != null) sb.append(" ").append(known.meaning());
        sb.append("] ").append(e.msg());
        if (!e.details().isEmpty()) sb.append(": ").append(e.details());
        return sb.toString();
    }
}
