package io.jcni.overlay;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cost of one route check (the agent's every 10 s: {@link Dataplane#missing}, its dumps and
 * the comparison) with N programmed remotes, in an anonymous scratch namespace that goes with the
 * process (bench/multihost/routecheck.sh runs it; needs root). Per backend and N: the CPU time of
 * the checking thread (user + sys, kernel work on its behalf included) and its wall time, median
 * and max of the rounds, with everything in place (and the CPU of its dumps alone); then the same check right after the device
 * (flannel.1, or the underlay for host-gw) went down and up, when every remote is missing.
 *
 * <pre>RouteCheckLoad [ROUNDS(21)] N...   (default N: 1000 5000)</pre>
 */
public final class RouteCheckLoad {
    private static final NetworkConfig VXLAN = NetworkConfig.parse("{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\"}}");
    private static final NetworkConfig HOST_GW = NetworkConfig.parse("{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"host-gw\"}}");
    private static final IpAddr LOCAL = IpAddr.parse("172.16.0.1");
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private RouteCheckLoad() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        int[] ns = args.length > 1 ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray() : new int[] {1000, 5000};
        for (int n : ns) {
            for (boolean vxlan : new boolean[] {true, false}) {
                try (Netns scratch = Netns.createAnonymous(); Rtnl rt = Rtnl.open(scratch)) {
                    run(rt, vxlan, n, rounds);
                }
            }
        }
    }

    private static void run(Rtnl rt, boolean vxlan, int n, int rounds) {
        rt.setUp(rt.link("lo").index());
        rt.addLink(NewLink.bridge("under0"));
        Link under = rt.link("under0");
        rt.addAddress(under.index(), LOCAL, 16, false);
        rt.setUp(under.index());
        under = rt.link("under0");
        NetworkConfig cfg = vxlan ? VXLAN : HOST_GW;
        Dataplane dp = vxlan
                ? new Dataplane.Vxlan(rt, (NetworkConfig.Vxlan) cfg.backend(), LOCAL, null, under, s -> {}, List::of, NexthopIds.of(cfg))
                : new Dataplane.HostGw(rt, LOCAL, null, under, NexthopIds.of(cfg), s -> {});
        dp.local(Cidr.parse("10.0.0.0/24"), null);
        dp.activate(Cidr.parse("10.0.0.0/24"), null);
        List<Lease> programmed = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            Cidr subnet = Cidr.parse("10." + (i >> 8) + "." + (i & 0xff) + ".0/24");
            IpAddr host = IpAddr.parse("172.16." + (1 + i / 250) + "." + (1 + i % 250));
            String mac = String.format("02:aa:00:00:%02x:%02x", i >> 8, i & 0xff);
            Lease l = vxlan ? new Lease(subnet, host, "vxlan", 1, mac) : new Lease(subnet, host, "host-gw", 0, null);
            if (!dp.add(l)) throw new IllegalStateException("not added: " + l);
            programmed.add(l);
        }
        long[] cpu = new long[rounds], wall = new long[rounds], dumps = new long[rounds];
        for (int r = 0; r < rounds; r++) {
            long c = CPU.getCurrentThreadCpuTime(), w = System.nanoTime();
            int lost = dp.missing(programmed).size();
            cpu[r] = CPU.getCurrentThreadCpuTime() - c;
            wall[r] = System.nanoTime() - w;
            if (lost != 0) throw new IllegalStateException(lost + " remotes missing with everything in place");
            c = CPU.getCurrentThreadCpuTime();
            dp.readKernel();
            dumps[r] = CPU.getCurrentThreadCpuTime() - c;
        }
        int flapped = vxlan ? rt.link(((NetworkConfig.Vxlan) cfg.backend()).device()).index() : under.index();
        rt.setDown(flapped);
        rt.setUp(flapped);
        long c = CPU.getCurrentThreadCpuTime(), w = System.nanoTime();
        int lost = dp.missing(programmed).size();
        long flapCpu = CPU.getCurrentThreadCpuTime() - c, flapWall = System.nanoTime() - w;
        Arrays.sort(cpu);
        Arrays.sort(wall);
        Arrays.sort(dumps);
        System.out.printf("%-7s remotes=%d  check: cpu_ms median=%.1f max=%.1f (the dumps alone: %.1f)  wall_ms median=%.1f max=%.1f  (%d rounds)"
                        + "  after a flap: %d missing, cpu_ms=%.1f wall_ms=%.1f%n",
                vxlan ? "vxlan" : "host-gw", n, ms(cpu[rounds / 2]), ms(cpu[rounds - 1]), ms(dumps[rounds / 2]), ms(wall[rounds / 2]),
                ms(wall[rounds - 1]), rounds, lost, ms(flapCpu), ms(flapWall));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
