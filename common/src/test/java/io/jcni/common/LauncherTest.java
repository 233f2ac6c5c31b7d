package io.jcni.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class LauncherTest {
    @Test
    void pluginAndDaemonOptionsShareTheirCommonPart() {
        List<String> plugin = Launcher.jvmOptions(Launcher.Kind.PLUGIN, "/opt/jcni/lib/libjcni.so");
        List<String> daemon = Launcher.jvmOptions(Launcher.Kind.DAEMON, null);
        for (String o : List.of("-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED")) {
            assertTrue(plugin.contains(o) && daemon.contains(o), o);
        }
        assertTrue(plugin.indexOf("-Xlog:disable") < plugin.indexOf("-Xlog:all=warning:stderr"), "warnings are turned on after everything is off");
        assertTrue(plugin.contains("-XX:CompileThresholdScaling=10"));
        assertFalse(String.join(" ", plugin).contains("CompileCommand"));
        assertTrue(daemon.containsAll(Launcher.DAEMON_COMPILE_SOONER) && !daemon.contains("-XX:CompileThresholdScaling=10"));
        assertTrue(daemon.indexOf("-XX:CompileCommand=quiet") < daemon.indexOf("-XX:CompileCommand=CompileThresholdScaling,io.jcni.etcd.*::*,0.1"),
                "quiet first: the JVM prints each command on stdout otherwise");
        assertTrue(daemon.contains("-Xmn12m"));
        assertEquals("-Djcni.native.lib=/opt/jcni/lib/libjcni.so", plugin.getLast());
        assertFalse(String.join(" ", daemon).contains("jcni.native.lib"));
    }

    @Test
    void aLauncherExecsJavaWithTheCacheWhenItIsReadable() {
        String s = Launcher.script(Launcher.Kind.PLUGIN, "a test", "/j dk/bin/java", "/l/a.jar:/l/b.jar", null, "/l/jcni.aot",
                "io.jcni.plugins.PluginMain bridge");
        List<String> lines = s.lines().toList();
        assertEquals("#!/bin/sh", lines.get(0));
        assertEquals("# jcni-launcher: written by a test; do not edit.", lines.get(1));
        assertTrue(lines.get(2).startsWith("if [ -r /l/jcni.aot ]; then exec '/j dk/bin/java' -Xlog:disable "), lines.get(2));
        assertTrue(lines.get(2).endsWith(" -XX:AOTCache=/l/jcni.aot -cp /l/a.jar:/l/b.jar io.jcni.plugins.PluginMain bridge; fi"), lines.get(2));
        assertTrue(lines.get(3).startsWith("exec '/j dk/bin/java' -Xlog:disable "), lines.get(3));
        assertTrue(lines.get(3).endsWith(" -cp /l/a.jar:/l/b.jar io.jcni.plugins.PluginMain bridge"), lines.get(3));
        assertEquals(4, lines.size());
        String daemon = Launcher.script(Launcher.Kind.DAEMON, "a test", "java", "cp", null, null, "io.jcni.daemon.Jcnid \"$@\"");
        assertTrue(daemon.contains("exec 0<&3 3<&-"), "adopts systemd's socket");
        assertTrue(daemon.endsWith(" -cp cp io.jcni.daemon.Jcnid \"$@\"\n"), daemon);
    }

    @Test
    void shellQuotingKeepsEveryWordOneWord() {
        assertEquals("/opt/jcni/bin/java", Launcher.shellQuote("/opt/jcni/bin/java"));
        assertEquals("'a b'", Launcher.shellQuote("a b"));
        assertEquals("'it'\\''s'", Launcher.shellQuote("it's"));
        assertEquals("'$HOME'", Launcher.shellQuote("$HOME"));
        assertEquals("''", Launcher.shellQuote(""));
    }
}
