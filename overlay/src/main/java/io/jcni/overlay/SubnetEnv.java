package io.jcni.overlay;

import io.jcni.spec.Cidr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code /run/flannel/subnet.env} as flanneld writes it, four lines in this order:
 * <pre>
 * FLANNEL_NETWORK=10.5.0.0/16
 * FLANNEL_SUBNET=10.5.1.1/24
 * FLANNEL_MTU=1450
 * FLANNEL_IPMASQ=false
 * </pre>
 * FLANNEL_SUBNET is the subnet's first host address (the bridge's) with the subnet's length.
 * Written to a temporary file and renamed, so a reader (the flannel plugin) never sees half of it.
 */
public record SubnetEnv(Cidr network, Cidr subnet, int mtu, boolean ipMasq) {

    public String format() {
        return "FLANNEL_NETWORK=" + network.masked() + "\n"
                + "FLANNEL_SUBNET=" + new Cidr(subnet.network().next(), subnet.prefix()) + "\n"
                + "FLANNEL_MTU=" + mtu + "\n"
                + "FLANNEL_IPMASQ=" + ipMasq + "\n";
    }

    public void write(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".subnet", ".tmp");
        try {
            Files.writeString(tmp, format(), StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Reads a subnet.env (ours or flanneld's); {@link IllegalArgumentException} if a line is missing or wrong. */
    public static SubnetEnv parse(String text) {
        Map<String, String> v = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) v.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
        }
        Cidr net = Cidr.tryParse(v.getOrDefault("FLANNEL_NETWORK", ""));
        Cidr sub = Cidr.tryParse(v.getOrDefault("FLANNEL_SUBNET", ""));
        if (net == null) throw new IllegalArgumentException("subnet.env: FLANNEL_NETWORK missing or not a CIDR");
        if (sub == null) throw new IllegalArgumentException("subnet.env: FLANNEL_SUBNET missing or not a CIDR");
        int mtu;
        try {
            mtu = Integer.parseInt(v.getOrDefault("FLANNEL_MTU", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("subnet.env: FLANNEL_MTU missing or not a number");
        }
        return new SubnetEnv(net, sub, mtu, Boolean.parseBoolean(v.getOrDefault("FLANNEL_IPMASQ", "false")));
    }

    public static SubnetEnv read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8));
    }
}
