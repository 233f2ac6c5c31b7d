package io.jcni.plugins.ipam.hostlocal;

/**
 * A host-local failure whose message is meant for the CNI error result.
 *
 * <p>Messages deliberately repeat the reference plugin's wording (containernetworking/plugins
 * {@code plugins/ipam/host-local}) so tools and humans that grep for them keep working.
 */
public class IpamException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IpamException(String message) {
        super(message);
    }

    public IpamException(String message, Throwable cause) {
        super(message, cause);
    }
}
