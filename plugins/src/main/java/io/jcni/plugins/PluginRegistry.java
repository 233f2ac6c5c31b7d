package io.jcni.plugins;

import io.jcni.plugins.skel.Plugin;
import java.util.List;
import java.util.function.Supplier;

/** Every plugin type jcni ships. A type's classes load only when that type runs. */
public final class PluginRegistry {
    private PluginRegistry() {}

    /** Prints the types, one a line, for the install script. */
    public static void main(String[] args) {
        types().forEach(System.out::println);
    }

    public static List<String> types() {
        return List.of(
                // main: interfaces
                "bridge",
                "loopback",
                "ptp",
                // ipam: addresses
                "cluster-ipam",
                "host-local",
                "static",
                // meta: chained
                "bandwidth",
                "firewall",
                "flannel",
                "portmap",
                "sbr",
                "tuning");
    }

    public static Supplier<Plugin> lookup(String type) {
        return switch (type) {
            case "bridge" -> io.jcni.plugins.main.bridge.Bridge::new;
            case "loopback" -> io.jcni.plugins.main.loopback.Loopback::new;
            case "ptp" -> io.jcni.plugins.main.ptp.Ptp::new;
            case "cluster-ipam" -> io.jcni.plugins.ipam.clusteripam.ClusterIpam::new;
            case "host-local" -> io.jcni.plugins.ipam.hostlocal.HostLocalPlugin::new;
            case "static" -> io.jcni.plugins.ipam.staticip.StaticIpam::new;
            case "bandwidth" -> io.jcni.plugins.meta.bandwidth.BandwidthPlugin::new;
            case "sbr" -> io.jcni.plugins.meta.sbr.SbrPlugin::new;
            case "tuning" -> io.jcni.plugins.meta.tuning.Tuning::new;
            case "portmap" -> io.jcni.plugins.meta.portmap.PortmapPlugin::new;
            case "firewall" -> io.jcni.plugins.meta.firewall.FirewallPlugin::new;
            case "flannel" -> io.jcni.plugins.meta.flannel.FlannelPlugin::new;
            default -> null;
        };
    }
}
