package io.jcni.linux;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** Time from main() to the return of the first FFM downcall of the same function (gettid). */
public final class BenchFirstFfm {
    public static void main(String[] args) throws Throwable {
        long t0 = System.nanoTime();
        Linker linker = Linker.nativeLinker();
        MethodHandle gettid = linker.downcallHandle(linker.defaultLookup().find("gettid").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
        int tid = (int) gettid.invokeExact();
        long t1 = System.nanoTime();
        System.out.println("ffm first-call-us " + (t1 - t0) / 1000 + " tid " + tid);
    }
}
