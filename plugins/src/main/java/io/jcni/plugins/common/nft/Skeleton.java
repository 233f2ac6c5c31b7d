package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A feature's table structure (an nft script of {@code add table/set/map/chain}, {@code flush
 * chain} and {@code add rule} lines), read for what the netlink path needs. Pure.
 * <ul>
 *   <li>the types of the table's sets and maps, to turn an {@link Element}'s nft text
 *       ({@code tcp . 8080}) into the bytes the kernel stores ({@link #key}, {@link #data});</li>
 *   <li>its {@code add element} lines of the table (e.g. the firewall's isolated bridges): sent with
 *       the attachment's elements, so the structure itself does not vary with them;</li>
 *   <li>the chains it flushes and refills, and how many rules each then holds ({@link #rules}):
 *       applying it replaces what another structure put there ({@link ElementStore} tracks which
 *       structures are in force by {@link #hash}; CHECK counts the rules);</li>
 *   <li>the rest, {@link #structure}: what {@code nft -f} applies when it is not in force.</li>
 * </ul>
 */
public record Skeleton(String structure, Map<String, SetType> sets, List<Element> elements, Set<String> flushedChains,
                       Map<String, Integer> rules, String hash) {
    /** A set's key types, and a map's data types (null for a set), as nft names them. */
    public record SetType(List<String> key, List<String> data) {}

    private static final Pattern SET = Pattern.compile("add (?:set|map) (\\S+ \\S+) (\\S+) \\{ type ([^;:]+?)(?: : ([^;]+?))?;.*");
    private static final Pattern ELEMENT = Pattern.compile("add element (\\S+ \\S+) (\\S+) \\{ (.+) \\}");
    private static final Pattern FLUSH = Pattern.compile("flush chain (\\S+ \\S+ \\S+)");
    private static final Pattern RULE = Pattern.compile("add rule (\\S+ \\S+ \\S+) .*");

    /**
     * Reads {@code script} for {@code table} ({@code inet jcni}). Sets, maps and elements of other
     * tables stay in the structure, untouched.
     */
    public static Skeleton parse(String table, String script) {
        StringBuilder structure = new StringBuilder();
        Map<String, SetType> sets = new LinkedHashMap<>();
        List<Element> elements = new ArrayList<>();
        Set<String> flushed = new LinkedHashSet<>();
        Map<String, Integer> rules = new LinkedHashMap<>();
        for (String line : script.split("\n")) {
            String l = line.strip();
            if (l.isEmpty()) continue;
            Matcher m = ELEMENT.matcher(l);
            if (m.matches() && m.group(1).equals(table) && !m.group(3).contains(" : ") && !m.group(3).contains(" comment ")) {
                elements.add(new Element(m.group(2), m.group(3), null));
                continue;
            }
            structure.append(l).append('\n');
            m = SET.matcher(l);
            if (m.matches() && m.group(1).equals(table)) {
                sets.put(m.group(2), new SetType(fields(m.group(3)), m.group(4) == null ? null : fields(m.group(4))));
            }
            m = FLUSH.matcher(l);
            if (m.matches()) flushed.add(m.group(1));
            m = RULE.matcher(l);
            if (m.matches()) rules.merge(m.group(1), 1, Integer::sum);
        }
        rules.keySet().retainAll(flushed); // a chain it does not flush may hold rules of others
        String s = structure.toString();
        return new Skeleton(s, Map.copyOf(sets), List.copyOf(elements), Set.copyOf(flushed), Map.copyOf(rules), sha256(s));
    }

    /** The kernel's bytes for {@code e}'s key. @throws IllegalArgumentException for a set this skeleton does not define, or a key that does not fit its type */
    public byte[] key(String table, Element e) {
        return encode(e.key(), type(table, e).key(), e);
    }

    /** The kernel's bytes for {@code value}, a value of map {@code e.set()}; null for a set. */
    public byte[] data(String table, Element e, String value) {
        SetType t = type(table, e);
        if (t.data() == null) {
            if (value != null) throw new IllegalArgumentException("set " + e.set() + " of " + table + " takes no value");
            return null;
        }
        if (value == null) throw new IllegalArgumentException("map " + e.set() + " of " + table + " needs a value");
        return encode(value, t.data(), e);
    }

    private SetType type(String table, Element e) {
        SetType t = sets.get(e.set());
        if (t == null) throw new IllegalArgumentException("no set " + e.set() + " in the structure of " + table);
        return t;
    }

    private static List<String> fields(String types) {
        List<String> out = new ArrayList<>();
        for (String t : types.split(" \\. ")) out.add(t.strip());
        return List.copyOf(out);
    }

    /**
     * A value of a concatenation: each field in its byte order, padded to 4 bytes as the kernel's
     * 32-bit registers hold them; a single field unpadded (as nft sizes such a set's key).
     */
    static byte[] encode(String text, List<String> types, Element e) {
        String[] parts = text.split(" \\. ", -1);
        if (parts.length != types.size()) {
            throw new IllegalArgumentException("\"" + text + "\" does not have the " + types.size() + " fields of " + e.set());
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < parts.length; i++) {
            byte[] f = field(parts[i].strip(), types.get(i));
            out.writeBytes(f);
            if (types.size() > 1) for (int p = f.length; p % 4 != 0; p++) out.write(0);
        }
        return out.toByteArray();
    }

    static byte[] field(String v, String type) {
        return switch (type) {
            case "ipv4_addr", "ipv6_addr" -> {
                IpAddr a = IpAddr.tryParse(v);
                if (a == null || a.isV6() != type.equals("ipv6_addr")) throw new IllegalArgumentException("not an " + type + ": " + v);
                yield a.bytes();
            }
            case "inet_proto" -> new byte[] {(byte) protocol(v)};
            case "inet_service" -> {
                int port = number(v, 65535, type);
                yield new byte[] {(byte) (port >> 8), (byte) port};
            }
            case "ifname" -> ifname(v);
            case "ether_addr" -> {
                String[] b = v.split(":");
                if (b.length != 6) throw new IllegalArgumentException("not an ether_addr: " + v);
                byte[] mac = new byte[6];
                for (int i = 0; i < 6; i++) mac[i] = (byte) number16(b[i], v);
                yield mac;
            }
            default -> throw new IllegalArgumentException("nft type " + type + " is not encoded by jcni");
        };
    }

    /** A quoted interface name ({@code NftSyntax.ifname}): the name, NUL-padded to IFNAMSIZ. */
    private static byte[] ifname(String v) {
        if (v.length() < 2 || !v.startsWith("\"") || !v.endsWith("\"")) throw new IllegalArgumentException("not a quoted ifname: " + v);
        String name = v.substring(1, v.length() - 1).replace("\\*", "*");
        byte[] b = name.getBytes(StandardCharsets.US_ASCII);
        if (name.isEmpty() || b.length > 15 || name.indexOf('\\') >= 0 || name.indexOf('"') >= 0) {
            throw new IllegalArgumentException("not an interface name: " + v);
        }
        byte[] out = new byte[16];
        System.arraycopy(b, 0, out, 0, b.length);
        return out;
    }

    private static int protocol(String v) {
        return switch (v) {
            case "tcp" -> 6;
            case "udp" -> 17;
            case "sctp" -> 132;
            default -> number(v, 255, "inet_proto");
        };
    }

    private static int number(String v, int max, String type) {
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= max) return n;
        } catch (NumberFormatException ignored) {
            // below
        }
        throw new IllegalArgumentException("not an " + type + ": " + v);
    }

    private static int number16(String hex, String v) {
        try {
            if (hex.length() == 2) return Integer.parseInt(hex, 16);
        } catch (NumberFormatException ignored) {
            // below
        }
        throw new IllegalArgumentException("not an ether_addr: " + v);
    }

    private static String sha256(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
