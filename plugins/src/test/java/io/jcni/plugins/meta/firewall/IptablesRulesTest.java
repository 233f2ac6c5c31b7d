package io.jcni.plugins.meta.firewall;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reference's iptables rules, their argument lists and how they read back: no root, no kernel. */
class IptablesRulesTest {
    static Result result(String... addresses) {
        StringBuilder ips = new StringBuilder();
        for (String a : addresses) ips.append(ips.isEmpty() ? "" : ",").append("{\"address\":\"").append(a).append("\",\"interface\":1}");
        return Result.fromJson(Json.parseObject("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"br0\"},{\"name\":\"eth0\",\"sandbox\":\"/x\"}],"
                + "\"ips\":[" + ips + "]}"));
    }

    @Test
    void rulesAreTheReferencesWordForWord() {
        assertEquals(List.of("-m", "comment", "--comment", "CNI firewall plugin rules", "-j", "CNI-FORWARD"), IptablesRules.forwardJump());
        assertEquals(List.of("-m", "comment", "--comment", "CNI firewall plugin admin overrides", "-j", "MY-ADMIN"), IptablesRules.adminJump("MY-ADMIN"));
        assertEquals(List.of(
                List.of("-d", "10.88.0.2/32", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"),
                List.of("-s", "10.88.0.2/32", "-j", "ACCEPT")), IptablesRules.addressRules("10.88.0.2/32"));
    }

    @Test
    void hostsPerFamilyDistinctAndInOrder() {
        Result r = result("10.88.0.2/16", "fd00:88::2/64", "10.88.0.7/16", "10.88.0.2/24");
        assertEquals(List.of("10.88.0.2/32", "10.88.0.7/32"), IptablesRules.hosts(r, false));
        assertEquals(List.of("fd00:88::2/128"), IptablesRules.hosts(r, true));
        assertEquals(List.of(), IptablesRules.hosts((Result) null, false));
        assertEquals(List.of("fd00:88::2/128"), IptablesRules.hosts(List.of("10.88.0.2", "fd00:88:0::2", "not-an-ip"), true));
    }

    @Test
    void commandLines() {
        assertEquals(List.of("-w", "-t", "filter", "-S", "CNI-FORWARD"), IptablesRules.list("CNI-FORWARD"));
        assertEquals(List.of("-w", "-t", "filter", "-N", "CNI-ADMIN"), IptablesRules.newChain("CNI-ADMIN"));
        assertEquals(List.of("-w", "-t", "filter", "-I", "FORWARD", "1", "-m", "comment", "--comment", "CNI firewall plugin rules", "-j", "CNI-FORWARD"),
                IptablesRules.insertFirst("FORWARD", IptablesRules.forwardJump()));
        assertEquals(List.of("-w", "-t", "filter", "-A", "CNI-FORWARD", "-s", "10.0.0.1/32", "-j", "ACCEPT"),
                IptablesRules.append("CNI-FORWARD", List.of("-s", "10.0.0.1/32", "-j", "ACCEPT")));
        assertEquals(List.of("-w", "-t", "filter", "-C", "FORWARD", "-j", "X"), IptablesRules.exists("FORWARD", List.of("-j", "X")));
        assertEquals(List.of("-w", "-t", "filter", "-D", "CNI-FORWARD", "-j", "X"), IptablesRules.delete("CNI-FORWARD", List.of("-j", "X")));
    }

    /** What iptables-nft 1.8.9 prints for a chain the reference plugin filled (and an administrator's rule). */
    static final String LISTING = """
            -N CNI-FORWARD
            -A CNI-FORWARD -m comment --comment "CNI firewall plugin admin overrides" -j CNI-ADMIN
            -A CNI-FORWARD -d 10.88.0.2/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
            -A CNI-FORWARD -s 10.88.0.2/32 -j ACCEPT
            -A CNI-FORWARD -s 10.88.0.0/16 -p tcp -j ACCEPT
            -A CNI-FORWARD -d 10.88.0.9/32 -j ACCEPT
            -A CNI-FORWARD -s 10.88.0.3/32 -m comment --comment "say \\"hi\\"" -j ACCEPT
            """;

    @Test
    void readsBackTheListingAndTellsOurRulesFromOthers() {
        List<List<String>> rules = IptablesRules.rules(LISTING, "CNI-FORWARD");
        assertEquals(6, rules.size());
        assertEquals(IptablesRules.adminJump("CNI-ADMIN"), rules.get(0));
        assertEquals(IptablesRules.addressRules("10.88.0.2/32"), rules.subList(1, 3));
        assertEquals(List.of("-s", "10.88.0.3/32", "-m", "comment", "--comment", "say \"hi\"", "-j", "ACCEPT"), rules.get(5));
        assertEquals("10.88.0.2/32", IptablesRules.addressOf(rules.get(1)));
        assertEquals("10.88.0.2/32", IptablesRules.addressOf(rules.get(2)));
        assertNull(IptablesRules.addressOf(rules.get(0)), "the admin jump");
        assertNull(IptablesRules.addressOf(rules.get(3)), "an administrator's rule for a network");
        assertNull(IptablesRules.addressOf(rules.get(4)), "not our shape: -d without the conntrack match");
        assertNull(IptablesRules.addressOf(rules.get(5)), "not our shape: a comment");
        assertEquals("fd00::2/128", IptablesRules.addressOf(List.of("-s", "fd00::2/128", "-j", "ACCEPT")));
        assertNull(IptablesRules.addressOf(List.of("-s", "host.example/32", "-j", "ACCEPT")));
        assertEquals(List.of(), IptablesRules.rules("-P FORWARD DROP\n-A FORWARD -j DOCKER-USER\n", "CNI-FORWARD"));
        assertEquals(List.of(IptablesRules.forwardJump()),
                IptablesRules.rules("-P FORWARD DROP\n-A FORWARD -m comment --comment \"CNI firewall plugin rules\" -j CNI-FORWARD\n", "FORWARD"));
    }
}
