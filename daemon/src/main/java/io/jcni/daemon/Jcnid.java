package io.jcni.daemon;

/** {@code jcnid start|stop|status|metrics [options]}: see {@link DaemonConfig#USAGE}. */
public final class Jcnid {
    private Jcnid() {}

    public static void main(String[] args) {
        System.exit(DaemonControl.run(args, System.out, System.err));
    }
}
