package io.jcni.plugins.skel;

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
     * Runs {@code task} later. The task owns whatever it was handed and must release it, also when
     * it fails; failures are only logged.
     *
     * @param what for the log, e.g. "deleting link 12 in /var/run/netns/x"
     * @return false when the work was not accepted (shutting down): the caller must do it now
     */
    boolean submit(String what, Runnable task);
}
