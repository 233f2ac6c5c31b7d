package io.jcni.daemon;

import java.io.PrintStream;
import java.time.Instant;

/** jcnid's log: one timestamped logfmt line per event, on stderr or {@code --log-file}. */
final class DaemonLog {
    final PrintStream out;

    DaemonLog(PrintStream out) {
        this.out = out;
    }

    void line(String s) {
        out.println(Instant.now() + " " + s);
    }

    /** logfmt quoting: bare when safe, else double-quoted with escapes. */
    static String quote(String s) {
        boolean bare = !s.isEmpty();
        for (int i = 0; i < s.length() && bare; i++) {
            char c = s.charAt(i);
            bare = c > ' ' && c < 127 && c != '"' && c != '=' && c != '\\';
        }
        if (bare) return s;
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < ' ' || c == 127) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
