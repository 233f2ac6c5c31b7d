package io.jcni.plugins.meta.flannel;

import io.jcni.common.AtomicFile;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * The {@code flannel} meta plugin, config-compatible with the reference (flannel-io/cni-plugin):
 * reads subnet.env, builds a bridge + host-local config from it ({@link FlannelConf#delegateConfig}),
 * saves that config as {@code <dataDir>/<containerID>} (0600) and delegates ADD to it; DEL
 * delegates to the saved config and then removes it (nothing saved: success); CHECK delegates to the
 * saved config with the runtime's prevResult (the reference does nothing).
 *
 * <p>Unlike the reference, ADD waits up to {@code subnetFileWait} seconds (default 10) for a missing
 * subnet file instead of failing at once, and then fails with code 11 "try again later": a node's
 * first pods often start before the overlay agent has its lease (flannel's best-known failure).
 */
public final class FlannelPlugin implements Plugin {
    private static final long POLL_MILLIS = 100;
    @Override
    public Result add(PluginRequest req) throws Exception {
        FlannelConf conf = FlannelConf.parse(req.conf());
        SubnetFile env = awaitSubnetFile(conf);
        Map<String, Object> delegate = conf.delegateConfig(env);
        byte[] bytes = Json.write(delegate).getBytes(StandardCharsets.UTF_8);
        save(conf.dataDir(), req.containerId(), bytes);
        return req.delegator().add((String) delegate.get("type"), bytes, req.env());
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        FlannelConf conf = FlannelConf.parse(req.conf());
        Path saved = savedPath(conf.dataDir(), req.containerId());
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(saved);
        } catch (NoSuchFileException e) {
            return; // never added, or already deleted
        }
        Map<String, Object> d;
        try {
            d = Json.parseObject(new String(bytes, StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            req.log().println("flannel: unreadable saved config " + saved + ": " + e.getMessage());
            return; // as the reference: the interface goes when the node reboots
        }
        req.delegator().del(String.valueOf(d.get("type")), bytes, req.env());
        Files.deleteIfExists(saved);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        FlannelConf conf = FlannelConf.parse(req.conf());
        Path saved = savedPath(conf.dataDir(), req.containerId());
        Map<String, Object> d;
        try {
            d = Json.parseObject(Files.readString(saved));
        } catch (NoSuchFileException e) {
            throw new CniException(ErrorCode.INTERNAL, "flannel: no saved delegate config for container " + req.containerId(), "", e);
        }
        if (req.conf().get("prevResult") != null) d.put("prevResult", req.conf().get("prevResult"));
        req.delegator().check(String.valueOf(d.get("type")), Json.write(d).getBytes(StandardCharsets.UTF_8), req.env());
    }

    private static SubnetFile awaitSubnetFile(FlannelConf conf) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + conf.subnetFileWait().toNanos();
        while (true) {
            try {
                return SubnetFile.parse(Files.readString(conf.subnetFile()), conf.subnetFile().toString());
            } catch (NoSuchFileException e) {
                if (System.nanoTime() >= deadline) {
                    throw new CniException(ErrorCode.TRY_AGAIN_LATER, "flannel: " + conf.subnetFile() + " does not exist",
                            "waited " + conf.subnetFileWait().toSeconds() + " s for the overlay agent (flanneld or jcnid --overlay) to write it", e);
                }
                Thread.sleep(POLL_MILLIS);
            } catch (IllegalArgumentException e) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, e.getMessage(), "", e);
            }
        }
    }

    static Path savedPath(Path dataDir, String containerId) {
        if (containerId.isEmpty() || containerId.contains("/") || containerId.equals("..") || containerId.equals(".")) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "flannel: unusable container id for a file name: " + containerId);
        }
        return dataDir.resolve(containerId);
    }

    private static void save(Path dataDir, String containerId, byte[] bytes) throws IOException {
        Files.createDirectories(dataDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path target = savedPath(dataDir, containerId);
        AtomicFile.write(target, bytes, AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
    }
}
