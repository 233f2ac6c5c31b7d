package io.jcni.overlay;

import io.jcni.common.AtomicFile;
import io.jcni.plugins.meta.flannel.SubnetFile;
import io.jcni.types.Cidr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reading and writing {@code subnet.env} as flanneld's {@code WriteSubnetFile} writes it (the
 * flannel plugin reads it with {@link SubnetFile}). Written to a temporary file and renamed, so a
 * reader never sees half of it.
 */
public final class SubnetEnv {
    private SubnetEnv() {}

    public static void write(Path file, SubnetFile content) throws IOException {
        write(file, content.format());
    }

    /**
     * flanneld's lines in its order: {@code FLANNEL_NETWORK}, {@code FLANNEL_SUBNET} (with IPv4),
     * {@code FLANNEL_IPV6_NETWORK}, {@code FLANNEL_IPV6_SUBNET} (with IPv6), {@code FLANNEL_MTU},
     * {@code FLANNEL_IPMASQ}. A subnet is written as its first address with the subnet's length.
     * flanneld writes no {@code FLANNEL_IPV6_MASQ}: {@code FLANNEL_IPMASQ} covers both families.
     *
     * @param network null without IPv4; {@code ipv6Network} null without IPv6
     */
    public static String format(Cidr network, Cidr subnet, Cidr ipv6Network, Cidr ipv6Subnet, int mtu, boolean ipMasq) {
        StringBuilder b = new StringBuilder();
        if (network != null) {
            b.append("FLANNEL_NETWORK=").append(network.masked()).append('\n')
                    .append("FLANNEL_SUBNET=").append(new Cidr(subnet.network().next(), subnet.prefix())).append('\n');
        }
        if (ipv6Network != null) {
            b.append("FLANNEL_IPV6_NETWORK=").append(ipv6Network.masked()).append('\n')
                    .append("FLANNEL_IPV6_SUBNET=").append(new Cidr(ipv6Subnet.network().next(), ipv6Subnet.prefix())).append('\n');
        }
        return b.append("FLANNEL_MTU=").append(mtu).append('\n').append("FLANNEL_IPMASQ=").append(ipMasq).append('\n').toString();
    }

    public static void write(Path file, String text) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        // Not fsynced: the agent writes it again whenever it starts or its lease changes.
        AtomicFile.write(file, text, AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
    }

    /** {@link IllegalArgumentException} if a variable is missing or malformed. */
    public static SubnetFile read(Path file) throws IOException {
        return SubnetFile.parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /** One CIDR variable of {@code text} ({@code FLANNEL_SUBNET}, {@code FLANNEL_IPV6_SUBNET}), or null when absent or not a CIDR. */
    public static Cidr cidr(String text, String name) {
        Cidr found = null;
        for (String line : text.split("\n")) {
            if (line.startsWith(name + "=")) found = Cidr.tryParse(line.substring(name.length() + 1).trim());
        }
        return found;
    }

    /** The same from a file; null when it cannot be read. */
    public static Cidr cidr(Path file, String name) {
        try {
            return cidr(Files.readString(file, StandardCharsets.UTF_8), name);
        } catch (IOException e) {
            return null;
        }
    }
}
