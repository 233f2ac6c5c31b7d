package io.jcni.cli;

/** jcni's help texts: the general usage and each command's. */
final class Usage {
    private Usage() {
    }

    /** The help text of {@code command}, or the general one when it is null or has none of its own. */
    static String text(String command) {
        if ("doctor".equals(command)) return io.jcni.cli.doctor.Doctor.USAGE;
        if (command != null) {
            String one = switch (command) {
                case "add" -> "jcni add <net> <netns>\n  Attaches the container whose network namespace is <netns> to network <net>\n"
                        + "  and prints the result JSON. The container ID is cnitool's: \"cnitool-\" + the hex of\n"
                        + "  the first 10 bytes of sha512(<netns> made absolute).\n";
                case "check" -> "jcni check <net> <netns>\n  Asks every plugin of <net> to check the attachment (CHECK, 0.4.0+), using the cached result.\n";
                case "del" -> "jcni del <net> <netns>\n  Detaches the container from <net> (plugins in reverse order) and removes its cache entry.\n";
                case "gc" -> "jcni gc <net> [<netns>] --valid CONTAINERID/IFNAME... | --valid none\n"
                        + "  Deletes every cached attachment of <net> not given with --valid (--valid none: all of them),\n"
                        + "  then, for 1.1.0 configs, sends GC to every plugin. <netns> is accepted and ignored, as by cnitool.\n"
                        + "  Without --valid nothing is done: every attachment would look stale.\n";
                case "status" -> "jcni status <net> [<netns>]\n  Asks every plugin of <net> whether it is ready (STATUS, 1.1.0+).\n";
                case "list" -> "jcni list\n  Lists the networks in NETCONFPATH, the files that were skipped and why, and cached attachments.\n";
                case "validate" -> "jcni validate <net>\n  Checks that every plugin of <net> exists on CNI_PATH and supports the config's version,\n"
                        + "  and that every capability in CAP_ARGS is declared by some plugin.\n";
                case "version" -> "jcni version [<plugin-type>]\n  Prints jcni's version and the CNI versions it speaks, or asks a plugin (VERSION).\n";
                default -> null;
            };
            if (one != null) return "Usage: " + one + OPTIONS;
        }
        return "Usage: jcni [options] <command> [arguments]\n"
                + "Adds, checks, removes, garbage-collects or queries container network attachments (cnitool-compatible).\n\n"
                + "Commands:\n"
                + "  add      <net> <netns>     attach and print the result\n"
                + "  check    <net> <netns>     check an attachment\n"
                + "  del      <net> <netns>     detach\n"
                + "  gc       <net> [<netns>]   remove stale attachments (see 'jcni help gc')\n"
                + "  status   <net> [<netns>]   ask the plugins whether the network is ready\n"
                + "  list                       networks found, files skipped and why, cached attachments\n"
                + "  validate <net>             check plugins, versions and capabilities without touching a container\n"
                + "  version  [<plugin-type>]   versions jcni speaks, or a plugin's\n"
                + "  daemon   start|stop|status|metrics [options]   the jcnid fast path (see 'jcni daemon --help')\n"
                + "  doctor   [--json]          check this node: kernel, nft, configs, plugins, daemon, leftovers\n"
                + "  help     [<command>]       this text, or a command's\n"
                + OPTIONS;
    }

    private static final String OPTIONS = "\nOptions:\n"
            + "  --conf-dir DIR     configuration directory (default: $NETCONFPATH, else /etc/cni/net.d)\n"
            + "  --cache-dir DIR    result cache root (default: $" + Main.ENV_CACHE_DIR + ", else /var/lib/cni)\n"
            + "  --timeout DURATION plugin timeout, e.g. 30, 500ms, 2m (default: $" + Main.ENV_TIMEOUT + ", else 120s)\n"
            + "  -h, --help         show help\n\n"
            + "Environment:\n"
            + "  NETCONFPATH  configuration directory          CNI_PATH    plugin directories, ':'-separated\n"
            + "  CNI_IFNAME   interface name (default eth0)    CNI_ARGS    K=V;K2=V2 passed to plugins\n"
            + "  CAP_ARGS     capability args, a JSON object (e.g. {\"portMappings\":[...]})\n"
            + "Exit status: 0 success, 1 failure (the plugin's error code and message are printed), 2 usage error.\n";
}
