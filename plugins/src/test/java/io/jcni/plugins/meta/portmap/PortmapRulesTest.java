package io.jcni.plugins.meta.portmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementScript;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Config parsing and script generation: pure, no root. */
class PortmapRulesTest {
    static PortmapConfig parse(String json) {
        return PortmapConfig.parse(Json.parseObject(json));
    }

    static String withMappings(String mappings, String extra) {
        return "{\"name\":\"n\"" + extra + ",\"runtimeConfig\":{\"portMappings\":" + mappings + "}}";
    }

    @Test
    void elementsForBothFamiliesWithMasquerade() {
        PortmapConfig c = parse(withMappings("[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"TCP\"},"
                + "{\"hostPort\":53,\"containerPort\":5353,\"protocol\":\"udp\",\"hostIP\":\"192.0.2.1\"},"
                + "{\"hostPort\":443,\"containerPort\":443,\"hostIP\":\"2001:db8::1\"},"
                + "{\"hostPort\":9,\"containerPort\":9,\"protocol\":\"sctp\",\"hostIP\":\"0.0.0.0\"}]", ""));
        List<Element> e = PortmapRules.elements(c, Cidr.parse("10.1.2.3/16"), "br0", Cidr.parse("fd00::3/64"), "br0");
        assertEquals(List.of(
                new Element("pm4", "tcp . 8080", "10.1.2.3 . 80"),
                new Element("pm4h", "192.0.2.1 . udp . 53", "10.1.2.3 . 5353"),
                new Element("pm4", "sctp . 9", "10.1.2.3 . 9"),
                new Element("pm_hair4", "10.1.2.3 . \"br0\"", null),
                new Element("pm_self4", "10.1.2.3 . 10.1.2.3", null),
                new Element("pm_local4", "10.1.2.3", null),
                new Element("pm6", "tcp . 8080", "fd00::3 . 80"),
                new Element("pm6h", "2001:db8::1 . tcp . 443", "fd00::3 . 443"),
                new Element("pm6", "sctp . 9", "fd00::3 . 9"),
                new Element("pm_hair6", "fd00::3 . \"br0\"", null),
                new Element("pm_self6", "fd00::3 . fd00::3", null)), e);
    }

    @Test
    void masqAllAndNoSnat() {
        String m = "[{\"hostPort\":8080,\"containerPort\":80}]";
        List<Element> all = PortmapRules.elements(parse(withMappings(m, ",\"masqAll\":true")), Cidr.parse("10.1.2.3/16"), "br0", null, null);
        assertEquals(new Element("pm_all4", "10.1.2.3", null), all.get(1));
        assertEquals(2, all.size());
        List<Element> none = PortmapRules.elements(parse(withMappings(m, ",\"snat\":false")), Cidr.parse("10.1.2.3/16"), "br0", null, null);
        assertEquals(List.of(new Element("pm4", "tcp . 8080", "10.1.2.3 . 80")), none);
    }

    /** go-cni (containerd) sends its untagged struct fields; Go's decoder folds them onto the tags. */
    @Test
    void goCniPortMappingsAreRead() {
        PortmapConfig c = parse("{\"name\":\"n\",\"RuntimeConfig\":{\"PortMappings\":["
                + "{\"HostPort\":8080,\"ContainerPort\":80,\"Protocol\":\"tcp\",\"HostIP\":\"\"},"
                + "{\"HostPort\":5353,\"ContainerPort\":53,\"Protocol\":\"UDP\",\"HostIP\":\"127.0.0.1\"}]}}");
        assertEquals(List.of(new PortmapConfig.PortMapping(8080, 80, "tcp", null),
                new PortmapConfig.PortMapping(5353, 53, "udp", io.jcni.types.IpAddr.parse("127.0.0.1"))), c.mappings());
    }

    @Test
    void portsAreIntegralLiterals() {
        for (String port : List.of("80.0", "8e1", "\"80\"")) {
            CniException e = assertThrows(CniException.class, () -> parse(withMappings("[{\"hostPort\":" + port + ",\"containerPort\":80}]", "")));
            assertEquals(6, e.code(), port);
        }
    }

    @Test
    void badConfigNamesTheKey() {
        CniException e = assertThrows(CniException.class, () -> parse(withMappings("[{\"hostPort\":0,\"containerPort\":80}]", "")));
        assertEquals(7, e.code());
        assertTrue(e.details().contains("portMappings[0].hostPort"), e.details());
        e = assertThrows(CniException.class, () -> parse(withMappings("[{\"hostPort\":1,\"containerPort\":80,\"protocol\":\"icmp\"}]", "")));
        assertTrue(e.details().contains("protocol"));
        e = assertThrows(CniException.class, () -> parse(withMappings("[]", ",\"backend\":\"iptables\"")));
        assertEquals(2, e.code());
        assertTrue(e.details().startsWith("backend"));
        e = assertThrows(CniException.class, () -> parse(withMappings("[]", ",\"conditionsV4\":[\"-d\",\"1.2.3.4\"]")));
        assertEquals(2, e.code());
        e = assertThrows(CniException.class, () -> parse(withMappings("[]", ",\"markMasqBit\":32")));
        assertEquals(7, e.code());
        e = assertThrows(CniException.class, () -> parse(withMappings("[]", ",\"markMasqBit\":3,\"externalSetMarkChain\":\"X\"")));
        assertEquals(7, e.code());
        e = assertThrows(CniException.class, () -> parse(withMappings(
                "[{\"hostPort\":1,\"containerPort\":80},{\"hostPort\":1,\"containerPort\":81}]", "")));
        assertTrue(e.details().contains("mapped twice"));
        e = assertThrows(CniException.class, () -> parse(withMappings("[]", ",\"snat\":\"maybe\"")));
        assertTrue(e.msg().contains("snat"));
        // Accepted: empty conditions, nftables backend, an external mark chain alone, duplicates that agree.
        parse(withMappings("[{\"hostPort\":1,\"containerPort\":2},{\"hostPort\":1,\"containerPort\":2}]",
                ",\"conditionsV4\":[],\"backend\":\"nftables\",\"externalSetMarkChain\":\"KUBE-MARK-MASQ\""));
    }

    @Test
    void addWithoutPrevResultIsAConfigError() {
        Map<String, Object> err = new PluginCall("portmap").fails("ADD", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"portmap\"}");
        assertEquals(7L, err.get("code"));
    }

    @Test
    void picksTheSandboxInterfacesAddresses() {
        Result r = Result.fromJson(Json.parseObject("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"br0\"},"
                + "{\"name\":\"eth0\",\"sandbox\":\"/x\"}],\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0},"
                + "{\"address\":\"10.0.0.5/24\",\"interface\":1},{\"address\":\"10.0.0.6/24\",\"interface\":1}]}"));
        Cidr[] ips = PortmapConfig.containerIps(r, "eth0");
        assertEquals(Cidr.parse("10.0.0.5/24"), ips[0]);
        assertNull(ips[1]);
    }

    /**
     * The scale property on the transaction: ADD of one more mapping writes the same script
     * whether 0 or 2,000 mappings exist, because nothing existing appears in it.
     */
    @Test
    void addScriptDoesNotDependOnExistingMappings() {
        PortmapConfig c = parse(withMappings("[{\"hostPort\":8080,\"containerPort\":80}]", ""));
        Map<Element, String> add = new LinkedHashMap<>();
        for (Element e : PortmapRules.elements(c, Cidr.parse("10.1.2.3/16"), "br0", null, null)) add.put(e, null);
        String script = ElementScript.script(PortmapRules.skeleton(), "portmap n ctr eth0", List.of(), add);
        // The skeleton plus three lines per element; the same text for any table content.
        assertEquals(PortmapRules.skeleton().lines().count() + 3L * add.size(), script.lines().count());
        assertTrue(script.contains("add element inet jcni pm4 { tcp . 8080 comment \"portmap n ctr eth0\" : 10.1.2.3 . 80 }"));
        assertFalse(script.contains("list"));
        assertEquals(PortmapRules.RULE_COUNT, PortmapRules.skeleton().lines().filter(l -> l.startsWith("add rule")).count());
    }

    @Test
    void removalsAreTolerantAdditionsReplace() {
        Element e = new Element("pm4", "tcp . 1", "10.0.0.2 . 80");
        Map<Element, String> add = new LinkedHashMap<>();
        add.put(e, "10.0.0.9 . 80");
        String s = ElementScript.script("", "c", List.of(new Element("pm_local4", "10.0.0.3", null)), add);
        assertEquals("""
                add element inet jcni pm_local4 { 10.0.0.3 }
                delete element inet jcni pm_local4 { 10.0.0.3 }
                add element inet jcni pm4 { tcp . 1 : 10.0.0.9 . 80 }
                delete element inet jcni pm4 { tcp . 1 }
                add element inet jcni pm4 { tcp . 1 comment "c" : 10.0.0.2 . 80 }
                """, s);
    }
}
