package io.jcni.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * Links a DEL retired and left to be deleted a moment after its answer: by jcnid's
 * deferred work, or by the detached process a standalone plugin leaves behind. They wait in one
 * device group; a test that counts links right after a DEL waits for that group to empty first.
 * What DEL promises before its answer (addresses, allocations and rules gone; the name free) is
 * checked right away by the plugins' own tests.
 */
public final class RetiredLinks {
    /** Links.RETIRED_GROUP: "jcni". */
    public static final String GROUP = "1784901225";

    private RetiredLinks() {}

    /** Waits until namespace {@code netns} (null: this process's) has no retired link; fails after 20 s. */
    public static void awaitNone(String netns) {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        if (netns != null) cmd.addAll(List.of("-n", netns));
        cmd.addAll(List.of("-o", "link", "show", "group", GROUP));
        String left = "";
        for (int i = 0; i < 400; i++) {
            left = Sh.ok(cmd.toArray(String[]::new)).strip();
            if (left.isEmpty()) return;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for retired links", e);
            }
        }
        throw new AssertionError("retired links still there after 20 s" + (netns == null ? "" : " in " + netns) + ": " + left);
    }
}
