package io.jcni.daemon.dhcp;

/** Where a {@link DhcpClient} sends and receives datagrams: a socket on the interface, or a fake in tests. */
public interface Transport extends AutoCloseable {
    int SERVER_PORT = 67;
    int CLIENT_PORT = 68;
    /**
     * The longest DHCP message the client reads, and tells servers in option 57 (maximum message
     * size): room for a thousand classless routes. Without option 57 a server may assume 576
     * bytes and leave options out; with it, one that has more to say than Ethernet's 1500 bytes
     * sends a message the kernel fragments and reassembles.
     */
    int MAX_MESSAGE = 16384;

    /**
     * A datagram received on port 68.
     *
     * @param from   the sender's IPv4 address
     * @param data   its bytes, at most {@link #MAX_MESSAGE}
     * @param length its full length: more than {@code data.length} when it was longer than the client reads
     */
    record Received(byte[] from, byte[] data, int length) {
        public Received(byte[] from, byte[] data) {
            this(from, data, data.length);
        }

        boolean truncated() {
            return length > data.length;
        }
    }

    /** Sends a message to port 67 of {@code to}. */
    void send(byte[] to, byte[] message);

    /** The next datagram to port 68, or null when none arrives within {@code millis}. */
    Received receive(long millis);

    @Override
    void close();
}
