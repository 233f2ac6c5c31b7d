package io.jcni.linux;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Arrays;

/**
 * Warm-JVM cost of the container-side work of CNI ADD and DEL, per operation: N veth pairs whose
 * peers are born in a second namespace, each with an address, up, and a route; then N deletes.
 * Rounds repeat the whole thing; the first rounds warm up. Prints "operation TAB median µs".
 * Args: container netns name, host netns name, pairs per round, rounds, warm-up rounds.
 */
public final class BenchWarmOps {
    private static final String[] OPS = {"add veth, peer in other netns", "get link by name", "add address",
        "set up", "add route via gateway", "setup total (5 steps)", "delete link"};

    public static void main(String[] args) throws Exception {
        int pairs = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        int warmup = Integer.parseInt(args[4]);
        long[][] samples = new long[OPS.length][pairs * rounds];
        try (Netns cont = Netns.open(Netns.pathOf(args[0])); Netns host = Netns.open(Netns.pathOf(args[1]));
             Rtnl rt = Rtnl.open(cont)) {
            for (int round = -warmup; round < rounds; round++) {
                int[] index = new int[pairs];
                long[][] t = new long[pairs][7];
                for (int i = 0; i < pairs; i++) {
                    IpAddr ip = new IpAddr(new byte[] {10, 100, (byte) i, 2});
                    IpAddr gw = new IpAddr(new byte[] {10, 100, (byte) i, 1});
                    Cidr dst = new Cidr(new IpAddr(new byte[] {10, (byte) 200, (byte) i, 0}), 24);
                    long[] ti = t[i];
                    ti[0] = System.nanoTime();
                    rt.addVeth("c" + i, "h" + i, host, 1500, null);
                    ti[1] = System.nanoTime();
                    index[i] = rt.link("c" + i).index();
                    ti[2] = System.nanoTime();
                    rt.addAddress(index[i], ip, 24, false);
                    ti[3] = System.nanoTime();
                    rt.setUp(index[i]);
                    ti[4] = System.nanoTime();
                    rt.addRoute(Route.to(dst).via(gw).dev(index[i]));
                    ti[5] = System.nanoTime();
                }
                for (int i = 0; i < pairs; i++) {
                    long s = System.nanoTime();
                    rt.deleteLink(index[i]);
                    t[i][6] = System.nanoTime() - s;
                }
                if (round < 0) continue;
                for (int i = 0; i < pairs; i++) {
                    int at = round * pairs + i;
                    for (int k = 0; k < 5; k++) samples[k][at] = t[i][k + 1] - t[i][k];
                    samples[5][at] = t[i][5] - t[i][0];
                    samples[6][at] = t[i][6];
                }
            }
        }
        for (int k = 0; k < OPS.length; k++) System.out.println(OPS[k] + "\t" + median(samples[k]));
    }

    private static double median(long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        double mid = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
        return mid / 1000.0;
    }
}
