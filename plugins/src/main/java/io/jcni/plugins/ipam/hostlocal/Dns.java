package io.jcni.plugins.ipam.hostlocal;

import java.util.List;

/** DNS settings for the result, read from {@code ipam.resolvConf}; empty when none is configured. */
public record Dns(List<String> nameservers, String domain, List<String> search, List<String> options) {
    public static final Dns EMPTY = new Dns(List.of(), null, List.of(), List.of());

    public Dns {
        nameservers = List.copyOf(nameservers);
        search = List.copyOf(search);
        options = List.copyOf(options);
    }

    public boolean isEmpty() {
        return nameservers.isEmpty() && domain == null && search.isEmpty() && options.isEmpty();
    }
}
