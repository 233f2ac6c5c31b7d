package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExecRequestTest {

    private static ExecRequest of(String stdin, String... env) {
        return ExecRequest.of(new Protocol.Exec("bridge", List.of(env), stdin.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void theConfigurationKeysAreReadAsThePluginReadsThem() {
        // Go's decoding: keys match case-insensitively and the last one wins, as in the skeleton.
        ExecRequest r = of("{\"Name\":\"a\",\"name\":\"net1\",\"CNIVersion\":\"0.4.0\"}",
                "CNI_COMMAND=ADD", "CNI_CONTAINERID=c1", "CNI_IFNAME=eth0");
        assertEquals(AttachmentLocks.key("bridge", "c1", "eth0", "net1"), r.lockKey());
        assertEquals("0.4.0", r.cniVersion());
        assertEquals("0.4.0", Json.parseObject(r.error(new CniException(ErrorCode.TRY_AGAIN_LATER, "x")).stdout()).get("cniVersion"));
    }

    @Test
    void anUnreadableConfigurationLeavesTheSkeletonToComplain() {
        for (String bad : List.of("not json", "[1]", "{\"name\":7,\"cniVersion\":false}")) {
            ExecRequest r = of(bad, "CNI_COMMAND=DEL", "CNI_CONTAINERID=c1", "CNI_IFNAME=eth0");
            assertEquals(AttachmentLocks.key("bridge", "c1", "eth0", ""), r.lockKey(), bad);
            assertEquals("", r.cniVersion(), bad);
        }
    }

    @Test
    void environmentAsGetenvWithTheCallerPidTakenOut() {
        ExecRequest r = of("{}", "CNI_COMMAND=ADD", "CNI_COMMAND=VERSION", "JCNI_CALLER_PID=42", "junk", "A=b=c");
        assertEquals("VERSION", r.command());
        assertNull(r.lockKey(), "VERSION is not per attachment");
        assertEquals("42", r.callerPid());
        assertFalse(r.env().containsKey("JCNI_CALLER_PID"));
        assertEquals("b=c", r.env().get("A"));
        assertEquals("none", of("{}").command());
        assertEquals("other", of("{}", "CNI_COMMAND=FROB").command());
    }
}
