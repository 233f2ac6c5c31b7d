#!/usr/bin/env bash
# What TLS costs cluster-ipam, measured so that it can decide the goal (TLS costs <= 10 %): ONE lab
# with two etcds side by side on the same underlay address (plain http on :2379, TLS with client
# certificates on :2389, lab.sh's lab_pki), and K pairs of runs interleaved plain, TLS, plain, TLS ...
# Each run is ipam.sh -w: N hosts, each one JVM (IpamLoad, jcnid's JVM options, 16 in flight),
# WARMUP allocations first, then all hosts start COUNT/N measured allocations together.
# Per run: allocations/s, the generators' CPU per allocation (their steady state, summed), etcd's
# CPU per allocation, etcd's requests per allocation (Txn and Range, /metrics), the bytes a generator
# wrote and read per allocation (its sockets, TLS records included), duplicates, errors.
# At the end the median of each for plain and for TLS, TLS/plain of those, and the median of the
# pairs' own TLS/plain ratios of the total CPU per allocation (generators + etcd): the figure the goal is
# judged on (bench/multihost/README.md): on 2 cores the rate follows the total CPU per allocation, which
# moves with other load much less than the rate, and a pair's two runs see nearly the same load.
# -P DIR: profiles of the last pair's measured part into DIR: a JFR recording of host 1's generator
# (-XX:StartFlightRecording) and, from each etcd (--enable-pprof), a CPU profile of PSECS seconds
# (-S, default 10; make the measured part last that long with -c).
# -r RANGE: the pool (HOSTS * (WARMUP + COUNT/HOSTS) addresses must fit; /20 holds 4,094).
# -J OPTS: more JVM options for the generators (e.g. -Djavax.net.debug=ssl:handshake).
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# Usage: bench/multihost/tls-cost.sh [-n HOSTS(5)] [-c COUNT(1000)] [-k PAIRS(3)] [-w WARMUP(300)] [-r RANGE(10.72.0.0/20)] [-P DIR] [-S PSECS] [-J OPTS]
set -euo pipefail
HOSTS=5 COUNT=1000 PAIRS=3 WARMUP=300 RANGE=10.72.0.0/20 PROFILE="" PSECS=10 JOPTS=""
while getopts n:c:k:w:r:P:S:J: o; do case $o in n) HOSTS=$OPTARG ;; c) COUNT=$OPTARG ;; k) PAIRS=$OPTARG ;; w) WARMUP=$OPTARG ;; r) RANGE=$OPTARG ;;
  P) PROFILE=$OPTARG ;; S) PSECS=$OPTARG ;; J) JOPTS=$OPTARG ;; *) exit 2 ;; esac; done
[ "$WARMUP" -gt 0 ] || { echo "tls-cost.sh: -w must be > 0 (the figures are of warm JVMs)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab.sh
. "$HERE/lab.sh"
multihost_lab jcni-tlscost jt etcd-server etcd-client iproute2 curl openssl
[ -z "$PROFILE" ] || mkdir -p "$PROFILE"
IP=192.168.78.1
lab_pki "$WORK/pki" $IP
# metric KIND NAME [LABEL_FILTER]: the sum of a counter in that etcd's /metrics
metric() {
  mapfile -t f < <(tls_flags "$1")
  in_lab curl -sS "${f[@]}" "${URL[$1]}/metrics" | awk -v n="$2" -v f="${3:-}" '$1 ~ "^" n "({|$)" && index($1, f) {s += $2} END {printf "%.0f", s}'
}
requests() { echo "$(metric "$1" grpc_server_handled_total 'grpc_method="Txn"') $(metric "$1" grpc_server_handled_total 'grpc_method="Range"')"; }
host() { echo "jt-$SFX-h$1"; }

lab_bridge $IP
lab_two_etcds $IP --enable-pprof
lab_host_nses "$HOSTS"
echo "TLS cost: $PAIRS pairs plain/TLS, $HOSTS hosts, $COUNT allocations a run after $WARMUP warm-up a host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run  kind   alloc/s  gen-cpu/alloc  etcd-cpu/alloc  total-cpu/alloc  txn/range per alloc  bytes w/r  dup  err  load"

# one_run KIND N PROFILE_THIS: prints the run's row, appends "rate gen etcd total" to $WORK/KIND.fig
one_run() {
  local k=$1 n=$2 prof=$3 i pids=() extra="" jfr
  [ "$k" = tls ] && extra=$IPAM_TLS
  ctl "$k" del --prefix /lab-ipam >/dev/null
  rm -f "$WORK/go" "$WORK"/ipam*.out
  for i in $(seq 1 "$HOSTS"); do
    jfr=""
    [ "$prof" = yes ] && [ "$i" = 1 ] && jfr="-XX:StartFlightRecording=filename=$PROFILE/gen-$k.jfr,settings=profile,jdk.ExecutionSample#period=1ms -Xlog:jfr+startup=warning"
    # shellcheck disable=SC2086 # JOPTS and jfr are option lists
    nsenter --net=/var/run/netns/"$(host "$i")" "${JAVA[@]}" $JOPTS $jfr -Djcni.ipam.extra="$extra" -Djcni.ipam.warmup="$WARMUP" \
      -Djcni.ipam.go="$WORK/go" -Djcni.ipam.phases=true -cp "$CP" \
      io.jcni.overlay.IpamLoad add "${URL[$k]}" "$RANGE" "r$n$k-h$i" $((COUNT / HOSTS)) 16 >"$WORK/ipam$i.out" 2>&1 &
    PIDS+=($!)
    pids+=($!)
  done
  for _ in $(seq 6000); do [ "$(cat "$WORK"/ipam*.out | grep -c '^# warm')" -ge "$HOSTS" ] && break; sleep 0.1; done
  local tx0 rg0 ec0 s e ec1 tx1 rg1 pp=""
  read -r tx0 rg0 <<<"$(requests "$k")"
  ec0=$(cpu_ms "${ETCD_PID[$k]}")
  s=$(now)
  touch "$WORK/go"
  if [ "$prof" = yes ]; then
    mapfile -t f < <(tls_flags "$k")
    in_lab curl -sS "${f[@]}" -o "$PROFILE/etcd-$k.pprof" "${URL[$k]}/debug/pprof/profile?seconds=$PSECS" &
    pp=$!
  fi
  for p in "${pids[@]}"; do wait "$p"; done
  e=$(now)
  ec1=$(cpu_ms "${ETCD_PID[$k]}")
  read -r tx1 rg1 <<<"$(requests "$k")"
  [ -z "$pp" ] || wait "$pp"
  local ok warm all uniq err gs io
  ok=$(cat "$WORK"/ipam*.out | grep -c '^OK' || true)
  warm=$(cat "$WORK"/ipam*.out | grep -c '^OK [^ ]*-warm-' || true)
  all=$(cat "$WORK"/ipam*.out | awk '/^OK/{c++} END {print c + 0}')
  uniq=$(cat "$WORK"/ipam*.out | awk '/^OK/{print $3}' | sort -u | wc -l)
  err=$(cat "$WORK"/ipam*.out | grep -c "^ERR" || true)
  grep -h "^ERR" "$WORK"/ipam*.out | cut -c1-200 | head -3 >&2 || true
  gs=$(grep -h '^#' "$WORK"/ipam*.out | sed -n 's/.*, cpu \([0-9]*\) ms = .*/\1/p' | awk '{s += $1} END {print s + 0}')
  io=$(grep -h '^#' "$WORK"/ipam*.out | sed -n 's/.* wrote \([0-9]*\) read \([0-9]*\) bytes.*/\1 \2/p' | awk '{w += $1; r += $2; c++} END {printf "%d/%d", w / c, r / c}')
  awk -v run="$n" -v k="$k" -v io="$io" -v m="$((ok - warm))" -v s="$s" -v e="$e" -v gs="$gs" -v ec="$((ec1 - ec0))" -v tx="$((tx1 - tx0))" -v rg="$((rg1 - rg0))" \
    -v dup="$((all - uniq))" -v err="$err" -v load="$(cut -d' ' -f1 /proc/loadavg)" -v fig="$WORK/$k.fig" 'BEGIN {
      d = m ? m : 1; r = m / ((e - s) / 1e9)
      printf "%-4s %-5s %8.0f %11.2f ms %12.2f ms %13.2f ms %7.3f/%.3f %11s %4d %4d  %s\n", run, k, r, gs / d, ec / d, (gs + ec) / d, tx / d, rg / d, io, dup, err, load
      printf "%.1f %.3f %.3f %.3f\n", r, gs / d, ec / d, (gs + ec) / d >> fig }'
}

for n in $(seq 1 "$PAIRS"); do
  prof=no
  [ -n "$PROFILE" ] && [ "$n" = "$PAIRS" ] && prof=yes
  one_run plain "$n" $prof
  one_run tls "$n" $prof
done
col() { awk -v c="$2" '{print $c}' "$WORK/$1.fig" | median; }
echo "medians of $PAIRS runs each:"
for k in plain tls; do printf '  %-5s %8.0f/s  gen %.2f ms  etcd %.2f ms  total %.2f ms per allocation\n' "$k" "$(col "$k" 1)" "$(col "$k" 2)" "$(col "$k" 3)" "$(col "$k" 4)"; done
awk -v rp="$(col plain 1)" -v rt="$(col tls 1)" -v gp="$(col plain 2)" -v gt="$(col tls 2)" -v ep="$(col plain 3)" -v et="$(col tls 3)" \
  -v cp="$(col plain 4)" -v ct="$(col tls 4)" 'BEGIN {
    printf "TLS/plain: rate %.2f (TLS costs %.0f %% of the rate); CPU per allocation: generators %.2f, etcd %.2f, total %.2f (TLS costs %.0f %%: +%.2f ms)\n",
      rt / rp, (1 - rt / rp) * 100, gt / gp, et / ep, ct / cp, (1 - cp / ct) * 100, ct - cp }'
# Each pair ran back to back, so its ratio cancels the load's drift between pairs; the medians above may
# come from different pairs. This is the figure that decides.
pair_ratio() { paste "$WORK/plain.fig" "$WORK/tls.fig" | awk -v c="$1" '{print $(c + 4) / $c}' | median; }
awk -v c="$(pair_ratio 4)" -v r="$(pair_ratio 1)" -v all="$(paste "$WORK/plain.fig" "$WORK/tls.fig" | awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $8 / $4}')" 'BEGIN {
    printf "TLS/plain pair by pair (total CPU: %s): median %.2f (TLS costs %.0f %% of the rate it predicts); rate, median of the pairs: %.2f\n",
      all, c, (1 - 1 / c) * 100, r }'
[ -z "$PROFILE" ] || echo "profiles in $PROFILE: gen-plain.jfr gen-tls.jfr (jfr print --events jdk.ExecutionSample), etcd-plain.pprof etcd-tls.pprof (go tool pprof -top)"
