package io.jcni.plugins.ipam.hostlocal;

/**
 * The key host-local stores addresses under: a container ID and an interface name (CNI's
 * attachment, also the unit of {@code cni.dev/valid-attachments} in GC).
 */
public record Attachment(String containerId, String ifname) {
    public Attachment {
        if (containerId == null || ifname == null) throw new IllegalArgumentException("null attachment field");
    }
}
