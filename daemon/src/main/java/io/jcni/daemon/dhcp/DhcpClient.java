package io.jcni.daemon.dhcp;

import io.jcni.types.IpAddr;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * The client side of the RFC 2131 exchanges, over a {@link Transport}: acquiring a lease (INIT,
 * SELECTING, REQUESTING; a NAK restarts at INIT), extending it (RENEWING: unicast to the server
 * that granted it; REBINDING: broadcast to any server) and giving it back (RELEASE). When to
 * renew is {@link LeaseTimes}' business, keeping the lease {@link DhcpLeases}'.
 *
 * <p>Every exchange is bounded by a deadline; unanswered messages are sent again after 0.25, 0.5,
 * 1, 2... seconds, at most 16 s apart. RFC 2131 4.1 suggests 4 s doubling; shorter first waits
 * keep a lost first datagram from costing seconds of an ADD, and one is commonly lost: the main
 * plugin has just set the link up, and a bridge port (or a veth's queue) passes nothing until the
 * kernel's link watcher has handled the carrier change, up to a second later.
 *
 * <p>While the interface has no address yet, requests carry the broadcast flag: the client reads
 * replies with an ordinary UDP socket, and the kernel drops a unicast reply to an address the
 * interface does not have yet.
 */
public final class DhcpClient {
    static final long FIRST_RESEND_MILLIS = 250;
    static final long MAX_RESEND_MILLIS = 16000;

    private final Transport transport;
    private final ClientIdentity id;
    private final LongSupplier clockMillis;
    private final RandomGenerator random;

    public DhcpClient(Transport transport, ClientIdentity id, LongSupplier clockMillis, RandomGenerator random) {
        this.transport = transport;
        this.id = id;
        this.clockMillis = clockMillis;
        this.random = random;
    }

    /**
     * DISCOVER, OFFER, REQUEST, ACK; restarts after a NAK. {@code wanted} (may be null) goes into
     * option 50 of the DISCOVER: the address the client had before.
     */
    public DhcpMessage acquire(IpAddr wanted, long timeoutMillis) throws DhcpException {
        long deadline = clockMillis.getAsLong() + timeoutMillis;
        int naks = 0;
        while (true) {
            int xid = random.nextInt();
            Map<Integer, byte[]> discover = options(DhcpOptions.DISCOVER);
            if (wanted != null) discover.put(DhcpOptions.REQUESTED_IP, wanted.bytes());
            DhcpMessage offer = exchange(request(xid, null, discover), DhcpMessage.BROADCAST,
                    m -> m.xid() == xid && m.type() == DhcpOptions.OFFER && !Arrays.equals(m.yiaddr(), DhcpMessage.ZERO),
                    deadline, "no DHCPOFFER" + (naks > 0 ? " after " + naks + " DHCPNAK" : ""));
            byte[] server = offer.option(DhcpOptions.SERVER_ID);
            Map<Integer, byte[]> req = options(DhcpOptions.REQUEST);
            req.put(DhcpOptions.REQUESTED_IP, offer.yiaddr());
            if (server != null) req.put(DhcpOptions.SERVER_ID, server);
            DhcpMessage answer = exchange(request(xid, null, req), DhcpMessage.BROADCAST,
                    m -> m.xid() == xid && (m.type() == DhcpOptions.ACK || m.type() == DhcpOptions.NAK)
                            && (server == null || m.option(DhcpOptions.SERVER_ID) == null || Arrays.equals(server, m.option(DhcpOptions.SERVER_ID))),
                    deadline, "no DHCPACK for the DHCPREQUEST of " + ip(offer.yiaddr()));
            if (answer.type() == DhcpOptions.ACK) return answer;
            naks++;
            if (clockMillis.getAsLong() >= deadline) {
                throw new DhcpException(DhcpException.Kind.NAK, "the server answered DHCPNAK" + nakMessage(answer));
            }
        }
    }

    /**
     * RENEWING ({@code server} set: unicast to it) or REBINDING ({@code server} null: broadcast):
     * a REQUEST with ciaddr, answered by ACK (the lease goes on) or NAK (it is gone).
     */
    public DhcpMessage extend(IpAddr address, IpAddr server, long timeoutMillis) throws DhcpException {
        long deadline = clockMillis.getAsLong() + timeoutMillis;
        int xid = random.nextInt();
        DhcpMessage answer = exchange(request(xid, address.bytes(), options(DhcpOptions.REQUEST)),
                server == null ? DhcpMessage.BROADCAST : server.bytes(),
                m -> m.xid() == xid && (m.type() == DhcpOptions.ACK || m.type() == DhcpOptions.NAK), deadline,
                "no answer to the DHCPREQUEST " + (server == null ? "broadcast to rebind " : "renewing ") + address
                        + (server == null ? "" : " at " + server));
        if (answer.type() == DhcpOptions.NAK) {
            throw new DhcpException(DhcpException.Kind.NAK, "the server answered DHCPNAK" + nakMessage(answer));
        }
        return answer;
    }

    /**
     * RELEASE, unicast to the server that granted the lease (RFC 2131 4.4.6; nothing comes back);
     * broadcast when the interface has no route to that server any more.
     */
    public void release(IpAddr address, IpAddr server) {
        byte[] m = releaseMessage(address, server);
        try {
            transport.send(server.bytes(), m);
        } catch (RuntimeException e) {
            // No route to the server: the interface lost its address (or never got one) before DEL.
            // A broadcast still leaves through the device, and the server id tells servers whose lease it is.
            transport.send(DhcpMessage.BROADCAST, m);
        }
    }

    /**
     * RELEASE by broadcast, for an address the interface has not been given: a unicast from an
     * interface without an address may wait on ARP and never leave.
     */
    public void releaseUnconfigured(IpAddr address, IpAddr server) {
        transport.send(DhcpMessage.BROADCAST, releaseMessage(address, server));
    }

    private byte[] releaseMessage(IpAddr address, IpAddr server) {
        Map<Integer, byte[]> opts = new LinkedHashMap<>();
        opts.put(DhcpOptions.MESSAGE_TYPE, new byte[] {DhcpOptions.RELEASE});
        opts.put(DhcpOptions.SERVER_ID, server.bytes());
        opts.put(DhcpOptions.CLIENT_ID, id.clientIdOption());
        return new DhcpMessage(DhcpMessage.BOOTREQUEST, random.nextInt(), 0, 0, address.bytes(), null, null, null,
                id.mac(), opts).encode();
    }

    private Map<Integer, byte[]> options(int type) {
        Map<Integer, byte[]> opts = new LinkedHashMap<>();
        opts.put(DhcpOptions.MESSAGE_TYPE, new byte[] {(byte) type});
        opts.put(DhcpOptions.CLIENT_ID, id.clientIdOption());
        opts.put(DhcpOptions.MAX_MESSAGE_SIZE, new byte[] {(byte) (Transport.MAX_MESSAGE >>> 8), (byte) Transport.MAX_MESSAGE});
        byte[] prl = new byte[id.requested().size()];
        for (int i = 0; i < prl.length; i++) prl[i] = id.requested().get(i).byteValue();
        if (prl.length > 0) opts.put(DhcpOptions.PARAMETER_REQUEST_LIST, prl);
        for (Map.Entry<Integer, byte[]> e : id.provided().entrySet()) opts.putIfAbsent(e.getKey(), e.getValue());
        return opts;
    }

    private DhcpMessage request(int xid, byte[] ciaddr, Map<Integer, byte[]> opts) {
        int flags = ciaddr == null ? DhcpMessage.BROADCAST_FLAG : 0;
        return new DhcpMessage(DhcpMessage.BOOTREQUEST, xid, 0, flags, ciaddr, null, null, null, id.mac(), opts);
    }

    /**
     * Sends {@code m} until a reply that {@code wanted} accepts comes, or the deadline passes. A
     * reply meant for this exchange (its xid and chaddr) that cannot be read, too long or broken,
     * is not a reply, but it is what the failure names: "no offer" would send someone looking for
     * a server that did answer.
     */
    private DhcpMessage exchange(DhcpMessage m, byte[] to, Predicate<DhcpMessage> wanted, long deadline, String failure)
            throws DhcpException {
        byte[] bytes = m.encode();
        long wait = FIRST_RESEND_MILLIS;
        int sent = 0;
        String unreadable = null;
        while (true) {
            long now = clockMillis.getAsLong();
            if (now >= deadline) {
                String times = " (" + DhcpOptions.typeName(m.type()) + " sent " + sent + (sent == 1 ? " time)" : " times)");
                if (unreadable != null) throw new DhcpException(DhcpException.Kind.UNREADABLE, unreadable + times);
                throw new DhcpException(DhcpException.Kind.TIMEOUT, failure + " within the timeout" + times);
            }
            transport.send(to, bytes);
            sent++;
            long resendAt = Math.min(deadline, now + wait);
            wait = Math.min(MAX_RESEND_MILLIS, wait * 2);
            while (true) {
                long left = resendAt - clockMillis.getAsLong();
                if (left <= 0) break;
                Transport.Received raw = transport.receive(left);
                if (raw == null) continue;
                DhcpMessage reply;
                try {
                    if (raw.truncated()) {
                        throw new IllegalArgumentException("a message of " + raw.length() + " bytes, longer than the "
                                + Transport.MAX_MESSAGE + " this client accepts (option 57)");
                    }
                    reply = DhcpMessage.decode(raw.data());
                } catch (IllegalArgumentException e) {
                    DhcpMessage.Glimpse g = DhcpMessage.glimpse(raw.data());
                    if (g != null && g.op() == DhcpMessage.BOOTREPLY && g.xid() == m.xid() && Arrays.equals(g.chaddr(), id.mac())) {
                        unreadable = "unreadable " + (g.type() == 0 ? "reply" : DhcpOptions.typeName(g.type())) + " from "
                                + ip(raw.from()) + ": " + e.getMessage();
                    }
                    continue; // not DHCP, or broken: not ours to use
                }
                if (reply.op() == DhcpMessage.BOOTREPLY && Arrays.equals(reply.chaddr(), id.mac()) && wanted.test(reply)) return reply;
            }
        }
    }

    private static String nakMessage(DhcpMessage nak) {
        String text = DhcpOptions.text(nak.option(DhcpOptions.MESSAGE));
        return text == null || text.isEmpty() ? "" : ": " + text;
    }

    private static String ip(byte[] a) {
        return new IpAddr(a).toString();
    }
}
