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
    public final List<String> calls = new ArrayList<>();
    public final List<NetConfList> added = new ArrayList<>();
    public final List<List<Map<String, Object>>> published = new ArrayList<>();
    public final Set<String> sandboxes = new HashSet<>();
    public RuntimeException failAdd;

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
        calls.add("publish " + rt.containerId());
        published.add(portMappings);
    }

    @Override
    public void unpublish(NetConfList list, RuntimeConf rt) {
        calls.add("unpublish " + rt.containerId());
    }

    @Override
    public void openNetwork(String bridge, boolean internal, List<String> masquerade) {
        calls.add("open " + bridge + (internal ? " internal" : "") + (masquerade.isEmpty() ? "" : " masquerade " + masquerade));
    }

    @Override
    public void removeNetwork(NetConfList list, String bridge, boolean internal, List<String> masquerade, boolean deleteBridge) {
        calls.add("remove " + list.name() + " " + bridge + (masquerade.isEmpty() ? "" : " masquerade " + masquerade)
                + (deleteBridge ? " delete-bridge" : ""));
    }

    @Override
    public boolean sandboxExists(String sandboxKey) {
        return sandboxes.contains(sandboxKey);
    }
}
