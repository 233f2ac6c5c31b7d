package io.jcni.cli.doctor;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of the doctor's report: what was checked, what is wrong in plain words and how to fix it.
 *
 * @param check   the area: kernel, netlink, nft, config, plugins, daemon, leftovers
 * @param subject what it is about (a feature, a file, a link, an attachment)
 * @param fix     empty for OK and most INFO findings
 */
public record Finding(Severity severity, String check, String subject, String message, String fix) {

    /** OK and INFO mean all is well; WARN and FAIL make {@code jcni doctor} exit 1. */
    public enum Severity {
        OK, INFO, WARN, FAIL;

        public boolean problem() {
            return this == WARN || this == FAIL;
        }
    }

    static Finding ok(String check, String subject, String message) {
        return new Finding(Severity.OK, check, subject, message, "");
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("severity", severity.name().toLowerCase(java.util.Locale.ROOT));
        m.put("check", check);
        m.put("subject", subject);
        m.put("message", message);
        if (!fix.isEmpty()) m.put("fix", fix);
        return m;
    }
}
