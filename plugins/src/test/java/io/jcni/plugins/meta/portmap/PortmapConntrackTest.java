package io.jcni.plugins.meta.portmap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jcni.linux.Conntrack;
import io.jcni.linux.Family;
import io.jcni.linux.Netns;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.plugins.testutil.Topology;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parity with the reference portmap: ADD deletes the conntrack entries of UDP flows to
 * the host ports it maps, in the host namespace, so a client that was already sending to the port
 * reaches the new container; flows to other ports and TCP flows stay.
 */
@Tag("root")
class PortmapConntrackTest {
    @TempDir
    Path tmp;

    private static void udp(Netns from, String to, int port) throws java.io.IOException {
        from.exec(() -> {
            try (DatagramChannel c = DatagramChannel.open()) {
                c.send(ByteBuffer.wrap(new byte[] {1}), new InetSocketAddress(InetAddress.getByName(to), port));
            }
        });
    }

    private String conf(Topology w, String c1, String mappings) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"pmct\",\"type\":\"portmap\",\"dataDir\":\"" + tmp.resolve("state") + "\""
                + ",\"runtimeConfig\":{\"portMappings\":" + mappings + "},"
                + "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"br0\"},{\"name\":\"vc1\"},"
                + "{\"name\":\"eth0\",\"sandbox\":\"" + w.nsPath(c1) + "\"}],"
                + "\"ips\":[{\"address\":\"10.78.0.2/24\",\"gateway\":\"10.78.0.1\",\"interface\":2}]}}";
    }

    @Test
    void addDeletesStaleUdpFlowsToTheMappedPortsOnly() throws Exception {
        try (Topology w = new Topology()) {
            w.bridge("br0", "10.78.0.1/24");
            String c1 = w.container("c1", "br0", new String[] {"10.78.0.2/24"}, new String[] {"10.78.0.1"});
            String c2 = w.container("c2", "br0", new String[] {"10.78.0.3/24"}, new String[] {"10.78.0.1"});
            PluginCall add = new PluginCall("portmap").env("CNI_CONTAINERID", "ct1").env("CNI_NETNS", w.nsPath(c1));
            // A TCP mapping first: the jcni table's nat chains switch conntrack on in the host namespace.
            w.hostNs.run(() -> add.ok("ADD", conf(w, c1, "[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"}]")));
            try (Netns client = Netns.open(w.nsPath(c2)); Conntrack ct = Conntrack.open(w.hostNs)) {
                udp(client, "10.78.0.1", 5353); // to the host, before the port is mapped: tracked untranslated
                udp(client, "10.78.0.1", 5354);
                // The packets reach the host after ARP: wait (bounded) until both flows are tracked.
                for (int i = 0; i < 500 && ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5354).size()
                        + ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353).size() < 2; i++) Thread.sleep(10);
                assertEquals(1, ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353).size());
                w.hostNs.run(() -> add.ok("ADD", conf(w, c1, "[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"},"
                        + "{\"hostPort\":5353,\"containerPort\":53,\"protocol\":\"UDP\"}]")));
                assertEquals(0, ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353).size());
                assertEquals(1, ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5354).size());
            }
        }
    }
}
