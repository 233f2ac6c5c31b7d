package io.jcni.runtime;

import io.jcni.types.Attachment;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import io.jcni.types.Names;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import io.jcni.types.Result;
import io.jcni.types.VersionInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The runtime side of CNI (libcni's CNIConfig): runs network configuration lists against containers,
 * keeps the result cache, and asks plugins about themselves.
 *
 * <p>Every plugin gets its config built as libcni's buildOneConfig does: its own object plus the
 * list's {@code name} and {@code cniVersion}, {@code prevResult} (in the list's version) when there is
 * one, and {@code runtimeConfig} holding only the capability args the plugin declares {@code true}.
 */
public final class Cni {

    private final List<Path> path;
    private final ResultCache cache;
    private final PluginExec exec;

    /**
     * @param path the directories to search for plugins (CNI_PATH)
     * @param cacheDir the cache root; null for {@link ResultCache#DEFAULT_DIR}
     * @param exec how to run plugins; null for a {@link ProcessPluginExec} with defaults
     */
    public Cni(List<Path> path, Path cacheDir, PluginExec exec) {
        this.path = List.copyOf(path);
        this.cache = new ResultCache(cacheDir);
        this.exec = exec == null ? new ProcessPluginExec() : exec;
    }

    public List<Path> path() {
        return path;
    }

    public ResultCache cache() {
        return cache;
    }

    // ---------------------------------------------------------------- attachment commands

    /**
     * ADD: runs the plugins in order, each getting the previous one's result, and caches the final result.
     *
     * @return the last plugin's result, in the list's version
     */
    public Result addNetworkList(NetConfList list, RuntimeConf rt) {
        rt.validate();
        Names.checkNetworkName(list.name());
        String version = chainVersion(list);
        Map<String, Object> prev = null;
        for (PluginConf plugin : list.plugins()) {
            Map<String, Object> conf = buildConfig(list.name(), list.cniVersion(), plugin, prev, rt);
            byte[] out = invoke(plugin, CniCommand.ADD, conf, CniEnvironment.of(CniCommand.ADD, rt, pathString()));
            Map<String, Object> result = ResultParser.parseJson(out, list.cniVersion(), plugin.type());
            prev = convertAddResult(result, version, plugin);
        }
        cache.put(new CacheEntry(rt.containerId(), configBytes(list), rt.ifName(), list.name(), rt.netns(), rt.args(),
                rt.capabilityArgs(), prev));
        return Result.fromJson(prev);
    }

    /**
     * CHECK (0.4.0 and later): runs every plugin with the cached result as prevResult. Does nothing when
     * the list sets {@code disableCheck}.
     */
    public void checkNetworkList(NetConfList list, RuntimeConf rt) {
        CniVersion v = list.version();
        if (!v.supportsCheck()) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION,
                    "configuration version \"" + list.cniVersion() + "\" does not support the CHECK command", "CHECK needs 0.4.0 or later");
        }
        if (list.disableCheck()) return;
        rt.validate();
        Names.checkNetworkName(list.name());
        Map<String, Object> cached = cachedResultJson(list, rt).orElseThrow(() -> new CniException(ErrorCode.UNKNOWN_CONTAINER,
                "no cached result for network \"" + list.name() + "\"",
                "container \"" + rt.containerId() + "\" interface \"" + rt.ifName() + "\" was never added (looked for "
                        + cache.file(list.name(), rt.containerId(), rt.ifName()) + ")"));
        for (PluginConf plugin : list.plugins()) {
            Map<String, Object> conf = buildConfig(list.name(), list.cniVersion(), plugin, cached, rt);
            invoke(plugin, CniCommand.CHECK, conf, CniEnvironment.of(CniCommand.CHECK, rt, pathString()));
        }
    }

    /**
     * DEL: runs the plugins in reverse order, with the cached result as prevResult from 0.4.0 on, then
     * removes the cache entry. A cache entry that cannot be read is removed and DEL goes on without it.
     */
    public void delNetworkList(NetConfList list, RuntimeConf rt) {
        boolean cacheable = !rt.containerId().isEmpty() && !rt.ifName().isEmpty();
        Map<String, Object> cached = null;
        if (list.version().supportsCheck() && cacheable) {
            try {
                cached = cachedResultJson(list, rt).orElse(null);
            } catch (CniException e) {
                cache.remove(list.name(), rt.containerId(), rt.ifName());
            }
        }
        List<PluginConf> plugins = list.plugins();
        for (int i = plugins.size() - 1; i >= 0; i--) {
            PluginConf plugin = plugins.get(i);
            Map<String, Object> conf = buildConfig(list.name(), list.cniVersion(), plugin, cached, rt);
            invoke(plugin, CniCommand.DEL, conf, CniEnvironment.of(CniCommand.DEL, rt, pathString()));
        }
        if (cacheable) cache.remove(list.name(), rt.containerId(), rt.ifName());
    }

    // ---------------------------------------------------------------- network-wide commands

    /**
     * GC (spec 1.1.0): every cached attachment of this network that is not in {@code validAttachments}
     * gets a DEL with its cached runtime conf and result; then, when the list's version is 1.1.0 or
     * later, every plugin gets GC with {@code cni.dev/valid-attachments}. Errors are collected and all
     * reported at the end. Does nothing when the list sets {@code disableGC}.
     *
     * @param validAttachments the attachments to keep (empty: every attachment of the network is stale)
     * @throws CniException code 7, before anything is deleted, when {@code validAttachments} is null:
     *     a GC that does not say what to keep would disconnect every container of the network
     */
    public void gcNetworkList(NetConfList list, Collection<Attachment> validAttachments) {
        if (validAttachments == null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "GC of network \"" + list.name() + "\" needs the valid attachments",
                    "without the list every attachment would look stale; pass an empty list to collect them all");
        }
        if (list.disableGC()) return;
        Set<Attachment> valid = new HashSet<>(validAttachments);
        List<String> errors = new ArrayList<>();
        for (CacheEntry e : cache.list(null)) {
            if (!e.networkName().equals(list.name())) continue;
            if (valid.contains(new Attachment(e.containerId(), e.ifName()))) continue;
            try {
                delNetworkList(list, e.runtimeConf());
            } catch (CniException ex) {
                errors.add("failed to delete stale attachment " + e.containerId() + " " + e.ifName() + ": " + ex.getMessage());
            }
        }
        cache.removeAbandonedTemporaries();
        if (list.version().supportsGcAndStatus()) {
            for (PluginConf plugin : list.plugins()) {
                Map<String, Object> conf = buildConfig(list.name(), list.cniVersion(), plugin, null, null);
                List<Object> l = new ArrayList<>();
                for (Attachment a : validAttachments) l.add(a.toJson());
                conf.put(Attachment.VALID_ATTACHMENTS_KEY, l);
                try {
                    invoke(plugin, CniCommand.GC, conf, CniEnvironment.networkWide(CniCommand.GC, pathString()));
                } catch (CniException ex) {
                    errors.add(ex.getMessage());
                }
            }
        }
        if (!errors.isEmpty()) {
            throw new CniException(ErrorCode.INTERNAL, "GC of network \"" + list.name() + "\" failed", String.join("; ", errors));
        }
    }

    /**
     * STATUS (spec 1.1.0): asks each plugin in order whether it is ready; the first failure is thrown
     * as is (its code tells the runtime whether to retry). Older lists have no STATUS and pass.
     */
    public void statusNetworkList(NetConfList list) {
        if (!list.version().supportsGcAndStatus()) return;
        for (PluginConf plugin : list.plugins()) {
            Map<String, Object> conf = buildConfig(list.name(), list.cniVersion(), plugin, null, null);
            invoke(plugin, CniCommand.STATUS, conf, CniEnvironment.networkWide(CniCommand.STATUS, pathString()));
        }
    }

    // ---------------------------------------------------------------- plugins and validation

    /** Asks a plugin which versions it speaks (VERSION); plugins too old to know VERSION speak 0.1.0. */
    public VersionInfo versionInfo(String pluginType) {
        Path exe = find(pluginType, CniCommand.VERSION);
        byte[] stdin = Json.write(Map.of("cniVersion", CniVersion.CURRENT.toString())).getBytes(StandardCharsets.UTF_8);
        byte[] out;
        try {
            out = exec.run(exe, stdin, new CniEnvironment("VERSION", "", "dummy", "dummy", "", "dummy"));
        } catch (CniException e) {
            if ("unknown CNI_COMMAND: VERSION".equals(e.msg())) return new VersionInfo("0.1.0", List.of("0.1.0"));
            throw PluginException.in(pluginType, describe(pluginType, CniCommand.VERSION), e);
        }
        try {
            return VersionInfo.fromJson(Json.parseObject(new String(out, StandardCharsets.UTF_8)));
        } catch (Json.JsonException | CniException e) {
            throw new PluginException(pluginType, ErrorCode.DECODING_FAILURE, "plugin " + pluginType + " gave an invalid VERSION answer",
                    e.getMessage() + "; stdout: " + ProcessPluginExec.abbreviate(new String(out, StandardCharsets.UTF_8), 400), "");
        }
    }

    /**
     * Checks a list without touching any container: every plugin exists on the path and supports the
     * list's version, and every requested capability is declared by some plugin.
     *
     * @param requestedCapabilities capability args the runtime means to pass (may be empty)
     * @return the capabilities the list declares, sorted
     * @throws CniException listing every problem found
     */
    public List<String> validateNetworkList(NetConfList list, Collection<String> requestedCapabilities) {
        String version = chainVersion(list);
        Set<String> caps = new LinkedHashSet<>();
        List<String> problems = new ArrayList<>();
        for (PluginConf plugin : list.plugins()) {
            for (Map.Entry<String, Object> c : plugin.capabilities().entrySet()) {
                if (Boolean.TRUE.equals(c.getValue())) caps.add(c.getKey());
            }
            try {
                VersionInfo vi = versionInfo(plugin.type());
                if (!vi.supports(version)) {
                    problems.add("plugin \"" + plugin.type() + "\" does not support config version \"" + version
                            + "\" (it supports " + vi.supportedVersions() + ")");
                }
            } catch (CniException e) {
                problems.add(e.getMessage());
            }
        }
        if (requestedCapabilities != null) {
            for (String c : requestedCapabilities) {
                if (!caps.contains(c)) problems.add("capability \"" + c + "\" is not declared by any plugin of network \"" + list.name() + "\"");
            }
        }
        if (!problems.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "network \"" + list.name() + "\" is not valid", String.join("; ", problems));
        }
        List<String> out = new ArrayList<>(caps);
        out.sort(null);
        return out;
    }

    // ---------------------------------------------------------------- cache

    /** The cached ADD result of this attachment, in the list's version. */
    public Optional<Result> cachedResult(NetConfList list, RuntimeConf rt) {
        return cachedResultJson(list, rt).map(Result::fromJson);
    }

    /** The cached entry of this attachment: the config bytes and runtime conf it was added with. */
    public Optional<CacheEntry> cachedConfig(NetConfList list, RuntimeConf rt) {
        return cache.get(list.name(), rt.containerId(), rt.ifName());
    }

    /** Every cached attachment, optionally only one container's (libcni's GetCachedAttachments). */
    public List<CacheEntry> cachedAttachments(String containerId) {
        return cache.list(containerId);
    }

    private Optional<Map<String, Object>> cachedResultJson(NetConfList list, RuntimeConf rt) {
        Optional<CacheEntry> e = cache.get(list.name(), rt.containerId(), rt.ifName());
        if (e.isEmpty() || e.get().result() == null) return Optional.empty();
        try {
            return Optional.of(Result.convert(e.get().result(), chainVersion(list)));
        } catch (CniException ex) {
            throw new CniException(ex.code(), "failed to convert cached result to config version \"" + list.cniVersion() + "\"",
                    cache.file(list.name(), rt.containerId(), rt.ifName()) + ": " + ex.getMessage(), ex);
        }
    }

    // ---------------------------------------------------------------- config building

    /**
     * One plugin's stdin as libcni's buildOneConfig makes it: a copy of the plugin's object with
     * {@code name}, {@code cniVersion}, {@code prevResult} (when not null) and {@code runtimeConfig}
     * (only the capability args the plugin declares {@code true}; omitted when none) set.
     *
     * @param rt null for GC and STATUS, which get no runtimeConfig
     */
    public static Map<String, Object> buildConfig(String name, String cniVersion, PluginConf plugin, Map<String, Object> prevResult,
                                                  RuntimeConf rt) {
        Map<String, Object> conf = Json.asObject(Json.deepCopy(plugin.raw()));
        conf.put("name", name);
        conf.put("cniVersion", cniVersion == null ? "" : cniVersion);
        if (prevResult != null) conf.put("prevResult", Json.deepCopy(prevResult));
        if (rt != null) {
            Map<String, Object> rc = new LinkedHashMap<>();
            for (Map.Entry<String, Object> cap : plugin.capabilities().entrySet()) {
                if (!Boolean.TRUE.equals(cap.getValue())) continue;
                if (rt.capabilityArgs().containsKey(cap.getKey())) rc.put(cap.getKey(), Json.deepCopy(rt.capabilityArgs().get(cap.getKey())));
            }
            if (!rc.isEmpty()) conf.put("runtimeConfig", rc);
        }
        return conf;
    }

    /** The bytes cached as the attachment's config: the list's JSON document. */
    static byte[] configBytes(NetConfList list) {
        return Json.write(list.raw()).getBytes(StandardCharsets.UTF_8);
    }

    private static String chainVersion(NetConfList list) {
        return list.cniVersion().isEmpty() ? CniVersion.V0_1_0.toString() : list.cniVersion();
    }

    private static Map<String, Object> convertAddResult(Map<String, Object> result, String version, PluginConf plugin) {
        try {
            return Result.convert(result, version);
        } catch (CniException e) {
            throw new PluginException(plugin.type(), describe(plugin.type(), CniCommand.ADD), e.code(),
                    "invalid result from plugin: " + e.msg(), e.details(), "");
        }
    }

    private byte[] invoke(PluginConf plugin, CniCommand command, Map<String, Object> conf, CniEnvironment env) {
        Path exe = find(plugin.type(), command);
        try {
            return exec.run(exe, Json.write(conf).getBytes(StandardCharsets.UTF_8), env);
        } catch (CniException e) {
            throw PluginException.in(plugin.type(), describe(plugin.type(), command), e);
        }
    }

    private Path find(String type, CniCommand command) {
        try {
            return exec.find(type, path);
        } catch (CniException e) {
            throw PluginException.in(type, describe(type, command), e);
        }
    }

    private static String describe(String type, CniCommand command) {
        return "type=\"" + type + "\" (" + command.name().toLowerCase(Locale.ROOT) + ")";
    }

    private String pathString() {
        return PluginExec.joinPath(path);
    }
}
