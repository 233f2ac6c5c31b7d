package io.jcni.plugins.meta.flannel;

import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * flanneld's {@code subnet.env} (also written by jcni's overlay agent), four lines in this order:
 * <pre>
 * FLANNEL_NETWORK=10.5.0.0/16
 * FLANNEL_SUBNET=10.5.1.1/24
 * FLANNEL_MTU=1450
 * FLANNEL_IPMASQ=false
 * </pre>
 * FLANNEL_SUBNET is the subnet's first host address (the bridge's) with the subnet's length.
 *
 * @param subnet the subnet as written (host bits kept); {@code subnet.masked()} is the subnet
 */
public record SubnetFile(Cidr network, Cidr subnet, int mtu, boolean ipMasq) {

    /** The file's text, byte for byte as flanneld writes it; {@code subnet} may be given masked. */
    public String format() {
        Cidr first = new Cidr(subnet.network().next(), subnet.prefix());
        return "FLANNEL_NETWORK=" + network.masked() + "\n" + "FLANNEL_SUBNET=" + first + "\n"
                + "FLANNEL_MTU=" + mtu + "\n" + "FLANNEL_IPMASQ=" + ipMasq + "\n";
    }

    /**
     * Reads it as the reference flannel plugin does: unknown lines ignored, IPMASQ true only for
     * "true", and an error naming every missing variable.
     */
    public static SubnetFile parse(String text, String fileName) {
        Cidr net = null, sub = null;
        Integer mtu = null;
        Boolean masq = null;
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq < 0) continue;
            String k = line.substring(0, eq), v = line.substring(eq + 1).trim();
            switch (k) {
                case "FLANNEL_NETWORK" -> net = cidr(fileName, k, v);
                case "FLANNEL_SUBNET" -> sub = cidr(fileName, k, v);
                case "FLANNEL_MTU" -> {
                    try {
                        mtu = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(fileName + ": FLANNEL_MTU is not a number: " + v);
                    }
                }
                case "FLANNEL_IPMASQ" -> masq = v.equals("true");
                default -> { }
            }
        }
        List<String> missing = new ArrayList<>();
        if (net == null) missing.add("FLANNEL_NETWORK");
        if (sub == null) missing.add("FLANNEL_SUBNET");
        if (mtu == null) missing.add("FLANNEL_MTU");
        if (masq == null) missing.add("FLANNEL_IPMASQ");
        if (!missing.isEmpty()) throw new IllegalArgumentException(fileName + " is missing " + String.join(", ", missing));
        return new SubnetFile(net, sub, mtu, masq);
    }

    private static Cidr cidr(String file, String key, String v) {
        Cidr c = Cidr.tryParse(v);
        if (c == null) throw new IllegalArgumentException(file + ": " + key + " is not a CIDR: " + v);
        return c;
    }
}
