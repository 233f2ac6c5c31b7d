package io.jcni.overlay;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * cluster-ipam ADDs with one {@code ipam} section each, run by {@link EtcdTlsLabTest} in a host
 * netns (one JVM for every case). Input: lines {@code NAME<TAB>IPAM_JSON}; output: lines
 * {@code NAME<TAB>EXIT<TAB>STDOUT<TAB>STDERR} (newlines and tabs flattened).
 */
public final class EtcdTlsProbe {
    public static void main(String[] a) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        for (String line : Files.readAllLines(Path.of(a[0]))) {
            if (line.isBlank()) continue;
            String[] f = line.split("\t", 2);
            String conf = "{\"cniVersion\":\"1.1.0\",\"name\":\"lab\",\"type\":\"x\",\"ipam\":" + f[1] + "}";
            Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "tls-" + f[0], "CNI_NETNS", "/var/run/netns/none",
                    "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent");
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Skel.Outcome o = Skel.run(PluginRegistry.lookup("cluster-ipam"), env, conf.getBytes(StandardCharsets.UTF_8),
                    PluginRegistry.context(new PrintStream(err, true, StandardCharsets.UTF_8)));
            out.println(f[0] + "\t" + o.exitCode() + "\t" + flat(o.stdout()) + "\t" + flat(err.toString(StandardCharsets.UTF_8)));
        }
    }

    private static String flat(String s) {
        return s.replace('\n', ' ').replace('\t', ' ');
    }
}
