package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The generator alone (no root): reproducible, and never points a plugin at a directory outside the scratch tree. */
class FuzzInputsTest {
    private final FuzzInputs gen = new FuzzInputs(new FuzzInputs.Paths(Path.of("/scratch/state"), Path.of("/scratch/hazards"),
            "/var/run/netns/c", "/var/run/netns/h", Path.of("/scratch/bin")));

    @Test
    void theSameSeedGivesTheSameCases() {
        for (int i = 0; i < 200; i++) {
            FuzzInputs.Case a = gen.generate(14, i);
            FuzzInputs.Case b = gen.generate(14, i);
            assertArrayEquals(a.stdin(), b.stdin(), "case " + i);
            assertEquals(a.env(), b.env(), "case " + i);
        }
        assertFalse(Arrays.equals(gen.generate(14, 7).stdin(), gen.generate(15, 7).stdin()), "another seed, other cases");
    }

    @Test
    void everyValidConfigParsesAndDataDirsStayInTheScratchTree() {
        for (String type : FuzzInputs.TYPES) assertNotNull(Json.parseObject(gen.validConfig(type)), type);
        int parsed = 0;
        for (int i = 0; i < 3000; i++) {
            String text = new String(gen.generate(14, i).stdin(), StandardCharsets.UTF_8);
            Map<String, Object> conf;
            try {
                conf = Json.parseObject(text);
            } catch (RuntimeException e) {
                continue; // not JSON: nothing can read a directory from it
            }
            if (!conf.containsKey("name")) continue; // the root was replaced: no plugin gets as far as a directory
            parsed++;
            assertTrue(String.valueOf(conf.get("dataDir")).startsWith("/scratch/state/"), "case " + i + ": " + text.substring(0, Math.min(600, text.length())));
            if (conf.get("ipam") instanceof Map<?, ?> ipam) {
                assertTrue(String.valueOf(ipam.get("dataDir")).startsWith("/scratch/state/"), "case " + i + ": " + ipam);
            }
        }
        assertTrue(parsed > 1000, "most generated configs are JSON objects: " + parsed);
    }
}
