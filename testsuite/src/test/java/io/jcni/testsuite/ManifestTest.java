package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * deploy/kubernetes/jcni.yaml is valid YAML whose names and mounts fit what the image's scripts
 * (scripts/image/jcni-install-cni, jcni-node) and jcnid expect, with the tag scripts/image.sh gives.
 */
class ManifestTest {
    static final Path REPO = PackageTest.REPO;

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return o == null ? List.of() : (List<Object>) o;
    }

    static Map<String, Map<String, Object>> byKind() throws IOException {
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        Map<String, Map<String, Object>> out = new HashMap<>();
        for (Object doc : yaml.loadAll(Files.readString(REPO.resolve("deploy/kubernetes/jcni.yaml")))) {
            if (doc == null) continue;
            Map<String, Object> d = map(doc);
            assertNotNull(d.get("apiVersion"));
            assertEquals(null, out.put((String) d.get("kind"), d), "one " + d.get("kind"));
        }
        return out;
    }

    static Map<String, Object> container(Map<String, Object> pod, String list, String name) {
        for (Object c : list(pod.get(list))) if (name.equals(map(c).get("name"))) return map(c);
        throw new AssertionError("no " + list + " named " + name);
    }

    /** mountPath -> the volume's hostPath (or "configMap:NAME", "secret:NAME"). */
    static Map<String, String> mounts(Map<String, Object> pod, Map<String, Object> container) {
        Map<String, String> volumes = new HashMap<>();
        for (Object v : list(pod.get("volumes"))) {
            Map<String, Object> vol = map(v);
            String src = vol.containsKey("hostPath") ? (String) map(vol.get("hostPath")).get("path")
                    : vol.containsKey("configMap") ? "configMap:" + map(vol.get("configMap")).get("name")
                    : "secret:" + map(vol.get("secret")).get("secretName");
            assertEquals(null, volumes.put((String) vol.get("name"), src), "volume names are unique");
        }
        Map<String, String> out = new HashMap<>();
        for (Object m : list(container.get("volumeMounts"))) {
            String name = (String) map(m).get("name");
            assertTrue(volumes.containsKey(name), "mount of an undefined volume " + name);
            out.put((String) map(m).get("mountPath"), volumes.get(name));
        }
        return out;
    }

    static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> out = new HashMap<>();
        for (Object e : list(container.get("env"))) out.put((String) map(e).get("name"), String.valueOf(map(e).get("value")));
        return out;
    }

    @Test
    void theManifestFitsTheImageItsScriptsAndJcnid() throws IOException {
        Map<String, Map<String, Object>> docs = byKind();
        assertEquals(java.util.Set.of("Namespace", "ConfigMap", "DaemonSet"), docs.keySet());
        String ns = (String) map(docs.get("Namespace").get("metadata")).get("name");
        Map<String, Object> cm = docs.get("ConfigMap");
        assertEquals(ns, map(cm.get("metadata")).get("namespace"));
        Map<String, Object> ds = docs.get("DaemonSet");
        assertEquals(ns, map(ds.get("metadata")).get("namespace"));

        // The CNI config: flannel delegating (to bridge + host-local), then portmap and bandwidth.
        Map<String, Object> data = map(cm.get("data"));
        Map<String, Object> conf = Json.parseObject((String) data.get("cni-conf.json"));
        List<String> types = new ArrayList<>();
        for (Object p : Json.asList(conf.get("plugins"))) types.add((String) Json.asObject(p).get("type"));
        assertEquals(List.of("flannel", "portmap", "bandwidth"), types);
        Map<String, Object> net = Json.parseObject((String) data.get("net-conf.json"));
        assertTrue(net.get("Network") instanceof String);
        assertEquals("vxlan", Json.asObject(net.get("Backend")).get("Type"));
        // Each plugin the config names is one the image installs.
        for (String t : types) assertTrue(io.jcni.plugins.PluginRegistry.types().contains(t), t);

        Map<String, Object> pod = map(map(ds.get("spec")).get("template"));
        assertEquals(map(map(ds.get("spec")).get("selector")).get("matchLabels"),
                map(map(pod.get("metadata")).get("labels")).entrySet().stream()
                        .filter(e -> e.getKey().equals("app")).collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        Map<String, Object> spec = map(pod.get("spec"));
        assertEquals(true, spec.get("hostNetwork"));
        assertEquals(true, spec.get("hostPID"), "jcnid opens its callers' /proc/PID/ns/net");
        assertEquals("system-node-critical", spec.get("priorityClassName"));
        assertEquals(List.of(Map.of("operator", "Exists")), spec.get("tolerations"), "tolerates every taint: every node");

        String tag = "jcni:" + ImageEndToEndTest.version();
        Map<String, Object> init = container(spec, "initContainers", "install-cni");
        Map<String, Object> main = container(spec, "containers", "jcnid");
        assertEquals(tag, init.get("image"));
        assertEquals(tag, main.get("image"));

        // The installer: the image's script, the node's /opt under its JCNI_HOST_ROOT.
        assertEquals(List.of("/opt/jcni/bin/jcni-install-cni"), init.get("command"));
        assertTrue(Files.isExecutable(REPO.resolve("scripts/image/jcni-install-cni")));
        String host = env(init).get("JCNI_HOST_ROOT");
        assertEquals("/opt", mounts(spec, init).get(host + "/opt"));

        // jcni-node: the conflist into the node's /etc/cni/net.d, from the ConfigMap's cni-conf.json.
        assertEquals(List.of("/opt/jcni/bin/jcni-node"), main.get("command"));
        assertTrue(Files.isExecutable(REPO.resolve("scripts/image/jcni-node")));
        Map<String, String> mainEnv = env(main);
        Map<String, String> m = mounts(spec, main);
        assertEquals(host, mainEnv.get("JCNI_HOST_ROOT"));
        assertEquals("/etc/cni/net.d", m.get(host + "/etc/cni/net.d"));
        String confPath = mainEnv.get("JCNI_CNI_CONF");
        String confDir = confPath.substring(0, confPath.lastIndexOf('/'));
        assertEquals("configMap:" + map(cm.get("metadata")).get("name"), m.get(confDir));
        assertTrue(data.containsKey(confPath.substring(confDir.length() + 1)));
        assertTrue(mainEnv.get("JCNI_CNI_CONF_NAME").matches("[0-9][0-9]-.*\\.conflist"));
        // jcnid's own paths are the node's, at the same place: the shims' socket (/run/jcni/jcnid.sock,
        // compiled into them), subnet.env, host-local's state, the pods' netns, CNI_PATH.
        for (String p : List.of("/run/jcni", "/run/flannel", "/var/lib/cni", "/var/run/netns", "/opt/cni/bin")) {
            assertEquals(p, m.get(p), p);
        }
        assertTrue(Files.readString(REPO.resolve("scripts/install.sh")).contains("SOCKET=/run/jcni/jcnid.sock"));
        for (Object vm : list(main.get("volumeMounts"))) {
            if ("/var/run/netns".equals(map(vm).get("mountPath"))) assertEquals("HostToContainer", map(vm).get("mountPropagation"));
        }

        // The agent's flags: the overlay over etcd, TLS material from the Secret's mount.
        List<Object> args = list(main.get("args"));
        assertTrue(args.contains("--overlay"));
        for (String f : List.of("--etcd-cafile", "--etcd-certfile", "--etcd-keyfile")) {
            String value = args.stream().map(String::valueOf).filter(a -> a.startsWith(f + "=")).findFirst().orElseThrow().substring(f.length() + 1);
            String dir = value.substring(0, value.lastIndexOf('/'));
            assertTrue(m.get(dir).startsWith("secret:"), f + " points into the Secret's mount");
        }
        assertFalse(args.stream().anyMatch(a -> String.valueOf(a).startsWith("--kube-subnet-mgr")));

        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            assertEquals(List.of("/opt/jcni/bin/jcnid", "status"), map(map(main.get(probe)).get("exec")).get("command"), probe);
        }
    }
}
