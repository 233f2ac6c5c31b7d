package io.jcni.plugins.common.ip;

import io.jcni.linux.ErrnoException;
import io.jcni.linux.Sysctl;
import io.jcni.types.Result;
import java.util.List;

/**
 * The sysctls the main plugins set, always for the calling thread's network namespace (so a plugin
 * thread running in the host namespace writes the host's; container-side calls go through
 * {@code containerNs.run}). Keys use slashes so interface names may contain dots.
 */
public final class Sysctls {
    public static final String IPV4_FORWARD = "net/ipv4/ip_forward";
    public static final String IPV6_FORWARD = "net/ipv6/conf/all/forwarding";

    private Sysctls() {}

    /** Writes "1" unless the value already is "1" (pkg/ip's echo1): no needless writes to shared state. */
    public static void echo1(String key) {
        if ("1".equals(Sysctl.get(key))) return;
        Sysctl.set(key, "1");
    }

    /** Best effort, as the reference plugins do for e.g. accept_ra: a missing key (no IPv6) is fine. */
    public static boolean trySet(String key, String value) {
        try {
            Sysctl.set(key, value);
            return true;
        } catch (ErrnoException e) {
            return false;
        }
    }

    /** The value, or null when the key is missing (no IPv6, no such interface). */
    public static String tryGet(String key) {
        try {
            return Sysctl.get(key);
        } catch (ErrnoException e) {
            return null;
        }
    }

    public static String perIface(String family, String ifName, String leaf) {
        return "net/" + family + "/conf/" + ifName + "/" + leaf;
    }

    /** ip.EnableForward: IPv4 and/or IPv6 forwarding, for the families present in {@code ips}. */
    public static void enableForward(List<Result.IpConfig> ips) {
        boolean v4 = false;
        boolean v6 = false;
        for (Result.IpConfig ip : ips) {
            if (ip.isIpv6()) v6 = true;
            else v4 = true;
        }
        if (v4) echo1(IPV4_FORWARD);
        if (v6) echo1(IPV6_FORWARD);
    }
}
