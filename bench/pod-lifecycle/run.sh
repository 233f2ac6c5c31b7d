#!/usr/bin/env bash
# Pod lifecycle benchmark: `ip netns add` + ADD + DEL + `ip netns del`, bridge + host-local, side by
# side on this machine in one run:
#   go          the reference Go plugins (/usr/lib/cni, override with GO_CNI_DIR)
#   standalone  jcni's plain JVM launchers (install.sh --no-shim)
#   daemon      jcni's shims + jcnid on a private socket
#   ip-batch    the same kernel work done with `ip -batch` (a floor; no IPAM, no locking, no JSON)
# then rounds of 50 (-c) concurrent pod lifecycles of each (pods per second, and the CPU time the
# whole machine and jcnid spent per pod, from /proc/stat), then a freshly started jcnid's
# first 15 (--fresh) lifecycles against 15 of Go's, then a cold node (--cold): jcnid stopped and
# nothing started, so the first shim call starts jcnid itself (auto-start), its first 15 lifecycles
# against 15 of Go's and the median of the 15 after (interleaved with Go's); and where jcnid's time went (its phase metrics).
# Everything runs in network namespaces this script creates (a private "host" netns holds the
# bridges; one netns per pod) and removes on exit, whatever happens. Run as root.
# Usage: bench/pod-lifecycle/run.sh [-n ITERATIONS(30)] [-w WARMUP(10)] [-c CONCURRENT(50)] [--conc-rounds R(5)]
#                                   [--daemon-warmup N(100)] [--only go,standalone,daemon,ip-batch]
#                                   [--fresh N(15)] [--fresh-rounds R(3)] [--cold N(15)]
#   --conc-rounds: concurrent rounds per variant, interleaved; the medians are reported
#   --daemon-warmup: extra ADD/DEL pairs sent to jcnid before measuring (a resident daemon is warm: JIT)
#   --fresh: lifecycles timed after restarting jcnid (its start included), against as many of Go's; 0: skip
#   --cold: lifecycles timed from a node without jcnid (the shims start it), --fresh-rounds rounds; 0: skip
# JCNID_FLAGS: more flags for `jcnid start` (e.g. --delete-links-now, the reference's delete-before-answering)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
ARGS=("$@")

N=30 WARMUP=10 CONC=50 CONC_ROUNDS=5 DWARM=100 ONLY="go,standalone,daemon,ip-batch" FRESH=15 FRESH_ROUNDS=3 COLD=15
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    -w) WARMUP=$2; shift 2 ;;
    -c) CONC=$2; shift 2 ;;
    --conc-rounds) CONC_ROUNDS=$2; shift 2 ;;
    --daemon-warmup) DWARM=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --fresh) FRESH=$2; shift 2 ;;
    --fresh-rounds) FRESH_ROUNDS=$2; shift 2 ;;
    --cold) COLD=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for x in "$N" "$WARMUP" "$CONC" "$CONC_ROUNDS" "$DWARM" "$FRESH" "$FRESH_ROUNDS" "$COLD"; do [[ "$x" =~ ^[0-9]+$ ]] || { echo "run.sh: counts must be numbers" >&2; exit 2; }; done
[ "$N" -ge 1 ] && [ "$N" -le 10000 ] && [ "$CONC" -le 500 ] && [ "$CONC_ROUNDS" -ge 1 ] && [ "$CONC_ROUNDS" -le 20 ] && [ "$FRESH" -le 1000 ] && [ "$FRESH_ROUNDS" -le 20 ] && [ "$COLD" -le 1000 ] || { echo "run.sh: -n 1..10000, -c 0..500" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (network namespaces)" >&2; exit 1; }
. scripts/env.sh
need_command ip iproute2
GO_DIR=${GO_CNI_DIR:-/usr/lib/cni}
IFS=, read -r -a VARIANTS <<< "$ONLY"
for v in "${VARIANTS[@]}"; do
  case "$v" in go|standalone|daemon|ip-batch) ;; *) echo "run.sh: unknown variant $v" >&2; exit 2 ;; esac
done
if [[ ",$ONLY," == *,go,* ]] && [ ! -x "$GO_DIR/bridge" ]; then
  echo "run.sh: no reference plugins in $GO_DIR (apt-get install containernetworking-plugins, or set GO_CNI_DIR)" >&2; exit 1
fi

. bench/lib/jcni-bench.sh
jcnid_metrics() { "$PREFIX/bin/jcnid" metrics --socket "$SOCK" > "$1"; }

# Two stages. The first (here) builds the world: a temp directory, jcni installed into it, the
# host netns with the floor's bridge, and jcnid started inside that netns. The second is this
# script again, run inside the host netns, where it plays the runtime: like containerd or podman
# on a node, it execs plugins (and the floor's `ip`) directly, in the same netns as jcnid. So no
# variant pays for getting into the host netns per call (`ip netns exec` made a mount namespace
# and mounted sysfs for every plugin call, ~1 ms of CPU each, which the floor's `ip -n` never paid).
if [ -z "${JCB_STAGE:-}" ]; then
  bench_world jcni-bench jcb
  # --- jcni: build if needed, install twice into the temp prefix (standalone launchers, and shims) ---
  need_jcni=0
  for v in "${VARIANTS[@]}"; do [ "$v" = standalone ] || [ "$v" = daemon ] && need_jcni=1; done
  if [ "$need_jcni" = 1 ]; then
    bench_jars
    bench_install standalone shim
  fi
  ip netns add "$HOST"
  ip -n "$HOST" link set lo up
  if [[ ",$ONLY," == *,daemon,* ]]; then
    nsenter --net="/var/run/netns/$HOST" "$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" ${JCNID_FLAGS:-} >&2
  fi
  # Each variant has its own bridge, subnet and IPAM directory in the host netns.
  declare -A NET=([go]=1 [standalone]=2 [daemon]=3 [ip-batch]=4)
  for v in go standalone daemon; do
    cat > "$TMP/$v.conf" <<CONF
{"cniVersion":"1.0.0","name":"jcb-$v","type":"bridge","bridge":"jcb${NET[$v]}-$ID","isGateway":true,"ipMasq":false,
 "ipam":{"type":"host-local","subnet":"10.${NET[$v]}$((RANDOM % 9)).0.0/16","dataDir":"$TMP/ipam-$v"}}
CONF
  done
  if [[ ",$ONLY," == *,ip-batch,* ]]; then
    ip -n "$HOST" link add "jcb4-$ID" type bridge
    ip -n "$HOST" addr add 10.249.0.1/16 dev "jcb4-$ID"
    ip -n "$HOST" link set "jcb4-$ID" up
  fi
  JCB_STAGE=measure ID=$ID TMP=$TMP SCRATCH=$SCRATCH HOST=$HOST SOCK=$SOCK PREFIX=$PREFIX VERSION=$VERSION \
    nsenter --net="/var/run/netns/$HOST" bash "$REPO/bench/pod-lifecycle/run.sh" "${ARGS[@]}"
  exit 0 # the first stage's trap removes the world
fi
# --- From here: the second stage, inside the host netns. ---
declare -A DIR=([go]=$GO_DIR [standalone]=$TMP/standalone [daemon]=$TMP/shim)

# Timestamps in microseconds from ${EPOCHREALTIME/./} (always six decimals): no fork per reading.

# cni VARIANT COMMAND CONTAINER NETNS : one plugin call as a runtime makes it (we are in the host netns).
# Output goes to files on tmpfs (no command substitution, no rm): the harness forks once per call,
# as it does for each of the floor's `ip` commands, so both sides pay the same shell overhead.
cni() {
  local v=$1 f="$SCRATCH/call.$3.$2"
  if ! CNI_COMMAND=$2 CNI_CONTAINERID=$3 CNI_NETNS=/var/run/netns/$4 CNI_IFNAME=eth0 CNI_PATH=${DIR[$v]} \
      "${DIR[$v]}/bridge" < "$TMP/$v.conf" > "$f.out" 2> "$f.err"; then
    echo "run.sh: $v $2 $3 failed: $(cat "$f.out" "$f.err")" >&2
    return 1
  fi
}

# floor_add/floor_del POD INDEX : the kernel work of bridge ADD/DEL with ip -batch.
floor_add() {
  local veth="jv$2-$ID" a=$(( $2 % 250 + 2 )) b=$(( $2 / 250 % 250 ))
  ip -batch - <<B
link add $veth type veth peer name eth0 netns $1
link set $veth master jcb4-$ID
link set $veth up
B
  ip -n "$1" -batch - <<B
addr add 10.249.$b.$a/16 dev eth0
link set eth0 up
route add default via 10.249.0.1
B
}
floor_del() { ip link del "jv$2-$ID"; }

# lifecycle VARIANT INDEX : prints "add_us del_us total_us".
lifecycle() {
  local v=$1 i=$2 pod="jcb-$1-$2-$ID" cid="jcb-$1-$2" t0 t1 t2 t3
  [ "$v" = ip-batch ] && pod="jcb-f-$2-$ID"
  t0=${EPOCHREALTIME/./}
  ip netns add "$pod"
  t1=${EPOCHREALTIME/./}
  if [ "$v" = ip-batch ]; then floor_add "$pod" "$i"; else cni "$v" ADD "$cid" "$pod"; fi
  t2=${EPOCHREALTIME/./}
  if [ "$v" = ip-batch ]; then floor_del "$pod" "$i"; else cni "$v" DEL "$cid" "$pod"; fi
  ip netns del "$pod"
  t3=${EPOCHREALTIME/./}
  echo "$((t2 - t1)) $((t3 - t2)) $((t3 - t0))"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) {print "nan"; exit} if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v u="$1" 'BEGIN { if (u == "nan") print "-"; else printf "%.1f", u / 1000 }'; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "warm-up: $WARMUP lifecycles per variant ..." >&2
for ((i = 0; i < WARMUP; i++)); do
  for v in "${VARIANTS[@]}"; do lifecycle "$v" "$((100000 + i))" >/dev/null; done
done
if [[ ",$ONLY," == *,daemon,* ]] && [ "$DWARM" -gt 0 ]; then
  echo "daemon warm-up: $DWARM ADD/DEL pairs ..." >&2
  ip netns add "jcb-dw-$ID"
  for ((i = 0; i < DWARM && i < 10000; i++)); do
    cni daemon ADD "jcb-dw" "jcb-dw-$ID"
    cni daemon DEL "jcb-dw" "jcb-dw-$ID"
  done
  ip netns del "jcb-dw-$ID"
fi
[[ ",$ONLY," == *,daemon,* ]] && jcnid_metrics "$TMP/metrics.before"
echo "sequential: $N lifecycles per variant, interleaved ..." >&2
for ((i = 0; i < N; i++)); do
  for v in "${VARIANTS[@]}"; do lifecycle "$v" "$i" >> "$TMP/seq.$v"; done
done
[[ ",$ONLY," == *,daemon,* ]] && jcnid_metrics "$TMP/metrics.after"
if [[ ",$ONLY," == *,standalone,* ]]; then
  # A standalone lifecycle starts two JVMs: their start alone (a VERSION call) bounds what it can reach.
  for ((i = 0; i < N; i++)); do
    t0=${EPOCHREALTIME/./}
    CNI_COMMAND=VERSION "$TMP/standalone/bridge" < /dev/null > /dev/null
    t1=${EPOCHREALTIME/./}
    echo "$((t1 - t0))" >> "$TMP/seq.jvm"
  done
fi

# busy_jiffies: CPU time all CPUs spent outside idle/iowait since boot (jiffies); pid_jiffies PID:
# a process's own user + system time. Around each concurrent round they say where the CPU went.
busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
pid_jiffies() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

declare -A PODS CPU OWN
if [ "$CONC" -gt 0 ]; then
  for ((r = 0; r < CONC_ROUNDS; r++)); do
    for v in "${VARIANTS[@]}"; do
      echo "concurrent, round $((r + 1)) of $CONC_ROUNDS: $CONC lifecycles at once: $v ..." >&2
      [ "$v" = daemon ] && [ "$r" = 0 ] && jcnid_metrics "$TMP/metrics.conc.before"
      jpid=$(cat "$TMP/run/jcnid.pid" 2>/dev/null || echo 0)
      c0=$(busy_jiffies) o0=$(pid_jiffies "$jpid") t0=${EPOCHREALTIME/./}
      pids=()
      for ((i = 0; i < CONC; i++)); do
        ( lifecycle "$v" "$((200000 + r * 1000 + i))" > "$SCRATCH/conc.$v.$i" 2>"$SCRATCH/conc.$v.$i.err" || echo fail > "$SCRATCH/conc.$v.$i.fail" ) &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p" || true; done
      t1=${EPOCHREALTIME/./} c1=$(busy_jiffies) o1=$(pid_jiffies "$jpid")
      fails=$(ls "$SCRATCH" | grep -c "^conc\.$v\..*\.fail\$" || true)
      if [ "$fails" -gt 0 ]; then
        echo "run.sh: $fails of $CONC concurrent $v lifecycles failed:" >&2
        cat "$SCRATCH"/conc."$v".*.err | head -20 >&2
        exit 1
      fi
      [ "$v" = daemon ] && [ "$r" = $((CONC_ROUNDS - 1)) ] && jcnid_metrics "$TMP/metrics.conc.after"
      awk -v n="$CONC" -v u="$((t1 - t0))" 'BEGIN { printf "%.1f\n", n / (u / 1e6) }' >> "$TMP/pods.$v"
      awk -v n="$CONC" -v j="$((c1 - c0))" -v hz="$HZ" 'BEGIN { printf "%.1f\n", j * 1000 / hz / n }' >> "$TMP/cpu.$v"
      [ "$v" = daemon ] && awk -v n="$CONC" -v j="$((o1 - o0))" -v hz="$HZ" 'BEGIN { printf "%.1f\n", j * 1000 / hz / n }' >> "$TMP/own.$v"
      echo "  $(tail -1 "$TMP/pods.$v") pods/s, CPU $(tail -1 "$TMP/cpu.$v") ms/pod$([ "$v" = daemon ] && echo ", jcnid $(tail -1 "$TMP/own.$v") ms/pod")" >&2
    done
  done
  for v in "${VARIANTS[@]}"; do
    PODS[$v]=$(median < "$TMP/pods.$v") CPU[$v]=$(median < "$TMP/cpu.$v")
    [ -f "$TMP/own.$v" ] && OWN[$v]=$(median < "$TMP/own.$v")
  done
fi

# A fresh daemon: stop jcnid, then time its start and its first $FRESH lifecycles; then $FRESH of Go's.
if [ "$FRESH" -gt 0 ] && [[ ",$ONLY," == *,daemon,* ]] && [[ ",$ONLY," == *,go,* ]]; then
  for ((r = 0; r < FRESH_ROUNDS; r++)); do
    echo "fresh jcnid, round $((r + 1)) of $FRESH_ROUNDS: start + $FRESH lifecycles, then $FRESH of go ..." >&2
    "$PREFIX/bin/jcnid" stop --socket "$SOCK" >&2
    t0=${EPOCHREALTIME/./}
    "$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" ${JCNID_FLAGS:-} >&2
    t1=${EPOCHREALTIME/./}
    for ((i = 0; i < FRESH; i++)); do lifecycle daemon "$((300000 + r * 1000 + i))" >/dev/null; done
    t2=${EPOCHREALTIME/./}
    for ((i = 0; i < FRESH; i++)); do lifecycle go "$((300000 + r * 1000 + i))" >/dev/null; done
    t3=${EPOCHREALTIME/./}
    echo "$((t2 - t0)) $((t2 - t1)) $((t3 - t2))" >> "$TMP/fresh"
  done
fi

# A cold node: no jcnid at all; the first shim call starts it (auto-start, daemon/README.md) and
# waits for it. JCNI_CGROUP= keeps the started jcnid in this script's cgroup (the default moves it
# to a "jcnid" cgroup under each hierarchy's root, which a bench leaves alone). The started jcnid
# has the default flags (JCNID_FLAGS do not reach it).
if [ "$COLD" -gt 0 ] && [[ ",$ONLY," == *,daemon,* ]] && [[ ",$ONLY," == *,go,* ]]; then
  for ((r = 0; r < FRESH_ROUNDS; r++)); do
    echo "cold node, round $((r + 1)) of $FRESH_ROUNDS: $COLD lifecycles (the first starts jcnid), $COLD of go, $COLD more ..." >&2
    "$PREFIX/bin/jcnid" stop --socket "$SOCK" >&2 || true
    rm -f "$TMP/run/jcnid.autostart-failed"
    t0=${EPOCHREALTIME/./}
    for ((i = 0; i < COLD; i++)); do
      # The first lifecycle waits for jcnid's start; the others say how fast a just-started jcnid serves.
      JCNI_AUTOSTART=1 JCNI_CGROUP= lifecycle daemon "$((400000 + r * 1000 + i))" | awk '{print $3}' >> "$TMP/cold.$([ "$i" = 0 ] && echo start || echo rest)"
    done
    t1=${EPOCHREALTIME/./}
    for ((i = 0; i < COLD; i++)); do lifecycle go "$((400000 + r * 1000 + i))" >/dev/null; done
    t2=${EPOCHREALTIME/./}
    echo "$((t1 - t0)) $((t2 - t1))" >> "$TMP/cold"
    # The lifecycles after, interleaved with Go's: the machine's load drifts, so compare like with like.
    for ((i = 0; i < COLD; i++)); do
      lifecycle daemon "$((400000 + r * 1000 + 500 + i))" | awk '{print $3}' >> "$TMP/cold.after"
      lifecycle go "$((400000 + r * 1000 + 500 + i))" | awk '{print $3}' >> "$TMP/cold.after.go"
    done
  done
  grep -q 'jcnid started' "$TMP/run/jcnid.log" || { echo "run.sh: the cold rounds started no jcnid" >&2; exit 1; }
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
echo "load average (1/5/15 min): before $LOAD_BEFORE, after $LOAD_AFTER"
echo "pod lifecycle = ip netns add + bridge/host-local ADD + DEL + ip netns del"
echo "sequential: median of $N, interleaved (after $WARMUP warm-up lifecycles each, and $DWARM ADD/DEL pairs for jcnid), ms; concurrent: median of $CONC_ROUNDS rounds of $CONC lifecycles at once"
echo "the harness runs inside the host netns, as a runtime there: it execs each plugin (or the floor's ip) directly; jcnid runs in that netns too"
echo
printf '| %-10s | %8s | %8s | %10s | %7s | %10s | %7s | %12s | %12s |\n' variant "ADD ms" "DEL ms" "pod ms" "× go" "pods/s" "× go" "CPU ms/pod" "jcnid CPU ms"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------ ---------- ---------- ------------ --------- ------------ --------- -------------- --------------
declare -A MED
for v in "${VARIANTS[@]}"; do
  MED[$v]=$(awk '{print $3}' "$TMP/seq.$v" | median)
done
for v in "${VARIANTS[@]}"; do
  add=$(awk '{print $1}' "$TMP/seq.$v" | median); del=$(awk '{print $2}' "$TMP/seq.$v" | median)
  ratio=-; pratio=-
  [ -n "${MED[go]:-}" ] && ratio=$(awk -v a="${MED[$v]}" -v b="${MED[go]}" 'BEGIN { printf "%.2f", a / b }')
  [ -n "${PODS[$v]:-}" ] && [ -n "${PODS[go]:-}" ] && pratio=$(awk -v a="${PODS[$v]}" -v b="${PODS[go]}" 'BEGIN { printf "%.2f", a / b }')
  printf '| %-10s | %8s | %8s | %10s | %7s | %10s | %7s | %12s | %12s |\n' "$v" "$(ms "$add")" "$(ms "$del")" "$(ms "${MED[$v]}")" "$ratio" "${PODS[$v]:--}" "$pratio" "${CPU[$v]:--}" "${OWN[$v]:--}"
done
verdict() { awk -v a="$1" -v lim="$2" -v dir="$3" 'BEGIN { ok = dir == "le" ? a <= lim : a >= lim; print (ok ? "met" : "MISSED") }'; }
echo
if [ -n "${MED[go]:-}" ] && [ -n "${MED[daemon]:-}" ] && [ -n "${MED[ip-batch]:-}" ]; then
  # When jcnid is at or below the floor the goal holds whatever Go does; when Go is too, the
  # ratio of two negative margins means nothing and is not printed.
  line="goal (jcnid - floor) <= 0.30 x (go - floor): $(ms "${MED[daemon]}") - $(ms "${MED[ip-batch]}") vs $(ms "${MED[go]}") - $(ms "${MED[ip-batch]}") ms:"
  if awk -v d="${MED[daemon]}" -v f="${MED[ip-batch]}" 'BEGIN { exit !(d <= f) }'; then
    echo "$line met (jcnid at or below the floor)"
  elif awk -v g="${MED[go]}" -v f="${MED[ip-batch]}" 'BEGIN { exit !(g <= f) }'; then
    echo "$line MISSED (go at or below the floor)"
  else
    r=$(awk -v d="${MED[daemon]}" -v g="${MED[go]}" -v f="${MED[ip-batch]}" 'BEGIN { printf "%.2f", (d - f) / (g - f) }')
    echo "$line ${r}x $(verdict "$r" 0.30 le)"
  fi
fi
if [ -n "${PODS[daemon]:-}" ] && [ -n "${PODS[ip-batch]:-}" ]; then
  r=$(awk -v a="${PODS[daemon]}" -v b="${PODS[ip-batch]}" 'BEGIN { printf "%.2f", a / b }')
  echo "goal $CONC concurrent: jcnid >= 0.85 x the floor's pods/s: ${PODS[daemon]} vs ${PODS[ip-batch]}: ${r}x $(verdict "$r" 0.85 ge)"
fi
if [ -n "${MED[go]:-}" ] && [ -n "${MED[standalone]:-}" ]; then
  r=$(awk -v a="${MED[standalone]}" -v b="${MED[go]}" 'BEGIN { printf "%.2f", a / b }')
  echo "goal standalone <= 2.00 x go per lifecycle: ${r}x $(verdict "$r" 2.00 le)"
  if [ -s "$TMP/seq.jvm" ]; then
    jvm=$(median < "$TMP/seq.jvm")
    echo "  its floor: two JVM starts (a VERSION call: $(ms "$jvm") ms) = $(awk -v j="$jvm" -v g="${MED[go]}" 'BEGIN { printf "%.2f", 2 * j / g }') x go's whole lifecycle"
  fi
fi
if [ -s "$TMP/fresh" ]; then
  read -r with without go15 <<< "$(awk '{print $1}' "$TMP/fresh" | median) $(awk '{print $2}' "$TMP/fresh" | median) $(awk '{print $3}' "$TMP/fresh" | median)"
  r=$(awk -v a="$with" -v b="$go15" 'BEGIN { printf "%.2f", a / b }')
  r2=$(awk -v a="$without" -v b="$go15" 'BEGIN { printf "%.2f", a / b }')
  echo "goal fresh jcnid, first $FRESH lifecycles <= 1.00 x go (median of $FRESH_ROUNDS rounds): $(ms "$with") ms with its start vs go $(ms "$go15") ms: ${r}x $(verdict "$r" 1.00 le) ($(ms "$without") ms without the start: ${r2}x)"
fi
if [ -s "$TMP/cold" ]; then
  read -r first go15 <<< "$(awk '{print $1}' "$TMP/cold" | median) $(awk '{print $2}' "$TMP/cold" | median)"
  r=$(awk -v a="$first" -v b="$go15" 'BEGIN { printf "%.2f", a / b }')
  echo "goal cold node (auto-start), first $COLD lifecycles <= 1.00 x go (median of $FRESH_ROUNDS rounds): $(ms "$first") ms vs go $(ms "$go15") ms: ${r}x $(verdict "$r" 1.00 le)"
  echo "  of which the first lifecycle (it waits for jcnid's start): median $(ms "$(median < "$TMP/cold.start")") ms; each of the $((COLD - 1)) after it: median $(ms "$(median < "$TMP/cold.rest")") ms"
  after=$(median < "$TMP/cold.after") goafter=$(median < "$TMP/cold.after.go")
  r=$(awk -v a="$after" -v b="$goafter" 'BEGIN { printf "%.2f", a / b }')
  echo "goal cold node, median of the $COLD lifecycles after those (interleaved with go's) <= 0.60 x go's: $(ms "$after") ms vs go $(ms "$goafter") ms: ${r}x $(verdict "$r" 0.60 le)"
fi
if [ -f "$TMP/metrics.after" ]; then
  echo
  echo "jcnid per request in the sequential part (ms, from jcnid_request_phase_seconds_total):"
  bench_phase_table "$TMP/metrics.before" "$TMP/metrics.after"
fi
if [ -f "$TMP/metrics.conc.after" ]; then
  echo
  echo "jcnid per request in the concurrent part ($CONC at once; ms, summed over requests that overlapped):"
  bench_phase_table "$TMP/metrics.conc.before" "$TMP/metrics.conc.after"
fi
