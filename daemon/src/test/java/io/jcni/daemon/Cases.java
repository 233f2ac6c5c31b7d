package io.jcni.daemon;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Plugin calls covering success and the skeleton's error paths, for the parity tests. */
final class Cases {
    private Cases() {}

    record Case(String name, Map<String, String> env, String stdin) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Case> all() {
        String conf = TestDaemon.STATIC_CONF;
        return List.of(
                new Case("ADD", TestDaemon.env("ADD", "c1"), conf),
                new Case("ADD with CNI_ARGS IP", with(TestDaemon.env("ADD", "c2"), "CNI_ARGS", "IP=10.5.0.9/16"), conf),
                new Case("DEL", TestDaemon.env("DEL", "c1"), conf),
                new Case("CHECK", TestDaemon.env("CHECK", "c1"), conf),
                new Case("VERSION", Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.0.0\"}"),
                new Case("missing CNI_COMMAND", without(TestDaemon.env("ADD", "c1"), "CNI_COMMAND"), conf),
                new Case("unknown command", TestDaemon.env("FROB", "c1"), conf),
                new Case("missing env", without(without(TestDaemon.env("ADD", "c1"), "CNI_NETNS"), "CNI_PATH"), conf),
                new Case("bad container ID", TestDaemon.env("ADD", "bad id!"), conf),
                new Case("bad JSON", TestDaemon.env("ADD", "c1"), "{bad"),
                new Case("empty stdin", TestDaemon.env("ADD", "c1"), ""),
                new Case("unsupported version", TestDaemon.env("ADD", "c1"), conf.replace("1.0.0", "9.9.9")),
                new Case("unknown CNI_ARGS key", with(TestDaemon.env("ADD", "c1"), "CNI_ARGS", "FOO=bar"), conf),
                new Case("invalid address", TestDaemon.env("ADD", "c1"), conf.replace("10.1.2.3/24", "10.1.2.300/24")));
    }

    static Map<String, String> with(Map<String, String> env, String k, String v) {
        Map<String, String> m = new HashMap<>(env);
        m.put(k, v);
        return m;
    }

    static Map<String, String> without(Map<String, String> env, String k) {
        Map<String, String> m = new HashMap<>(env);
        m.remove(k);
        return m;
    }
}
