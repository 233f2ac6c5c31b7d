package io.jcni.docker.api;

import io.jcni.types.DamagedStateException;
import io.jcni.types.Json;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * libnetwork's remote driver protocol without the HTTP: a POST to {@code /Plugin.Activate},
 * {@code /NetworkDriver.*} or {@code /IpamDriver.*} with a JSON body, answered with JSON.
 *
 * <p>Errors are answered with status 200 and the error in the body, because that is where
 * libnetwork looks: {@code Err} for NetworkDriver calls, {@code Error} for IpamDriver calls. Only
 * an unknown path (404) or method (405) gets another status. dockerd sends no Content-Type, and
 * after a dropped connection it resends a call with an <em>empty</em> body (its retry reuses a
 * consumed reader); such a call cannot be carried out, so it is refused with a message saying so.
 */
public final class RemoteApi {

    /** An answer: HTTP status and the JSON body. */
    public record Reply(int status, String json) {}

    private enum Kind { PLUGIN, NETWORK, IPAM }

    private enum Call {
        ACTIVATE("/Plugin.Activate", Kind.PLUGIN, false),
        NET_CAPABILITIES("/NetworkDriver.GetCapabilities", Kind.NETWORK, false),
        CREATE_NETWORK("/NetworkDriver.CreateNetwork", Kind.NETWORK, true),
        DELETE_NETWORK("/NetworkDriver.DeleteNetwork", Kind.NETWORK, true),
        ALLOCATE_NETWORK("/NetworkDriver.AllocateNetwork", Kind.NETWORK, true),
        FREE_NETWORK("/NetworkDriver.FreeNetwork", Kind.NETWORK, true),
        CREATE_ENDPOINT("/NetworkDriver.CreateEndpoint", Kind.NETWORK, true),
        ENDPOINT_INFO("/NetworkDriver.EndpointOperInfo", Kind.NETWORK, true),
        DELETE_ENDPOINT("/NetworkDriver.DeleteEndpoint", Kind.NETWORK, true),
        JOIN("/NetworkDriver.Join", Kind.NETWORK, true),
        LEAVE("/NetworkDriver.Leave", Kind.NETWORK, true),
        DISCOVER_NEW("/NetworkDriver.DiscoverNew", Kind.NETWORK, true),
        DISCOVER_DELETE("/NetworkDriver.DiscoverDelete", Kind.NETWORK, true),
        PROGRAM_EXTERNAL("/NetworkDriver.ProgramExternalConnectivity", Kind.NETWORK, true),
        REVOKE_EXTERNAL("/NetworkDriver.RevokeExternalConnectivity", Kind.NETWORK, true),
        IPAM_CAPABILITIES("/IpamDriver.GetCapabilities", Kind.IPAM, false),
        ADDRESS_SPACES("/IpamDriver.GetDefaultAddressSpaces", Kind.IPAM, false),
        REQUEST_POOL("/IpamDriver.RequestPool", Kind.IPAM, true),
        RELEASE_POOL("/IpamDriver.ReleasePool", Kind.IPAM, true),
        REQUEST_ADDRESS("/IpamDriver.RequestAddress", Kind.IPAM, true),
        RELEASE_ADDRESS("/IpamDriver.ReleaseAddress", Kind.IPAM, true);

        final String path;
        final Kind kind;
        /** Whether the call means nothing without a body (the capability calls are sent with none). */
        final boolean needsBody;

        Call(String path, Kind kind, boolean needsBody) {
            this.path = path;
            this.kind = kind;
            this.needsBody = needsBody;
        }

        String shortName() {
            return path.substring(path.indexOf('.') + 1);
        }

        static Call of(String path) {
            for (Call c : values()) if (c.path.equals(path)) return c;
            return null;
        }
    }

    /** Every path this API answers, for tests and the README. */
    public static List<String> paths() {
        return java.util.Arrays.stream(Call.values()).map(c -> c.path).toList();
    }

    private final NetworkDriver network;
    private final IpamDriver ipam;
    private final PrintStream log;

    public RemoteApi(NetworkDriver network, IpamDriver ipam, PrintStream log) {
        this.network = network;
        this.ipam = ipam;
        this.log = log;
    }

    public Reply handle(String method, String path, byte[] body) {
        Call call = Call.of(path);
        if (call == null) {
            logLine("unknown", 0, "404 not found: " + path);
            return new Reply(404, Json.write(Map.of("Err", "jcni: no such plugin call: " + path)));
        }
        if (!"POST".equals(method)) {
            return new Reply(405, Json.write(Map.of("Err", "jcni: " + path + " takes POST, not " + method)));
        }
        long t0 = System.nanoTime();
        Map<String, Object> answer;
        String err = null;
        try {
            answer = dispatch(call, decode(call, body));
        } catch (DriverException | DamagedStateException e) {
            // A refusal, or a state document that cannot be read (named): the user gets its message.
            err = e.getMessage();
            answer = new LinkedHashMap<>();
        } catch (RuntimeException e) {
            // A bug, not a refusal: the user gets one line, the log gets the trace.
            err = call.shortName() + ": internal error in the jcni driver: " + e;
            if (log != null) e.printStackTrace(log);
            answer = new LinkedHashMap<>();
        }
        if (err != null) {
            answer.clear();
            answer.put(call.kind == Kind.IPAM ? "Error" : "Err", err);
        }
        logLine(call.shortName(), System.nanoTime() - t0, err);
        return new Reply(200, Json.write(answer));
    }

    private static Body decode(Call call, byte[] bytes) {
        String text = bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8).strip();
        if (text.isEmpty() || text.equals("null")) {
            if (call.needsBody) {
                throw new DriverException(call.shortName() + ": empty request body (dockerd resends a call with an empty body"
                        + " after it lost the connection; this call was not carried out, retry the docker command)");
            }
            return new Body(call.shortName(), Map.of());
        }
        Object v;
        try {
            v = Json.parse(text);
        } catch (Json.JsonException e) {
            throw new DriverException(call.shortName() + ": the request body is not JSON: " + e.getMessage());
        }
        if (!(v instanceof Map<?, ?>)) throw new DriverException(call.shortName() + ": the request body is not a JSON object");
        return new Body(call.shortName(), Json.asObject(v));
    }

    private Map<String, Object> dispatch(Call call, Body b) {
        Map<String, Object> out = new LinkedHashMap<>();
        switch (call) {
            case ACTIVATE -> out.put("Implements", List.of("NetworkDriver", "IpamDriver"));
            case NET_CAPABILITIES -> {
                out.put("Scope", network.scope());
                out.put("ConnectivityScope", network.scope());
            }
            case CREATE_NETWORK -> network.createNetwork(NetworkCalls.CreateNetwork.parse(b));
            case DELETE_NETWORK -> network.deleteNetwork(NetworkCalls.NetworkRef.parse(b));
            case ALLOCATE_NETWORK -> out.put("Options", network.allocateNetwork(NetworkCalls.AllocateNetwork.parse(b)));
            case FREE_NETWORK -> network.freeNetwork(NetworkCalls.NetworkRef.parse(b));
            // Interface stays out of the answer: the addresses and MAC Docker chose are the ones used.
            case CREATE_ENDPOINT -> network.createEndpoint(NetworkCalls.CreateEndpoint.parse(b));
            case ENDPOINT_INFO -> out.put("Value", network.endpointOperInfo(NetworkCalls.EndpointRef.parse(b)));
            case DELETE_ENDPOINT -> network.deleteEndpoint(NetworkCalls.EndpointRef.parse(b));
            case JOIN -> {
                NetworkCalls.JoinAnswer a = network.join(NetworkCalls.Join.parse(b));
                Map<String, Object> ifn = new LinkedHashMap<>();
                ifn.put("SrcName", a.srcName());
                ifn.put("DstPrefix", "eth");
                out.put("InterfaceName", ifn);
                if (a.gateway() != null) out.put("Gateway", a.gateway().toString());
                if (a.gatewayV6() != null) out.put("GatewayIPv6", a.gatewayV6().toString());
                out.put("DisableGatewayService", a.disableGatewayService());
            }
            case LEAVE -> network.leave(NetworkCalls.EndpointRef.parse(b));
            case DISCOVER_NEW -> network.discoverNew(NetworkCalls.Discovery.parse(b));
            case DISCOVER_DELETE -> network.discoverDelete(NetworkCalls.Discovery.parse(b));
            case PROGRAM_EXTERNAL -> network.programExternalConnectivity(NetworkCalls.ProgramExternalConnectivity.parse(b));
            case REVOKE_EXTERNAL -> network.revokeExternalConnectivity(NetworkCalls.EndpointRef.parse(b));
            case IPAM_CAPABILITIES -> {
                out.put("RequiresMACAddress", false);
                out.put("RequiresRequestReplay", false);
            }
            case ADDRESS_SPACES -> {
                out.put("LocalDefaultAddressSpace", IpamDriver.LOCAL_SPACE);
                out.put("GlobalDefaultAddressSpace", IpamDriver.GLOBAL_SPACE);
            }
            case REQUEST_POOL -> {
                IpamDriver.PoolAnswer a = ipam.requestPool(IpamCalls.RequestPool.parse(b));
                out.put("PoolID", a.poolId());
                out.put("Pool", a.pool().toString());
                out.put("Data", new LinkedHashMap<>(a.data()));
            }
            case RELEASE_POOL -> ipam.releasePool(IpamCalls.ReleasePool.parse(b));
            case REQUEST_ADDRESS -> {
                out.put("Address", ipam.requestAddress(IpamCalls.RequestAddress.parse(b)).toString());
                out.put("Data", new LinkedHashMap<>());
            }
            case RELEASE_ADDRESS -> ipam.releaseAddress(IpamCalls.ReleaseAddress.parse(b));
        }
        return out;
    }

    private void logLine(String call, long nanos, String err) {
        if (log == null) return;
        log.println(Instant.now() + " jcnid docker call=" + call + " dur_ms=" + String.format("%.3f", nanos / 1e6)
                + (err == null ? "" : " err=" + Json.write(err)));
    }
}
