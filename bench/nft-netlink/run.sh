#!/usr/bin/env bash
# Per-call latency of the nftables plugins (portmap, firewall, ipMasq's Masquerade), ADD and DEL,
# in-process with a warm JVM running in a private network namespace created and deleted here
# (the plugins act in the JVM's own namespace, as under jcnid); the root namespace is not touched.
# Compare two builds: bench/nft-netlink/run.sh [ROOT_OF_OTHER_CHECKOUT] (its classes must be compiled).
# Needs root. Build first: mvn -B -ntp -o -pl plugins -am compile
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-31}
. "$HERE/../../scripts/env.sh"
. "$HERE/../lib/jcni-bench.sh"
# A warm JVM standing for jcnid: jcnid's JVM options.
bench_jvm_options daemon
run() { # run ROOT LABEL
  local root=$1 work ns=jn-bench-$$
  work=$(mktemp -d /tmp/jn-bench.XXXXXX)
  ip netns add "$ns"
  echo "== $2 ($root), median ms of $ROUNDS: plugin ADD DEL; load $(cut -d' ' -f1-3 /proc/loadavg)"
  ip netns exec "$ns" "$JAVA_HOME/bin/java" "${JVM_OPTIONS[@]}" -Drounds="$ROUNDS" \
    -cp "$root/plugins/target/classes:$root/linux/target/classes:$root/types/target/classes:$root/runtime/target/classes:$root/common/target/classes" \
    "$HERE/NftBench.java" "$work" 2>/dev/null || { ip netns del "$ns"; rm -rf "$work"; return 1; }
  ip netns del "$ns"
  rm -rf "$work"
}
run "$(cd "$HERE/../.." && pwd)" "this checkout"
if [[ $# -ge 1 ]]; then run "$1" "other"; fi
