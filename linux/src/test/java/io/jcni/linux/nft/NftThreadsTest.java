package io.jcni.linux.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jcni.linux.Netns;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Running nft for a namespace leaves no thread of this process in it: the JDK's process reaper
 * and reader threads are started from the thread that starts a process, and one started from a
 * namespace's thread kept a deleted namespace alive for a minute and more (found by the chaos
 * suite: the nft state of a namespace gone for good was never collected).
 */
@Tag("root")
class NftThreadsTest {

    @Test
    void nftInANamespaceLeavesNoThreadBehindInIt() throws IOException {
        String name = "jnth-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
        long inode;
        try (Netns ns = Netns.create(name)) {
            inode = ns.inode();
            Nft nft = Nft.in(ns);
            nft.run("add table inet jnth\n");
            // a plugin's view: Nft.current() from a thread inside the namespace
            ns.run(() -> {
                Nft.current().run("add chain inet jnth c\n");
                return null;
            });
        } finally {
            Netns.delete(name);
        }
        // The namespace's own thread has been joined, but its task can take a moment to leave
        // /proc; the threads this test is about (reaper, carriers) would stay for a minute or more.
        List<String> left = threadsIn(inode);
        for (int i = 0; i < 40 && !left.isEmpty(); i++) {
            sleep(50);
            left = threadsIn(inode);
        }
        assertEquals(List.of(), left, "threads of this process still in the deleted namespace");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<String> threadsIn(long inode) throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    if (Files.readSymbolicLink(t.resolve("ns/net")).toString().equals("net:[" + inode + "]")) {
                        found.add(t.getFileName() + " " + Files.readString(t.resolve("comm")).strip());
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return found;
    }
}
