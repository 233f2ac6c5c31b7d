package io.jcni.plugins.meta.bandwidth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.PluginCall;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Config errors, all raised before the plugin touches any namespace. */
class BandwidthConfigTest {

    static final String PREV = "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"vh0\"}],\"ips\":[]}";

    static Map<String, Object> addFails(String bandwidth) {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bandwidth\"," + bandwidth + "," + PREV + "}";
        return new PluginCall("bandwidth").fails("ADD", conf);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "\"ingressRate\":1000                                           | ingressBurst | 7",
        "\"egressBurst\":1000                                           | egressRate   | 7",
        "\"runtimeConfig\":{\"bandwidth\":{\"egressRate\":5}}           | runtimeConfig.bandwidth.egressBurst | 7",
        "\"ingressRate\":-1,\"ingressBurst\":8000                       | ingressRate  | 6",
        "\"egressRate\":\"fast\",\"egressBurst\":8000                   | egressRate   | 6",
        "\"egressRate\":1.5,\"egressBurst\":8000                        | egressRate   | 6",
        "\"ingressRate\":1000000,\"ingressBurst\":34359738360           | ingressBurst | 7",
        "\"ingressRate\":4,\"ingressBurst\":8000                        | ingressRate  | 7",
        "\"egressRate\":800,\"egressBurst\":80000000000                 | egressBurst  | 7",
        "\"egressRate\":8000,\"egressBurst\":8000,\"shapedSubnets\":[\"10.0.0.0/8\"],\"unshapedSubnets\":[\"10.1.0.0/16\"] | shapedSubnets | 7",
        "\"egressRate\":8000,\"egressBurst\":8000,\"unshapedSubnets\":[\"nonsense\"] | unshapedSubnets | 7",
        "\"egressRate\":8000,\"egressBurst\":8000,\"shapedSubnets\":[\"10.0.0.0/8\"] | shapedSubnets | 2",
    })
    void badConfigErrorsNameTheKey(String bandwidth, String key, long code) {
        Map<String, Object> err = addFails(bandwidth);
        String text = err.get("msg") + " " + err.get("details");
        assertTrue(text.contains(key), "expected '" + key + "' in: " + err);
        assertEquals(code, ((Number) err.get("code")).longValue(), err.toString());
    }

    /** go-cni's untagged structs: the capability arrives with Go field names, and Go's decoder folds them. */
    @Test
    void goCniSpellingsAndContainerdsBurstAreAccepted() {
        String rc = "\"runtimeConfig\":{\"bandwidth\":{\"IngressRate\":10000000,\"IngressBurst\":4294967295,"
                + "\"EgressRate\":1000000,\"EgressBurst\":4294967295}}";
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bandwidth\"," + rc + "," + PREV + "}";
        var req = new PluginCall("bandwidth").request("ADD", conf);
        BandwidthConfig c = BandwidthConfig.parse(req);
        assertEquals(10_000_000L, c.ingressRate());
        assertEquals(4294967295L, c.ingressBurst());
        assertEquals(1_000_000L, c.egressRate());
        assertEquals(4294967295L, c.egressBurst());
        assertEquals("runtimeConfig.bandwidth", c.where());
    }

    @Test
    void aTopLevelKeyInAnySpellingHidesRuntimeConfigEvenWhenNull() {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bandwidth\",\"EGRESSRATE\":null,"
                + "\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000,\"ingressBurst\":8000}}," + PREV + "}";
        BandwidthConfig c = BandwidthConfig.parse(new PluginCall("bandwidth").request("ADD", conf));
        assertTrue(c.isZero(), "Go allocates the embedded entry for a null key too: " + c);
    }

    @Test
    void ifbNamesAreTheGoPluginsNames() {
        // what the reference plugin 1.1.1 named the ifb of network "net1", container "ctr1"
        assertEquals("bwp85373d34c684", BandwidthPlugin.ifbName("net1", "ctr1"));
        String n = BandwidthPlugin.ifbName("mynet", "ctr1");
        assertEquals(15, n.length());
        assertTrue(n.matches("bwp[0-9a-f]{12}"), n);
        assertEquals(n, BandwidthPlugin.ifbName("mynet", "ctr1"));
        assertTrue(!n.equals(BandwidthPlugin.ifbName("mynet", "ctr2")));
    }
}
