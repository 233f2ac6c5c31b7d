package io.jcni.plugins.meta.tuning;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * What sysctl keys the tuning plugin accepts and where they lead.
 *
 * <p>As upstream: dots become slashes, the first {@code IFNAME} is replaced with CNI_IFNAME (after
 * the dots, so an interface name may contain dots), and the result must name something under
 * /proc/sys/net, which the kernel keeps per network namespace. Stricter than upstream: every path
 * component must be non-empty and not {@code .}/{@code ..}, so a key like
 * {@code net.ipv4.conf.../../..} is refused before anything is written instead of failing half-way
 * on a directory.
 */
final class SysctlKeys {
    static final Path DEFAULT_ALLOWLIST = Path.of("/etc/cni/tuning/allowlist.conf");

    private SysctlKeys() {}

    /**
     * The path of {@code key} relative to /proc/sys (e.g. {@code net/ipv4/conf/eth0/arp_filter}).
     *
     * @throws CniException naming the key when it is not a network sysctl
     */
    static String resolve(String key, String ifname) {
        String rel = key.replace('.', '/');
        int at = rel.indexOf("IFNAME");
        if (at >= 0) rel = rel.substring(0, at) + ifname + rel.substring(at + "IFNAME".length());
        String[] parts = rel.split("/", -1);
        boolean ok = parts.length >= 2 && parts[0].equals("net");
        for (String p : parts) {
            if (p.isEmpty() || p.equals(".") || p.equals("..")) ok = false;
        }
        if (!ok) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid net sysctl key: \"" + key + "\"",
                    "it names /proc/sys/" + rel + "; only keys under /proc/sys/net (net.*) are allowed");
        }
        return rel;
    }

    /** Resolves every key, failing on the first bad one, before anything is changed. */
    static Map<String, String> resolveAll(Map<String, String> sysctl, String ifname) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : sysctl.keySet()) out.put(key, resolve(key, ifname));
        return out;
    }

    /**
     * Upstream's optional allowlist: when the file exists, each non-blank line is a regular
     * expression and every configured key (as written, before IFNAME substitution) must contain a
     * match of one of them.
     */
    static void checkAllowlist(Map<String, String> sysctl, Path allowlist) {
        List<String> lines;
        try {
            lines = Files.readAllLines(allowlist, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException e) {
            throw new CniException(ErrorCode.IO_FAILURE, "failed to read sysctl allowlist " + allowlist, e);
        }
        List<String> allowed = new ArrayList<>();
        for (String l : lines) {
            if (!l.strip().isEmpty()) allowed.add(l.strip());
        }
        List<Pattern> patterns = new ArrayList<>();
        for (String a : allowed) {
            try {
                patterns.add(Pattern.compile(a));
            } catch (PatternSyntaxException e) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid regular expression in " + allowlist, e);
            }
        }
        for (String key : sysctl.keySet()) {
            if (patterns.stream().noneMatch(p -> p.matcher(key).find())) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Sysctl " + key
                        + " is not allowed. Only the following sysctls are allowed: [" + String.join(" ", allowed) + "]");
            }
        }
    }

    /**
     * Refuses a config whose top-level {@code sysctl} object names a key twice, as upstream does
     * ("duplicated sysctl keys are not allowed"). The parsed config cannot tell (the last value
     * wins), so this scans the raw, already validated JSON text.
     */
    static void checkDuplicates(byte[] stdin) {
        String s = new String(stdin, StandardCharsets.UTF_8);
        Scanner sc = new Scanner(s);
        sc.ws();
        if (!sc.peek('{')) return;
        sc.pos++;
        Set<String> seen = new HashSet<>();
        while (true) {
            sc.ws();
            if (sc.peek('}') || sc.pos >= s.length()) return;
            if (sc.peek(',')) {
                sc.pos++;
                continue;
            }
            String key = sc.string();
            sc.ws();
            sc.pos++; // ':'
            sc.ws();
            if (key.equals("sysctl") && sc.peek('{')) {
                sc.pos++;
                while (true) {
                    sc.ws();
                    if (sc.pos >= s.length()) return;
                    if (sc.peek('}')) {
                        sc.pos++;
                        break;
                    }
                    if (sc.peek(',')) {
                        sc.pos++;
                        continue;
                    }
                    String k = sc.string();
                    if (!seen.add(k)) {
                        throw new CniException(ErrorCode.DECODING_FAILURE, "duplicated sysctl keys are not allowed", k);
                    }
                    sc.ws();
                    sc.pos++; // ':'
                    sc.ws();
                    sc.skipValue();
                }
            } else {
                sc.skipValue();
            }
        }
    }

    /** Just enough of a JSON reader to walk text that is known to be valid. */
    private static final class Scanner {
        final String s;
        int pos;

        Scanner(String s) {
            this.s = s;
        }

        boolean peek(char c) {
            return pos < s.length() && s.charAt(pos) == c;
        }

        void ws() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
        }

        String string() {
            StringBuilder sb = new StringBuilder();
            pos++; // opening quote
            while (pos < s.length()) {
                char c = s.charAt(pos++);
                if (c == '"') break;
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case 'n' -> sb.append('\n');
                    case 't' -> sb.append('\t');
                    case 'r' -> sb.append('\r');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> sb.append(e);
                }
            }
            return sb.toString();
        }

        void skipValue() {
            int depth = 0;
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c == '"') {
                    string();
                    if (depth == 0) return;
                    continue;
                }
                if (c == '{' || c == '[') depth++;
                if (c == '}' || c == ']') {
                    if (depth == 0) return; // end of the enclosing object
                    depth--;
                    pos++;
                    if (depth == 0) return;
                    continue;
                }
                if (depth == 0 && c == ',') return;
                pos++;
            }
        }
    }
}
