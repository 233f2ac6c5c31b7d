package io.jcni.chaos;

import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates plugin calls from a seed: a valid config of one plugin type and a valid environment,
 * then mutations of both (wrong JSON types, huge, negative and malformed numbers, deep nesting,
 * invalid UTF-8, path and nft metacharacters, huge strings, missing, unknown and duplicate keys,
 * truncated or corrupted text, hostile paths). Pure: the same seed and scratch paths give the same
 * cases. The directories a plugin may write to ({@code dataDir} keys) are never mutated, so a
 * valid-looking config can only ever write under the test's scratch directory.
 */
final class FuzzInputs {

    /** Where generated configs may point: every one inside the test's scratch directory or namespaces. */
    record Paths(Path stateDir, Path hazardDir, String containerNetns, String hostNetns, Path cniPath) {
        Path ipamDir() {
            // Deep on purpose: a network name with "../" that slipped through still lands in the scratch tree, where it is seen.
            return stateDir.resolve("a/b/c/d/ipam");
        }

        Path nftDir() {
            return stateDir.resolve("nft");
        }

        Path tuningDir() {
            return stateDir.resolve("tuning");
        }

        Path fifo() {
            return hazardDir.resolve("fifo");
        }
    }

    /** One generated call. {@code hazardous}: it names a path that blocks or never ends, or a huge file (run it where it can be killed). */
    record Case(int index, String type, Map<String, String> env, byte[] stdin, boolean hazardous, String mutations) {
        String command() {
            return env.getOrDefault("CNI_COMMAND", "");
        }

        String describe() {
            String conf = new String(stdin, 0, Math.min(stdin.length, 400), StandardCharsets.UTF_8);
            return "#" + index + " " + type + " " + env + " mutations=[" + mutations + "] stdin(" + stdin.length + " bytes)=" + conf;
        }
    }

    /** JSON text written verbatim, for what a Map cannot hold: bad numbers, invalid UTF-8, duplicate keys. */
    record Raw(byte[] bytes) {
        static Raw of(String s) {
            return new Raw(s.getBytes(StandardCharsets.UTF_8));
        }
    }

    static final List<String> TYPES = List.of("bridge", "ptp", "loopback", "host-local", "static", "portmap", "firewall",
            "tuning", "bandwidth", "sbr");

    private static final String[] NUMBERS = {"1e308", "-1", "9223372036854775808", "-9223372036854775809", "99999999999",
        "0", "1.5", "1500.0", "-0", "1e-400", "4294967296", "65536", "2147483648", "-2147483649", "18446744073709551616",
        "1E2", "0.0000001", "123456789012345678901234567890"};
    private static final String[] BAD_NUMBERS = {"01500", "+1", ".5", "1.", "0x10", "NaN", "Infinity", "-", "1e", "--1"};
    private static final String[] PATHS = {"../../../x", "..", ".", "/", "/etc/passwd", "a/b", "a\u0000b", "~root", "a\nb",
        " ", "", "-x", ".jcni-index", "lock", "last_reserved_ip.0", "é", "名前", "a\\b", "%2e%2e", "../../../../../../../tmp/x",
        "CON", "x".repeat(300), "y".repeat(4096), "z".repeat(256)};
    private static final String[] NFT = {"\"; flush ruleset; \"", "}", "{", "drop", "accept", "return", "counter", "ip",
        "chain", "th", "@x", "$x", "#", "x\nadd rule inet jcni x drop", ";", "*", "br*", "\\", "'", "a b",
        "meta mark set 1", "jcni", "inet", "CNI-ADMIN\"", "-", "0"};
    private static final String[] ADDRESSES = {"10.150.0.0/33", "300.1.1.1", "::ffff:1.2.3.4", "fe80::1%eth0", "1.2.3.4/",
        "10.150.0.5", "0.0.0.0/0", "::/0", "10.150.0.0/31", "1.2.3.4/-1", "255.255.255.255/32", "10.150.0.1/24",
        "2001:db8::/129", "::", "0.0.0.0", "127.0.0.1", "224.0.0.1/4", "10.150.0.0/24"};
    private static final String[] WORDS = {"tcp", "udp", "sctp", "TCP", "icmp", "same-bridge", "isolated", "nftables",
        "iptables", "firewalld", "host-local", "static", "bridge", "dhcp", "none", "true", "1.1.0", "0.4.0", "0.1.0",
        "9.9.9", "", "eth0", "lo", "fzbr0"};
    private static final byte[][] BAD_UTF8 = {{(byte) 0xff}, {(byte) 0xc0, (byte) 0x80}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
        {(byte) 0xe2, (byte) 0x82}, {(byte) 0xf8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80}, {0x61, (byte) 0xfe, 0x62}};

    private final Paths paths;

    FuzzInputs(Paths paths) {
        this.paths = paths;
    }

    /** Case {@code index} of the run with {@code seed}: independent of every other case. */
    Case generate(long seed, int index) {
        Random rnd = new Random(seed * 1_000_003L + index);
        String type = TYPES.get(rnd.nextInt(TYPES.size()));
        Map<String, Object> conf = Json.parseObject(validConfig(type));
        pin(type, conf); // before mutating too: a duplicated key keeps a pinned copy
        Map<String, String> env = validEnv(rnd, index);
        List<String> done = new ArrayList<>();
        boolean[] hazardous = {false};

        // Profiles: a mutated config with a valid environment reaches the parsers; a valid config with a mutated
        // environment, or with a hostile path, reaches the code that acts.
        int profile = rnd.nextInt(100);
        int envMutations = profile < 65 ? (rnd.nextInt(7) == 0 ? 1 : 0) : profile < 85 ? 1 + rnd.nextInt(2) : 0;
        int confMutations = profile < 65 ? 1 + rnd.nextInt(3) : 0;
        for (int i = 0; i < envMutations; i++) done.add(mutateEnv(rnd, env, hazardous));
        Object root = conf;
        for (int i = 0; i < confMutations; i++) {
            String[] what = new String[1];
            root = mutate(rnd, root, what, hazardous);
            done.add(what[0]);
        }
        if (profile >= 97) done.add(hostilePath(rnd, conf, env, hazardous));
        pin(type, root);
        byte[] stdin = write(root);
        if (rnd.nextInt(20) == 0) {
            stdin = corrupt(rnd, stdin);
            done.add("corrupt text");
        }
        return new Case(index, type, env, stdin, hazardous[0], String.join(", ", done));
    }

    // ---------------------------------------------------------------- valid inputs

    private Map<String, String> validEnv(Random rnd, int index) {
        Map<String, String> env = new LinkedHashMap<>();
        int c = rnd.nextInt(100);
        env.put("CNI_COMMAND", c < 50 ? "ADD" : c < 70 ? "DEL" : c < 80 ? "CHECK" : c < 90 ? "GC" : c < 95 ? "STATUS" : "VERSION");
        env.put("CNI_CONTAINERID", "fz" + index);
        env.put("CNI_NETNS", paths.containerNetns());
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", paths.cniPath().toString());
        return env;
    }

    String validConfig(String type) {
        String prev = """
            {"cniVersion":"1.1.0","interfaces":[{"name":"fzbr0"},{"name":"vethfz0","mac":"0a:58:0a:96:00:07"},
              {"name":"eth0","mac":"0a:58:0a:96:00:08","sandbox":"%s"}],
             "ips":[{"address":"10.150.0.7/24","gateway":"10.150.0.1","interface":2},{"address":"fd00:150::7/64","interface":2}],
             "routes":[{"dst":"0.0.0.0/0","gw":"10.150.0.1"}],"dns":{"nameservers":["10.150.0.1"]}}
            """.formatted(paths.containerNetns());
        return switch (type) {
            case "bridge" -> """
                {"cniVersion":"1.1.0","name":"fzb","type":"bridge","bridge":"fzbr0","isGateway":true,"ipMasq":true,"mtu":1500,
                 "hairpinMode":false,"promiscMode":false,"vlan":0,"isDefaultGateway":false,"forceAddress":false,"macspoofchk":false,
                 "ipam":{"type":"host-local","ranges":[[{"subnet":"10.150.0.0/24","rangeStart":"10.150.0.10","rangeEnd":"10.150.0.200",
                   "gateway":"10.150.0.1"}]],"routes":[{"dst":"0.0.0.0/0"}]}}""";
            case "ptp" -> """
                {"cniVersion":"1.0.0","name":"fzp","type":"ptp","ipMasq":true,"mtu":1400,
                 "ipam":{"type":"host-local","subnet":"10.151.0.0/24","routes":[{"dst":"0.0.0.0/0"}]}}""";
            case "loopback" -> """
                {"cniVersion":"1.1.0","name":"fzl","type":"loopback"}""";
            case "host-local" -> """
                {"cniVersion":"1.1.0","name":"fzh","type":"host-local",
                 "ipam":{"type":"host-local","ranges":[[{"subnet":"10.152.0.0/24"}],[{"subnet":"fd00:152::/64"}]],
                   "routes":[{"dst":"0.0.0.0/0"}]}}""";
            case "static" -> """
                {"cniVersion":"1.1.0","name":"fzs","type":"static","ipam":{"type":"static",
                  "addresses":[{"address":"10.153.0.5/24","gateway":"10.153.0.1"}],"routes":[{"dst":"0.0.0.0/0"}],
                  "dns":{"nameservers":["8.8.8.8"],"domain":"example.com","search":["example.com"]}}}""";
            case "portmap" -> """
                {"cniVersion":"1.1.0","name":"fzpm","type":"portmap","snat":true,"masqAll":false,
                 "runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},
                   {"hostPort":8081,"containerPort":81,"protocol":"udp","hostIP":"127.0.0.1"}]},"prevResult":%s}""".formatted(prev);
            case "firewall" -> """
                {"cniVersion":"1.1.0","name":"fzfw","type":"firewall","backend":"nftables","iptablesAdminChainName":"CNI-ADMIN",
                 "ingressPolicy":"same-bridge","prevResult":%s}""".formatted(prev);
            case "tuning" -> """
                {"cniVersion":"1.1.0","name":"fzt","type":"tuning","sysctl":{"net.ipv4.conf.eth0.arp_notify":"1"},"mtu":1400,
                 "promisc":false,"prevResult":%s}""".formatted(prev);
            case "bandwidth" -> """
                {"cniVersion":"1.1.0","name":"fzbw","type":"bandwidth","ingressRate":1000000,"ingressBurst":100000,
                 "egressRate":1000000,"egressBurst":100000,"prevResult":%s}""".formatted(prev);
            case "sbr" -> """
                {"cniVersion":"1.1.0","name":"fzsbr","type":"sbr","prevResult":%s}""".formatted(prev);
            default -> throw new IllegalArgumentException(type);
        };
    }

    /** The keys that name directories a plugin writes to always point into the scratch tree. */
    private void pin(String type, Object root) {
        if (!(root instanceof Map<?, ?> m)) return;
        @SuppressWarnings("unchecked")
        Map<String, Object> conf = (Map<String, Object>) m;
        conf.put("dataDir", (type.equals("tuning") ? paths.tuningDir() : paths.nftDir()).toString());
        if (conf.get("ipam") instanceof Map<?, ?> ipam) {
            @SuppressWarnings("unchecked")
            Map<String, Object> i = (Map<String, Object>) ipam;
            i.put("dataDir", paths.ipamDir().toString());
        }
    }

    // ---------------------------------------------------------------- mutations

    /** A path that is not what it claims (a FIFO that blocks open, an endless or a 3 GB file, a directory) where one is read. */
    private String hostilePath(Random rnd, Map<String, Object> conf, Map<String, String> env, boolean[] hazardous) {
        String path = pick(rnd, paths.fifo().toString(), "/dev/zero", paths.hazardDir().resolve("big").toString(),
                paths.hazardDir().toString(), paths.hazardDir().resolve("regular").toString(), "/dev/null", "/dev/urandom");
        hazardous[0] = true;
        env.put("CNI_COMMAND", "ADD");
        if (conf.get("ipam") instanceof Map<?, ?> ipam && rnd.nextBoolean()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> i = (Map<String, Object>) ipam;
            i.put("resolvConf", path);
            return "ipam.resolvConf=" + path;
        }
        env.put("CNI_NETNS", path);
        return "env CNI_NETNS=" + path;
    }

    private String mutateEnv(Random rnd, Map<String, String> env, boolean[] hazardous) {
        String key = switch (rnd.nextInt(7)) {
            case 0 -> "CNI_COMMAND";
            case 1 -> "CNI_CONTAINERID";
            case 2, 3 -> "CNI_NETNS";
            case 4 -> "CNI_IFNAME";
            case 5 -> "CNI_PATH";
            default -> "CNI_ARGS";
        };
        if (rnd.nextInt(8) == 0) {
            env.remove(key);
            return "env " + key + " removed";
        }
        String value = switch (key) {
            case "CNI_COMMAND" -> pick(rnd, "", "add", "ADD\n", "FOO", "ADD DEL", "VERSION", "GC", "STATUS", "CHECK", "DEL");
            case "CNI_CONTAINERID" -> pick(rnd, "", "a;b", "../x", "a b", "$(id)", "é", "-x", ".", "x".repeat(240),
                    "y".repeat(4096), "a\nb", "a/b", "_x", "a@b", "A-b.c_d");
            case "CNI_NETNS" -> {
                String v = pick(rnd, "", "/nonexistent/netns", "relative/netns", paths.hostNetns(), paths.hazardDir().toString(),
                        paths.hazardDir().resolve("regular").toString(), "/dev/null", "/dev/zero", paths.fifo().toString(),
                        paths.containerNetns() + "/..", paths.containerNetns() + "\u0000x");
                hazardous[0] |= v.equals("/dev/zero") || v.equals(paths.fifo().toString());
                yield v;
            }
            case "CNI_IFNAME" -> pick(rnd, "", "lo", "a/b", "..", ".", "é", "eth0 ", "x".repeat(16), "x".repeat(15), "$(id)",
                    "eth:0", "-x", "eth%d", "ñññññññ");
            case "CNI_PATH" -> pick(rnd, "", "/nonexistent", ":::", paths.cniPath() + "::/nonexistent", "relative");
            default -> pick(rnd, "", "IgnoreUnknown=1;IP=10.150.0.50", "K8S_POD_NAME=x;K8S_POD_NAMESPACE=y", "a", "=;=;",
                    "IP=999.1.1.1", "IgnoreUnknown=true;" + "k=v;".repeat(2000), "IP=10.150.0.5;IP=10.150.0.6", "MAC=zz",
                    "IgnoreUnknown=1;GATEWAY=10.150.0.1");
        };
        env.put(key, value);
        return "env " + key + "=" + abbreviate(value);
    }

    /** Mutates one random node of the tree (or the root); returns the new root. */
    private Object mutate(Random rnd, Object root, String[] what, boolean[] hazardous) {
        List<Object[]> slots = new ArrayList<>(); // {container, key-or-index, path}
        collect(root, "", slots);
        if (slots.isEmpty() || rnd.nextInt(25) == 0) {
            what[0] = "root replaced";
            return rnd.nextBoolean() ? deep(rnd, 1 + rnd.nextInt(20000)) : randomValue(rnd);
        }
        // Leaves (names, numbers, addresses) are where validation lives: three in four mutations aim at one.
        List<Object[]> leaves = slots.stream().filter(x -> !(value(x) instanceof Map) && !(value(x) instanceof List)).toList();
        Object[] slot = !leaves.isEmpty() && rnd.nextInt(4) != 0 ? leaves.get(rnd.nextInt(leaves.size())) : slots.get(rnd.nextInt(slots.size()));
        String path = (String) slot[2];
        int op = rnd.nextInt(12);
        if (op == 0 && slot[0] instanceof Map<?, ?> m) {
            m.remove(slot[1]);
            what[0] = path + " removed";
            return root;
        }
        if (op == 1 && slot[0] instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) m;
            String key = pick(rnd, "unknownKey", "type", "cniVersion", "name", "ipam", "prevResult", "runtimeConfig",
                    "capabilities", "args", "cni.dev/valid-attachments", "bridge", "resolvConf");
            Object v = randomValue(rnd);
            if (key.equals("resolvConf") && rnd.nextBoolean()) {
                v = pick(rnd, "/dev/zero", paths.fifo().toString(), "/etc/hostname", paths.hazardDir().toString(), "/nonexistent");
                hazardous[0] |= v.equals("/dev/zero") || v.equals(paths.fifo().toString());
            }
            map.put(key, v);
            what[0] = path + "." + key + " added";
            return root;
        }
        if (op == 2 && slot[0] instanceof Map<?, ?> m && slot[1] instanceof String key) {
            // A duplicate key: the parser must pick one (Go's decoder: the last) and not fail differently.
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) m;
            Object original = map.remove(key);
            map.put(key + "\u0000dup", original);
            map.put(key, randomValue(rnd));
            what[0] = path + " duplicated";
            return root;
        }
        Object value = switch (op) {
            case 3, 4 -> randomValue(rnd);
            case 5 -> Raw.of(pick(rnd, NUMBERS));
            case 6 -> Raw.of(pick(rnd, BAD_NUMBERS));
            case 7 -> deep(rnd, 1 + rnd.nextInt(5000));
            case 8 -> badUtf8(rnd);
            case 9 -> pick(rnd, PATHS);
            case 10 -> pick(rnd, NFT);
            default -> pick(rnd, ADDRESSES);
        };
        set(slot, value);
        what[0] = path + " = " + describe(value);
        return root;
    }

    private static void collect(Object node, String path, List<Object[]> slots) {
        if (node instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                String key = (String) e.getKey();
                if (key.equals("dataDir")) continue;
                String p = path + "." + key;
                slots.add(new Object[] {m, key, p});
                collect(e.getValue(), p, slots);
            }
        } else if (node instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                String p = path + "[" + i + "]";
                slots.add(new Object[] {l, i, p});
                collect(l.get(i), p, slots);
            }
        }
    }

    private static Object value(Object[] slot) {
        return slot[0] instanceof Map<?, ?> m ? m.get(slot[1]) : ((List<?>) slot[0]).get((Integer) slot[1]);
    }

    @SuppressWarnings("unchecked")
    private static void set(Object[] slot, Object value) {
        if (slot[0] instanceof Map<?, ?> m) ((Map<String, Object>) m).put((String) slot[1], value);
        else ((List<Object>) slot[0]).set((Integer) slot[1], value);
    }

    private Object randomValue(Random rnd) {
        return switch (rnd.nextInt(10)) {
            case 0 -> null;
            case 1 -> rnd.nextBoolean();
            case 2 -> Raw.of(pick(rnd, NUMBERS));
            case 3 -> pick(rnd, WORDS);
            case 4 -> new ArrayList<>(List.of(pick(rnd, WORDS), 1L));
            case 5 -> new LinkedHashMap<>(Map.of("a", pick(rnd, WORDS)));
            case 6 -> new ArrayList<>();
            case 7 -> new LinkedHashMap<>();
            case 8 -> "h".repeat(1 + rnd.nextInt(200_000));
            default -> pick(rnd, ADDRESSES);
        };
    }

    private static Object deep(Random rnd, int depth) {
        boolean arrays = rnd.nextBoolean();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < depth; i++) b.append(arrays ? "[" : "{\"a\":");
        b.append("1");
        for (int i = 0; i < depth; i++) b.append(arrays ? "]" : "}");
        return Raw.of(b.toString());
    }

    private static Raw badUtf8(Random rnd) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write('"');
        b.writeBytes("fz".getBytes(StandardCharsets.UTF_8));
        b.writeBytes(BAD_UTF8[rnd.nextInt(BAD_UTF8.length)]);
        b.write('"');
        return new Raw(b.toByteArray());
    }

    /**
     * Truncates the text or flips one byte, never inside a {@code "dataDir":"..."} pair: a flipped byte there would
     * send a plugin to another directory, or (in the key) to its default under /var/lib/cni.
     */
    private static byte[] corrupt(Random rnd, byte[] text) {
        if (text.length == 0) return text;
        byte[] out = rnd.nextBoolean() ? java.util.Arrays.copyOf(text, rnd.nextInt(text.length)) : text.clone();
        if (out.length > 0 && rnd.nextBoolean()) {
            boolean[] pinned = pinnedBytes(out);
            int at = rnd.nextInt(out.length);
            if (!pinned[at]) out[at] = (byte) rnd.nextInt(256);
        }
        return out;
    }

    private static boolean[] pinnedBytes(byte[] text) {
        boolean[] pinned = new boolean[text.length];
        byte[] key = "\"dataDir\":\"".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i + key.length <= text.length; i++) {
            if (!java.util.Arrays.equals(text, i, i + key.length, key, 0, key.length)) continue;
            int end = i + key.length;
            while (end < text.length && text[end] != '"') end++;
            for (int j = i; j <= Math.min(end, text.length - 1); j++) pinned[j] = true;
        }
        return pinned;
    }

    // ---------------------------------------------------------------- writing

    /** JSON text of the tree; {@link Raw} verbatim, a key ending in NUL "dup" written as a second copy of the key. */
    static byte[] write(Object v) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(v, out);
        return out.toByteArray();
    }

    private static void write(Object v, ByteArrayOutputStream out) {
        switch (v) {
            case null -> out.writeBytes("null".getBytes(StandardCharsets.UTF_8));
            case Raw r -> out.writeBytes(r.bytes());
            case String s -> out.writeBytes(Json.write(s).getBytes(StandardCharsets.UTF_8));
            case Map<?, ?> m -> {
                out.write('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) out.write(',');
                    first = false;
                    String key = ((String) e.getKey()).replace("\u0000dup", "");
                    write(key, out);
                    out.write(':');
                    write(e.getValue(), out);
                }
                out.write('}');
            }
            case List<?> l -> {
                out.write('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) out.write(',');
                    write(l.get(i), out);
                }
                out.write(']');
            }
            default -> out.writeBytes(Json.write(v).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static String describe(Object v) {
        if (v instanceof Raw r) return abbreviate(new String(r.bytes(), StandardCharsets.UTF_8));
        return abbreviate(String.valueOf(v));
    }

    private static String abbreviate(String s) {
        String t = s.replace("\n", "\\n").replace("\u0000", "\\0");
        return t.length() > 60 ? t.substring(0, 60) + "...(" + s.length() + " chars)" : t;
    }

    @SafeVarargs
    private static <T> T pick(Random rnd, T... options) {
        return options[rnd.nextInt(options.length)];
    }
}
