#!/usr/bin/env bash
# The overlay agent's route check (every 10 s: one dump per kind, compared with what is programmed)
# with N programmed remotes, VXLAN and host-gw: the CPU and wall time of one check with everything
# in place (median and max of ROUNDS), and of the check right after the device went down and up.
# Runs io.jcni.overlay.RouteCheckLoad with jcnid's JVM options in an anonymous network namespace
# it creates itself (gone with the process); nothing else is touched.
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# Usage: bench/multihost/routecheck.sh [ROUNDS(21)] [N...(1000 5000)]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab.sh
. "$HERE/lab.sh"
multihost_lab jcni-rc jr iproute2
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
"${JAVA[@]}" -cp "$CP" io.jcni.overlay.RouteCheckLoad "$@"
