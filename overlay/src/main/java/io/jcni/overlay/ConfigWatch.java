package io.jcni.overlay;

import io.jcni.etcd.KeyValue;
import java.io.InterruptedIOException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/** The network config key after start: watched, and each new value judged and logged, never applied while running. */
final class ConfigWatch {
    private final AgentOptions opts;
    /** The config the agent runs with. */
    private final NetworkConfig runningConfig;
    private final AgentEtcd etcd;
    private final AgentLog log;
    private final BooleanSupplier closed;
    private volatile AutoCloseable stream;

    ConfigWatch(AgentOptions opts, NetworkConfig runningConfig, AgentEtcd etcd, AgentLog log, BooleanSupplier closed) {
        this.opts = opts;
        this.runningConfig = runningConfig;
        this.etcd = etcd;
        this.log = log;
        this.closed = closed;
    }

    /** What the agent runs with, for the log (flanneld logs its VXLAN config the same way). */
    static String describe(NetworkConfig c) {
        String s = "";
        if (c.ipv4()) s += "network=" + c.network() + " subnet_len=" + c.subnetLen() + " subnet_min=" + c.subnetMin() + " subnet_max=" + c.subnetMax() + " ";
        if (c.ipv6()) {
            s += "ipv6_network=" + c.v6().network() + " ipv6_subnet_len=" + c.v6().subnetLen() + " ipv6_subnet_min=" + c.v6().subnetMin()
                    + " ipv6_subnet_max=" + c.v6().subnetMax() + " ";
        }
        s += "backend=" + c.backend().type();
        if (c.backend() instanceof NetworkConfig.Vxlan v) {
            s += " vni=" + v.vni() + " port=" + v.port() + " mtu=" + (v.mtu() == 0 ? "underlay" : Integer.toString(v.mtu())) + " gbp=" + v.gbp()
                    + " learning=" + v.learning() + " direct_routing=" + v.directRouting();
        }
        return s;
    }

    /**
     * Watches {@code <prefix>/config} after start: flanneld reads it once, so a change is not
     * applied while running (nothing is torn down or rebuilt); it is judged and logged once per
     * new value: refused (with the key), or valid but needing a restart, or deleted.
     */
    void run(KeyValue running) {
        String runningText = running.value();
        String judged = runningText;
        long from = running.modRevision() + 1;
        Backoff backoff = etcd.backoff(opts.leaseTtl());
        while (!closed.getAsBoolean()) {
            try {
                Optional<KeyValue> now = etcd.client().get(opts.configKey()); // catches up after a lost watch (compaction included)
                judged = judgeConfig(now.map(KeyValue::value).orElse(null), runningText, judged);
                long rev = now.map(KeyValue::modRevision).orElse(from - 1);
                from = Math.max(from, rev + 1);
                String[] last = {judged};
                long[] next = {from};
                etcd.client().watch(opts.configKey(), from, ev -> {
                    if (!ev.kv().key().equals(opts.configKey())) return; // the watch is by prefix
                    last[0] = judgeConfig(ev.deleted() ? null : ev.kv().value(), runningText, last[0]);
                    next[0] = ev.revision() + 1;
                }, s -> stream = s);
                judged = last[0];
                from = next[0];
                backoff.reset();
            } catch (Throwable e) {
                if (closed.getAsBoolean()) return;
                if (e instanceof InterruptedIOException) Thread.interrupted();
            }
            try {
                Thread.sleep(backoff.nextMillis());
            } catch (InterruptedException e) {
                if (closed.getAsBoolean()) return;
            }
        }
    }

    /** Logs what a new value of the config key means for the running agent, unless it was judged already; returns the value judged. */
    private String judgeConfig(String text, String runningText, String judged) {
        if (Objects.equals(text, judged)) return judged;
        if (text == null) {
            log.log("network config deleted from etcd; keeping the running one", "key=" + opts.configKey());
        } else if (!text.equals(runningText)) {
            try {
                NetworkConfig changed = NetworkConfig.parse(text);
                if (!changed.equals(runningConfig)) {
                    log.log("network config changed in etcd; not applied while running (flanneld reads it at start too): restart the agent to apply it",
                            "key=" + opts.configKey() + " " + describe(changed));
                }
            } catch (IllegalArgumentException e) {
                log.log("network config in etcd refused; keeping the running one", "key=" + opts.configKey() + " error=\"" + e.getMessage() + "\"");
            }
        }
        return text;
    }

    /** Ends the watch in progress, if any (the loop sees {@code closed} and returns). */
    void close() {
        AutoCloseable cw = stream;
        if (cw != null) {
            try {
                cw.close();
            } catch (Exception ignored) {
                // closing a broken stream
            }
        }
    }
}
