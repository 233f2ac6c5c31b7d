package io.jcni.plugins.common.link;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.testfixtures.World;
import io.jcni.types.Attachment;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The window between creating a host veth and tagging it, in real namespaces: a creator killed
 * there (simulated: the pair is created marked and never tagged) leaves a link GC removes, while a
 * link whose creator is alive, about to tag it, is never removed.
 */
@Tag("root")
class BirthMarksNetnsTest {
    private static final String NET = "bm-net";

    private String hostName;
    private String contName;
    private Netns host;
    private Netns cont;
    private Rtnl hrt;

    private World world;

    @BeforeEach
    void namespaces() throws IOException {
        world = new World("jbm");
        hostName = world.host;
        contName = World.nsName(world.container());
        host = Netns.open(World.path(hostName));
        world.onClose("host netns handle", host);
        cont = Netns.open(World.path(contName));
        world.onClose("container netns handle", cont);
        hrt = Rtnl.open(host);
        world.onClose("rtnetlink socket", hrt);
    }

    @AfterEach
    void cleanup() {
        world.close();
    }

    /** The first of the two requests alone: what a kill between them leaves. */
    private Link createMarked(String name, String peer, int group) {
        hrt.addLink(NewLink.veth(name, peer).up().peerNamespace(cont).group(group));
        return hrt.link(name);
    }

    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertFalse(BirthMarks.isAlive(p.pid()));
        return p.pid();
    }

    private List<String> gc(List<Attachment> valid) {
        return OwnedLinks.collect(hrt, NET, valid);
    }

    @Test
    void aHostEndWhoseCreatorWasKilledBeforeTaggingIsCollected() throws Exception {
        Link orphan = createMarked("vbmorph0", "eth0", BirthMarks.groupOf(deadPid()));
        assertNull(orphan.alias(), "IFLA_IFALIAS is not taken at creation");
        assertEquals(List.of("vbmorph0"), gc(List.of()));
        assertTrue(hrt.findLink("vbmorph0").isEmpty());
        try (Rtnl crt = Rtnl.open(cont)) {
            assertTrue(crt.findLink("eth0").isEmpty(), "the container end went with it");
        }
    }

    @Test
    void anIfbWhoseCreatorWasKilledBeforeTaggingIsCollectedAndALiveOnesIsNot() throws Exception {
        hrt.addLink(NewLink.ifb("bwpbmorph0").group(BirthMarks.groupOf(deadPid())));
        hrt.addLink(NewLink.ifb("bwpbmlive0").group(BirthMarks.ownGroup()));
        assertEquals(List.of("bwpbmorph0"), BirthMarks.collectOrphans(hrt, hrt.links()));
        assertTrue(hrt.findLink("bwpbmorph0").isEmpty());
        assertTrue(hrt.findLink("bwpbmlive0").isPresent(), "its creator (this JVM) is alive");
    }

    @Test
    void aHostEndAnInFlightAddIsAboutToTagIsNeverCollected() {
        // This JVM is the creator, alive between its two requests.
        Link marked = createMarked("vbmlive0", "eth0", BirthMarks.ownGroup());
        assertTrue(BirthMarks.creatorOf(marked.group()) > 0, "the test runs in the initial PID namespace");
        assertEquals(List.of(), gc(List.of()));
        assertEquals(List.of(), gc(List.of()), "however often GC runs meanwhile");

        // The second request: tag, and out of the birth group in the same request.
        String tag = OwnedLinks.tag(NET, "c1", "eth0");
        hrt.setAliasAndGroup(marked.index(), tag, 0);
        Link tagged = hrt.link("vbmlive0");
        assertEquals(tag, tagged.alias());
        assertEquals(0, tagged.group());
        assertEquals(List.of(), gc(List.of(new Attachment("c1", "eth0"))), "a valid attachment's link stays");
        assertEquals(List.of("vbmlive0"), gc(List.of()), "and goes by its tag when its attachment is not valid");
    }

    @Test
    void aCreatorThatTaggedBeforeItDiedKeepsItsLink() throws Exception {
        // GC read the links while the link was still marked; the creator tagged it and exited
        // before GC checked it: the second read sees the tag.
        Link marked = createMarked("vbmtag0", "eth0", BirthMarks.groupOf(deadPid()));
        List<Link> readBefore = hrt.links();
        hrt.setAliasAndGroup(marked.index(), OwnedLinks.tag(NET, "c1", "eth0"), 0);
        assertEquals(List.of(), BirthMarks.collectOrphans(hrt, readBefore, pid -> false));
        assertTrue(hrt.findLink("vbmtag0").isPresent());
    }

    @Test
    void unknownCreatorsRetiredLinksAndOtherGroupsAreLeftAlone() {
        createMarked("vbmunk0", "eth0", BirthMarks.BASE);
        createMarked("vbmret0", "eth1", Links.RETIRED_GROUP);
        createMarked("vbmoth0", "eth2", 0x6a636e00);
        createMarked("vbmdef0", "eth3", 0);
        assertEquals(List.of(), gc(List.of()));
        for (String n : List.of("vbmunk0", "vbmret0", "vbmoth0", "vbmdef0")) assertTrue(hrt.findLink(n).isPresent(), n);
        Links.sweep(Rtnl.open(host));
        assertTrue(hrt.findLink("vbmret0").isEmpty(), "the retired group's own sweep still deletes it");
    }

    @Test
    void vethSetupLeavesTheHostEndTaggedAndOutOfItsBirthGroup() throws Exception {
        String tag = OwnedLinks.tag(NET, "c2", "eth0");
        Veth v;
        try (Rtnl crt = Rtnl.open(cont)) {
            v = host.run(() -> Veth.setup(hrt, crt, cont, "eth0", null, 1400, null, tag, 0));
        }
        Optional<Link> h = hrt.findLink(v.host().name());
        assertTrue(h.isPresent());
        assertEquals(tag, h.get().alias());
        assertEquals(0, h.get().group());
        assertEquals(List.of(), gc(List.of(new Attachment("c2", "eth0"))));
    }
}
