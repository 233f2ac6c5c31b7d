package io.jcni.linux;

/**
 * What a plugin does first: open a namespace, get a netlink client in it, read a link.
 * Args: netns path, link name. Prints the phases in microseconds since main() started.
 */
public final class BenchColdLink {
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        try (Netns ns = Netns.open(args[0])) {
            long t1 = System.nanoTime();
            try (Rtnl rt = Rtnl.open(ns)) {
                long t2 = System.nanoTime();
                Link l = rt.link(args[1]);
                long t3 = System.nanoTime();
                System.out.println(l.index() + ": " + l.name() + " open-netns-us " + (t1 - t0) / 1000
                        + " rtnl-open-us " + (t2 - t1) / 1000 + " first-reply-us " + (t3 - t2) / 1000
                        + " total-us " + (t3 - t0) / 1000);
            }
        }
    }
}
