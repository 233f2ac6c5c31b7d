package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Set;
import org.junit.jupiter.api.Test;

class CniArgsTest {

    @Test
    void unknownArgsAreListedAsPairsLikeLoadArgs() {
        CniArgs a = CniArgs.parse("K8S_POD_NAME=x;FOO=bar;IP=10.1.2.10");
        CniException e = assertThrows(CniException.class, () -> a.requireKnown(Set.of("IP")));
        assertEquals(ErrorCode.INVALID_ENVIRONMENT.code(), e.code());
        assertEquals("ARGS: unknown args [\"K8S_POD_NAME=x\" \"FOO=bar\"]", e.msg());
        a.requireKnown(Set.of("IP", "FOO", "K8S_POD_NAME"));
        CniArgs.parse("IgnoreUnknown=true;FOO=bar").requireKnown(Set.of());
    }

    @Test
    void aPairWithoutValueIsUpstreamsError() {
        CniException e = assertThrows(CniException.class, () -> CniArgs.parse("A=1;IP"));
        assertEquals("ARGS: invalid pair \"IP\"", e.msg());
        assertEquals(ErrorCode.INVALID_ENVIRONMENT.code(), e.code());
    }
}
