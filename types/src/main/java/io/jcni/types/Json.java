package io.jcni.types;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer over plain Java values.
 *
 * <p>Objects are {@code LinkedHashMap<String,Object>} (key order kept, so configs pass through to
 * plugins unchanged; a repeated key counts once, with its last value, at its last position), arrays
 * are {@code List<Object>}, numbers are {@code Long} for integral literals within 64 bits,
 * {@code BigInteger} for longer ones and {@code BigDecimal} for literals with a fraction or an
 * exponent; strings, booleans and {@code null} map to themselves. The grammar is RFC 8259's, as
 * strict as Go's decoder (no leading zeros, no '+', no bare '.').
 *
 * <p>Why not Jackson: a CNI plugin is a short-lived process and Jackson alone adds 80–450 ms of
 * class loading to every ADD/DEL. This class loads in well under a millisecond.
 */
public final class Json {
    private Json() {}

    /** Parses one JSON value; trailing non-whitespace is an error. */
    public static Object parse(String text) {
        Reader r = new Reader(text);
        r.skipWs();
        Object v = r.value(0);
        r.skipWs();
        if (r.pos != text.length()) throw r.error("unexpected trailing data");
        return v;
    }

    /** Parses a JSON object, failing when the top-level value is anything else. */
    public static Map<String, Object> parseObject(String text) {
        Object v = parse(text);
        if (v instanceof Map<?, ?>) return asObject(v);
        throw new JsonException("expected a JSON object at the top level");
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> asObject(Object v) {
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    public static List<Object> asList(Object v) {
        return (List<Object>) v;
    }

    /** Compact single-line JSON. */
    public static String write(Object v) {
        StringBuilder sb = new StringBuilder(256);
        write(sb, v, null, 0);
        return sb.toString();
    }

    /** Indented JSON, four spaces a level, as the reference plugins print results. */
    public static String writePretty(Object v) {
        StringBuilder sb = new StringBuilder(512);
        write(sb, v, "    ", 0);
        return sb.toString();
    }

    /** A deep copy of a JSON tree, so callers may modify configs without touching the original. */
    public static Object deepCopy(Object v) {
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, val) -> out.put((String) k, deepCopy(val)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            for (Object o : l) out.add(deepCopy(o));
            return out;
        }
        return v;
    }

    /*
     * instanceof chains, not pattern switches, here and in Fields: a switch on types is linked at
     * run time by SwitchBootstraps (class generation through method handles) and the AOT cache
     * does not keep that linkage, so every standalone plugin process paid it again, ~5 ms of its
     * ~20 ms of work (docs/performance.md).
     */
    private static void write(StringBuilder sb, Object v, String indent, int depth) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String s) {
            quote(sb, s);
        } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short
                || v instanceof Byte || v instanceof BigInteger) {
            sb.append(v);
        } else if (v instanceof BigDecimal d) {
            sb.append(d.toString());
        } else if (v instanceof Double d) {
            if (d.isNaN() || d.isInfinite()) throw new JsonException("cannot write " + d);
            if (d == Math.rint(d) && Math.abs(d) < 1e15) sb.append(d.longValue());
            else sb.append(d);
        } else if (v instanceof Float f) {
            write(sb, f.doubleValue(), indent, depth);
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) sb.append(',');
                first = false;
                newline(sb, indent, depth + 1);
                quote(sb, String.valueOf(e.getKey()));
                sb.append(indent == null ? ":" : ": ");
                write(sb, e.getValue(), indent, depth + 1);
            }
            newline(sb, indent, depth);
            sb.append('}');
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) sb.append(',');
                newline(sb, indent, depth + 1);
                write(sb, l.get(i), indent, depth + 1);
            }
            newline(sb, indent, depth);
            sb.append(']');
        } else if (v instanceof JsonWritable w) {
            write(sb, w.toJson(), indent, depth);
        } else {
            throw new JsonException("cannot write " + v.getClass().getName());
        }
    }

    private static void newline(StringBuilder sb, String indent, int depth) {
        if (indent == null) return;
        sb.append('\n');
        for (int i = 0; i < depth; i++) sb.append(indent);
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    // Go's encoder escapes <, > and & too; keep the output byte-compatible for those.
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    /** Something that knows its own JSON tree. */
    public interface JsonWritable {
        Object toJson();
    }

    /** Malformed JSON, or a value of the wrong shape. */
    public static final class JsonException extends RuntimeException {
        public JsonException(String msg) {
            super(msg);
        }
    }

    private static final class Reader {
        private static final int MAX_DEPTH = 512;
        final String s;
        int pos;

        Reader(String s) {
            this.s = s;
        }

        JsonException error(String what) {
            int line = 1, col = 1;
            for (int i = 0; i < Math.min(pos, s.length()); i++) {
                if (s.charAt(i) == '\n') { line++; col = 1; } else col++;
            }
            return new JsonException(what + " at line " + line + " column " + col);
        }

        void skipWs() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
                else break;
            }
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) throw error("nesting too deep");
            if (pos >= s.length()) throw error("unexpected end of input");
            char c = s.charAt(pos);
            return switch (c) {
                case '{' -> object(depth);
                case '[' -> array(depth);
                case '"' -> string();
                case 't' -> literal("true", true);
                case 'f' -> literal("false", false);
                case 'n' -> literal("null", null);
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) yield number();
                    throw error("unexpected character '" + c + "'");
                }
            };
        }

        Object literal(String word, Object v) {
            if (!s.startsWith(word, pos)) throw error("invalid literal");
            pos += word.length();
            return v;
        }

        Map<String, Object> object(int depth) {
            pos++;
            Map<String, Object> m = new LinkedHashMap<>();
            skipWs();
            if (pos < s.length() && s.charAt(pos) == '}') { pos++; return m; }
            while (true) {
                skipWs();
                if (pos >= s.length() || s.charAt(pos) != '"') throw error("expected a string key");
                String k = string();
                skipWs();
                if (pos >= s.length() || s.charAt(pos) != ':') throw error("expected ':'");
                pos++;
                skipWs();
                Object v = value(depth + 1);
                // A repeated key keeps its last value at its last position, so that readers that
                // apply keys in document order (Fields, as Go does) see what Go sees.
                m.remove(k);
                m.put(k, v);
                skipWs();
                if (pos >= s.length()) throw error("unexpected end of input in object");
                char c = s.charAt(pos++);
                if (c == '}') return m;
                if (c != ',') { pos--; throw error("expected ',' or '}'"); }
            }
        }

        List<Object> array(int depth) {
            pos++;
            List<Object> l = new ArrayList<>();
            skipWs();
            if (pos < s.length() && s.charAt(pos) == ']') { pos++; return l; }
            while (true) {
                skipWs();
                l.add(value(depth + 1));
                skipWs();
                if (pos >= s.length()) throw error("unexpected end of input in array");
                char c = s.charAt(pos++);
                if (c == ']') return l;
                if (c != ',') { pos--; throw error("expected ',' or ']'"); }
            }
        }

        String string() {
            pos++;
            StringBuilder sb = null;
            int start = pos;
            while (true) {
                if (pos >= s.length()) throw error("unterminated string");
                char c = s.charAt(pos);
                if (c == '"') {
                    String out = sb == null ? s.substring(start, pos) : sb.append(s, start, pos).toString();
                    pos++;
                    return out;
                }
                if (c < 0x20) throw error("control character in string");
                if (c == '\\') {
                    if (sb == null) sb = new StringBuilder();
                    sb.append(s, start, pos);
                    pos++;
                    if (pos >= s.length()) throw error("unterminated escape");
                    char e = s.charAt(pos++);
                    switch (e) {
                        case '"' -> sb.append('"');
                        case '\\' -> sb.append('\\');
                        case '/' -> sb.append('/');
                        case 'b' -> sb.append('\b');
                        case 'f' -> sb.append('\f');
                        case 'n' -> sb.append('\n');
                        case 'r' -> sb.append('\r');
                        case 't' -> sb.append('\t');
                        case 'u' -> {
                            if (pos + 4 > s.length()) throw error("bad unicode escape");
                            try {
                                sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                            } catch (NumberFormatException ex) {
                                throw error("bad unicode escape");
                            }
                            pos += 4;
                        }
                        default -> throw error("bad escape '\\" + e + "'");
                    }
                    start = pos;
                } else {
                    pos++;
                }
            }
        }

        /**
         * RFC 8259's grammar, as Go's decoder enforces it: no leading zeros, no '+', digits on both
         * sides of '.', digits after the exponent. Integral literals become Long (BigInteger beyond
         * 64 bits); a fraction or an exponent makes a BigDecimal, which no integer field accepts.
         */
        Object number() {
            int start = pos;
            if (peek() == '-') pos++;
            if (peek() == '0') {
                pos++;
                if (isDigit(peek())) throw error("invalid number: leading zero");
            } else if (!digits()) {
                throw error("invalid number");
            }
            boolean integral = true;
            if (peek() == '.') {
                pos++;
                integral = false;
                if (!digits()) throw error("invalid number: no digits after '.'");
            }
            if (peek() == 'e' || peek() == 'E') {
                pos++;
                integral = false;
                if (peek() == '+' || peek() == '-') pos++;
                if (!digits()) throw error("invalid number: no digits in exponent");
            }
            String t = s.substring(start, pos);
            if (integral) {
                if (t.length() < 19) return Long.parseLong(t);
                BigInteger b = new BigInteger(t);
                return b.bitLength() < 64 ? (Object) b.longValue() : b;
            }
            return new BigDecimal(t);
        }

        private char peek() {
            return pos < s.length() ? s.charAt(pos) : '\0';
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private boolean digits() {
            int from = pos;
            while (isDigit(peek())) pos++;
            return pos > from;
        }
    }
}
