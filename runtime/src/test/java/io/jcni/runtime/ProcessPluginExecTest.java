package io.jcni.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.NetConfList;
import io.jcni.types.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs fake plugins (shell scripts) as real processes. */
class ProcessPluginExecTest {

    @TempDir
    Path bin;

    final List<String> stderr = Collections.synchronizedList(new ArrayList<>());
    final ProcessPluginExec exec = new ProcessPluginExec(Duration.ofSeconds(20), stderr::add, null);

    static final CniEnvironment ENV = new CniEnvironment("ADD", "ctr1", "/run/netns/x", "eth0", "A=1", "/nowhere");

    private Path script(String name, String body) throws IOException {
        Path p = bin.resolve(name);
        Files.writeString(p, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private static String run(ProcessPluginExec e, Path p, String stdin) {
        return new String(e.run(p, stdin.getBytes(StandardCharsets.UTF_8), ENV), StandardCharsets.UTF_8);
    }

    @Test
    void passesStdinAndExactlyTheCniEnvironmentOverTheInheritedOne() throws IOException {
        Path p = script("echo", """
                cat
                echo
                env | grep -E '^(CNI_|JRT_|PATH=)' | sort
                echo to-stderr >&2""");
        Map<String, String> base = new HashMap<>(Map.of("PATH", "/usr/bin:/bin", "JRT_KEEP", "yes", "CNI_COMMAND", "stale",
                "CNI_IFNAME", "stale", "CNI_NETNS", "stale"));
        ProcessPluginExec e = new ProcessPluginExec(Duration.ofSeconds(20), stderr::add, base);
        String out = run(e, p, "{\"cniVersion\":\"1.0.0\"}");
        List<String> lines = out.lines().toList();
        assertEquals("{\"cniVersion\":\"1.0.0\"}", lines.getFirst());
        assertEquals(List.of("CNI_ARGS=A=1", "CNI_COMMAND=ADD", "CNI_CONTAINERID=ctr1", "CNI_IFNAME=eth0", "CNI_NETNS=/run/netns/x",
                "CNI_PATH=/nowhere", "JRT_KEEP=yes", "PATH=/usr/bin:/bin"), lines.subList(1, lines.size()));
        assertEquals(List.of("to-stderr\n"), stderr);
    }

    @Test
    void inheritsTheProcessEnvironmentByDefault() throws IOException {
        Path p = script("path", "echo \"$PATH\"");
        assertEquals(System.getenv("PATH"), run(exec, p, "").strip());
    }

    @Test
    void errorJsonBecomesThePluginsError() throws IOException {
        Path p = script("fail", """
                echo '{"cniVersion":"1.0.0","code":7,"msg":"invalid config","details":"mtu must be positive"}'
                echo some-log >&2
                exit 1""");
        PluginException e = assertThrows(PluginException.class, () -> run(exec, p, "{}"));
        assertEquals(7, e.code());
        assertEquals("invalid config", e.msg());
        assertEquals("mtu must be positive", e.details());
        assertEquals("fail", e.plugin());
        assertEquals("some-log\n", e.stderr());
        assertTrue(e.getMessage().contains("fail") && e.getMessage().contains("invalid config"), e.getMessage());
    }

    @Test
    void garbageOnFailureIsDescribed() throws IOException {
        Path p = script("garbage", "echo 'panic: runtime error'; exit 2");
        PluginException e = assertThrows(PluginException.class, () -> run(exec, p, "{}"));
        assertTrue(e.getMessage().contains("garbage") && e.getMessage().contains("panic: runtime error")
                && e.getMessage().contains("exit status 2"), e.getMessage());
    }

    @Test
    void silentFailureShowsStderr() throws IOException {
        Path p = script("silent", "echo 'cannot open /dev/foo' >&2; exit 3");
        PluginException e = assertThrows(PluginException.class, () -> run(exec, p, "{}"));
        assertTrue(e.getMessage().contains("cannot open /dev/foo") && e.getMessage().contains("exit status 3"), e.getMessage());
        assertTrue(stderr.isEmpty(), "shown once, in the error, not also in the log: " + stderr);
        Path q = script("mute", "exit 4");
        PluginException f = assertThrows(PluginException.class, () -> run(exec, q, "{}"));
        assertTrue(f.getMessage().contains("no error message"), f.getMessage());
    }

    @Test
    void garbageOnSuccessIsAnInvalidResultNamingThePlugin() throws IOException {
        script("chatty", "echo 'Hello from the plugin'");
        Cni cni = new Cni(List.of(bin), bin.resolve("cache"), exec);
        NetConfList l = NetConfList.parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"chatty\"}]}", "t");
        CniException e = assertThrows(CniException.class, () -> cni.addNetworkList(l, new RuntimeConf("c", "/x", "eth0")));
        assertTrue(e.getMessage().contains("chatty") && e.getMessage().contains("Hello from the plugin"), e.getMessage());
    }

    @Test
    void hangingPluginIsKilledAtTheTimeout() throws IOException {
        Path pidFile = bin.resolve("child.pid");
        Path p = script("hang", "sleep 300 &\necho $! > " + pidFile + "\nwait");
        ProcessPluginExec fast = new ProcessPluginExec(Duration.ofMillis(700), stderr::add, null);
        long start = System.nanoTime();
        PluginException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(PluginException.class, () -> run(fast, p, "{}")));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < 10_000, "took " + ms + " ms");
        assertTrue(e.getMessage().contains("timed out") && e.getMessage().contains("hang"), e.getMessage());
        long child = Long.parseLong(Files.readString(pidFile).strip());
        // the plugin's own child is killed too
        for (int i = 0; i < 50 && ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false); i++) sleep(100);
        assertFalse(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false), "child " + child + " still running");
    }

    @Test
    void pluginThatNeverReadsStdinAndHangsIsStillKilled() throws IOException {
        Path p = script("deaf", "exec sleep 300");
        ProcessPluginExec fast = new ProcessPluginExec(Duration.ofMillis(500), stderr::add, null);
        byte[] big = new byte[4 << 20];
        PluginException e = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> assertThrows(PluginException.class, () -> fast.run(p, big, ENV)));
        assertTrue(e.getMessage().contains("timed out"), e.getMessage());
    }

    @Test
    void deathBySignalIsNamed() throws IOException {
        Path p = script("suicide", "kill -SEGV $$");
        PluginException e = assertThrows(PluginException.class, () -> run(exec, p, "{}"));
        assertTrue(e.getMessage().contains("signal 11") && e.getMessage().contains("SIGSEGV") && e.getMessage().contains("suicide"),
                e.getMessage());
    }

    @Test
    void notExecutableIsAnError() throws IOException {
        Path p = bin.resolve("noexec");
        Files.writeString(p, "#!/bin/sh\necho hi\n");
        PluginException e = assertThrows(PluginException.class, () -> run(exec, p, "{}"));
        assertTrue(e.getMessage().contains("noexec"), e.getMessage());
        CniException notFound = assertThrows(CniException.class, () -> PluginExec.findInPath("noexec", List.of(bin)));
        assertEquals(50, notFound.code());
    }

    @Test
    void findsTheFirstExecutableOnThePath() throws IOException {
        Path second = Files.createDirectories(bin.resolve("second"));
        Path first = Files.createDirectories(bin.resolve("first"));
        Files.writeString(first.resolve("p"), "not executable");
        Path p = second.resolve("p");
        Files.writeString(p, "#!/bin/sh\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertEquals(p, PluginExec.findInPath("p", List.of(bin.resolve("none"), first, second)));
        assertThrows(CniException.class, () -> PluginExec.findInPath("../p", List.of(first)));
        assertEquals(List.of(Path.of("/a"), Path.of("/b")), PluginExec.splitPath("/a::/b:"));
    }

    @Test
    void delegationOverridesOnlyTheCommand() throws IOException {
        script("ipam", """
                cat > /dev/null
                printf '{"cniVersion":"1.0.0","ips":[{"address":"10.9.0.2/24","gateway":"10.9.0.1"}],"x":"%s %s %s"}' "$CNI_COMMAND" "$CNI_CONTAINERID" "$CNI_IFNAME"
                """);
        Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c9", "CNI_IFNAME", "net1", "CNI_NETNS", "/x",
                "CNI_PATH", "/nowhere:" + bin, "CNI_ARGS", "");
        ExecDelegator d = new ExecDelegator(exec);
        byte[] conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\",\"ipam\":{\"type\":\"ipam\"}}".getBytes(StandardCharsets.UTF_8);
        Result r = d.add("ipam", conf, env);
        assertEquals("10.9.0.2/24", r.ips().getFirst().address().toString());
        assertEquals("ADD c9 net1", d.addJson("ipam", conf, env).get("x"));
        assertEquals("DEL c9 net1", new String(d.invoke(CniCommand.DEL, "ipam", conf, env), StandardCharsets.UTF_8).replaceAll(".*\"x\":\"([^\"]*)\".*", "$1"));
        CniException missing = assertThrows(CniException.class, () -> d.add("nope", conf, env));
        assertTrue(missing.getMessage().contains("nope"), missing.getMessage());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
