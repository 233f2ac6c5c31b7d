package io.jcni.linux;

/** Time from main() to the return of the first JNI call (library lookup, load, link, call). */
public final class BenchFirstJni {
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        int tid = Native.gettid();
        long t1 = System.nanoTime();
        System.out.println("jni first-call-us " + (t1 - t0) / 1000 + " tid " + tid);
    }
}
