package io.jcni.overlay;

import io.jcni.linux.LiveNetns;
import io.jcni.plugins.ipam.clusteripam.HostReconcile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/** The agent's cluster-ipam reconcile of this host's allocations, on its own thread. */
final class IpamReconcileLoop {
    private final AgentOptions opts;
    private final AgentEtcd etcd;
    private final AgentLog log;
    private final BooleanSupplier closed;

    IpamReconcileLoop(AgentOptions opts, AgentEtcd etcd, AgentLog log, BooleanSupplier closed) {
        this.opts = opts;
        this.etcd = etcd;
        this.log = log;
        this.closed = closed;
    }

    /**
     * Every {@code --ipam-reconcile-every}: releases this host's cluster-ipam allocations whose
     * container network namespace is gone ({@link HostReconcile}), so that a runtime that crashed
     * or forgot a container does not hold its address until someone sends GC. A namespace is gone
     * when no task, descriptor or bind mount on the machine holds it ({@link LiveNetns}); when its
     * inode could not be recorded, when its path is gone. From a PID namespace other than the
     * initial one the agent cannot see every holder, so it does not reconcile at all.
     */
    void run() {
        if (!LiveNetns.seesEveryProcess()) {
            log.log("cluster-ipam reconcile off: not in the initial PID namespace (namespaces held by other processes are invisible)", "");
            return;
        }
        boolean failing = false;
        while (!closed.getAsBoolean()) {
            try {
                Thread.sleep(opts.ipamReconcile().toMillis());
                var live = new AtomicReference<Map<Long, String>>();
                HostReconcile.Outcome o = HostReconcile.reconcile(etcd.client(), opts.ipamPrefix(), opts.ipamHost(), opts.ipamGrace(), r -> {
                    if (r.netnsInode() == 0) return r.netns().isEmpty() || Files.exists(Path.of(r.netns()));
                    if (live.get() == null) live.set(LiveNetns.scan()); // once per round, and only when needed
                    return live.get().containsKey(r.netnsInode());
                });
                if (failing) log.log("cluster-ipam reconcile: etcd reachable again", "");
                failing = false;
                if (o.released() + o.forgotten() > 0) {
                    log.log("cluster-ipam reconcile", "host=" + opts.ipamHost() + " released=" + o.released() + " forgotten=" + o.forgotten()
                            + " kept=" + o.kept());
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if ((!failing || e instanceof io.jcni.etcd.EtcdAuthException) && !closed.getAsBoolean()) log.log("cluster-ipam reconcile failed; next round later", "error=\"" + e.getMessage() + "\"");
                failing = true;
            }
        }
    }
}
