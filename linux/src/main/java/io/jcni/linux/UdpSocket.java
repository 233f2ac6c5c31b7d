package io.jcni.linux;

import java.util.Arrays;

/**
 * A UDP socket on one interface of the calling thread's network namespace, usable before the
 * interface has an address: what a DHCP client needs. It is bound to 0.0.0.0:port and to the
 * device (SO_BINDTODEVICE), so a broadcast leaves through that device although no route exists;
 * the JDK's DatagramChannel cannot do that. The socket belongs to the namespace of the thread
 * that opened it (see {@link Netns#run}), and stays there whatever thread uses it later.
 */
public final class UdpSocket implements AutoCloseable {
    /** The largest datagram sent or received: an Ethernet MTU. */
    public static final int MAX_DATAGRAM = 1500;

    private final int fd;
    private final String device;
    private boolean closed;

    private UdpSocket(int fd, String device) {
        this.fd = fd;
        this.device = device;
    }

    /** Opens the socket on {@code ifname} in the calling thread's network namespace. */
    public static UdpSocket bindToDevice(String ifname, int port) {
        return new UdpSocket(Native.udpBindToDevice(ifname, port), ifname);
    }

    public String device() {
        return device;
    }

    /** Sends one datagram to an IPv4 address (4 bytes; 255.255.255.255 broadcasts on the device). */
    public void send(byte[] ipv4, int port, byte[] data) {
        if (data.length > MAX_DATAGRAM) throw new IllegalArgumentException("datagram of " + data.length + " bytes");
        Native.udpSendTo(fd, data, data.length, ipv4, port);
    }

    /** The next datagram, or null when none arrives within {@code millis}. */
    public byte[] receive(int millis) {
        byte[] buf = new byte[MAX_DATAGRAM];
        int n = Native.udpReceive(fd, buf, millis);
        return n <= 0 ? null : Arrays.copyOf(buf, n);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        Native.close(fd);
    }
}
