#!/usr/bin/env bash
# Full chain, driven by Go libcni as containerd drives it: containerd's go-cni 1.1.7 on libcni 1.1.2
# (testsuite/src/test/go/gocni/main.go, built here in GOPATH mode on Debian's sources) sets up and
# removes pods on one conflist:
#   bridge (ipMasq, host-local) + portmap (portMappings) + tuning (a sysctl) + bandwidth (bandwidth) + firewall
# with a loopback network first, as the CRI loads it. Side by side in one run:
#   go      the reference plugins (/usr/lib/cni, override with GO_CNI_DIR)
#   daemon  jcni's shims + jcnid on a private socket
# Sequential: one pod per go-cni call (setup = ADD of every plugin, remove = DEL), interleaved;
# concurrent: -c pods in one go-cni call (go-cni runs them in parallel, as the CRI does for pods
# started together), then their removal: pods/s over setup + remove.
# At the end, where jcnid's time went (its per-phase metrics, summed per plugin and command).
# Everything runs in network namespaces this script creates and removes on exit. Run as root.
# JCNID_FLAGS: more flags for `jcnid start` (e.g. --delete-links-now, the reference's delete-before-answering).
# Usage: bench/full-chain/run.sh [-n ITERATIONS(20)] [-w WARMUP(5)] [-c CONCURRENT(50)] [--daemon-warmup N(30)]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=20 WARMUP=5 CONC=50 DWARM=30
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    -w) WARMUP=$2; shift 2 ;;
    -c) CONC=$2; shift 2 ;;
    --daemon-warmup) DWARM=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for x in "$N" "$WARMUP" "$CONC" "$DWARM"; do [[ "$x" =~ ^[0-9]+$ ]] || { echo "run.sh: counts must be numbers" >&2; exit 2; }; done
[ "$N" -ge 1 ] && [ "$N" -le 1000 ] && [ "$CONC" -le 200 ] && [ "$DWARM" -le 1000 ] || { echo "run.sh: -n 1..1000, -c 0..200" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (network namespaces)" >&2; exit 1; }
. scripts/env.sh
need_command ip iproute2
need_command go golang-go
[ -d /usr/share/gocode/src/github.com/containerd/go-cni ] || need_packages golang-github-containerd-go-cni-dev
GO_DIR=${GO_CNI_DIR:-/usr/lib/cni}
[ -x "$GO_DIR/firewall" ] || { echo "run.sh: no reference plugins in $GO_DIR" >&2; exit 1; }

. bench/lib/jcni-bench.sh
bench_world jcni-fc jfc

echo "building gocni-run (go-cni on libcni, GOPATH mode) ..." >&2
mkdir -p "$TMP/gopath/src/jcni/gocni"
cp testsuite/src/test/go/gocni/main.go "$TMP/gopath/src/jcni/gocni/"
(cd "$TMP/gopath/src/jcni/gocni" && GOPATH="$TMP/gopath:/usr/share/gocode" GO111MODULE=off GOCACHE="$TMP/gocache" \
  go build -o "$TMP/gocni-run" . ) >&2

bench_jars
bench_install shim
"$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" ${JCNID_FLAGS:-} --log-phases >&2

ip netns add "$HOST"
ip -n "$HOST" link set lo up

declare -A DIR=([go]=$GO_DIR [daemon]=$TMP/shim) NET=([go]=1 [daemon]=2) PORT=([go]=30000 [daemon]=31000)
VARIANTS=(go daemon)
for v in "${VARIANTS[@]}"; do
  mkdir -p "$TMP/conf-$v"
  cat > "$TMP/conf-$v/10-chain.conflist" <<CONF
{"cniVersion":"1.0.0","name":"jfc-$v-$ID","plugins":[
  {"type":"bridge","bridge":"jfc${NET[$v]}-$ID","isGateway":true,"ipMasq":true,"dataDir":"$TMP/state-$v",
   "ipam":{"type":"host-local","ranges":[[{"subnet":"10.$((70 + NET[$v])).0.0/16"}]],"routes":[{"dst":"0.0.0.0/0"}],"dataDir":"$TMP/ipam-$v"}},
  {"type":"portmap","capabilities":{"portMappings":true},"dataDir":"$TMP/state-$v"},
  {"type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"1"}},
  {"type":"bandwidth","capabilities":{"bandwidth":true}},
  {"type":"firewall","dataDir":"$TMP/state-$v"}]}
CONF
done

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
# gocni VARIANT setup|remove POD... : one go-cni call in the host netns
gocni() {
  local v=$1 cmd=$2; shift 2
  ip netns exec "$HOST" "$TMP/gocni-run" -confdir "$TMP/conf-$v" -bindir "${DIR[$v]}" -hostport "${PORT[$v]}" \
    -containerport 80 -ingress 10000000 -egress 5000000 "$cmd" "$@" >/dev/null 2>"$TMP/err" \
    || { echo "run.sh: $v $cmd failed: $(head -c 2000 "$TMP/err")" >&2; return 1; }
}
# lifecycle VARIANT INDEX : prints "setup_us remove_us"
lifecycle() {
  local v=$1 pod="jfc-$1-$2-$ID" t0 t1 t2
  ip netns add "$pod"
  t0=$(now_us); gocni "$v" setup "p$2=/var/run/netns/$pod"
  t1=$(now_us); gocni "$v" remove "p$2=/var/run/netns/$pod"
  t2=$(now_us)
  ip netns del "$pod"
  echo "$((t1 - t0)) $((t2 - t1))"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) {print "nan"; exit} if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "warm-up: $WARMUP per variant, and $DWARM for jcnid ..." >&2
for ((i = 0; i < WARMUP; i++)); do for v in "${VARIANTS[@]}"; do lifecycle "$v" "$((1000 + i))" >/dev/null; done; done
for ((i = 0; i < DWARM; i++)); do lifecycle daemon "$((2000 + i))" >/dev/null; done
"$PREFIX/bin/jcnid" metrics --socket "$SOCK" > "$TMP/metrics.before"
echo "sequential: $N per variant, interleaved ..." >&2
for ((i = 0; i < N; i++)); do for v in "${VARIANTS[@]}"; do lifecycle "$v" "$i" >> "$TMP/seq.$v"; done; done
"$PREFIX/bin/jcnid" metrics --socket "$SOCK" > "$TMP/metrics.after"

declare -A PODS
if [ "$CONC" -gt 0 ]; then
  for v in "${VARIANTS[@]}"; do
    echo "concurrent: $CONC pods in one go-cni call: $v ..." >&2
    pods=()
    for ((i = 0; i < CONC; i++)); do ip netns add "jfc-$v-c$i-$ID"; pods+=("c$i=/var/run/netns/jfc-$v-c$i-$ID"); done
    t0=$(now_us)
    gocni "$v" setup "${pods[@]}"
    gocni "$v" remove "${pods[@]}"
    t1=$(now_us)
    for ((i = 0; i < CONC; i++)); do ip netns del "jfc-$v-c$i-$ID"; done
    PODS[$v]=$(awk -v n="$CONC" -v u="$((t1 - t0))" 'BEGIN { printf "%.1f", n / (u / 1e6) }')
  done
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
echo "load average (1/5/15 min): before $LOAD_BEFORE, after $LOAD_AFTER"
echo "full chain (loopback; bridge ipMasq + host-local, portmap, tuning, bandwidth, firewall) through go-cni/libcni;"
echo "sequential: median of $N interleaved (after $WARMUP warm-up each, $DWARM more for jcnid), ms; concurrent: $CONC pods at once"
echo
printf '| %-7s | %9s | %10s | %12s | %6s | %8s | %6s |\n' variant "ADD ms" "DEL ms" "ADD+DEL ms" "× go" "pods/s" "× go"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' --------- ----------- ------------ -------------- -------- ---------- --------
declare -A TOT
for v in "${VARIANTS[@]}"; do TOT[$v]=$(awk '{print $1 + $2}' "$TMP/seq.$v" | median); done
for v in "${VARIANTS[@]}"; do
  add=$(awk '{print $1}' "$TMP/seq.$v" | median); del=$(awk '{print $2}' "$TMP/seq.$v" | median)
  r=$(awk -v a="${TOT[$v]}" -v b="${TOT[go]}" 'BEGIN { printf "%.2f", a / b }')
  pr=-; [ -n "${PODS[$v]:-}" ] && pr=$(awk -v a="${PODS[$v]}" -v b="${PODS[go]}" 'BEGIN { printf "%.2f", a / b }')
  printf '| %-7s | %9.1f | %10.1f | %12.1f | %6s | %8s | %6s |\n' "$v" "$(awk -v u="$add" 'BEGIN{print u/1000}')" \
    "$(awk -v u="$del" 'BEGIN{print u/1000}')" "$(awk -v u="${TOT[$v]}" 'BEGIN{print u/1000}')" "$r" "${PODS[$v]:--}" "$pr"
done
r=$(awk -v a="${TOT[daemon]}" -v b="${TOT[go]}" 'BEGIN { printf "%.2f", a / b }')
echo
echo "goal full chain ADD+DEL jcni <= 0.40x reference: ${r}x $(awk -v a="$r" 'BEGIN { print (a <= 0.40 ? "met" : "MISSED") }')"
[ -n "${PODS[daemon]:-}" ] && echo "concurrent full chain: all $CONC pods completed for both; jcni ${PODS[daemon]} pods/s vs reference ${PODS[go]} pods/s"
echo
echo "jcnid per request during the sequential part (ms per request, from jcnid_request_phase_seconds_total):"
bench_phase_table "$TMP/metrics.before" "$TMP/metrics.after"
