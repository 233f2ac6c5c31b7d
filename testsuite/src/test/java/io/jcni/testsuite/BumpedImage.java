package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Image version N+1 made from version N (an archive of scripts/image.sh) without rebuilding it: one
 * more layer over N's that changes what an upgrade changes on a node, the version marker
 * ({@code /opt/jcni/share/image-version}, with the file list the installer checks) and every shim
 * (the master copy and each {@code /opt/cni/bin/<type>}; N+1's shims are N's with a trailing marker,
 * which the kernel's ELF loader ignores), so that the installer must really replace each plugin.
 * Tagged {@code jcni:VERSION}. Written as scripts/image.sh writes its layout: tar, gzip, sha256, jq.
 */
final class BumpedImage {
    private BumpedImage() {}

    /** The trailing bytes that tell N+1's shims from N's. */
    static byte[] marker(String version) {
        return ("\njcni-image-version " + version + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    static Path make(Path baseArchive, String version, Path work) throws IOException {
        Path oci = Files.createDirectories(work.resolve("oci"));
        Sh.run(null, null, 120, "tar", "-xf", baseArchive.toString(), "-C", oci.toString()).ok();
        String manifestDigest = jq(".manifests[0].digest", oci.resolve("index.json"));
        Path manifest = blob(oci, manifestDigest);
        Path config = blob(oci, jq(".config.digest", manifest));

        // N's files that change: its shims and the two marker files.
        Path base = Files.createDirectories(work.resolve("base"));
        Sh.run(null, null, 120, "tar", "-xzf", blob(oci, jq(".layers[0].digest", manifest)).toString(), "-C", base.toString(),
                "./opt/cni/bin", "./opt/jcni/bin/jcni-shim", "./opt/jcni/share").ok();
        Path layer = Files.createDirectories(work.resolve("layer"));
        Sh.run("sh", "-c", "cd '" + base + "' && cp -a --parents opt/cni/bin opt/jcni/bin/jcni-shim opt/jcni/share/image-version"
                + " opt/jcni/share/image-files.sha256 '" + layer + "'").ok();
        try (var shims = Files.list(layer.resolve("opt/cni/bin"))) {
            for (Path s : shims.toList()) Files.write(s, marker(version), java.nio.file.StandardOpenOption.APPEND);
        }
        Path master = layer.resolve("opt/jcni/bin/jcni-shim");
        Files.write(master, marker(version), java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(layer.resolve("opt/jcni/share/image-version"), version + "\n");
        // The installer checks its copy against this list: the two changed files get their new sums.
        StringBuilder sums = new StringBuilder();
        for (String line : Files.readAllLines(layer.resolve("opt/jcni/share/image-files.sha256"))) {
            String file = line.substring(line.indexOf("  ") + 2);
            Path changed = switch (file) {
                case "./bin/jcni-shim" -> master;
                case "./share/image-version" -> layer.resolve("opt/jcni/share/image-version");
                default -> null;
            };
            sums.append(changed == null ? line : sha256(Files.readAllBytes(changed)) + "  " + file).append('\n');
        }
        Files.writeString(layer.resolve("opt/jcni/share/image-files.sha256"), sums);

        Path tar = work.resolve("layer.tar");
        Sh.run(null, null, 120, "tar", "-C", layer.toString(), "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
                "--format=posix", "-cf", tar.toString(), ".").ok();
        String diffId = "sha256:" + sha256(Files.readAllBytes(tar));
        Sh.run("sh", "-c", "gzip -n -1 < '" + tar + "' > '" + tar + ".gz'").ok();
        String layerDigest = put(oci, tar.resolveSibling("layer.tar.gz"));
        long layerSize = Files.size(blob(oci, layerDigest));

        Path newConfig = work.resolve("config.json");
        Sh.run("sh", "-c", "jq -c --arg d '" + diffId + "' --arg v '" + version + "' '.rootfs.diff_ids += [$d]"
                + " | .config.Labels[\"org.opencontainers.image.version\"] = $v' '" + config + "' > '" + newConfig + "'").ok();
        long configSize = Files.size(newConfig);
        String configDigest = put(oci, newConfig);
        Path newManifest = work.resolve("manifest.json");
        Sh.run("sh", "-c", "jq -c --arg cd '" + configDigest + "' --argjson cs " + configSize + " --arg ld '" + layerDigest
                + "' --argjson ls " + layerSize + " '.config.digest = $cd | .config.size = $cs"
                + " | .layers += [{mediaType: \"application/vnd.oci.image.layer.v1.tar+gzip\", digest: $ld, size: $ls}]' '"
                + manifest + "' > '" + newManifest + "'").ok();
        long manifestSize = Files.size(newManifest);
        String newManifestDigest = put(oci, newManifest);
        String tag = "jcni:" + version;
        Path index = oci.resolve("index.json");
        Sh.run("sh", "-c", "jq -c --arg md '" + newManifestDigest + "' --argjson ms " + manifestSize + " --arg tag '" + tag + "'"
                + " '.manifests[0].digest = $md | .manifests[0].size = $ms"
                + " | .manifests[0].annotations = {\"org.opencontainers.image.ref.name\": $tag, \"io.containerd.image.name\": (\"docker.io/library/\" + $tag)}'"
                + " '" + index + "' > '" + index + ".new' && mv '" + index + ".new' '" + index + "'").ok();
        Path out = work.resolve("jcni-image-" + version + ".tar");
        Sh.run(null, null, 120, "tar", "-C", oci.toString(), "-cf", out.toString(), "oci-layout", "index.json", "blobs").ok();
        Sh.quiet("rm", "-rf", oci.toString(), base.toString(), layer.toString(), tar.toString());
        return out;
    }

    private static String jq(String filter, Path file) {
        return Sh.run("jq", "-r", filter, file.toString()).ok().out().strip();
    }

    private static Path blob(Path oci, String digest) {
        return oci.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
    }

    /** Moves {@code file} into the layout's blobs; returns its digest. */
    private static String put(Path oci, Path file) throws IOException {
        String digest = "sha256:" + sha256(Files.readAllBytes(file));
        Files.move(file, blob(oci, digest), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return digest;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
