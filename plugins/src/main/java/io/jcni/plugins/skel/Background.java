package io.jcni.plugins.skel;

import java.util.function.Supplier;

/**
 * Work a caller can finish after the call has been answered. jcnid supplies one (it outlives the
 * call); a standalone plugin does not, since its process ends with the answer, so plugins must
 * treat a missing one as "do it now".
 *
 * <p>Only work the call's contract does not cover may go here: what DEL promises (addresses,
 * allocations and rules gone; the same container and ifname free for the next ADD) is done before
 * the answer, always.
 */
public interface Background {

    /**
     * Runs a task about {@code delayMillis} from now, unless a task with the same {@code key} is
     * already waiting: that one will do the work of both (one deletion for many links). {@code task}
     * is called on the caller's thread only when a new task is needed, so it can open what the task
     * will use there (a netlink socket in the caller's namespace); the task owns it and must release
     * it, also when it fails. Failures are only logged.
     *
     * @param key names the shared work, e.g. "delete retired links in netns 4026531840"
     * @return false when no work is accepted (shutting down): the caller must do it now
     */
    boolean schedule(String key, long delayMillis, Supplier<Runnable> task);
}
