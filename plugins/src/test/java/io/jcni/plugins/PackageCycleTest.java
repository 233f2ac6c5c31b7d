package io.jcni.plugins;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No package of jcni's main code depends, directly or through others, on a package that depends on
 * it: {@code common} must stay buildable and testable without the plugins above it. Reads the
 * compiled classes of every jcni module on the class path (this module's and those below it) and
 * fails naming each cycle.
 */
class PackageCycleTest {
    /** Type descriptors in signatures and descriptors, e.g. {@code Lio/jcni/types/Result;}. */
    private static final Pattern DESCRIPTOR = Pattern.compile("Lio/jcni/[\\w/$]+;");

    @Test
    void mainCodeHasNoPackageCycle() throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (p.toString().contains("test-classes")) continue;
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.walk(p)) {
                    for (Path c : s.filter(f -> f.toString().endsWith(".class")).toList()) add(graph, Files.readAllBytes(c));
                }
            } else if (p.getFileName().toString().startsWith("jcni-") && p.toString().endsWith(".jar")) {
                try (JarFile jar = new JarFile(p.toFile())) {
                    for (var e : jar.stream().filter(e -> e.getName().endsWith(".class")).toList()) {
                        add(graph, jar.getInputStream(e).readAllBytes());
                    }
                }
            }
        }
        assertTrue(graph.containsKey("io.jcni.plugins.common"), "the plugins' classes were not found: " + graph.keySet());
        assertEquals(List.of(), cycles(graph), "package cycles");
    }

    private static void add(Map<String, Set<String>> graph, byte[] classFile) {
        ClassModel m = ClassFile.of().parse(classFile);
        String from = packageOf(m.thisClass().asInternalName());
        if (!from.startsWith("io.jcni")) return;
        Set<String> to = graph.computeIfAbsent(from, k -> new TreeSet<>());
        for (PoolEntry e : m.constantPool()) {
            if (e instanceof ClassEntry c && c.asInternalName().startsWith("io/jcni/")) to.add(packageOf(c.asInternalName()));
            if (e instanceof Utf8Entry u) {
                Matcher d = DESCRIPTOR.matcher(u.stringValue());
                while (d.find()) to.add(packageOf(d.group().substring(1, d.group().length() - 1)));
            }
        }
        to.remove(from);
    }

    private static String packageOf(String internalName) {
        return internalName.substring(0, internalName.lastIndexOf('/')).replace('/', '.');
    }

    /** The strongly connected groups of more than one package (Tarjan). */
    static List<Set<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new HashSet<>();
        List<Set<String>> out = new ArrayList<>();
        for (String v : graph.keySet()) if (!index.containsKey(v)) connect(v, graph, index, low, stack, onStack, out);
        return out;
    }

    private static void connect(String v, Map<String, Set<String>> graph, Map<String, Integer> index, Map<String, Integer> low,
                                Deque<String> stack, Set<String> onStack, List<Set<String>> out) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        onStack.add(v);
        for (String w : graph.getOrDefault(v, Set.of())) {
            if (!graph.containsKey(w)) continue;
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, onStack, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> group = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                group.add(w);
            } while (!w.equals(v));
            if (group.size() > 1) out.add(group);
        }
    }

    @Test
    void findsACycle() {
        Map<String, Set<String>> g = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a")));
        assertEquals(List.of(Set.of("a", "b", "c")), cycles(g));
    }
}
