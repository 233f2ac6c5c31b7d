#!/usr/bin/env bash
# dhcp ADD latency, side by side on one dnsmasq: jcni (the shim handing the call to jcnid, whose
# dhcp plugin asks jcnid's DHCP service in-process; and the standalone JVM plugin asking the same
# service) against the reference plugin and daemon (/usr/lib/cni/dhcp). Each round makes a fresh
# container netns with a veth into a private "server" netns where dnsmasq (--no-ping) serves the
# segment; the ADD is timed, DEL and the netns removal are not. Two cases: "fresh", the container's
# eth0 set up by the plugin itself (as right after a main plugin made it: the first frames may be
# dropped until the kernel's link watcher runs, so resend timing counts), and "settled", eth0 set
# up 1.5 s before the ADD (the exchange alone). Rounds alternate between the implementations and
# cases, so machine load affects each alike. Nothing outside the namespaces made here is touched.
# Needs root, dnsmasq-base and containernetworking-plugins.
# Build first: mvn -B -ntp -o -pl daemon -am verify -DskipTests
# Usage: bench/dhcp/run.sh [rounds(11)]
set -euo pipefail
ROUNDS=${1:-11}
[[ "$ROUNDS" =~ ^[0-9]+$ && "$ROUNDS" -ge 1 && "$ROUNDS" -le 200 ]] || { echo "run.sh: rounds must be 1..200" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/env.sh"
. "$ROOT/bench/lib/jcni-bench.sh"
JAVA=$JAVA_HOME/bin/java
CP=$ROOT/daemon/target/classes:$ROOT/plugins/target/classes:$ROOT/linux/target/classes:$ROOT/types/target/classes:$ROOT/runtime/target/classes:$ROOT/common/target/classes
SHIM=$ROOT/daemon/target/native/jcni-shim
REF=/usr/lib/cni/dhcp
for f in "$SHIM" "$REF" /usr/sbin/dnsmasq; do [ -x "$f" ] || { echo "run.sh: $f missing (build first; apt-get install dnsmasq-base containernetworking-plugins)" >&2; exit 1; }; done
[ -d "$ROOT/daemon/target/classes/io/jcni/daemon/dhcp" ] || { echo "run.sh: build first (see the header)" >&2; exit 1; }
bench_jvm_options daemon

TAG=jdb$$
SRV=$TAG-s
W=$(mktemp -d /tmp/jcni-dhcp-bench.XXXXXX)
KEEP=${KEEP_LOGS:-}
PIDS=()
NSES=("$SRV")
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for n in "${NSES[@]}" $(ip netns list | awk -v t="$TAG-c" 'index($1, t) == 1 {print $1}'); do ip netns del "$n" 2>/dev/null || true; done
  if [ -n "$KEEP" ]; then echo "logs kept in $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT

ip netns add "$SRV"
ip -n "$SRV" link add br0 type bridge
ip -n "$SRV" addr add 10.78.0.1/24 dev br0
ip -n "$SRV" link set br0 up
ip -n "$SRV" link set lo up
ip netns exec "$SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --no-ping --user=root --group=root \
  --interface=br0 --bind-interfaces --dhcp-range=10.78.0.10,10.78.0.250,255.255.255.0,2m \
  --dhcp-option=option:router,10.78.0.1 --dhcp-leasefile="$W/leases" --pid-file="$W/dnsmasq.pid" \
  --log-facility="$W/dnsmasq.log" &
PIDS+=($!)
"$JAVA" "${JVM_OPTIONS[@]}" -cp "$CP" io.jcni.daemon.Jcnid start --foreground --socket "$W/jcnid.sock" --pid-file "$W/jcnid.pid" \
  --dhcp --dhcp-socket "$W/dhcp.sock" --dhcp-state-dir "$W/state" >"$W/jcnid.log" 2>&1 &
PIDS+=($!)
ip netns exec "$SRV" "$REF" daemon -socketpath "$W/ref.sock" -pidfile "$W/ref.pid" >"$W/ref.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do [ -S "$W/dhcp.sock" ] && [ -S "$W/ref.sock" ] && [ -S "$W/jcnid.sock" ] && break; sleep 0.05; done
[ -S "$W/dhcp.sock" ] && [ -S "$W/ref.sock" ] || { echo "run.sh: a daemon did not start" >&2; cat "$W"/*.log >&2; exit 1; }
mkdir -p "$W/bin" "$W/libexec"
cp "$SHIM" "$W/bin/dhcp"
bench_launcher "$W/libexec/dhcp" plugin "$CP" 'io.jcni.plugins.PluginMain dhcp'

conf() { printf '{"cniVersion":"1.0.0","name":"bench","type":"bridge","ipam":{"type":"dhcp","daemonSocketPath":"%s"}}' "$1"; }
# one IMPL N CASE: a new container, the timed ADD (ms on stdout), the untimed DEL and cleanup
one() {
  local impl=$1 N=$2 mode=$3 ns c exe sock s e rc=0
  ns=$TAG-c$N; c=v$N
  ip netns add "$ns"
  ip -n "$SRV" link add "$c" type veth peer name eth0 netns "$ns"
  ip -n "$SRV" link set "$c" master br0 up
  if [ "$mode" = settled ]; then ip -n "$ns" link set eth0 up; sleep 1.5; fi
  case $impl in
    jcnid) exe=("$W/bin/dhcp"); sock=$W/dhcp.sock ;;
    jvm) exe=("$W/libexec/dhcp"); sock=$W/dhcp.sock ;;
    ref) exe=("$REF"); sock=$W/ref.sock ;;
  esac
  s=$(date +%s%N)
  conf "$sock" | env -i CNI_COMMAND=ADD CNI_CONTAINERID="$impl$N" CNI_NETNS=/var/run/netns/$ns CNI_IFNAME=eth0 \
    CNI_PATH=/usr/lib/cni JCNI_SOCKET="$W/jcnid.sock" JCNI_LIBEXEC="$W/libexec" JCNI_AUTOSTART=0 "${exe[@]}" >"$W/out" 2>>"$W/plugin.err" || rc=$?
  e=$(date +%s%N)
  [ $rc -eq 0 ] || { echo "run.sh: $impl ADD failed: $(cat "$W/out")" >&2; exit 1; }
  conf "$sock" | env -i CNI_COMMAND=DEL CNI_CONTAINERID="$impl$N" CNI_NETNS=/var/run/netns/$ns CNI_IFNAME=eth0 \
    CNI_PATH=/usr/lib/cni JCNI_SOCKET="$W/jcnid.sock" JCNI_LIBEXEC="$W/libexec" JCNI_AUTOSTART=0 "${exe[@]}" >/dev/null 2>>"$W/plugin.err" || true
  ip netns del "$ns"  # (the cleanup trap also tries every name it made, in case we stop half way)
  awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f\n", (b-a)/1e6}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds; dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}')"
one jcnid 0 fresh >/dev/null; one jvm 1 fresh >/dev/null; one ref 2 fresh >/dev/null   # warm-up: jcnid's JIT, page cache
declare -A T
N=3
for r in $(seq "$ROUNDS"); do
  for mode in fresh settled; do
    for impl in jcnid jvm ref; do T[$mode-$impl]+="$(one "$impl" $N $mode) "; N=$((N + 1)); done
  done
done
for mode in fresh settled; do
  declare -A M=()
  for impl in jcnid jvm ref; do M[$impl]=$(printf '%s\n' ${T[$mode-$impl]} | median); done
  echo "== dhcp ADD, $mode link: median wall ms (a lease from dnsmasq: DISCOVER/OFFER/REQUEST/ACK)"
  printf '  %-44s %8s\n' "jcni: shim -> jcnid (plugin in-process)" "${M[jcnid]}"
  printf '  %-44s %8s\n' "jcni: standalone JVM plugin -> jcnid" "${M[jvm]}"
  printf '  %-44s %8s\n' "reference: /usr/lib/cni/dhcp -> its daemon" "${M[ref]}"
  awk -v a="${M[jcnid]}" -v b="${M[jvm]}" -v r="${M[ref]}" 'BEGIN{printf "  ratios: reference/jcni-jcnid %.2f   reference/jcni-jvm %.2f\n", r/a, r/b}'
  echo "  samples: jcnid ${T[$mode-jcnid]}| jvm ${T[$mode-jvm]}| ref ${T[$mode-ref]}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
