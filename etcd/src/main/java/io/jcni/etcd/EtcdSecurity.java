package io.jcni.etcd;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * How to reach a secured etcd: TLS files (PEM) and a user for etcd's token authentication, with
 * flanneld's flag names. Every part is optional; {@link #NONE} is plain http without a user.
 *
 * @param caFile   CA certificates that sign etcd's server certificate; null: the JDK's trusted CAs
 * @param certFile our client certificate (and any intermediates after it); needs {@code keyFile}
 * @param keyFile  its private key: PKCS#8, PKCS#1 RSA or SEC1 EC, unencrypted
 * @param username etcd user; null: no authentication
 * @param password that user's password
 */
public record EtcdSecurity(Path caFile, Path certFile, Path keyFile, String username, String password) {
    public static final EtcdSecurity NONE = new EtcdSecurity(null, null, null, null, null);

    /** flanneld's flags, each taking a value. */
    public static final Set<String> FLAGS = Set.of("--etcd-cafile", "--etcd-certfile", "--etcd-keyfile", "--etcd-username",
            "--etcd-password");

    public EtcdSecurity {
        if (username != null && username.isEmpty()) username = null;
    }

    /** This with one of {@link #FLAGS} set. */
    public EtcdSecurity withFlag(String flag, String value) {
        return switch (flag) {
            case "--etcd-cafile" -> new EtcdSecurity(Path.of(value), certFile, keyFile, username, password);
            case "--etcd-certfile" -> new EtcdSecurity(caFile, Path.of(value), keyFile, username, password);
            case "--etcd-keyfile" -> new EtcdSecurity(caFile, certFile, Path.of(value), username, password);
            case "--etcd-username" -> new EtcdSecurity(caFile, certFile, keyFile, value, password);
            case "--etcd-password" -> new EtcdSecurity(caFile, certFile, keyFile, username, value);
            default -> throw new IllegalArgumentException("not an etcd security flag: " + flag);
        };
    }

    /** The combinations that cannot work, named by their flags; call once all are set. */
    public EtcdSecurity validated() {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("--etcd-certfile and --etcd-keyfile go together (the client certificate and its key)");
        }
        if (password != null && username == null) throw new IllegalArgumentException("--etcd-password without --etcd-username");
        if (username != null && password == null) throw new IllegalArgumentException("--etcd-username " + username + " needs a password");
        return this;
    }

    public boolean hasClientCert() {
        return certFile != null;
    }

    /**
     * A warning when the key file can be read by group or others (as ssh warns about identity
     * files); empty when it is private or cannot be inspected. The key is still used: refusing
     * would break nodes whose key is shared with a group on purpose.
     */
    public Optional<String> keyFileWarning() {
        if (keyFile == null) return Optional.empty();
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(keyFile);
            Set<PosixFilePermission> loose = EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);
            loose.retainAll(p);
            if (loose.isEmpty()) return Optional.empty();
            return Optional.of("WARNING: etcd key file " + keyFile + " is accessible by "
                    + (p.contains(PosixFilePermission.OTHERS_READ) || p.contains(PosixFilePermission.OTHERS_WRITE) ? "others" : "its group")
                    + " (mode " + java.nio.file.attribute.PosixFilePermissions.toString(p) + "); it should be readable by its owner only: chmod 600 "
                    + keyFile);
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    /** Never prints the password. */
    @Override
    public String toString() {
        return "EtcdSecurity[ca=" + caFile + ", cert=" + certFile + ", key=" + keyFile + ", user=" + username + "]";
    }
}
