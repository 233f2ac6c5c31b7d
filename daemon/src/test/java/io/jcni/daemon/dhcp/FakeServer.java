package io.jcni.daemon.dhcp;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A DHCP server in memory, as a {@link Transport}: answers DISCOVER with an OFFER and REQUEST with
 * an ACK (or NAK when told to), records what the client sent and where, and keeps a fake clock
 * that a receive without an answer advances by its whole wait.
 */
class FakeServer implements Transport {
    static final byte[] SERVER = {10, 9, 0, 1};
    static final byte[] OFFERED = {10, 9, 0, 50};

    record Sent(byte[] to, DhcpMessage message) {}

    final List<Sent> sent = new ArrayList<>();
    private final Deque<byte[]> replies = new ArrayDeque<>();
    /** The address offered and acknowledged: a test changes it to play a renumbered network. */
    byte[] offered = OFFERED;
    long now = 1_000_000;
    /** Messages of these types get no answer. */
    final List<Integer> ignore = new ArrayList<>();
    /** How many REQUESTs to answer with NAK before ACKing. */
    int naks;
    /** Options added to every ACK. */
    final Map<Integer, byte[]> ackOptions = new LinkedHashMap<>();
    boolean closed;

    FakeServer() {
        ackOptions.put(DhcpOptions.SUBNET_MASK, new byte[] {(byte) 255, (byte) 255, (byte) 255, 0});
        ackOptions.put(DhcpOptions.ROUTER, SERVER);
        ackOptions.put(DhcpOptions.LEASE_TIME, DhcpOptions.u32(120));
        ackOptions.put(DhcpOptions.RENEWAL_TIME, DhcpOptions.u32(4));
        ackOptions.put(DhcpOptions.REBINDING_TIME, DhcpOptions.u32(7));
    }

    long clock() {
        return now;
    }

    @Override
    public void send(byte[] to, byte[] message) {
        DhcpMessage m = DhcpMessage.decode(message);
        sent.add(new Sent(to, m));
        if (ignore.contains(m.type())) return;
        Map<Integer, byte[]> opts = new LinkedHashMap<>();
        int type;
        switch (m.type()) {
            case DhcpOptions.DISCOVER -> type = DhcpOptions.OFFER;
            case DhcpOptions.REQUEST -> type = naks-- > 0 ? DhcpOptions.NAK : DhcpOptions.ACK;
            default -> {
                return; // RELEASE, DECLINE: no answer
            }
        }
        opts.put(DhcpOptions.MESSAGE_TYPE, new byte[] {(byte) type});
        opts.put(DhcpOptions.SERVER_ID, SERVER);
        if (type == DhcpOptions.NAK) opts.put(DhcpOptions.MESSAGE, "wrong network".getBytes());
        else opts.putAll(ackOptions);
        byte[] yi = type == DhcpOptions.NAK ? null : offered;
        replies.add(new DhcpMessage(DhcpMessage.BOOTREPLY, m.xid(), 0, m.flags(), null, yi, null, null, m.chaddr(), opts).encode());
    }

    @Override
    public Received receive(long millis) {
        if (replies.isEmpty()) {
            now += millis;
            return null;
        }
        now += 1;
        return new Received(SERVER, replies.poll());
    }

    @Override
    public void close() {
        closed = true;
    }

    List<Integer> sentTypes() {
        return sent.stream().map(s -> s.message().type()).toList();
    }
}
