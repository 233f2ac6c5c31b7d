package io.jcni.plugins.ipam.clusteripam;

import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.EtcdSecurity;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One etcd client per etcd configuration for the life of the process, so that in jcnid (and any
 * process making many calls) an allocation reuses the open connection and TLS session instead of
 * paying a connect and a handshake. A client whose call failed is dropped, and the next call makes
 * a new one. The key holds the TLS files' modification times, so rotated files are read again.
 */
final class Clients {
    private static final ConcurrentHashMap<String, EtcdClient> CLIENTS = new ConcurrentHashMap<>();

    private Clients() {}

    /** Something done with etcd. */
    interface Call<T> {
        T run(EtcdClient etcd) throws IOException;
    }

    /**
     * Runs {@code call} with the configuration's client, once more on a new client when it failed
     * other than by etcd's refusal or a refused connection (an answer in which etcd gave up on the
     * request, e.g. "context canceled" under load, is repeated too): a kept client's connection may
     * have been closed by etcd since its last use, and the first connect and exchange of a cold
     * process under load can outlast the timeout (so a call etcd does not answer takes at most twice the timeout; one whose answer trickles, at most four times: each try's answer must be whole within twice it). Every call here may be repeated: a repeated ADD finds the addresses its first
     * transaction made, a repeated DEL nothing to do.
     */
    static <T> T with(ClusterIpamConfig cfg, PrintStream warnings, Call<T> call) throws IOException {
        EtcdClient etcd = get(cfg, warnings);
        try {
            return call.run(etcd);
        } catch (IOException e) {
            forget(etcd);
            if (!worthRepeating(e)) throw e;
            EtcdClient fresh = get(cfg, warnings);
            try {
                return call.run(fresh);
            } catch (IOException again) {
                forget(fresh);
                throw again;
            }
        }
    }

    static boolean worthRepeating(IOException e) {
        if (e instanceof io.jcni.etcd.EtcdException refused) return refused.isTransient(); // etcd gave up on it: not a refusal
        if (e instanceof io.jcni.etcd.EtcdAuthException) return false;
        // A connect or read timeout is a SocketTimeoutException, itself an InterruptedIOException: the timeout decides.
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException) return true;
            if (t instanceof java.net.ConnectException || t instanceof java.io.InterruptedIOException) return false;
        }
        return true;
    }

    /** The client; the key file's loose permissions are warned about on the call's stderr (never stdout: that is the result). */
    static EtcdClient get(ClusterIpamConfig cfg, PrintStream warnings) {
        EtcdSecurity sec = security(cfg);
        sec.keyFileWarning().ifPresent(w -> warnings.println("cluster-ipam: " + w));
        String key = key(cfg, sec);
        EtcdClient c = CLIENTS.get(key);
        if (c != null) return c;
        final EtcdSecurity security = sec;
        try {
            return CLIENTS.computeIfAbsent(key, k -> new EtcdClient(cfg.etcdEndpoints(), cfg.timeout(), security));
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cluster-ipam: " + e.getMessage(), "", e);
        }
    }

    /** The configuration's security with the password read from its file. */
    private static EtcdSecurity security(ClusterIpamConfig cfg) {
        EtcdSecurity sec = cfg.etcdSecurity();
        if (cfg.etcdPasswordFile() == null) return sec;
        try {
            String pw = Files.readString(cfg.etcdPasswordFile()).lines().findFirst().orElse("");
            return new EtcdSecurity(sec.caFile(), sec.certFile(), sec.keyFile(), sec.username(), pw);
        } catch (IOException e) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cluster-ipam: ipam.etcdPasswordFile " + cfg.etcdPasswordFile()
                    + ": cannot read: " + e.getMessage(), "", e);
        }
    }

    private static String key(ClusterIpamConfig cfg, EtcdSecurity sec) {
        return String.join("\n", String.join(",", cfg.etcdEndpoints()), cfg.timeout().toString(), stamp(sec.caFile()),
                stamp(sec.certFile()), stamp(sec.keyFile()), String.valueOf(sec.username()), String.valueOf(sec.password()));
    }

    /** Drops a client whose call failed (it is not closed: other calls may still use it). */
    static void forget(EtcdClient client) {
        CLIENTS.values().remove(client);
    }

    private static String stamp(Path p) {
        if (p == null) return "-";
        try {
            return p + "@" + Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            return p + "@?";
        }
    }
}
