package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.linux.Address;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.runtime.Cni;
import io.jcni.runtime.CniEnvironment;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.RuntimeConf;
import io.jcni.types.Cidr;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import io.jcni.types.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link Attacher} through the runtime module's {@link Cni}, with jcni's plugins run in-process. */
public final class CniAttacher implements Attacher {
    private final Cni cni;
    private final PluginExec exec;

    /**
     * @param cniPath  where plugins that are not jcni's own are found
     * @param cacheDir the result cache (libcni's /var/lib/cni/results)
     */
    public CniAttacher(List<Path> cniPath, Path cacheDir) {
        this.exec = new InProcessExec();
        this.cni = new Cni(cniPath, cacheDir, exec);
    }

    @Override
    public void add(NetConfList list, RuntimeConf rt, String srcName) {
        String name = "jcni-stage-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
        try (Netns staging = Netns.create(name); Netns here = Netns.open("/proc/self/ns/net")) {
            try {
                cni.addNetworkList(list, new RuntimeConf(rt.containerId(), Netns.pathOf(name).toString(), STAGING_IFNAME, rt.args(),
                        rt.capabilityArgs()));
                try (Rtnl nl = Rtnl.open(staging)) {
                    // Linux renames only links that are down; libnetwork sets it up again in the sandbox.
                    Link l = nl.link(STAGING_IFNAME);
                    nl.setDown(l.index());
                    nl.rename(l.index(), srcName);
                    nl.setNamespace(l.index(), here);
                }
            } finally {
                Netns.delete(name);
            }
        } catch (CniException e) {
            throw new DriverException("CNI ADD on " + list.name() + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void del(NetConfList list, RuntimeConf rt, String srcName) {
        try {
            cni.delNetworkList(list, new RuntimeConf(rt.containerId(), "", STAGING_IFNAME, rt.args(), rt.capabilityArgs()));
        } catch (CniException e) {
            throw new DriverException("CNI DEL on " + list.name() + " failed: " + e.getMessage(), e);
        }
        dropInterface(srcName, false);
    }

    @Override
    public void dropInterface(String name, boolean background) {
        if (!background) {
            deleteLink(name);
            return;
        }
        java.util.concurrent.Future<?> f = background().submit(() -> deleteLink(name));
        pending.add(f);
        pending.removeIf(java.util.concurrent.Future::isDone);
    }

    @Override
    public void settle() {
        // Removed through the iterator: a Future has no equality to look it up by.
        for (java.util.Iterator<java.util.concurrent.Future<?>> it = pending.iterator(); it.hasNext();) {
            java.util.concurrent.Future<?> f = it.next();
            try {
                f.get(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // a failed background deletion leaves a link that the next GC or network removal finds
            }
            it.remove();
        }
    }

    private final java.util.Set<java.util.concurrent.Future<?>> pending = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private java.util.concurrent.ExecutorService background;

    private synchronized java.util.concurrent.ExecutorService background() {
        if (background == null) background = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
        return background;
    }

    private static void deleteLink(String name) {
        // Back in this namespace when libnetwork has taken it out of the sandbox; with the sandbox gone it is gone too.
        try (Rtnl nl = Rtnl.open()) {
            nl.findLink(name).ifPresent(l -> nl.deleteLink(l.index()));
        }
    }

    @Override
    public void publish(NetConfList list, RuntimeConf rt, List<Map<String, Object>> portMappings) {
        PluginConf portmap = portmap(list);
        Result cached = cni.cachedResult(list, staged(rt)).orElseThrow(() -> new DriverException(
                "ProgramExternalConnectivity: the endpoint has no CNI result (was it joined?)"));
        Map<String, Object> caps = new HashMap<>(rt.capabilityArgs());
        caps.put("portMappings", portMappings);
        RuntimeConf withPorts = new RuntimeConf(rt.containerId(), rt.netns(), STAGING_IFNAME, rt.args(), caps);
        run(portmap, list, cached.toJson(), withPorts, CniCommand.ADD);
    }

    @Override
    public void unpublish(NetConfList list, RuntimeConf rt) {
        PluginConf portmap = portmap(list);
        Map<String, Object> prev = cni.cachedResult(list, staged(rt)).map(Result::toJson).orElse(null);
        run(portmap, list, prev, new RuntimeConf(rt.containerId(), rt.netns(), STAGING_IFNAME, rt.args(), rt.capabilityArgs()), CniCommand.DEL);
    }

    private void run(PluginConf plugin, NetConfList list, Map<String, Object> prev, RuntimeConf rt, CniCommand cmd) {
        Map<String, Object> conf = Cni.buildConfig(list.name(), list.cniVersion(), plugin, prev, rt);
        try {
            exec.run(exec.find(plugin.type(), cni.path()), Json.write(conf).getBytes(StandardCharsets.UTF_8),
                    CniEnvironment.of(cmd, rt, PluginExec.joinPath(cni.path())));
        } catch (CniException e) {
            throw new DriverException("portmap " + cmd + " on " + list.name() + " failed: " + e.getMessage(), e);
        }
    }

    /** The attachment as the cache knows it: CNI_IFNAME is always the staging name. */
    private static RuntimeConf staged(RuntimeConf rt) {
        return new RuntimeConf(rt.containerId(), rt.netns(), STAGING_IFNAME, rt.args(), rt.capabilityArgs());
    }

    private static PluginConf portmap(NetConfList list) {
        for (PluginConf p : list.plugins()) if (p.type().equals("portmap")) return p;
        throw new DriverException("published ports need the portmap plugin, and network " + list.name()
                + " has none (create it with -o jcni.plugins=bridge,portmap,...)");
    }

    @Override
    public void openNetwork(String bridge, boolean internal, List<String> masquerade) {
        Forwarding.open(bridge, internal, family(masquerade, false), family(masquerade, true));
    }

    private static List<String> family(List<String> subnets, boolean v6) {
        return subnets.stream().filter(s -> s.contains(":") == v6).toList();
    }

    @Override
    public void removeNetwork(NetConfList list, Teardown t) {
        settle();
        try {
            cni.gcNetworkList(list, List.of());
        } catch (CniException e) {
            throw new DriverException("CNI GC on " + list.name() + " failed: " + e.getMessage(), e);
        }
        if (t.bridge() == null) return;
        if (t.closeForwarding()) Forwarding.close(t.bridge(), t.internal(), family(t.masquerade(), false), family(t.masquerade(), true));
        try (Rtnl nl = Rtnl.open()) {
            Optional<Link> bridge = nl.findLink(t.bridge());
            if (bridge.isEmpty()) return;
            if (t.deleteBridge()) {
                // Recorded as jcni's at CreateNetwork; still, only a bridge is ever deleted under that name.
                if ("bridge".equals(bridge.get().kind())) nl.deleteLink(bridge.get().index());
                return;
            }
            for (Cidr a : t.lentAddresses()) {
                boolean there = nl.addresses(bridge.get().index(), a.isV6() ? Family.INET6 : Family.INET).stream()
                        .anyMatch(x -> x.address().equals(a.address()) && x.prefixLength() == a.prefix());
                if (there) nl.deleteAddress(bridge.get().index(), a.address(), a.prefix());
            }
        }
    }

    @Override
    public Optional<HostLink> hostLink(String name) {
        try (Rtnl nl = Rtnl.open()) {
            return nl.findLink(name).map(l -> {
                List<Cidr> addrs = new ArrayList<>();
                for (Family f : List.of(Family.INET, Family.INET6)) for (Address a : nl.addresses(l.index(), f)) addrs.add(a.prefix());
                return new HostLink(l.name(), l.kind() == null ? "" : l.kind(), addrs);
            });
        }
    }

    @Override
    public List<HostRoute> hostRoutes() {
        List<HostRoute> out = new ArrayList<>();
        try (Rtnl nl = Rtnl.open()) {
            Map<Integer, String> names = new HashMap<>();
            for (Link l : nl.links()) names.put(l.index(), l.name());
            for (Family f : List.of(Family.INET, Family.INET6)) {
                for (Route r : nl.routes(f, Route.TABLE_MAIN)) {
                    if (r.dst() != null && r.dst().prefix() > 0) out.add(new HostRoute(r.dst(), names.get(r.oif())));
                }
            }
        }
        return out;
    }

    @Override
    public boolean sandboxExists(String sandboxKey) {
        return Files.exists(Path.of(sandboxKey));
    }
}
