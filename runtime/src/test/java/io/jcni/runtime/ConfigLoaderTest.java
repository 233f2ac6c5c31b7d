package io.jcni.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniException;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    @TempDir
    Path dir;

    private Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
        return p;
    }

    private static List<String> types(NetConfList l) {
        return l.plugins().stream().map(PluginConf::type).toList();
    }

    /** Every file's content and mtime: loading must not change any of it. */
    private Map<String, String> snapshot() throws IOException {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.toList()) {
                m.put(dir.relativize(p).toString(), Files.isDirectory(p) ? "dir" : Files.readString(p) + "@" + Files.getLastModifiedTime(p));
            }
        }
        return m;
    }

    private CniException loadFails(String network) throws IOException {
        Map<String, String> before = snapshot();
        CniException e = assertThrows(CniException.class, () -> ConfigLoader.load(dir, network));
        assertEquals(before, snapshot(), "loading must not touch the directory");
        return e;
    }

    private static void assertMentions(CniException e, String... words) {
        String m = e.getMessage();
        for (String w : words) assertTrue(m.contains(w), "\"" + m + "\" should mention " + w);
    }

    @Test
    void loadsConflistByName() throws IOException {
        write("10-a.conflist", """
                {"cniVersion":"1.0.0","name":"a","plugins":[{"type":"bridge"},{"type":"portmap","capabilities":{"portMappings":true}}]}""");
        write("20-b.conflist", """
                {"cniVersion":"0.4.0","name":"b","plugins":[{"type":"ptp"}]}""");
        NetConfList b = ConfigLoader.load(dir, "b");
        assertEquals("b", b.name());
        assertEquals("0.4.0", b.cniVersion());
        assertEquals(List.of("ptp"), types(b));
        assertEquals(List.of("bridge", "portmap"), types(ConfigLoader.load(dir, "a")));
    }

    @Test
    void legacyConfAndJsonFilesAreLiftedIntoLists() throws IOException {
        write("10-x.conf", """
                {"cniVersion":"0.3.1","name":"x","type":"bridge","bridge":"br9","ipam":{"type":"host-local"}}""");
        write("20-y.json", """
                {"cniVersion":"0.4.0","name":"y","type":"macvlan"}""");
        NetConfList x = ConfigLoader.load(dir, "x");
        assertEquals("0.3.1", x.cniVersion());
        assertEquals(List.of("bridge"), types(x));
        assertEquals("br9", x.plugins().getFirst().raw().get("bridge"));
        assertEquals(List.of("macvlan"), types(ConfigLoader.load(dir, "y")));
    }

    @Test
    void listingOrdersConflistsFirstThenLexically() throws IOException {
        write("01-c.conf", "{\"cniVersion\":\"1.0.0\",\"name\":\"c\",\"type\":\"ptp\"}");
        write("30-b.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"b\",\"plugins\":[{\"type\":\"ptp\"}]}");
        write("20-a.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"a\",\"plugins\":[{\"type\":\"ptp\"}]}");
        write("00-d.json", "{\"cniVersion\":\"1.0.0\",\"name\":\"d\",\"type\":\"ptp\"}");
        write("README.txt", "not a config");
        ConfigLoader.Listing l = ConfigLoader.list(dir);
        assertEquals(List.of("a", "b", "d", "c"), l.networks().stream().map(ConfigLoader.Network::name).toList());
        assertTrue(l.skipped().isEmpty());
    }

    @Test
    void extraPluginsComeFromTheNetworkSubdirectoryUnlessOnlyInlined() throws IOException {
        write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"bridge\"}]}");
        write("n/20-second.conf", "{\"type\":\"tuning\"}");
        write("n/10-first.conf", "{\"type\":\"portmap\"}");
        write("n/ignored.json", "{\"type\":\"nope\"}");
        assertEquals(List.of("bridge", "portmap", "tuning"), types(ConfigLoader.load(dir, "n")));

        write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"loadOnlyInlinedPlugins\":true,\"plugins\":[{\"type\":\"bridge\"}]}");
        assertEquals(List.of("bridge"), types(ConfigLoader.load(dir, "n")));
    }

    @Test
    void conflistWithoutPluginsKeyTakesThemAllFromTheSubdirectory() throws IOException {
        write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        write("n/a.conf", "{\"type\":\"bridge\"}");
        assertEquals(List.of("bridge"), types(ConfigLoader.load(dir, "n")));
    }

    @Test
    void conflistWithNoPluginsAnywhereIsAnError() throws IOException {
        Path f = write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        assertMentions(loadFails("n"), f.toString(), "no plugin");
    }

    @Test
    void badJsonNamesTheFile() throws IOException {
        Path f = write("10-bad.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"bad\",\"plugins\":[{\"type\":\"bridge\"}");
        CniException e = loadFails("bad");
        assertMentions(e, f.toString(), "line 1");
        assertEquals(6, e.code());
    }

    @Test
    void badJsonBlocksEveryLoadBecauseItsNetworkCannotBeKnown() throws IOException {
        write("10-ok.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"ok\",\"plugins\":[{\"type\":\"bridge\"}]}");
        Path f = write("20-garbage.conf", "this is not json");
        assertMentions(loadFails("ok"), f.toString());
    }

    @Test
    void malformedFileOfAnotherNetworkDoesNotBlock() throws IOException {
        write("10-ok.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"ok\",\"plugins\":[{\"type\":\"bridge\"}]}");
        write("20-other.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"other\",\"plugins\":[{}]}");
        assertEquals("ok", ConfigLoader.load(dir, "ok").name());
        ConfigLoader.Listing l = ConfigLoader.list(dir);
        assertEquals(1, l.skipped().size());
        assertEquals("other", l.skipped().getFirst().networkName());
        assertTrue(l.skipped().getFirst().reason().contains("type"), l.skipped().getFirst().reason());
    }

    @Test
    void missingNameNamesFileAndField() throws IOException {
        Path f = write("10-noname.conflist", "{\"cniVersion\":\"1.0.0\",\"plugins\":[{\"type\":\"bridge\"}]}");
        assertMentions(loadFails("anything"), f.toString(), "name");
    }

    @Test
    void missingTypeNamesFileAndField() throws IOException {
        Path f = write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"bridge\"},{\"mtu\":1400}]}");
        assertMentions(loadFails("n"), f.toString(), "plugins[1]", "type");
        Path g = write("20-m.conf", "{\"cniVersion\":\"1.0.0\",\"name\":\"m\"}");
        CniException e = assertThrows(CniException.class, () -> ConfigLoader.load(dir, "m"));
        // the broken conflist of "n" is ignored; m's own problem is reported
        assertMentions(e, g.toString(), "type");
    }

    @Test
    void missingTypeInExtraPluginFileNamesThatFile() throws IOException {
        write("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"bridge\"}]}");
        Path f = write("n/extra.conf", "{\"mtu\":1}");
        assertMentions(loadFails("n"), f.toString(), "type");
    }

    @Test
    void unknownVersionNamesFileAndField() throws IOException {
        Path f = write("10-v.conflist", "{\"cniVersion\":\"0.9.0\",\"name\":\"v\",\"plugins\":[{\"type\":\"bridge\"}]}");
        CniException e = loadFails("v");
        assertMentions(e, f.toString(), "cniVersion", "0.9.0");
        assertEquals(1, e.code());
        write("10-v.conflist", "{\"cniVersion\":\"one\",\"name\":\"v\",\"plugins\":[{\"type\":\"bridge\"}]}");
        assertMentions(loadFails("v"), f.toString(), "cniVersion");
    }

    @Test
    void newerVersionsInCniVersionsAreSkipped() throws IOException {
        write("10-v.conflist", "{\"cniVersions\":[\"0.4.0\",\"1.0.0\",\"9.0.0\"],\"name\":\"v\",\"plugins\":[{\"type\":\"bridge\"}]}");
        assertEquals("1.0.0", ConfigLoader.load(dir, "v").cniVersion());
    }

    @Test
    void duplicateNetworkNameNamesBothFiles() throws IOException {
        Path a = write("10-a.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"dup\",\"plugins\":[{\"type\":\"bridge\"}]}");
        Path b = write("20-b.conf", "{\"cniVersion\":\"1.0.0\",\"name\":\"dup\",\"type\":\"ptp\"}");
        CniException e = loadFails("dup");
        assertMentions(e, a.toString(), b.toString(), "dup");
        ConfigLoader.Listing l = ConfigLoader.list(dir);
        assertEquals(List.of(a), l.networks().stream().map(ConfigLoader.Network::file).toList());
        assertEquals(b, l.skipped().getFirst().file());
        assertTrue(l.skipped().getFirst().reason().contains("already defined in " + a));
    }

    @Test
    void notFoundAndEmptyDirectory() throws IOException {
        CniException empty = assertThrows(CniException.class, () -> ConfigLoader.load(dir, "x"));
        assertMentions(empty, "no net configurations found", dir.toString());
        assertTrue(ConfigLoader.list(dir.resolve("missing")).networks().isEmpty());
        write("10-a.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"a\",\"plugins\":[{\"type\":\"bridge\"}]}");
        assertMentions(assertThrows(CniException.class, () -> ConfigLoader.load(dir, "x")), "no net configuration with name \"x\"");
    }

    @Test
    void listingReportsWhyEachFileWasSkipped() throws IOException {
        write("10-good.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"good\",\"plugins\":[{\"type\":\"bridge\"}]}");
        write("20-json.conflist", "{nope");
        write("30-noname.conf", "{\"type\":\"bridge\"}");
        write("40-wrongtype.conf", "{\"name\":\"w\",\"type\":7}");
        ConfigLoader.Listing l = ConfigLoader.list(dir);
        assertEquals(List.of("good"), l.networks().stream().map(ConfigLoader.Network::name).toList());
        assertEquals(3, l.skipped().size());
        assertNull(l.skipped().get(0).networkName());
        assertTrue(l.skipped().get(1).reason().contains("name"), l.skipped().get(1).reason());
        assertTrue(l.skipped().get(2).reason().contains("type"), l.skipped().get(2).reason());
    }
}
