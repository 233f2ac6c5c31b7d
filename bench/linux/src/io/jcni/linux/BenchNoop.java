package io.jcni.linux;

/** Baseline: a JVM that starts and exits. */
public final class BenchNoop {
    public static void main(String[] args) {
        System.out.println("noop");
    }
}
