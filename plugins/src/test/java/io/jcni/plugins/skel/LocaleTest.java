package io.jcni.plugins.skel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The standalone plugin answers the same whatever locale it is started in
 * (runtimes and systemd often set none), and as jcnid (which runs the same skeleton) does: a
 * network name the reference refuses is code 7 before anything touches the disk.
 */
class LocaleTest {
    @TempDir
    Path dataDir;

    record Answer(int rc, Map<String, Object> json) {}

    private Answer run(String lang, String network, String ifname) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Jvm.command(Launcher.Kind.PLUGIN, "io.jcni.plugins.PluginMain", "host-local"));
        pb.environment().clear();
        if (!lang.isEmpty()) pb.environment().put("LANG", lang);
        pb.environment().put("CNI_COMMAND", "ADD");
        pb.environment().put("CNI_CONTAINERID", "ctr1");
        pb.environment().put("CNI_NETNS", "/proc/self/ns/net");
        pb.environment().put("CNI_IFNAME", ifname);
        pb.environment().put("CNI_PATH", "/nonexistent");
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(Json.write(Map.of("cniVersion", "1.1.0", "name", network, "ipam",
                    Map.of("type", "host-local", "dataDir", dataDir.toString(), "subnet", "10.8.0.0/24"))).getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("plugin hung");
        }
        return new Answer(p.exitValue(), Json.parseObject(out));
    }

    private List<Path> files() throws IOException {
        try (Stream<Path> s = Files.walk(dataDir)) {
            return new ArrayList<>(s.filter(Files::isRegularFile).toList());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "C", "C.UTF-8"})
    void theAnswerDoesNotDependOnTheLocale(String lang) throws Exception {
        Answer a = run(lang, "r\u00e9seau", "eth0");
        assertEquals(1, a.rc());
        assertEquals(7L, a.json().get("code"), a.json().toString());
        assertEquals(List.of(), files(), "nothing was written");

        a = run(lang, "net", "\u00e9th0");
        assertEquals(4L, a.json().get("code"), a.json().toString());
        assertEquals(List.of(), files());

        a = run(lang, "net", "eth0");
        assertEquals(0, a.rc(), a.json().toString());
        assertFalse(files().isEmpty());
    }
}
