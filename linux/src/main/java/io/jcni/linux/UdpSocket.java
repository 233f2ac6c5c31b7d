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
    /** The largest datagram sent: the largest UDP payload over IPv4 (the kernel fragments beyond the MTU). */
    public static final int MAX_DATAGRAM = 65507;

    /**
     * A datagram received: its sender, and its bytes as far as the receive buffer held them.
     *
     * @param length the datagram's full length: more than {@code data.length} when it was truncated
     */
    public record Datagram(byte[] from, byte[] data, int length) {
        public boolean truncated() {
            return length > data.length;
        }
    }

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

    /**
     * The next datagram, at most {@code maxBytes} of it (the rest is cut, and {@link Datagram#length}
     * says how long it was), or null when none arrives within {@code millis}.
     */
    public Datagram receive(int millis, int maxBytes) {
        byte[] buf = new byte[maxBytes];
        byte[] from = new byte[4];
        int n = Native.udpReceive(fd, buf, millis, from);
        return n <= 0 ? null : new Datagram(from, Arrays.copyOf(buf, Math.min(n, maxBytes)), n);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        Native.close(fd);
    }
}
