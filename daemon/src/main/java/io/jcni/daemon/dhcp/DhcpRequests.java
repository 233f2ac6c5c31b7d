package io.jcni.daemon.dhcp;

import io.jcni.types.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The DHCP service's protocol (see {@link DhcpService}): one request object in, one answer
 * object out, on the lease keeper; the socket side is {@link DhcpService.Server}'s.
 */
final class DhcpRequests {
    private final DhcpLeases leases;
    private final PrintStream log;

    DhcpRequests(DhcpLeases leases, PrintStream log) {
        this.leases = leases;
        this.log = log;
    }

    /** The answer to {@code req}: an error answer for anything that fails, never a throw. */
    Map<String, Object> answer(Map<String, Object> req) {
        try {
            return handle(req);
        } catch (DhcpException e) {
            return error(e.getMessage());
        } catch (RuntimeException | IOException e) {
            return error(String.valueOf(e.getMessage() == null ? e : e.getMessage()));
        } catch (Error e) { // e.g. no thread or memory to be had: the client still gets an answer
            log.println(Instant.now() + " jcnid dhcp request_error=" + DhcpLeases.quote(String.valueOf(e)));
            return error("jcnid's DHCP service failed: " + e);
        }
    }

    private Map<String, Object> handle(Map<String, Object> req) throws DhcpException, IOException {
        String op = str(req, "op");
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        switch (op) {
            case "add" -> {
                List<Integer> requested = Json.asList(req.getOrDefault("request", List.of())).stream()
                        .map(o -> ((Number) o).intValue()).toList();
                Map<Integer, byte[]> provided = new LinkedHashMap<>();
                Json.asObject(req.getOrDefault("provide", Map.of()))
                        .forEach((k, v) -> provided.put(Integer.parseInt(k), HexFormat.of().parseHex((String) v)));
                long timeout = Math.max(1, Math.min(DhcpService.MAX_TIMEOUT_MILLIS, ((Number) req.getOrDefault("timeoutMillis", 10_000L)).longValue()));
                Lease l = leases.acquire(new DhcpLeases.Acquire(str(req, "containerId"), str(req, "network"),
                        str(req, "ifname"), str(req, "netns"), requested, provided, timeout));
                ok.put("lease", l.resultJson());
            }
            case "check" -> {
                Lease l = leases.get(clientId(req));
                if (l == null) return error("no DHCP lease for " + clientId(req));
                ok.put("lease", l.resultJson());
            }
            case "del" -> leases.release(clientId(req));
            case "status" -> ok.put("leases", (long) leases.size());
            case "gc" -> {
                Set<List<String>> valid = new HashSet<>();
                for (Object o : Json.asList(req.getOrDefault("valid", List.of()))) {
                    List<Object> pair = Json.asList(o);
                    valid.add(List.of((String) pair.get(0), (String) pair.get(1)));
                }
                ok.put("released", (long) leases.collect(str(req, "network"), valid).size());
            }
            default -> {
                return error("unknown op " + op);
            }
        }
        return ok;
    }

    private static String clientId(Map<String, Object> req) {
        return ClientIdentity.clientId(str(req, "containerId"), str(req, "network"), str(req, "ifname"));
    }

    private static String str(Map<String, Object> m, String k) {
        if (!(m.get(k) instanceof String s)) throw new IllegalArgumentException("request lacks \"" + k + "\"");
        return s;
    }

    static Map<String, Object> error(String msg) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", msg);
        return m;
    }
}
