package io.jcni.daemon.dhcp;

import io.jcni.linux.Netns;
import io.jcni.linux.UdpSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A DHCP server of the tests' own, for the parts dnsmasq will not play: a real UDP server on port
 * 67 of an interface in a test's namespace, whose every answer a {@link Script} decides (T1 = 0,
 * a NAK, another address, a zero lease, a 9 KB offer). It answers by broadcast, which the client
 * reads whether its interface has an address or not, and records every request it received with
 * the time it came.
 */
final class ScriptedDhcpServer implements AutoCloseable {
    /** The reply to a request, or null for none. */
    interface Script {
        DhcpMessage answer(DhcpMessage request, ScriptedDhcpServer server);
    }

    record Received(long nanos, DhcpMessage message) {}

    final byte[] serverId;
    private final Netns ns;
    private final UdpSocket socket;
    private final Thread thread;
    private final List<Received> received = Collections.synchronizedList(new ArrayList<>());
    volatile Script script;
    private volatile boolean closed;

    ScriptedDhcpServer(String netnsPath, String ifname, byte[] serverId, Script script) {
        this.serverId = serverId;
        this.script = script;
        this.ns = Netns.open(netnsPath);
        this.socket = ns.run(() -> UdpSocket.bindToDevice(ifname, Transport.SERVER_PORT));
        this.thread = Thread.ofPlatform().name("scripted-dhcp").daemon().start(this::serve);
    }

    private void serve() {
        while (!closed) {
            UdpSocket.Datagram d;
            try {
                d = socket.receive(200, UdpSocket.MAX_DATAGRAM);
            } catch (RuntimeException e) {
                if (closed) return;
                continue;
            }
            if (d == null) continue;
            DhcpMessage m;
            try {
                m = DhcpMessage.decode(d.data());
            } catch (IllegalArgumentException e) {
                continue;
            }
            if (m.op() != DhcpMessage.BOOTREQUEST) continue;
            received.add(new Received(System.nanoTime(), m));
            DhcpMessage reply = script.answer(m, this);
            if (reply != null) {
                try {
                    socket.send(DhcpMessage.BROADCAST, Transport.CLIENT_PORT, reply.encode());
                } catch (RuntimeException e) {
                    // the test sees the missing answer
                }
            }
        }
    }

    /** A reply to {@code request} of {@code type} granting {@code yiaddr}, with this server's id and {@code options}. */
    DhcpMessage reply(DhcpMessage request, int type, byte[] yiaddr, Map<Integer, byte[]> options) {
        Map<Integer, byte[]> o = new LinkedHashMap<>();
        o.put(DhcpOptions.MESSAGE_TYPE, new byte[] {(byte) type});
        o.put(DhcpOptions.SERVER_ID, serverId);
        o.putAll(options);
        return new DhcpMessage(DhcpMessage.BOOTREPLY, request.xid(), 0, request.flags(), null, yiaddr, null, null,
                request.chaddr(), o);
    }

    /** OFFER for DISCOVER and ACK for REQUEST, both of {@code yiaddr} with {@code options}: an ordinary server. */
    DhcpMessage grant(DhcpMessage request, byte[] yiaddr, Map<Integer, byte[]> options) {
        return switch (request.type()) {
            case DhcpOptions.DISCOVER -> reply(request, DhcpOptions.OFFER, yiaddr, options);
            case DhcpOptions.REQUEST -> reply(request, DhcpOptions.ACK, yiaddr, options);
            default -> null;
        };
    }

    /** Subnet mask /24, router, and the lease times (-1: option left out). */
    static Map<Integer, byte[]> options(byte[] router, long lease, long t1, long t2) {
        Map<Integer, byte[]> o = new LinkedHashMap<>();
        o.put(DhcpOptions.SUBNET_MASK, new byte[] {(byte) 255, (byte) 255, (byte) 255, 0});
        o.put(DhcpOptions.ROUTER, router);
        if (lease >= 0) o.put(DhcpOptions.LEASE_TIME, DhcpOptions.u32(lease));
        if (t1 >= 0) o.put(DhcpOptions.RENEWAL_TIME, DhcpOptions.u32(t1));
        if (t2 >= 0) o.put(DhcpOptions.REBINDING_TIME, DhcpOptions.u32(t2));
        return o;
    }

    /** The requests of {@code type} received so far. */
    List<Received> received(int type) {
        synchronized (received) {
            return received.stream().filter(r -> r.message().type() == type).toList();
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.join(5_000);
        socket.close();
        ns.close();
    }
}
