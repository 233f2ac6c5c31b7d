package io.jcni.plugins;

import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.ipam.clusteripam.ClusterIpam;
import io.jcni.plugins.ipam.dhcp.Dhcp;
import io.jcni.plugins.ipam.hostlocal.HostLocalPlugin;
import io.jcni.plugins.ipam.staticip.StaticIpam;
import io.jcni.plugins.main.bridge.Bridge;
import io.jcni.plugins.main.dummy.Dummy;
import io.jcni.plugins.main.hostdevice.HostDevice;
import io.jcni.plugins.main.ipvlan.Ipvlan;
import io.jcni.plugins.main.loopback.Loopback;
import io.jcni.plugins.main.macvlan.Macvlan;
import io.jcni.plugins.main.ptp.Ptp;
import io.jcni.plugins.main.vlan.Vlan;
import io.jcni.plugins.meta.bandwidth.BandwidthPlugin;
import io.jcni.plugins.meta.firewall.FirewallPlugin;
import io.jcni.plugins.meta.flannel.FlannelPlugin;
import io.jcni.plugins.meta.portmap.PortmapPlugin;
import io.jcni.plugins.meta.sbr.SbrPlugin;
import io.jcni.plugins.meta.tuning.Tuning;
import io.jcni.plugins.skel.Background;
import io.jcni.plugins.skel.Phases;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginContext;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** Every plugin type jcni ships, in one table. A type's classes load only when that type runs. */
public final class PluginRegistry {
    private PluginRegistry() {}

    /**
     * The table. Each constant's body names its plugin class, so that class loads when the constant's
     * {@code get} first runs; a constructor reference ({@code Bridge::new}) would load every plugin's
     * class as soon as the table is built, in every standalone call.
     */
    private enum Entry implements Supplier<Plugin> {
        // main: interfaces
        BRIDGE("bridge") {
            @Override
            public Plugin get() {
                return new Bridge();
            }
        },
        DUMMY("dummy") {
            @Override
            public Plugin get() {
                return new Dummy();
            }
        },
        HOST_DEVICE("host-device") {
            @Override
            public Plugin get() {
                return new HostDevice();
            }
        },
        IPVLAN("ipvlan") {
            @Override
            public Plugin get() {
                return new Ipvlan();
            }
        },
        LOOPBACK("loopback") {
            @Override
            public Plugin get() {
                return new Loopback();
            }
        },
        MACVLAN("macvlan") {
            @Override
            public Plugin get() {
                return new Macvlan();
            }
        },
        PTP("ptp") {
            @Override
            public Plugin get() {
                return new Ptp();
            }
        },
        VLAN("vlan") {
            @Override
            public Plugin get() {
                return new Vlan();
            }
        },
        // ipam: addresses
        CLUSTER_IPAM("cluster-ipam") {
            @Override
            public Plugin get() {
                return new ClusterIpam();
            }
        },
        DHCP("dhcp") {
            @Override
            public Plugin get() {
                return new Dhcp();
            }
        },
        HOST_LOCAL("host-local") {
            @Override
            public Plugin get() {
                return new HostLocalPlugin();
            }
        },
        STATIC("static") {
            @Override
            public Plugin get() {
                return new StaticIpam();
            }
        },
        // meta: chained
        BANDWIDTH("bandwidth") {
            @Override
            public Plugin get() {
                return new BandwidthPlugin();
            }
        },
        FIREWALL("firewall") {
            @Override
            public Plugin get() {
                return new FirewallPlugin();
            }
        },
        FLANNEL("flannel") {
            @Override
            public Plugin get() {
                return new FlannelPlugin();
            }
        },
        PORTMAP("portmap") {
            @Override
            public Plugin get() {
                return new PortmapPlugin();
            }
        },
        SBR("sbr") {
            @Override
            public Plugin get() {
                return new SbrPlugin();
            }
        },
        TUNING("tuning") {
            @Override
            public Plugin get() {
                return new Tuning();
            }
        };

        final String type;

        Entry(String type) {
            this.type = type;
        }
    }

    /** Prints the types, one a line, for the install script. */
    public static void main(String[] args) {
        types().forEach(System.out::println);
    }

    public static List<String> types() {
        List<String> out = new ArrayList<>();
        for (Entry e : Entry.values()) out.add(e.type);
        return List.copyOf(out);
    }

    /** The plugin of {@code type}, or null when jcni has none. */
    public static Supplier<Plugin> lookup(String type) {
        for (Entry e : Entry.values()) if (e.type.equals(type)) return e;
        return null;
    }

    /** The context of a call that delegates to these plugins in-process and logs to {@code log}. */
    public static PluginContext context(PrintStream log) {
        return context(log, null);
    }

    /**
     * As {@link #context(PrintStream)}, leaving work for after the answer to {@code background}
     * (null: none). One call site for the method reference, which the AOT cache's training links
     * for every caller: a new one would be linked again in every plugin process.
     */
    public static PluginContext context(PrintStream log, Background background) {
        return Delegation.context(PluginRegistry::lookup, log, new Phases(), background);
    }
}
