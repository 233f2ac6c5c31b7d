package io.jcni.cli.doctor;

import io.jcni.common.Flags;
import io.jcni.plugins.common.nft.ElementStore;
import io.jcni.runtime.ConfigLoader;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.ResultCache;
import io.jcni.types.Json;
import io.jcni.types.Names;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code jcni doctor [--json] [--conf-dir DIR] [--cache-dir DIR] [--socket PATH] [--no-kernel]}. */
public final class Doctor {
    public static final String USAGE = """
            Usage: jcni doctor [--json] [--conf-dir DIR] [--cache-dir DIR] [--socket PATH] [--no-kernel]
              Checks this node for jcni and says, for each problem, what is wrong and how to fix it:
              kernel features the plugins need (probed in a scratch network namespace), netlink and
              nft access, configuration files that do not load, plugins missing from CNI_PATH, the
              jcnid daemon, and leftovers (cached attachments whose netns is gone, and addresses,
              jcni links and nftables elements that no attachment owns).
              --json       the findings as JSON
              --no-kernel  skip the kernel probe (it needs root)
              Directories as for the other commands (NETCONFPATH, JCNI_CACHE_DIR); CNI_PATH (default
              /opt/cni/bin); the daemon socket from --socket, JCNI_SOCKET or /run/jcni/jcnid.sock.
              Exit status: 0 all is well (only ok and info findings), 1 a problem was found, 2 usage error.
            """;

    private Doctor() {}

    /** Runs the doctor; env supplies NETCONFPATH, CNI_PATH, JCNI_CACHE_DIR, JCNI_SOCKET. */
    public static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        boolean json = false, kernel = true;
        Path conf = pathEnv(env, "NETCONFPATH", ConfigLoader.DEFAULT_DIR);
        Path cache = pathEnv(env, "JCNI_CACHE_DIR", ResultCache.DEFAULT_DIR);
        Path socket = pathEnv(env, "JCNI_SOCKET", Path.of("/run/jcni/jcnid.sock"));
        Flags f = new Flags(args);
        while (f.next()) {
            String a = f.name();
            switch (a) {
                case "--json" -> json = true;
                case "--no-kernel" -> kernel = false;
                case "-h", "--help" -> {
                    out.print(USAGE);
                    return 0;
                }
                case "--conf-dir", "--cache-dir", "--socket" -> {
                    Path p;
                    try {
                        p = f.path();
                    } catch (IllegalArgumentException e) {
                        err.println("jcni doctor: " + e.getMessage());
                        return 2;
                    }
                    if (a.equals("--conf-dir")) conf = p;
                    else if (a.equals("--cache-dir")) cache = p;
                    else socket = p;
                }
                default -> {
                    err.println("jcni doctor: unknown option \"" + f.token() + "\"");
                    err.print(USAGE);
                    return 2;
                }
            }
        }
        String cniPathEnv = env.get("CNI_PATH");
        List<Path> cniPath = PluginExec.splitPath(cniPathEnv == null || cniPathEnv.isEmpty() ? "/opt/cni/bin" : cniPathEnv);
        NodeFacts facts = NodeProbe.probe(new NodeProbe.Options(conf, cniPath, cache, socket, ElementStore.DEFAULT_BASE, kernel));
        List<Finding> findings = Checks.evaluate(facts);
        if (json) out.println(Json.writePretty(toJson(findings)));
        else out.print(render(findings));
        return allWell(findings) ? 0 : 1;
    }

    private static Path pathEnv(Map<String, String> env, String key, Path dflt) {
        String v = env.get(key);
        return v == null || v.isEmpty() ? dflt : Path.of(v);
    }

    static boolean allWell(List<Finding> findings) {
        return findings.stream().noneMatch(f -> f.severity().problem());
    }

    static Map<String, Object> toJson(List<Finding> findings) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", allWell(findings));
        m.put("problems", findings.stream().filter(f -> f.severity().problem()).count());
        List<Object> list = new ArrayList<>();
        for (Finding f : findings) list.add(f.toJson());
        m.put("findings", list);
        return m;
    }

    /** One line per finding ("ok", "info", "WARN", "FAIL"), each fix indented under its problem, then a summary. */
    static String render(List<Finding> findings) {
        StringBuilder b = new StringBuilder();
        for (Finding f : findings) {
            String tag = switch (f.severity()) {
                case OK -> "ok  ";
                case INFO -> "info";
                case WARN -> "WARN";
                case FAIL -> "FAIL";
            };
            // Messages quote names and reasons that came from files: a control character is shown
            // escaped, so no file can start a line of this report.
            b.append(tag).append("  ").append(String.format("%-9s", f.check())).append(" ").append(Names.printable(f.message())).append('\n');
            if (!f.fix().isEmpty() && f.severity() != Finding.Severity.OK) b.append("      fix: ").append(Names.printable(f.fix())).append('\n');
        }
        long problems = findings.stream().filter(f -> f.severity().problem()).count();
        b.append(problems == 0 ? "jcni doctor: all is well\n" : "jcni doctor: " + problems + " problem" + (problems == 1 ? "" : "s") + " found\n");
        return b.toString();
    }
}
