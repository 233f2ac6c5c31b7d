package io.jcni.plugins.meta.firewall;

import io.jcni.linux.nft.NftSyntax;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.nio.file.Path;
import java.util.Map;

/**
 * The firewall config: the reference plugin's keys.
 *
 * @param backend as given ("", iptables, firewalld, nftables): all are served by jcni's nftables table
 * @param adminChain {@code iptablesAdminChainName} (default CNI-ADMIN): a chain in table inet jcni
 *                   that jcni creates, jumps to first and never touches, for the administrator's rules
 * @param sameBridge {@code ingressPolicy: same-bridge}
 * @param dataDir jcni extension: where element ownership is kept
 */
public record FirewallConfig(String backend, String adminChain, boolean sameBridge, Path dataDir) {
    public static FirewallConfig parse(Map<String, Object> conf) {
        String backend = Fields.string(conf, "backend", "");
        backend = backend == null ? "" : backend;
        if (!backend.isEmpty() && !backend.equals("iptables") && !backend.equals("firewalld") && !backend.equals("nftables")) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "unknown firewall backend \"" + backend + "\"",
                    "backend: expected iptables, firewalld or nftables");
        }
        String admin = Fields.string(conf, "iptablesAdminChainName", "");
        if (admin == null || admin.isEmpty()) admin = "CNI-ADMIN";
        if (!NftSyntax.isChainShaped(admin)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid iptablesAdminChainName \"" + admin + "\"",
                    "iptablesAdminChainName: letters, digits, _ and -, at most 64");
        }
        Fields.string(conf, "firewalldZone", ""); // accepted for compatibility; zones do not exist in jcni's table
        String policy = Fields.string(conf, "ingressPolicy", "");
        boolean sameBridge;
        if (policy == null || policy.isEmpty() || policy.equals("open")) sameBridge = false;
        else if (policy.equals("same-bridge")) sameBridge = true;
        else throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "unknown ingress policy: \"" + policy + "\"",
                    "ingressPolicy: expected open or same-bridge");
        String dir = Fields.string(conf, "dataDir", "");
        return new FirewallConfig(backend, admin, sameBridge, dir == null || dir.isEmpty() ? null : Path.of(dir));
    }
}
