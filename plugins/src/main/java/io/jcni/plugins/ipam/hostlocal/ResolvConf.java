package io.jcni.plugins.ipam.hostlocal;

import io.jcni.spec.CniException;
import io.jcni.spec.ErrorCode;
import io.jcni.spec.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
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
    private ResolvConf() {}

    public static Result.Dns read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw Errors.withCause(Errors.config("open " + file + ": no such file or directory"), e);
        } catch (IOException e) {
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
