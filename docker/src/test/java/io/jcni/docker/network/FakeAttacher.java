package io.jcni.docker.network;

import io.jcni.runtime.RuntimeConf;
import io.jcni.types.NetConfList;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Records what the driver asks for; fails ADD on request; sandboxes "exist" when listed. */
public final class FakeAttacher implements Attacher {
    public final List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
    public final List<NetConfList> added = new ArrayList<>();
    public final List<List<Map<String, Object>>> published = new ArrayList<>();
    public final Set<String> sandboxes = new HashSet<>();
    public RuntimeException failAdd;
    /** How long openNetwork and publish take (iptables and nft take that long on a real host): widens race windows in tests. */
    public volatile long slowMillis;

    @Override
    public void add(NetConfList list, RuntimeConf rt, String srcName) {
        calls.add("add " + rt.containerId() + " " + srcName);
        if (failAdd != null) throw failAdd;
        added.add(list);
    }

    @Override
    public void del(NetConfList list, RuntimeConf rt, String srcName) {
        calls.add("del " + rt.containerId() + " " + srcName);
    }

    @Override
    public void dropInterface(String name, boolean background) {
        calls.add("drop " + name + (background ? " later" : ""));
    }

    @Override
    public void settle() {
    }

    @Override
    public void publish(NetConfList list, RuntimeConf rt, List<Map<String, Object>> portMappings) {
        pause();
        calls.add("publish " + rt.containerId());
        published.add(portMappings);
    }

    @Override
    public void unpublish(NetConfList list, RuntimeConf rt) {
        calls.add("unpublish " + rt.containerId());
    }

    @Override
    public void openNetwork(String bridge, boolean internal, List<String> masquerade) {
        pause();
        calls.add("open " + bridge + (internal ? " internal" : "") + (masquerade.isEmpty() ? "" : " masquerade " + masquerade));
    }

    @Override
    public void removeNetwork(NetConfList list, Teardown t) {
        calls.add("remove " + list.name() + " " + t.bridge() + (t.masquerade().isEmpty() ? "" : " masquerade " + t.masquerade())
                + (t.closeForwarding() ? "" : " keep-forwarding") + (t.deleteBridge() ? " delete-bridge" : "")
                + (t.lentAddresses().isEmpty() ? "" : " drop-addresses " + t.lentAddresses()));
    }

    /** Interfaces of the "host", by name. */
    public final Map<String, HostLink> links = new java.util.concurrent.ConcurrentHashMap<>();
    /** Routes of the "host". */
    public final List<HostRoute> routes = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public java.util.Optional<HostLink> hostLink(String name) {
        return java.util.Optional.ofNullable(links.get(name));
    }

    @Override
    public List<HostRoute> hostRoutes() {
        return List.copyOf(routes);
    }

    private void pause() {
        try {
            Thread.sleep(slowMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean sandboxExists(String sandboxKey) {
        return sandboxes.contains(sandboxKey);
    }
}
