package io.jcni.plugins.skel;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import java.util.function.Supplier;

/**
 * Work a caller can finish after the call has been answered. jcnid supplies one (it outlives the
 * call); a standalone plugin's is {@link Detached}, which can only delete links, from a process of
 * its own; in-process callers (tests, the jcni command) have none, so plugins must treat a missing
 * one as "do it now".
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

    /**
     * Deletes every link of device group {@code group} in the calling thread's namespace about
     * {@code delayMillis} from now; requests meanwhile share one deletion.
     *
     * @return false when not accepted: the caller deletes them now
     */
    default boolean deleteLinkGroupLater(int group, long delayMillis) {
        long ns;
        try (Netns current = Netns.current()) {
            ns = current.inode(); // a pending deletion's socket keeps its namespace, so its inode, alive
        }
        return schedule("delete link group " + group + " in netns " + ns, delayMillis, () -> {
            Rtnl rt = Rtnl.open();
            return () -> {
                try (rt) {
                    rt.deleteGroup(group);
                } catch (ErrnoException e) {
                    if (!e.is(Errno.ENODEV)) throw e; // none left: their namespaces took them
                }
            };
        });
    }

    /**
     * A standalone plugin's: its process ends with the answer, so no Java runs afterwards, but a
     * link group can still be deleted later by a detached process ({@link Rtnl#deleteGroupDetached}):
     * the ~20 ms of RCU waits a veth deletion costs then follow the answer instead of preceding it.
     */
    final class Detached implements Background {
        @Override
        public boolean schedule(String key, long delayMillis, Supplier<Runnable> task) {
            return false;
        }

        /** False (the caller deletes now) when no process can be started: a seccomp filter, no pids left. */
        @Override
        public boolean deleteLinkGroupLater(int group, long delayMillis) {
            try {
                Rtnl.deleteGroupDetached(group, (int) delayMillis);
                return true;
            } catch (ErrnoException e) {
                return false;
            }
        }
    }
}
