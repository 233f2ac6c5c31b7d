package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.SmallFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a resolv.conf the way the reference {@code parseResolvConf} (host-local/dns.go) does:
 * comment and blank lines are skipped, lines with fewer than two fields are ignored,
 * {@code nameserver} and {@code search}/{@code options} accumulate, the last {@code domain} wins.
 */
public final class ResolvConf {
    /**
     * The most a resolv.conf may hold. Real ones are well under 4 KiB; the bound keeps a config
     * naming /dev/zero or a huge file from filling the heap (of jcnid too, which all plugins share).
     */
    static final int MAX_BYTES = 1 << 20;

    private ResolvConf() {}

    public static Result.Dns read(Path file) {
        String text;
        try {
            text = SmallFile.readUtf8(file, MAX_BYTES);
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) throw Errors.withCause(Errors.config("open " + file + ": no such file or directory"), e);
            if (e.is(Errno.EINVAL) || e.is(Errno.EFBIG)) {
                throw Errors.withCause(Errors.config("resolvConf " + file + ": " + e.detail()), e);
            }
            throw Errors.withCause(new CniException(ErrorCode.IO_FAILURE, "open " + file + ": " + e.getMessage()), e);
        }
        return parse(text);
    }

    public static Result.Dns parse(String text) {
        List<String> nameservers = new ArrayList<>();
        List<String> search = new ArrayList<>();
        List<String> options = new ArrayList<>();
        String domain = null;
        for (String raw : text.split("\r?\n", -1)) {
            String line = raw.strip();
            if (line.isEmpty() || line.charAt(0) == '#' || line.charAt(0) == ';') continue;
            String[] fields = line.split("\\s+");
            if (fields.length < 2) continue;
            List<String> rest = Arrays.asList(fields).subList(1, fields.length);
            switch (fields[0]) {
                case "nameserver" -> nameservers.add(fields[1]);
                case "domain" -> domain = fields[1];
                case "search" -> search.addAll(rest);
                case "options" -> options.addAll(rest);
                default -> {}
            }
        }
        return new Result.Dns(nameservers, domain, search, options);
    }
}
