package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.types.DamagedStateException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A damaged attachment record (no root: the files alone): named, moved aside, its claims found in the key records. */
class DamagedRecordTest {
    /** The damaged shapes a crash, a truncated copy or a hand edit leave, each with what the message says. */
    static final Map<String, String> SHAPES = Map.of(
            "", "empty",
            "{\"scope\":\"portmap\",\"network\":\"net\",\"conta", "not JSON",
            "portmap net c1 eth0", "not JSON",
            "[[\"pm_dnat\",\"tcp . 8080\"]]", "not a JSON object",
            "{\"scope\":\"portmap\",\"elements\":\"tcp . 8080\"}", "elements: expected a list",
            "{\"scope\":\"portmap\",\"elements\":[[\"pm_dnat\",8080]]}", "elements[0][1]: expected a string",
            "{\"scope\":\"portmap\",\"elements\":[[\"pm_dnat\"]]}", "elements[0]: expected [set, key] or [set, key, value]");

    @TempDir
    Path dir;

    private final Owner owner = new Owner("portmap", "net", "c1", "eth0");
    private final Owner other = new Owner("portmap", "net", "c2", "eth0");
    private final Element port = new Element("pm_dnat", "tcp . 8080", "10.0.0.2 . 80");
    private final Element set = new Element("pm_set", "10.0.0.2", null);

    @Test
    void everyDamagedShapeIsNamedAndItsClaimsAreFoundInTheKeyRecords() throws Exception {
        int n = 0;
        for (Map.Entry<String, String> shape : SHAPES.entrySet()) {
            Path d = dir.resolve(Integer.toString(n++));
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            StateFiles files = new StateFiles(d, ElementStore.TABLE, new PrintStream(log, true, StandardCharsets.UTF_8));
            files.write(owner, List.of(port, set));
            files.writeClaims(port, KeyClaims.NONE.with(owner.id(), port.value()));
            files.writeClaims(set, KeyClaims.NONE.with(other.id(), null).with(owner.id(), null));
            Path att = d.resolve("att").resolve(owner.id());
            Files.writeString(att, shape.getKey());

            DamagedStateException e = assertThrows(DamagedStateException.class, () -> files.read(owner), shape.getKey());
            assertTrue(e.getMessage().startsWith("damaged state file " + att + ": ") && e.getMessage().contains(shape.getValue()), e.getMessage());
            assertNull(files.record(owner.id()), "a damaged record names no live claimant");

            assertEquals(List.of(port, set), sorted(files.recover(owner, e)), shape.getKey());
            assertFalse(Files.exists(att), "moved aside");
            List<Path> aside;
            try (Stream<Path> s = Files.list(d.resolve("damaged"))) {
                aside = s.toList();
            }
            assertEquals(1, aside.size());
            assertEquals(shape.getKey(), Files.readString(aside.getFirst()), "kept as it was, for a person to look at");
            String said = log.toString(StandardCharsets.UTF_8);
            assertTrue(said.contains("damaged state file " + att) && said.contains("moved to " + aside.getFirst())
                    && said.contains("2 element(s) of portmap net c1 eth0"), said);
            assertEquals(List.of(), files.read(owner), "read again: no record");
            assertEquals(List.of(), files.owners("portmap", "net"), "the record moved aside is not taken for an attachment");
        }
    }

    @Test
    void keysOfAnotherTableAreNotTakenForThisOnes() {
        StateFiles inet = new StateFiles(dir, ElementStore.TABLE, System.err);
        StateFiles bridge = new StateFiles(dir, "bridge jcni", System.err);
        Element bridged = new Element("pm_dnat", "tcp . 9090", "10.0.0.3 . 90");
        inet.writeClaims(port, KeyClaims.NONE.with(owner.id(), port.value()));
        bridge.writeClaims(bridged, KeyClaims.NONE.with(owner.id(), bridged.value()));
        assertEquals(List.of(port), inet.claimedBy(owner.id()));
        assertEquals(List.of(bridged), bridge.claimedBy(owner.id()));
        assertEquals(List.of(), inet.claimedBy(other.id()));
    }

    /** A record of a hashed name holds its owner only inside: damaged, nobody can tell whose it is, so GC names it and skips it. */
    @Test
    void aDamagedRecordOfAHashedNameIsNamedAndSkipped() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        StateFiles files = new StateFiles(dir, ElementStore.TABLE, new PrintStream(log, true, StandardCharsets.UTF_8));
        Owner longId = new Owner("portmap", "net", "c".repeat(300), "eth0");
        files.write(longId, List.of(port));
        files.write(other, List.of(set));
        assertEquals(2, files.owners("portmap", "net").size());
        Path att = dir.resolve("att").resolve(longId.id());
        Files.writeString(att, "{\"containerId\":");
        assertEquals(List.of(other), files.owners("portmap", "net"));
        String said = log.toString(StandardCharsets.UTF_8);
        assertTrue(said.contains("damaged state file " + att + ": not JSON") && said.contains("skipped"), said);
    }

    private static List<Element> sorted(List<Element> els) {
        return els.stream().sorted(java.util.Comparator.comparing(Element::set)).toList();
    }
}
