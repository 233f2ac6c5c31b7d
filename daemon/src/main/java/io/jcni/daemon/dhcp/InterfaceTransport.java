package io.jcni.daemon.dhcp;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.linux.UdpSocket;

/**
 * The real {@link Transport}: a UDP socket on port 68 of the container's interface, opened inside
 * the container's network namespace (a socket belongs to the namespace of the thread that creates
 * it, and stays there whichever thread uses it afterwards). Opening brings the interface up, as
 * the reference does, since a DHCP exchange needs it up.
 */
final class InterfaceTransport implements Transport {
    private final UdpSocket socket;
    private final byte[] mac;

    private InterfaceTransport(UdpSocket socket, byte[] mac) {
        this.socket = socket;
        this.mac = mac;
    }

    /** Opens the socket on {@code ifname} in the namespace at {@code netnsPath}; ErrnoException when either is gone. */
    static InterfaceTransport open(String netnsPath, String ifname) {
        try (Netns ns = Netns.open(netnsPath)) {
            return ns.run(() -> {
                byte[] mac;
                try (Rtnl rtnl = Rtnl.open()) {
                    Link link = rtnl.link(ifname);
                    if (!link.up()) rtnl.setUp(link.index());
                    mac = link.mac() == null ? new byte[6] : link.mac().bytes();
                }
                return new InterfaceTransport(UdpSocket.bindToDevice(ifname, CLIENT_PORT), mac);
            });
        }
    }

    byte[] mac() {
        return mac.clone();
    }

    @Override
    public void send(byte[] to, byte[] message) {
        socket.send(to, SERVER_PORT, message);
    }

    @Override
    public byte[] receive(long millis) {
        return socket.receive((int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
    }

    @Override
    public void close() {
        socket.close();
    }
}
