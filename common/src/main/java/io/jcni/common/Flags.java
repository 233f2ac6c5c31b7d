package io.jcni.common;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The one command-line flag reader of jcnid, its services and the jcni command: a cursor over the
 * arguments with typed getters, so every flag of every program takes the same spellings.
 *
 * <ul>
 *   <li>{@code --flag value} and {@code --flag=value} (as Go's flag package, which flanneld's flags follow);</li>
 *   <li>a switch takes no value, or {@code =true} / {@code =false};</li>
 *   <li>a duration is seconds ({@code 30}, {@code 1.5}) or has a unit: {@code 500ms}, {@code 1.5s},
 *       {@code 2m}, {@code 1h};</li>
 *   <li>every problem is an {@link IllegalArgumentException} whose message names the flag and is fit for the user.</li>
 * </ul>
 *
 * <pre>{@code
 * Flags f = new Flags(args);
 * while (f.next()) {
 *     switch (f.name()) {
 *         case "--socket" -> socket = f.path();
 *         case "--request-timeout" -> timeout = f.duration(Duration.ofMillis(1), Duration.ofDays(1));
 *         default -> throw f.unknown();
 *     }
 * }
 * }</pre>
 */
public final class Flags {
    private final List<String> args;
    private int next;
    private String token;
    private String name;
    private String inline;

    public Flags(List<String> args) {
        this.args = List.copyOf(args);
    }

    /** Moves to the next argument; false when there is none. */
    public boolean next() {
        if (next >= args.size()) {
            token = name = inline = null;
            return false;
        }
        token = args.get(next++);
        int eq = token.indexOf('=');
        if (token.startsWith("--") && eq > 2) {
            name = token.substring(0, eq);
            inline = token.substring(eq + 1);
        } else {
            name = token;
            inline = null;
        }
        return true;
    }

    /** The current argument's flag name ({@code --x} of {@code --x=1}), or the argument itself when it is none. */
    public String name() {
        return name;
    }

    /** The current argument as given. */
    public String token() {
        return token;
    }

    /** Whether the current argument looks like a flag ({@code -x}, {@code --x}), not a positional argument. */
    public boolean isFlag() {
        return token.length() > 1 && token.charAt(0) == '-';
    }

    /** Whether the current flag carried its value after '='. */
    public boolean hasInlineValue() {
        return inline != null;
    }

    /** The current flag's value: after its '=', else the next argument (consumed). */
    public String value() {
        if (inline != null) return inline;
        if (next >= args.size()) throw new IllegalArgumentException(name + " needs a value");
        return args.get(next++);
    }

    /** A switch: true when given bare or {@code =true}, false for {@code =false}. */
    public boolean switchValue() {
        if (inline == null || inline.equals("true")) return true;
        if (inline.equals("false")) return false;
        throw new IllegalArgumentException(name + " is a switch: no value, =true or =false");
    }

    public Path path() {
        String v = value();
        if (v.isEmpty()) throw new IllegalArgumentException(name + ": an empty path");
        return Path.of(v);
    }

    /** A whole number in [min, max]. */
    public int integer(int min, int max) {
        String v = value();
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + ": not a number in [" + min + ", " + max + "]: " + v);
    }

    /** A duration in [min, max]; see {@link #parseDuration}. */
    public Duration duration(Duration min, Duration max) {
        return duration(name, value(), min, max);
    }

    /** {@link #parseDuration}, then held to [min, max]; the message names {@code what}. */
    public static Duration duration(String what, String value, Duration min, Duration max) {
        Duration d = parseDuration(what, value);
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + ": " + value + " is not in [" + describe(min) + ", " + describe(max) + "]");
        }
        return d;
    }

    /**
     * Seconds ({@code 30}, {@code 1.5}) or a number with a unit ({@code 500ms}, {@code 1.5s},
     * {@code 2m}, {@code 1h}), to the millisecond (a non-zero value never rounds to zero).
     */
    public static Duration parseDuration(String what, String value) {
        String t = value.strip();
        long unitMillis = 1000;
        if (t.endsWith("ms")) {
            unitMillis = 1;
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            unitMillis = 60_000;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            unitMillis = 3_600_000;
            t = t.substring(0, t.length() - 1);
        }
        if (isNumber(t)) {
            double millis = Double.parseDouble(t) * unitMillis;
            if (millis <= 86_400_000.0 * 366) {
                long rounded = Math.round(millis);
                return Duration.ofMillis(rounded == 0 && millis > 0 ? 1 : rounded);
            }
        }
        throw new IllegalArgumentException(what + ": not a duration (seconds, e.g. 30, 1.5, 500ms, 2m): " + value);
    }

    /** Digits with at most one '.', and at least one digit: no sign, exponent, NaN or Infinity. */
    private static boolean isNumber(String t) {
        boolean digit = false, dot = false;
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c >= '0' && c <= '9') digit = true;
            else if (c == '.' && !dot) dot = true;
            else return false;
        }
        return digit;
    }

    private static String describe(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    /** The error for an argument no case took. */
    public IllegalArgumentException unknown() {
        return new IllegalArgumentException("unknown option " + token);
    }

    /** The arguments not read yet (consumed). */
    public List<String> rest() {
        List<String> out = new ArrayList<>(args.subList(next, args.size()));
        next = args.size();
        return out;
    }
}
