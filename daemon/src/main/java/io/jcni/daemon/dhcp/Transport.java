package io.jcni.daemon.dhcp;

/** Where a {@link DhcpClient} sends and receives datagrams: a socket on the interface, or a fake in tests. */
public interface Transport extends AutoCloseable {
    /** 255.255.255.255: the limited broadcast, to every server on the segment. */
    byte[] BROADCAST = {(byte) 255, (byte) 255, (byte) 255, (byte) 255};
    int SERVER_PORT = 67;
    int CLIENT_PORT = 68;

    /** Sends a message to port 67 of {@code to}. */
    void send(byte[] to, byte[] message);

    /** The next datagram to port 68, or null when none arrives within {@code millis}. */
    byte[] receive(long millis);

    @Override
    void close();
}
