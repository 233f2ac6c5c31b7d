package io.jcni.testsuite;

import static io.jcni.testsuite.ManifestTest.container;
import static io.jcni.testsuite.ManifestTest.list;
import static io.jcni.testsuite.ManifestTest.map;

import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One Kubernetes node for the image tests, without Kubernetes: a network namespace of the test's
 * own, and a scratch directory standing for the node's root (the paths the DaemonSet mounts: opt,
 * etc/cni/net.d, run/jcni, run/flannel, var/lib/cni). The DaemonSet's two containers are run by
 * {@code ctr} in that namespace with what deploy/kubernetes/jcni.yaml gives them (command, args,
 * env, ConfigMap values, mounts, privileges), read from the manifest, so the test runs what a node runs.
 *
 * <p>Two differences from kubelet, both forced by this machine: the host's /proc is bind-mounted
 * over the container's instead of {@code hostPID} ({@code ctr run --with-ns pid:} fails in runc
 * here, see {@link ImageEndToEndTest}); a hostPath under /var/run/netns is the real one, since the
 * pods' namespaces are made there by {@code ip netns add}.
 */
final class ImageNode {
    final String netns;
    final Path root;
    /** The ConfigMap's data as this node sees it (the test replaces etcd-endpoints and cni-conf.json). */
    final Map<String, String> configMap = new HashMap<>();
    /** Where the Secret's files are (the etcd TLS material); null: no Secret. */
    Path secretDir;
    private final Map<String, Object> podSpec;

    ImageNode(String netns, Path root) throws IOException {
        this.netns = netns;
        this.root = root;
        for (String d : List.of("opt/cni/bin", "etc/cni/net.d", "run/jcni", "run/flannel", "var/lib/cni")) {
            Files.createDirectories(root.resolve(d));
        }
        Map<String, Map<String, Object>> docs = ManifestTest.byKind();
        for (var e : map(docs.get("ConfigMap").get("data")).entrySet()) configMap.put(e.getKey(), (String) e.getValue());
        podSpec = map(map(map(map(docs.get("DaemonSet").get("spec")).get("template"))).get("spec"));
    }

    Path bin() {
        return root.resolve("opt/cni/bin");
    }

    Path socket() {
        return root.resolve("run/jcni/jcnid.sock");
    }

    /** The DaemonSet's init container (jcni-install-cni), run to its end. */
    Sh.Run install(Containerd ctd, String image, String id) throws IOException {
        return ctd.run(false, options(container(podSpec, "initContainers", "install-cni")), image, id, command("initContainers", "install-cni"));
    }

    /** The DaemonSet's main container (jcni-node: jcnid, then the conflist), detached. */
    Sh.Run startAgent(Containerd ctd, String image, String id) throws IOException {
        return ctd.run(true, options(container(podSpec, "containers", "jcnid")), image, id, command("containers", "jcnid"));
    }

    private String[] command(String list, String name) {
        Map<String, Object> c = container(podSpec, list, name);
        Map<String, String> env = env(c);
        List<String> cmd = new ArrayList<>();
        for (Object o : list(c.get("command"))) cmd.add(String.valueOf(o));
        // Kubernetes expands $(VAR) in args from the container's env.
        for (Object o : list(c.get("args"))) {
            String a = String.valueOf(o);
            for (var e : env.entrySet()) a = a.replace("$(" + e.getKey() + ")", e.getValue());
            cmd.add(a);
        }
        return cmd.toArray(String[]::new);
    }

    private Map<String, String> env(Map<String, Object> c) {
        Map<String, String> env = new HashMap<>();
        for (Object o : list(c.get("env"))) {
            Map<String, Object> e = map(o);
            String value = e.containsKey("value") ? String.valueOf(e.get("value"))
                    : configMap.get((String) map(map(e.get("valueFrom")).get("configMapKeyRef")).get("key"));
            env.put((String) e.get("name"), value);
        }
        return env;
    }

    private List<String> options(Map<String, Object> c) throws IOException {
        List<String> o = new ArrayList<>(List.of("--with-ns", "network:/var/run/netns/" + netns));
        if (c.get("securityContext") != null && Boolean.TRUE.equals(map(c.get("securityContext")).get("privileged"))) o.add("--privileged");
        for (var e : env(c).entrySet()) o.addAll(List.of("--env", e.getKey() + "=" + e.getValue()));
        o.addAll(List.of("--mount", Containerd.bind(Path.of("/proc"), "/proc", true)));
        Map<String, Map<String, Object>> volumes = new HashMap<>();
        for (Object v : list(podSpec.get("volumes"))) volumes.put((String) map(v).get("name"), map(v));
        for (Object m : list(c.get("volumeMounts"))) {
            Map<String, Object> mount = map(m);
            Map<String, Object> vol = volumes.get((String) mount.get("name"));
            Path src;
            if (vol.containsKey("hostPath")) {
                String p = (String) map(vol.get("hostPath")).get("path");
                src = p.startsWith("/var/run/netns") ? Path.of(p) : root.resolve(p.substring(1));
                Files.createDirectories(src);
            } else if (vol.containsKey("configMap")) {
                src = root.resolve("configmap-" + mount.get("name"));
                Files.createDirectories(src);
                for (var e : configMap.entrySet()) Files.writeString(src.resolve(e.getKey()), e.getValue());
            } else {
                if (secretDir == null) continue; // this node's etcd has no TLS
                src = secretDir;
            }
            o.addAll(List.of("--mount", Containerd.bind(src, (String) mount.get("mountPath"), !Boolean.TRUE.equals(mount.get("readOnly")))));
        }
        return o;
    }

    /**
     * {@code cmd} as a process of this node would run it: in the node's network namespace, in a
     * private mount namespace where the node's /opt, /run and /var/lib/cni (where the host has that
     * directory) stand in for the host's, the host's /run/netns kept inside. So the shims' compiled-in
     * paths are the node's: the socket /run/jcni/jcnid.sock, the standalone fallback /opt/jcni/libexec,
     * CNI_PATH /opt/cni/bin, and a standalone plugin's /run/flannel/subnet.env and /var/lib/cni.
     */
    List<String> onNode(String... cmd) {
        List<String> full = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c",
                "mkdir -p \"$0/run/netns\" && mount --rbind /run/netns \"$0/run/netns\" && mount --rbind \"$0/run\" /run"
                        + " && mount --bind \"$0/opt\" /opt && { [ ! -d /var/lib/cni ] || mount --bind \"$0/var/lib/cni\" /var/lib/cni; }"
                        + " && exec nsenter --net=/run/netns/" + netns + " \"$@\"",
                root.toString()));
        full.addAll(List.of(cmd));
        return full;
    }

    /** The environment of a node's runtime here: no auto-start (a shim must not start a jcnid that outlives the test). */
    static Map<String, String> runtimeEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("JCNI_AUTOSTART", "0");
        return env;
    }
}
