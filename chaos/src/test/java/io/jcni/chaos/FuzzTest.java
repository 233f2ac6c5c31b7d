package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.chaos.FuzzInputs.Case;
import io.jcni.chaos.FuzzRunner.Mode;
import io.jcni.chaos.FuzzRunner.Outcome;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import io.jcni.types.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Generated configs and environments ({@link FuzzInputs}, fixed seed) against every plugin type:
 * most in-process through Skel.run, a share through the jcnid socket, a bounded share (and every
 * case naming a blocking or endless path) as standalone JVM processes. Every call must end within
 * a bound, print only a spec error (exit != 0) or a valid result (exit 0; an ADD is then DELeted)
 * on stdout, never a stack trace there, and leave nothing behind: no file under the scratch
 * directory but locks, host-local's last_reserved_ip and nft state's netns-cookie and skeletons, no link but
 * bridges, no nft element but firewall's bridge isolation. One run serves
 * both tests: the criteria, and (defect 9) that no input ends in an uncaught exception.
 */
@Tag("root")
class FuzzTest {
    private static final Set<String> NFT_TYPES = Set.of("bridge", "ptp", "portmap", "firewall");

    static final List<String> failures = new ArrayList<>();
    /** One line a case: what ran and how it ended, for reading a run afterwards (target/fuzz-cases.txt). */
    static final List<String> log = new ArrayList<>();
    static final List<String> uncaught = new ArrayList<>();
    static final Map<Mode, Integer> perMode = new EnumMap<>(Mode.class);
    static final Map<String, Integer> outcomes = new TreeMap<>();
    static int cases;
    /** Hangs per hostile path: after two, further cases with that path are skipped (and reported), so a run stays bounded. */
    static final Map<String, Integer> hangs = new TreeMap<>();
    static final Map<String, Integer> skipped = new TreeMap<>();
    static String time;

    static World world;
    static Path state;
    static String container;
    static Process sleeper;

    @BeforeAll
    static void runCorpus() throws Exception {
        Installed jcni = Installed.get();
        cases = Chaos.size("fuzzCases", 2000, 10000);
        int processEvery = Chaos.size("fuzzProcessEvery", 50, 50);
        long t0 = System.nanoTime();
        world = new World();
        container = world.container(0);
        state = world.dir.resolve("state");
        Path hazards = world.dir.resolve("hazards");
        Files.createDirectories(state);
        Files.createDirectories(hazards);
        Files.writeString(hazards.resolve("regular"), "not a namespace\n");
        Sh.ok("mkfifo", hazards.resolve("fifo").toString());
        Sh.ok("truncate", "-s", "3G", hazards.resolve("big").toString()); // sparse: 3 GB to read, nothing on disk
        List<String> hostilePaths = List.of(hazards.resolve("fifo").toString(), hazards.resolve("big").toString(), "/dev/zero", "/dev/urandom");
        FuzzInputs gen = new FuzzInputs(new FuzzInputs.Paths(state, hazards, container, "/var/run/netns/" + world.host, jcni.bin));
        // The daemon acts in its caller's namespace; this process is the caller, kept in the host namespace.
        sleeper = new ProcessBuilder("ip", "netns", "exec", world.host, "sleep", "86400").start();
        try (Jcnid jcnid = Jcnid.start(jcni, world.dir.resolve("jcnid.log"), "--request-timeout", "30");
             FuzzRunner runner = new FuzzRunner(world.host, jcni.socket, jcni.root.resolve("jcni/libexec"), sleeper.pid())) {
            for (int i = 0; i < cases; i++) {
                Case c = gen.generate(Chaos.SEED, i);
                Mode mode = c.hazardous() || i % processEvery == 0 ? Mode.PROCESS : i % 5 == 0 ? Mode.DAEMON : Mode.IN_PROCESS;
                // exec(2) cannot pass a NUL in the environment: such a case can only be run in-process.
                if (mode == Mode.PROCESS && c.env().values().stream().anyMatch(v -> v.indexOf('\0') >= 0)) mode = Mode.IN_PROCESS;
                perMode.merge(mode, 1, Integer::sum);
                runCase(runner, mode, c, hostilePaths);
            }
        }
        skipped.forEach((path, n) -> failures.add("[PROCESS] skipped: " + n + " cases naming " + path
                + " not run after " + hangs.get(path) + " of them hung"));
        time = Chaos.seconds(t0);
        Map<String, Integer> byKind = new TreeMap<>();
        for (String f : failures) byKind.merge(f.substring(f.indexOf("] ") + 2, f.indexOf(':', f.indexOf("] "))), 1, Integer::sum);
        System.out.printf("chaos fuzz: %d cases (seed %d; %s), outcomes %s; failures: %d %s; uncaught exceptions: %d; %s%n",
                cases, Chaos.SEED, perMode, outcomes, failures.size(), byKind, uncaught.size(), time);
        Path report = Path.of("target", "fuzz-report.txt");
        Files.createDirectories(report.getParent());
        Files.write(report, Stream.concat(failures.stream(), uncaught.stream().map(u -> "UNCAUGHT " + u)).toList());
        Files.write(report.resolveSibling("fuzz-cases.txt"), log);
    }

    @AfterAll
    static void cleanUp() {
        if (sleeper != null) sleeper.destroyForcibly();
        if (world != null) world.close();
    }

    @Test
    void everyCallEndsInTimeWithASpecAnswerAndLeavesNothing() {
        assertEquals(List.of(), failures.stream().limit(25).toList(),
                failures.size() + " of " + cases + " fuzz cases failed (all in chaos/target/fuzz-report.txt)");
    }

    /** Hostile input is refused with code 6/7, never an unexpected exception (999 with a trace). */
    @Test
    void noFuzzedInputEndsInAnUncaughtException() {
        assertEquals(List.of(), uncaught.stream().limit(25).toList(),
                uncaught.size() + " of " + cases + " fuzz cases ended in an uncaught exception (all in chaos/target/fuzz-report.txt)");
    }

    private static void runCase(FuzzRunner runner, Mode mode, Case c, List<String> hostilePaths) throws IOException {
        String where = "[" + mode + " " + c.type() + " " + c.command() + "] ";
        String text = new String(c.stdin(), StandardCharsets.UTF_8);
        String hostile = hostilePaths.stream().filter(p -> c.env().containsValue(p) || text.contains(p)).findFirst().orElse(null);
        if (hostile != null && hangs.getOrDefault(hostile, 0) >= 2) {
            skipped.merge(hostile, 1, Integer::sum);
            return;
        }
        Outcome o = runner.run(mode, c.type(), c.env(), c.stdin());
        if (o.exit() == null && hostile != null) hangs.merge(hostile, 1, Integer::sum);
        String verdict = judge(c.command(), o);
        outcomes.merge(o.exit() == null ? "hang" : o.exit() == 0 ? "ok" : "error", 1, Integer::sum);
        log.add(where + (c.hazardous() ? "hazard " : "") + "exit=" + o.exit() + " " + abbreviate(o.stdoutText().replaceAll("\\s+", " "))
                + " :: " + abbreviate(c.env() + " [" + c.mutations() + "]"));
        if (verdict != null) failures.add(where + verdict + ": " + c.describe());
        if (o.stderr().contains("\tat ")) uncaught.add(where + firstLines(o.stderr()) + " :: " + c.describe());
        // After a successful ADD, and after one we had to kill, the runtime DELs; an ADD that answered an error must have undone itself.
        if ((o.exit() == null || o.exit() == 0) && c.command().equals("ADD")) {
            Map<String, String> del = new HashMap<>(c.env());
            del.put("CNI_COMMAND", "DEL");
            Outcome d = runner.run(mode, c.type(), del, c.stdin());
            if (d.exit() == null || d.exit() != 0) {
                failures.add(where + "DEL after the ADD failed: " + (d.exit() == null ? "hang" : d.stdoutText().strip())
                        + " " + c.describe());
            }
        }
        // DEL retires veths and ifbs, deleted right after its answer (by jcnid or a detached process).
        RetiredLinks.awaitNone(world.host);
        String left = leftovers(c.type());
        if (left != null) failures.add(where + "state left: " + left + " " + c.describe());
    }

    /** null when the answer is what the spec allows, else what is wrong with it. */
    static String judge(String command, Outcome o) {
        if (o.exit() == null) return "no answer within " + FuzzRunner.BOUND_SECONDS + " s";
        String out = o.stdoutText();
        if (out.contains("\tat ") || out.contains("\\tat ") || out.contains("Exception in thread")) {
            return "stack trace on stdout: " + abbreviate(out);
        }
        if (o.exit() < 0) return "no CNI answer: " + firstLines(o.stderr());
        Map<String, Object> json = null;
        if (!out.isBlank()) {
            try {
                json = Json.parseObject(out);
            } catch (RuntimeException e) {
                return "stdout is not a JSON object (exit " + o.exit() + "): " + abbreviate(out);
            }
        }
        if (o.exit() != 0) {
            if (json == null || !(json.get("code") instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())
                    || !(json.get("msg") instanceof String)) {
                return "exit " + o.exit() + " without a spec error on stdout: " + abbreviate(out);
            }
            return null;
        }
        if (json != null && json.containsKey("code") && json.containsKey("msg")) {
            return "an error with exit 0: " + abbreviate(out);
        }
        return switch (command) {
            case "ADD" -> json != null && json.get("cniVersion") instanceof String ? null : "ADD exit 0 without a result: " + abbreviate(out);
            case "VERSION" -> json != null && json.get("supportedVersions") instanceof List ? null : "VERSION exit 0 without versions: " + abbreviate(out);
            default -> out.isBlank() ? null : command + " exit 0 printed " + abbreviate(out);
        };
    }

    /** What the case left: files, links, nft elements; each found is also removed, so the next case is judged alone. */
    static String leftovers(String type) throws IOException {
        List<String> left = new ArrayList<>();
        try (Stream<Path> s = Files.walk(state)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                String n = p.getFileName().toString();
                if (Leaks.isNamespaceBookkeeping(n) || n.startsWith("last_reserved_ip")) continue;
                left.add(state.relativize(p).toString());
                Files.delete(p);
            }
        }
        left.addAll(strayLinks("/var/run/netns/" + world.host, true));
        left.addAll(strayLinks(container, false));
        if (NFT_TYPES.contains(type)) {
            Map<String, Integer> elements = new TreeMap<>(Leaks.nftElementsBySet(world.host));
            // A bridge isolated by firewall's ingressPolicy stays isolated after DEL, as upstream: like the bridge itself.
            elements.keySet().removeAll(Set.of("fw_iso", "fw_iso_same"));
            if (!elements.isEmpty()) {
                left.add("nft elements " + elements);
                Sh.quiet("ip", "netns", "exec", world.host, "nft", "delete", "table", "inet", "jcni");
            }
        }
        return left.isEmpty() ? null : left.toString();
    }

    /** Links other than lo (and, in the host namespace, bridges, which outlive DEL by design); removed as found. */
    private static List<String> strayLinks(String netnsPath, boolean keepBridges) {
        List<String> stray = new ArrayList<>();
        try (Netns ns = Netns.open(netnsPath)) {
            List<Link> links = ns.run(() -> {
                try (Rtnl rt = Rtnl.open()) {
                    return rt.links();
                }
            });
            for (Link l : links) {
                if (l.name().equals("lo") || (keepBridges && "bridge".equals(l.kind()))) continue;
                stray.add("link " + l.name() + " (" + l.kind() + ") in " + Path.of(netnsPath).getFileName());
                Sh.quiet("ip", "-n", Path.of(netnsPath).getFileName().toString(), "link", "del", l.name());
            }
        }
        return stray;
    }

    private static String firstLines(String s) {
        String[] lines = s.strip().split("\n");
        return abbreviate(String.join(" | ", List.of(lines).subList(0, Math.min(3, lines.length))));
    }

    private static String abbreviate(String s) {
        String t = s.strip().replace("\n", "\\n");
        return t.length() > 300 ? t.substring(0, 300) + "..." : t;
    }
}
