package io.jcni.runtime;

import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** A PluginExec that records calls and answers from a script, without processes. */
final class FakeExec implements PluginExec {
    record Call(String plugin, Map<String, Object> stdin, CniEnvironment env) {}

    final List<Call> calls = new ArrayList<>();
    Function<Call, String> answer = c -> "";

    @Override
    public byte[] run(Path plugin, byte[] stdin, CniEnvironment env) {
        Call c = new Call(plugin.getFileName().toString(), Json.parseObject(new String(stdin, StandardCharsets.UTF_8)), env);
        calls.add(c);
        return answer.apply(c).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Path find(String type, List<Path> path) {
        if (type.startsWith("missing")) return PluginExec.findInPath(type, path);
        return Path.of("/fake").resolve(type);
    }

    List<String> commands() {
        return calls.stream().map(c -> c.plugin() + ":" + c.env().command()).toList();
    }
}
