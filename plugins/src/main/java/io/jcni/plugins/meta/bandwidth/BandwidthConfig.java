package io.jcni.plugins.meta.bandwidth;

import io.jcni.linux.TbfParams;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The bandwidth entry of a config, from the top level or, when the top level has none of its
 * keys, from {@code runtimeConfig.bandwidth} (the {@code bandwidth} capability), as upstream's
 * embedded-struct decoding picks it.
 *
 * @param where the JSON path the values came from ("" or "runtimeConfig.bandwidth"), for errors
 */
record BandwidthConfig(long ingressRate, long ingressBurst, long egressRate, long egressBurst,
                       List<String> shapedSubnets, List<String> unshapedSubnets, String where) {

    static final Set<String> KEYS = Set.of("ingressRate", "ingressBurst", "egressRate", "egressBurst",
            "shapedSubnets", "unshapedSubnets");

    /** The largest burst upstream accepts: burst/8 must stay below 2^32 - 1 bytes. */
    private static final long MAX_BURST_BYTES = 0xFFFFFFFFL;

    boolean isZero() {
        return ingressRate == 0 && ingressBurst == 0 && egressRate == 0 && egressBurst == 0;
    }

    boolean shapesIngress() {
        return ingressRate > 0 && ingressBurst > 0;
    }

    boolean shapesEgress() {
        return egressRate > 0 && egressBurst > 0;
    }

    TbfParams ingressTbf() {
        return TbfParams.forBandwidth(ingressRate, ingressBurst);
    }

    TbfParams egressTbf() {
        return TbfParams.forBandwidth(egressRate, egressBurst);
    }

    /** Parses and validates; null when neither the top level nor runtimeConfig has an entry. */
    static BandwidthConfig parse(PluginRequest req) {
        Map<String, Object> conf = req.conf();
        Map<String, Object> src = null;
        String where = "";
        // Go allocates the embedded *BandwidthEntry as soon as one of its keys (any spelling, even
        // with null) appears at the top level; only then is runtimeConfig.bandwidth ignored.
        if (conf.keySet().stream().anyMatch(k -> KEYS.stream().anyMatch(f -> Fields.names(k, f)))) {
            src = conf;
        } else {
            Map<String, Object> bw = Fields.object(req.runtimeConfig(), "bandwidth", "runtimeConfig");
            if (bw != null) {
                src = bw;
                where = "runtimeConfig.bandwidth";
            }
        }
        if (src == null) return null;
        BandwidthConfig c = new BandwidthConfig(
                unsigned(src, "ingressRate", where), unsigned(src, "ingressBurst", where),
                unsigned(src, "egressRate", where), unsigned(src, "egressBurst", where),
                subnets(src, "shapedSubnets", where), subnets(src, "unshapedSubnets", where), where);
        c.validateRateAndBurst("ingress", c.ingressRate, c.ingressBurst);
        c.validateRateAndBurst("egress", c.egressRate, c.egressBurst);
        return c;
    }

    private void validateRateAndBurst(String dir, long rate, long burst) {
        String rateKey = Fields.path(where, dir + "Rate");
        String burstKey = Fields.path(where, dir + "Burst");
        if (burst == 0 && rate != 0) {
            throw invalid(burstKey + " is missing", "if rate is set, burst must also be set (" + rateKey + " is " + rate + ")");
        }
        if (rate == 0 && burst != 0) {
            throw invalid(rateKey + " is missing", "if burst is set, rate must also be set (" + burstKey + " is " + burst + ")");
        }
        if (burst / 8 >= MAX_BURST_BYTES) {
            throw invalid("invalid " + burstKey, "burst cannot be more than 4GB");
        }
        // A burst whose bucket takes longer to drain than the kernel's 32-bit buffer field holds
        // (containerd always sends 4294967295 bits) is accepted: TbfParams computes what the Go
        // plugin computes, so tc shows the same qdisc. Only a rate below one byte per second,
        // which would divide by zero there, is refused.
        if (rate != 0 && rate < 8) throw invalid("invalid " + rateKey, "rate must be at least 8 bits per second (1 byte/s)");
    }

    /**
     * Upstream (HTB-based, after 1.4) shapes only {@code shapedSubnets} or all but
     * {@code unshapedSubnets}; jcni, like the reference 1.1.1 TBF plugin, shapes all traffic, so
     * it validates the lists as upstream does and then refuses non-empty ones instead of ignoring
     * them.
     */
    void validateSubnets() {
        String shapedKey = Fields.path(where, "shapedSubnets");
        String unshapedKey = Fields.path(where, "unshapedSubnets");
        if (!shapedSubnets.isEmpty() && !unshapedSubnets.isEmpty()) {
            throw invalid(unshapedKey + " and " + shapedKey + " cannot be both specified",
                    "one of them should be discarded");
        }
        for (String s : unshapedSubnets) checkCidr(unshapedKey, s);
        for (String s : shapedSubnets) checkCidr(shapedKey, s);
        String key = !shapedSubnets.isEmpty() ? shapedKey : !unshapedSubnets.isEmpty() ? unshapedKey : null;
        if (key != null) {
            throw new CniException(ErrorCode.UNSUPPORTED_FIELD, key + " is not supported",
                    "jcni shapes all traffic of the interface (tbf, as the reference plugin 1.1.1); remove " + key);
        }
    }

    private static void checkCidr(String key, String s) {
        if (Cidr.tryParse(s) == null) throw invalid("invalid " + key, "bad subnet \"" + s + "\" provided");
    }

    private static long unsigned(Map<String, Object> m, String key, String where) {
        Long v = Fields.integer(m, key, where);
        if (v == null) return 0;
        if (v < 0) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid value for '" + Fields.path(where, key) + "'",
                    "expected a non-negative integer, got " + v);
        }
        return v;
    }

    private static List<String> subnets(Map<String, Object> m, String key, String where) {
        List<String> l = Fields.stringList(m, key, where);
        return l == null ? List.of() : List.copyOf(l);
    }

    private static CniException invalid(String msg, String details) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg, details);
    }
}
