package io.jcni.etcd;

import static io.jcni.etcd.GatewayCodec.b64;
import static io.jcni.etcd.GatewayCodec.num;
import static io.jcni.etcd.GatewayCodec.prefixEnd;
import static io.jcni.etcd.GatewayCodec.revision;

import io.jcni.types.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One watch over the gateway ({@code /v3/watch}, on the session's {@code java.net.http} client):
 * the stream of JSON messages read until it ends, fails, or is closed through {@code cancel}.
 */
final class GatewayWatch {
    private GatewayWatch() {}

    /** {@link EtcdClient#watch(String, long, Consumer, Consumer, Runnable)}: the endpoints in order until one answers. */
    static void run(GatewaySession session, String prefix, long fromRevision, Consumer<WatchEvent> sink,
            Consumer<AutoCloseable> cancel, Runnable alive) throws IOException {
        String body = createRequest(prefix, fromRevision);
        IOException last = null;
        for (URI ep : session.order()) {
            HttpResponse<InputStream> resp;
            try {
                resp = open(session, ep, body);
            } catch (EtcdAuthException e) {
                throw e;
            } catch (IOException e) {
                last = session.explain(ep, "/v3/watch", e);
                if (last instanceof EtcdAuthException) throw last;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("watch interrupted");
            }
            try (InputStream in = resp.body()) {
                cancel.accept(in);
                if (resp.statusCode() != 200) throw refused(session, ep, resp.statusCode(), in);
                readEvents(session, ep, in, fromRevision, sink, alive);
                return;
            }
        }
        throw last != null ? last : new IOException("no etcd endpoint");
    }

    /** The WatchCreateRequest: every key under {@code prefix}, with progress notifications. */
    private static String createRequest(String prefix, long fromRevision) {
        Map<String, Object> create = new LinkedHashMap<>();
        create.put("key", b64(prefix));
        create.put("range_end", b64(prefixEnd(prefix)));
        if (fromRevision > 0) create.put("start_revision", Long.toString(fromRevision));
        create.put("progress_notify", true);
        return Json.write(Map.of("create_request", create));
    }

    private static HttpResponse<InputStream> open(GatewaySession session, URI ep, String body)
            throws IOException, InterruptedException {
        String auth = session.ensureToken(ep);
        HttpRequest.Builder req = HttpRequest.newBuilder(ep.resolve("/v3/watch"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (auth != null) req.header("Authorization", auth);
        return session.watchHttp().send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    /** The failure a non-200 answer to the watch stands for. */
    private static IOException refused(GatewaySession session, URI ep, int status, InputStream in) throws IOException {
        String text = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
        IOException plain = GatewaySession.plainHttpToTls(ep, text);
        if (plain != null) return plain;
        if (GatewaySession.tokenRejected(text)) session.forgetToken(); // the caller's next call (its re-list) authenticates again
        return new EtcdException("etcd " + ep + " watch: HTTP " + status + ": " + text.strip());
    }

    /** The watch's messages, each one's events to {@code sink}, until the stream ends. */
    private static void readEvents(GatewaySession session, URI ep, InputStream in, long fromRevision, Consumer<WatchEvent> sink,
            Runnable alive) throws IOException {
        JsonObjectStream objects = new JsonObjectStream(in);
        String text;
        while ((text = objects.next()) != null) {
            alive.run();
            Map<String, Object> msg = Json.parseObject(text);
            if (msg.get("error") != null) {
                if (GatewaySession.tokenRejected(text)) session.forgetToken();
                throw new EtcdException("etcd " + ep + " watch: " + Json.write(msg.get("error")));
            }
            Map<String, Object> res = msg.get("result") instanceof Map<?, ?> m ? Json.asObject(m) : Map.of();
            if (num(res.get("compact_revision")) > 0) {
                throw new EtcdException("watch: revision " + fromRevision + " compacted");
            }
            if (Boolean.TRUE.equals(res.get("canceled"))) throw new EtcdException("watch canceled by etcd");
            long rev = revision(res);
            if (res.get("events") instanceof List<?> evs) {
                for (Object o : evs) sink.accept(WatchEvent.fromGateway(Json.asObject(o), rev));
            }
        }
    }
}
