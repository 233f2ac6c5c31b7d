package io.jcni.overlay;

import io.jcni.etcd.EtcdClient;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Random;
import java.util.function.BooleanSupplier;

/**
 * The agent's etcd client and how it calls it: lease work timed for the watchdog, retries with
 * back-off, and a fresh client in place of one that hung or broke.
 */
final class AgentEtcd {
    /** One etcd call. */
    interface Step<T> {
        T run() throws IOException;
    }

    private final AgentOptions opts;
    private final AgentLog log;
    private final Random random = new Random();
    private final BooleanSupplier closed;
    /** Replaced by the watchdog when a call hangs past its deadline (a client that hung once is not trusted again). */
    private volatile EtcdClient client;
    private final Object clientSwap = new Object();
    /** The lease work (a keep-alive or a leasing step): busy while one of its etcd calls runs. */
    final LeaseWatchdog.Clock leaseWork = new LeaseWatchdog.Clock();

    AgentEtcd(AgentOptions opts, AgentLog log, BooleanSupplier closed) {
        this.opts = opts;
        this.log = log;
        this.closed = closed;
        this.client = new EtcdClient(opts.etcdEndpoints(), opts.etcdTimeout(), opts.etcdSecurity());
    }

    /** The client now; calls made on a replaced one fail. */
    EtcdClient client() {
        return client;
    }

    /** Replaces {@code old} (unless someone already did): calls in flight on it fail, the next ones use a fresh client. */
    void replace(EtcdClient old) {
        synchronized (clientSwap) {
            if (client != old) return;
            client = new EtcdClient(opts.etcdEndpoints(), opts.etcdTimeout(), opts.etcdSecurity());
        }
        leaseWork.idle();
        try {
            old.abort();
        } catch (Throwable e) {
            log.log("aborting the old etcd client failed", "error=\"" + e + "\"");
        }
    }

    /** One etcd call of the lease work, timed for the watchdog. */
    <T> T leaseCall(Step<T> call) throws IOException {
        long token = leaseWork.busy(System.nanoTime());
        try {
            return call.run();
        } finally {
            leaseWork.idle(token);
        }
    }

    /** How long one etcd call may take before it counts as stuck: each endpoint may use the request timeout twice (connect, answer), plus 2 s. */
    Duration leaseCallDeadline() {
        return opts.etcdTimeout().multipliedBy(2L * opts.etcdEndpoints().size()).plusSeconds(2);
    }

    /** Retries {@code step} with back-off until it succeeds (logging the first failure of a streak). */
    <T> T untilDone(String what, Step<T> step) throws InterruptedException {
        boolean logged = false;
        Backoff backoff = backoff(opts.leaseTtl());
        while (true) {
            if (closed.getAsBoolean()) throw new InterruptedException();
            try {
                return step.run();
            } catch (InterruptedIOException e) {
                throw new InterruptedException(e.getMessage());
            } catch (IOException | IllegalArgumentException e) {
                // A TLS or authentication failure is logged every time: it is a wrong file or password, not a blip.
                if (!logged || e instanceof io.jcni.etcd.EtcdAuthException) {
                    log.log(what + " failed; retrying with back-off", "error=\"" + e.getMessage() + "\"");
                }
                logged = true;
                Thread.sleep(backoff.nextMillis());
            } catch (Throwable e) {
                // An Error inside the HTTP client: logged, a fresh client, and try again.
                log.log(what + " failed; retrying with back-off", "error=\"" + e + "\"");
                replace(client);
                Thread.sleep(backoff.nextMillis());
            }
        }
    }

    /**
     * Retries back off exponentially from 1 s (plus jitter) up to {@code bound}, at most 30 s
     * ({@link Backoff}): the lease TTL for re-reading and re-watching, a third of it for keep-alives.
     */
    Backoff backoff(Duration bound) {
        return new Backoff(Backoff.FIRST, Backoff.capWithin(bound), random);
    }
}
