package io.jcni.plugins.skel;

import io.jcni.types.Result;

/**
 * One CNI plugin: what it does for each command. The skeleton ({@link Skel}) has already checked the
 * environment and the config version, and prints whatever is returned or thrown.
 */
public interface Plugin {

    /** Sets up the attachment and returns the result, in any version: the skeleton converts it. */
    Result add(PluginRequest req) throws Exception;

    /** Tears the attachment down; must succeed when it is already gone. */
    void del(PluginRequest req) throws Exception;

    /** Verifies the attachment is as ADD left it (prevResult holds what ADD returned). */
    void check(PluginRequest req) throws Exception;

    /** Releases whatever belongs to attachments not in {@code cni.dev/valid-attachments}. */
    default void gc(PluginRequest req) throws Exception {}

    /** Throws a CniException with code 50 or 51 when the plugin cannot serve ADD now. */
    default void status(PluginRequest req) throws Exception {}
}
