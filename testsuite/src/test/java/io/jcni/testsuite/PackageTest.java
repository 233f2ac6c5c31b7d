package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.PluginRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** scripts/package.sh builds the .deb, and what it holds is what README.md's package table says. */
class PackageTest {
    static final Path REPO = Path.of(System.getProperty("jcni.repo", "..")).toAbsolutePath().normalize();
    /** The modules that ship: pom.xml's module list (the one source, which scripts/env.sh reads too) but the test-only ones. */
    static final List<String> MODULES = shippedModules();

    static List<String> shippedModules() {
        List<String> out = new ArrayList<>();
        try {
            java.util.regex.Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(REPO.resolve("pom.xml")));
            while (m.find()) if (!List.of("testkit", "testsuite", "chaos").contains(m.group(1))) out.add(m.group(1));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }

    /** Builds the package (gzip -1: the same contents, in seconds) into a scratch directory. */
    static Path buildDeb(Path out) {
        String deb = Sh.run(null, null, 300, REPO.resolve("scripts/package.sh").toString(), "--no-build", "--fast",
                "--out", out.toString()).ok().out().strip();
        Path p = Path.of(deb);
        return p.isAbsolute() ? p : REPO.resolve(p);
    }

    /** The regular files and symlinks in a .deb, as absolute paths. */
    static List<String> files(Path deb) {
        List<String> out = new ArrayList<>();
        for (String l : Sh.lines(Sh.ok("sh", "-c", "dpkg-deb --fsys-tarfile '" + deb + "' | tar -tv"))) {
            if (l.startsWith("d")) continue;
            String[] f = l.split("\\s+");
            String name = f[5].startsWith("./") ? f[5].substring(1) : f[5];
            out.add(name);
        }
        return out;
    }

    /** The paths README.md lists between its package-contents markers, one per line (first column). */
    static List<String> readmePatterns() throws IOException {
        String readme = Files.readString(REPO.resolve("README.md"));
        int a = readme.indexOf("<!-- package-contents -->");
        int b = readme.indexOf("<!-- /package-contents -->");
        assertTrue(a >= 0 && b > a, "README.md has no package-contents block");
        List<String> out = new ArrayList<>();
        for (String l : readme.substring(a, b).split("\n")) {
            if (l.startsWith("/")) out.add(l.split("\\s+")[0]);
        }
        return out;
    }

    /** {@code <type>} a plugin type, {@code <module>} a module, {@code {a,b}} either, {@code ...} anything below. */
    static Pattern regex(String pattern) {
        StringBuilder r = new StringBuilder();
        String types = String.join("|", PluginRegistry.types());
        for (int i = 0; i < pattern.length(); ) {
            if (pattern.startsWith("<type>", i)) { r.append("(").append(types).append(")"); i += 6; }
            else if (pattern.startsWith("<module>", i)) { r.append("(").append(String.join("|", MODULES)).append(")"); i += 8; }
            else if (pattern.startsWith("...", i)) { r.append(".+"); i += 3; }
            else if (pattern.charAt(i) == '{') {
                int end = pattern.indexOf('}', i);
                List<String> alts = new ArrayList<>();
                for (String s : pattern.substring(i + 1, end).split(",")) alts.add(Pattern.quote(s));
                r.append("(").append(String.join("|", alts)).append(")");
                i = end + 1;
            } else { r.append(Pattern.quote(String.valueOf(pattern.charAt(i)))); i++; }
        }
        return Pattern.compile(r.toString());
    }

    @Test
    void packageHoldsExactlyWhatTheReadmeSays() throws IOException {
        Path out = Files.createTempDirectory("jcni-pkg-");
        try {
            Path deb = buildDeb(out);
            assertTrue(deb.getFileName().toString().matches("jcni_[0-9.]+(~snapshot)?_amd64\\.deb"), deb.toString());
            List<String> files = files(deb);
            List<String> patterns = readmePatterns();
            List<String> unlisted = new ArrayList<>();
            Set<String> unused = new TreeSet<>(patterns);
            for (String f : files) {
                boolean hit = false;
                for (String p : patterns) {
                    if (regex(p).matcher(f).matches()) {
                        hit = true;
                        unused.remove(p);
                    }
                }
                if (!hit) unlisted.add(f);
            }
            assertEquals(List.of(), unlisted, "files in the package that README.md does not list");
            assertEquals(Set.of(), unused, "README.md lists paths the package does not have");
            // Every plugin type is there, as a shim and as its standalone fallback.
            for (String t : PluginRegistry.types()) {
                assertTrue(files.contains("/opt/cni/bin/" + t), t);
                assertTrue(files.contains("/opt/jcni/libexec/" + t), t);
            }
            String control = Sh.ok("dpkg-deb", "-f", deb.toString());
            for (String field : List.of("Package: jcni", "Architecture: amd64", "Depends: libc6", "Maintainer: ", "Description: ")) {
                assertTrue(control.contains(field), field + " in\n" + control);
            }
        } finally {
            Sh.quiet("rm", "-rf", out.toString());
        }
    }
}
