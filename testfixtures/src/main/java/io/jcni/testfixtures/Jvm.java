package io.jcni.testfixtures;

import io.jcni.common.Launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * The JVMs a test starts of its own (a standalone plugin, jcnid, the jcni command, a load generator)
 * run with the options jcni's launchers give the same kind of JVM: common's {@link Launcher}, their
 * one source. A test that spelled its own options ran a JVM users never get (a JVM warning on a
 * plugin's stdout breaks its JSON; a different heap, collector or compiler changes what is measured).
 * The class path is the test JVM's unless a test needs a narrower one.
 */
public final class Jvm {
    private Jvm() {}

    /** The command that runs {@code mainClass args...} on the test's class path; a mutable list, for the caller to extend. */
    public static List<String> command(Launcher.Kind kind, String mainClass, String... args) {
        return commandOn(testClassPath(), kind, mainClass, args);
    }

    /** The same on {@code classPath}. */
    public static List<String> commandOn(String classPath, Launcher.Kind kind, String mainClass, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        // No native library path: the JNI library comes out of jcni-linux's jar on first use.
        cmd.addAll(Launcher.jvmOptions(kind, null));
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * Writes an executable launcher at {@code file}, as scripts/install.sh writes them (no AOT cache),
     * for the test's class path.
     *
     * @param generator who wrote it (the launcher's marker line names it)
     * @param main      the main class and its arguments, as shell text (e.g. {@code io.jcni.plugins.PluginMain bridge})
     */
    public static Path launcher(Path file, Launcher.Kind kind, String generator, String main) throws IOException {
        return launcher(file, kind, generator, testClassPath(), main);
    }

    /** The same on {@code classPath}. */
    public static Path launcher(Path file, Launcher.Kind kind, String generator, String classPath, String main) throws IOException {
        Files.writeString(file, Launcher.script(kind, generator, java(), classPath, null, null, main));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /** The test JVM's own {@code java} executable. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The test JVM's class path. */
    public static String testClassPath() {
        return System.getProperty("java.class.path");
    }
}
