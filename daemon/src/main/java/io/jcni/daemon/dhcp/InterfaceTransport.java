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
    /** IF_OPER_UNKNOWN: what links that do not report carrier (dummy, some virtual ones) show. */
    private static final int OPER_UNKNOWN = 0;
    /** At most 1 s of 5 ms polls for carrier. */
    private static final int CARRIER_POLLS = 200;

    private final UdpSocket socket;
    private final byte[] mac;

    private InterfaceTransport(UdpSocket socket, byte[] mac) {
        this.socket = socket;
        this.mac = mac;
    }

    /**
     * Opens the socket on {@code ifname} in the namespace at {@code netnsPath}; ErrnoException when
     * either is gone. It runs on the calling thread (a service worker or renewal timer: pooled
     * platform threads), moved into the namespace for the call, so no exchange needs a thread of
     * its own: the service's thread count stays what it started with.
     */
    static InterfaceTransport open(String netnsPath, String ifname) {
        try (Netns ns = Netns.open(netnsPath)) {
            return inside(ns, () -> {
                byte[] mac;
                try (Rtnl rtnl = Rtnl.open()) {
                    Link link = rtnl.link(ifname);
                    if (!link.up()) rtnl.setUp(link.index());
                    awaitCarrier(rtnl, link.index());
                    mac = link.mac() == null ? new byte[6] : link.mac().bytes();
                }
                return new InterfaceTransport(UdpSocket.bindToDevice(ifname, CLIENT_PORT), mac);
            });
        }
    }

    /** Sets the interface down (a lease expired); ErrnoException when the namespace or interface is gone. */
    static void down(String netnsPath, String ifname) {
        try (Netns ns = Netns.open(netnsPath)) {
            inside(ns, () -> {
                try (Rtnl rtnl = Rtnl.open()) {
                    rtnl.setDown(rtnl.link(ifname).index());
                }
                return null;
            });
        }
    }

    private static <T> T inside(Netns ns, Netns.Task<T, RuntimeException> task) {
        return Thread.currentThread().isVirtual() ? ns.run(task) : ns.runOnCallingThread(task);
    }

    /**
     * A link just set up (here or by the main plugin a moment ago) drops what it sends until the
     * kernel's link watcher has handled its carrier, up to a second later: IFF_RUNNING is set at
     * once, but the queueing discipline stays the no-op one until then, and a DISCOVER lost that
     * way costs a whole resend interval. The watcher sets the operational state just before it
     * activates the queue, so wait, briefly, for that state to be UP (or UNKNOWN: links without
     * carrier reporting); a link that never gets there is left to the exchange's own timeout.
     */
    private static void awaitCarrier(Rtnl rtnl, int index) {
        for (int i = 0; i < CARRIER_POLLS; i++) {
            Link l = rtnl.link(index);
            boolean ready = (l.flags() & Link.IFF_RUNNING) != 0 && (l.operState() == Link.OPER_UP || l.operState() == OPER_UNKNOWN);
            if (ready) {
                if (i > 0) sleepMillis(2); // the watcher activates the queue right after setting the state
                return;
            }
            if (!sleepMillis(5)) return;
        }
    }

    private static boolean sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
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
    public Received receive(long millis) {
        UdpSocket.Datagram d = socket.receive((int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)), MAX_MESSAGE);
        return d == null ? null : new Received(d.from(), d.data(), d.length());
    }

    @Override
    public void close() {
        socket.close();
    }
}
