package io.jcni.plugins.common.ipam;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.runtime.PluginException;
import io.jcni.types.Cidr;
import io.jcni.types.CniCommand;
import io.jcni.types.Result;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DelegationTest {
    @TempDir Path dir;

    private static final byte[] CONF = """
        {"cniVersion":"1.0.0","name":"n","type":"bridge","ipam":{"type":"static","addresses":[{"address":"10.5.0.2/24"}]}}
        """.getBytes(StandardCharsets.UTF_8);

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", "ADD");
        env.put("CNI_CONTAINERID", "c1");
        env.put("CNI_NETNS", "/var/run/netns/x");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", dir.toString());
        return env;
    }

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    private Delegation delegation() {
        return new Delegation(PluginRegistry::lookup, new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    private void executable(String name, String content) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, content);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void ourOwnLauncherRunsInProcess() throws Exception {
        // The launcher would fail if executed; in-process delegation never runs it.
        executable("static", "#!/bin/sh\n# jcni-launcher\nexit 99\n");
        Result r = delegation().add("static", CONF, env());
        assertEquals("10.5.0.2/24", r.ips().get(0).address().toString());
    }

    @Test
    void aPluginReplacedInPlaceIsLookedAtAgain() throws Exception {
        // The marker check is remembered per file; installing another plugin under the same name
        // (another size or time, or another inode after a rename) must not keep the old answer.
        executable("static", "#!/bin/sh\n# jcni-launcher\n");
        assertTrue(Delegation.isJcni(dir.resolve("static")));
        executable("static", "#!/bin/sh\n# xxxx-launcher\n"); // the same size
        Files.setLastModifiedTime(dir.resolve("static"), java.nio.file.attribute.FileTime.fromMillis(1_000));
        assertFalse(Delegation.isJcni(dir.resolve("static")));
        Path other = dir.resolve("static.new");
        Files.writeString(other, "#!/bin/sh\n# jcni-launcher\n");
        Files.setLastModifiedTime(other, java.nio.file.attribute.FileTime.fromMillis(1_000));
        Files.move(other, dir.resolve("static"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertTrue(Delegation.isJcni(dir.resolve("static")), "same size and time, another file: looked at again");
        Files.delete(dir.resolve("static"));
        assertFalse(Delegation.isJcni(dir.resolve("static")));
    }

    @Test
    void aForeignPluginIsExecuted() throws Exception {
        executable("static", "#!/bin/sh\necho '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.9.9/24\"}]}'\n");
        Result r = delegation().add("static", CONF, env());
        assertEquals("10.9.9.9/24", r.ips().get(0).address().toString());
    }

    @Test
    void inProcessErrorsKeepTheDelegatesCode() throws Exception {
        executable("static", "#!/bin/sh\n# jcni-launcher\n");
        byte[] bad = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}".getBytes(StandardCharsets.UTF_8);
        PluginException e = assertThrows(PluginException.class, () -> delegation().invoke(CniCommand.ADD, "static", bad, env()));
        assertEquals("static", e.plugin());
        assertEquals("IPAM config missing 'ipam' key", e.msg());
    }

    @Test
    void aForeignPluginsStderrGoesToTheCallersLog() throws Exception {
        executable("static", "#!/bin/sh\necho 'from the delegate' >&2\necho '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.9.9/24\"}]}'\n");
        delegation().add("static", CONF, env());
        assertEquals("from the delegate\n", log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void onlyTheGivenRegistryRunsInProcess() throws Exception {
        // A registry without "static" (as a daemon given fewer types): the marked launcher is executed.
        executable("static", "#!/bin/sh\n# jcni-launcher\necho '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.7.7.7/24\"}]}'\n");
        Result r = new Delegation(type -> null, new PrintStream(log)).add("static", CONF, env());
        assertEquals("10.7.7.7/24", r.ips().get(0).address().toString());
        // A registry with its own "static": that plugin runs, with the same delegation in its request.
        Result fake = new Result("1.0.0", List.of(), List.of(new Result.IpConfig(Cidr.parse("10.8.8.8/24"), null, null)), List.of(), null);
        Delegation[] seen = new Delegation[1];
        Delegation own = new Delegation(type -> () -> new Plugin() {
            @Override
            public Result add(PluginRequest req) {
                seen[0] = (Delegation) req.delegator();
                req.log().println("from the in-process delegate");
                return fake;
            }

            @Override
            public void del(PluginRequest req) {}

            @Override
            public void check(PluginRequest req) {}
        }, new PrintStream(log, true, StandardCharsets.UTF_8));
        assertEquals("10.8.8.8/24", own.add("static", CONF, env()).ips().get(0).address().toString());
        assertSame(own, seen[0]);
        assertEquals("from the in-process delegate\n", log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aMissingDelegateIsPluginNotAvailable() {
        PluginException e = assertThrows(PluginException.class, () -> delegation().add("static", CONF, env()));
        assertEquals(50, e.code());
    }
}
