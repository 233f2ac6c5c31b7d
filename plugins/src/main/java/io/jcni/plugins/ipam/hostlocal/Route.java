package io.jcni.plugins.ipam.hostlocal;

/**
 * A route from {@code ipam.routes}, passed through to the result unchanged. {@code gw} and the
 * CNI 1.1 fields are null when absent. The destination keeps host bits as written, like upstream's
 * {@code types.Route}.
 */
public record Route(Cidr dst, IpAddress gw, Integer mtu, Integer advmss, Integer priority, Integer table,
        Integer scope) {

    public Route(Cidr dst, IpAddress gw) {
        this(dst, gw, null, null, null, null, null);
    }
}
