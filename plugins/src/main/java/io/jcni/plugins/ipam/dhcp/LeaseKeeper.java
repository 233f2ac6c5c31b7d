package io.jcni.plugins.ipam.dhcp;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The plugin's side of jcnid's DHCP service ({@code jcnid start --dhcp}), which holds the leases:
 * one JSON line out, one JSON line back, over the unix socket {@code daemonSocketPath}. The
 * protocol is described on the service ({@code io.jcni.daemon.dhcp.DhcpService}).
 */
final class LeaseKeeper {
    /** Beyond the DHCP timeout: the time the service may take to enter the namespace and answer. */
    static final long SLACK_MILLIS = 5_000;

    private final Path socket;

    LeaseKeeper(String socket) {
        this.socket = Path.of(socket);
    }

    /** Sends the request and returns the answer when it says ok; a CNI error otherwise. */
    Map<String, Object> call(Map<String, Object> request, long timeoutMillis) {
        String reply;
        try {
            reply = exchange(Json.write(request) + "\n", timeoutMillis + SLACK_MILLIS);
        } catch (IOException e) {
            if (!Files.exists(socket)) throw notRunning("no socket at " + socket);
            throw notRunning(socket + ": " + e.getMessage());
        }
        Map<String, Object> m;
        try {
            m = Json.parseObject(reply);
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "dhcp: the daemon at " + socket + " does not speak jcni's DHCP protocol",
                    "is it the reference dhcp daemon? jcni's dhcp plugin needs jcnid --dhcp; reply: " + abbreviate(reply));
        }
        if (Boolean.TRUE.equals(m.get("busy"))) throw new CniException(ErrorCode.TRY_AGAIN_LATER, "dhcp: " + m.get("error"));
        if (!Boolean.TRUE.equals(m.get("ok"))) {
            throw new CniException(ErrorCode.INTERNAL, "dhcp: " + m.get("error"));
        }
        return m;
    }

    private CniException notRunning(String why) {
        return new CniException(ErrorCode.TRY_AGAIN_LATER,
                "dhcp: jcnid's DHCP service is not running (start it with: jcni daemon start --dhcp)", why);
    }

    private String exchange(String line, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
             Selector sel = Selector.open()) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer out = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
            while (out.hasRemaining()) ch.write(out);
            ch.configureBlocking(false);
            ch.register(sel, SelectionKey.OP_READ);
            ByteArrayOutputStream in = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            while (true) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) throw new CniException(ErrorCode.TRY_AGAIN_LATER, "dhcp: jcnid's DHCP service did not answer in time",
                        "waited " + timeoutMillis + " ms on " + socket);
                sel.select(left);
                sel.selectedKeys().clear();
                buf.clear();
                int n = ch.read(buf);
                if (n < 0) break;
                in.write(buf.array(), 0, n);
                if (n > 0 && buf.get(n - 1) == '\n') break;
            }
            return in.toString(StandardCharsets.UTF_8).trim();
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }
}
