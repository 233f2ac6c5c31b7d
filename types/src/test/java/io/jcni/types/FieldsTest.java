package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The config reader's rules, each as Go's encoding/json applies it to a struct field (docs/config-decoding.md). */
class FieldsTest {

    static Map<String, Object> obj(String json) {
        return Json.parseObject(json);
    }

    @ParameterizedTest
    @ValueSource(strings = {"hostPort", "HostPort", "HOSTPORT", "hostport", "hOsTpOrT"})
    void anySpellingOfTheNameFillsTheField(String key) {
        assertEquals(8080L, Fields.integer(obj("{\"" + key + "\":8080}"), "hostPort", ""));
    }

    @Test
    void goCniPortMappingAndBandwidthSpellings() {
        Map<String, Object> pm = obj("{\"HostPort\":8080,\"ContainerPort\":80,\"Protocol\":\"tcp\",\"HostIP\":\"\"}");
        assertEquals(8080L, Fields.integer(pm, "hostPort", ""));
        assertEquals(80L, Fields.integer(pm, "containerPort", ""));
        assertEquals("tcp", Fields.string(pm, "protocol", ""));
        assertEquals("", Fields.string(pm, "hostIP", ""));
        Map<String, Object> bw = obj("{\"IngressRate\":10000000,\"IngressBurst\":4294967295}");
        assertEquals(4294967295L, Fields.integer(bw, "ingressBurst", ""));
    }

    /** Go folds only ASCII letters, plus the Kelvin sign onto k and the long s onto s. */
    @ParameterizedTest
    @CsvSource({
        "\u212Aey, key, true",
        "\u017Fubnet, subnet, true",
        "ho_stport, ho_stport, true",
        "host_port, hostPort, false",
        "h\u0131stPort, hiStPort, false",
        "HOST-PORT, host-port, true",
        "host@port, host`port, false",
        "hostPorts, hostPort, false",
    })
    void foldIsGos(String key, String field, boolean matches) {
        assertEquals(matches, Fields.names(key, field));
    }

    /** Keys apply in document order: of both spellings, the last one written wins, whichever it is. */
    @Test
    void bothSpellingsPresentTheLastWins() {
        assertEquals(2L, Fields.integer(obj("{\"hostPort\":1,\"HostPort\":2}"), "hostPort", ""));
        assertEquals(1L, Fields.integer(obj("{\"HostPort\":2,\"hostPort\":1}"), "hostPort", ""));
        assertEquals("b", Fields.string(obj("{\"Name\":\"a\",\"NAME\":\"b\"}"), "name", ""));
    }

    /** null leaves a field as it was: absent, or the value of an earlier key. */
    @Test
    void nullIsNoValue() {
        assertNull(Fields.string(obj("{\"name\":null}"), "name", ""));
        assertEquals("a", Fields.string(obj("{\"name\":\"a\",\"Name\":null}"), "name", ""));
        assertTrue(Fields.bool(obj("{\"snat\":null}"), "snat", "", true));
        assertNull(Fields.bool(obj("{\"snat\":null}"), "snat", ""));
        assertTrue(Fields.present(obj("{\"Snat\":null}"), "snat"));
        assertFalse(Fields.present(obj("{\"snat2\":true}"), "snat"));
    }

    /** Go stops at the first value of the wrong type, even one a later key would override. */
    @Test
    void everyMatchingValueIsTypeChecked() {
        CniException e = assertThrows(CniException.class, () -> Fields.integer(obj("{\"MTU\":\"9000\",\"mtu\":1500}"), "mtu", "x"));
        assertEquals(ErrorCode.DECODING_FAILURE.code(), e.code());
        assertTrue(e.getMessage().contains("x.mtu"), e.getMessage());
    }

    @Test
    void unknownKeysAreIgnored() {
        Map<String, Object> m = obj("{\"mtu\":1500,\"mtuu\":\"x\",\"extra\":{\"a\":[1]}}");
        assertEquals(1500L, Fields.integer(m, "mtu", ""));
        assertNull(Fields.string(m, "name", ""));
    }

    /** Integer fields take integral literals only, as Go's int and uint64 fields do. */
    @ParameterizedTest
    @ValueSource(strings = {"1500.0", "1e3", "15E2", "1500.5", "\"1500\"", "true", "[1500]", "99999999999999999999"})
    void integersOnlyFromIntegralLiterals(String literal) {
        CniException e = assertThrows(CniException.class, () -> Fields.integer(obj("{\"mtu\":" + literal + "}"), "mtu", ""));
        assertEquals(ErrorCode.DECODING_FAILURE.code(), e.code());
    }

    @Test
    void booleansOnlyFromTrueAndFalse() {
        assertThrows(CniException.class, () -> Fields.bool(obj("{\"ipMasq\":\"true\"}"), "ipMasq", "", false));
        assertThrows(CniException.class, () -> Fields.bool(obj("{\"ipMasq\":1}"), "ipMasq", "", false));
        assertTrue(Fields.bool(obj("{\"IPMASQ\":true}"), "ipMasq", "", false));
    }

    /** What Go decodes as map[string]... (libcni's conflist level, tuning's sysctl) keeps exact keys. */
    @Test
    void exactReadsDoNotFold() {
        Map<String, Object> m = obj("{\"Name\":\"x\",\"Plugins\":[],\"DisableCheck\":true}");
        assertNull(Fields.Exact.string(m, "name", ""));
        assertNull(Fields.Exact.list(m, "plugins", ""));
        assertFalse(Fields.Exact.boolOrString(m, "disableCheck", "", false));
        assertTrue(Fields.Exact.boolOrString(obj("{\"disableCheck\":\"TRUE\"}"), "disableCheck", "", false));
    }

    @Test
    void listsAndObjectsFold() {
        Map<String, Object> m = obj("{\"PortMappings\":[{\"HostPort\":1}],\"IPAM\":{\"Type\":\"host-local\"}}");
        assertEquals(1, Fields.list(m, "portMappings", "").size());
        assertEquals("host-local", Fields.string(Fields.object(m, "ipam", ""), "type", "ipam"));
        assertEquals(List.of("a"), Fields.stringList(obj("{\"Search\":[\"a\"]}"), "search", ""));
    }
}
