package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The operations the host-local plugin performs, minus CNI plumbing (upstream's main.go:
 * cmdAdd/cmdDel/cmdCheck, plus GC and STATUS from CNI 1.1). The plugin turns the results into
 * CNI result JSON.
 *
 * <p>Every operation holds the network's lock for its whole duration (upstream takes it once per
 * range set), so an ADD over several range sets is atomic with respect to other jcni processes.
 */
public final class HostLocal {
    private HostLocal() {}

    /** Everything an ADD result needs besides cniVersion and interfaces. */
    public record AddResult(List<Allocation> ips, List<Result.Route> routes, Result.Dns dns) {
        public AddResult {
            ips = List.copyOf(ips);
            routes = List.copyOf(routes);
        }
    }

    /** ADD: DNS first (a bad resolvConf fails before anything is reserved), then the addresses. */
    public static AddResult add(IpamConfig config, String containerId, String ifname) {
        Result.Dns dns = dns(config);
        try (DiskStore store = openStore(config)) {
            return new AddResult(allocate(config, store, containerId, ifname), config.routes(), dns);
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    /** The DNS block: the parsed {@code resolvConf}, or empty when none is configured. */
    public static Result.Dns dns(IpamConfig config) {
        String rc = config.resolvConf();
        return rc == null || rc.isEmpty() ? Result.Dns.EMPTY : ResolvConf.read(Path.of(rc));
    }

    /**
     * Reserves one address per range set for the attachment, honouring requested addresses.
     * On any failure, everything reserved by this call is released again.
     */
    public static List<Allocation> allocate(IpamConfig config, Store store, String containerId, String ifname) {
        // Requested addresses by text, so duplicates collapse (upstream keys a map by ip.String()).
        Map<String, IpAddr> requested = new LinkedHashMap<>();
        for (IpAddr ip : config.requestedIps()) requested.putIfAbsent(ip.toString(), ip);

        List<Allocation> done = new ArrayList<>();
        try {
            store.lock();
            try {
                for (int idx = 0; idx < config.ranges().size(); idx++) {
                    RangeSet set = config.ranges().get(idx);
                    IpAddr want = null;
                    for (IpAddr ip : requested.values()) {
                        if (set.contains(ip)) {
                            want = ip;
                            break;
                        }
                    }
                    if (want != null) requested.remove(want.toString());
                    try {
                        done.add(new Allocator(set, store, idx).get(containerId, ifname, want));
                    } catch (CniException e) {
                        throw Errors.prefixed("failed to allocate for range " + idx + ": ", e);
                    }
                }
                if (!requested.isEmpty()) {
                    throw Errors.tryAgain("failed to allocate all requested IPs: " + String.join(" ", requested.keySet()));
                }
                return done;
            } catch (IOException | RuntimeException e) {
                // Whatever failed (a full disk while reserving the second range set, say), the
                // addresses this call already holds go back: a failed ADD leaves nothing reserved.
                rollback(store, done);
                throw e;
            } finally {
                store.unlock();
            }
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    private static void rollback(Store store, List<Allocation> done) {
        for (Allocation a : done) {
            try {
                store.releaseByIp(a.address());
            } catch (IOException ignored) {
                // best effort, as upstream
            }
        }
        done.clear();
    }

    /** DEL: releases every address of the attachment; unknown attachments are not an error. */
    public static List<IpAddr> release(IpamConfig config, String containerId, String ifname) {
        return release(new IpamConfig.StoreLocation(config.effectiveDataDir(), config.name()), containerId, ifname);
    }

    public static List<IpAddr> release(IpamConfig.StoreLocation where, String containerId, String ifname) {
        try (DiskStore store = DiskStore.open(where.dataDir(), where.network())) {
            return release(store, containerId, ifname);
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    public static List<IpAddr> release(Store store, String containerId, String ifname) {
        try {
            store.lock();
            try {
                return store.releaseById(containerId, ifname);
            } finally {
                store.unlock();
            }
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    /** CHECK: fails, with upstream's message, when the attachment holds no address. */
    public static List<IpAddr> check(IpamConfig config, String containerId, String ifname) {
        try (DiskStore store = openStore(config)) {
            store.lock();
            try {
                List<IpAddr> found = store.findById(containerId, ifname);
                if (found.isEmpty()) {
                    throw new CniException(ErrorCode.UNKNOWN_CONTAINER, "host-local: Failed to find address added by container " + containerId);
                }
                return found;
            } finally {
                store.unlock();
            }
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    /**
     * GC: releases every reservation not held by one of {@code valid} (the runtime's
     * {@code cni.dev/valid-attachments}). A network that never had a store has nothing to release.
     */
    public static List<IpAddr> gc(IpamConfig config, Set<Attachment> valid) {
        DiskStore.checkNetworkName(config.name());
        if (!Files.isDirectory(config.effectiveDataDir().resolve(config.name()))) return List.of();
        try (DiskStore store = openStore(config)) {
            store.lock();
            try {
                return store.releaseAllExcept(valid);
            } finally {
                store.unlock();
            }
        } catch (IOException e) {
            throw ioFailure(e);
        }
    }

    /**
     * STATUS: whether the data directory can be written, and which range sets are full. Creates
     * nothing; counting uses file names only, so it stays cheap on big networks.
     */
    public static HostLocalStatus status(IpamConfig config) {
        DiskStore.checkNetworkName(config.name());
        Path netDir = config.effectiveDataDir().resolve(config.name());
        String problem = unwritable(netDir);
        if (problem != null) return new HostLocalStatus(problem, List.of());

        Set<IpAddr> reserved = Set.of();
        if (Files.isDirectory(netDir)) {
            try (DiskStore store = DiskStore.open(config.effectiveDataDir(), config.name())) {
                reserved = store.reservedIps();
            } catch (IOException e) {
                return new HostLocalStatus("cannot list " + netDir + ": " + e.getMessage(), List.of());
            }
        }
        List<HostLocalStatus.RangeSetStatus> sets = new ArrayList<>();
        for (int i = 0; i < config.ranges().size(); i++) {
            RangeSet set = config.ranges().get(i);
            long used = 0;
            for (IpAddr ip : reserved) {
                if (set.find(ip).map(r -> r.isAllocatable(ip)).orElse(false)) used++;
            }
            BigInteger capacity = set.allocatableCount();
            sets.add(new HostLocalStatus.RangeSetStatus(i, set, capacity, used));
        }
        return new HostLocalStatus(null, sets);
    }

    /** Why {@code dir} (or the nearest existing parent it would be created in) is unusable. */
    private static String unwritable(Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !Files.exists(p)) p = p.getParent();
        if (p == null) return "no existing parent of " + dir;
        if (!Files.isDirectory(p)) return p + " is not a directory";
        if (!Files.isWritable(p)) return p + " is not writable";
        return null;
    }

    private static DiskStore openStore(IpamConfig config) throws IOException {
        return DiskStore.open(config.effectiveDataDir(), config.name());
    }

    private static CniException ioFailure(IOException e) {
        return Errors.io(e);
    }
}
