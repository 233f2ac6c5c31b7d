#!/usr/bin/env bash
# cluster-ipam alone: run.sh's part 3 without the overlay agents (they do not take part in it), so
# it can be repeated quickly. A lab netns with an underlay bridge and a real etcd, N host netns;
# from each host, COUNT/N allocations through cluster-ipam in one JVM (16 in flight per host, as
# jcnid runs calls), all at once; then the same through host-local on one host for comparison.
# Goal (issue: cluster-ipam faster): >= 400 allocations/s from 5 hosts, 0 duplicates.
# RANGE: one CIDR, or several comma-separated (one range set each: dual-stack "10.72.0.0/20,fd00:72::/116").
# -t: etcd with TLS and --client-cert-auth (lab.sh's lab_pki), cluster-ipam with the matching keys.
# -w WARMUP: each host first makes WARMUP allocations (not counted), then all hosts start the
# measured COUNT together: the rate of warm JVMs, as a running jcnid is (JVM start, class loading
# and JIT left out).
# Per run, besides the rate with the JVMs' start: each generator's own split (IpamLoad's "#" line:
# JVM start, first answer, steady state, CPU, bytes), etcd's CPU time, and from etcd's /metrics the
# gRPC calls (Txn, Range), WAL fsyncs and bytes per allocation.
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# Usage: bench/multihost/ipam.sh [-n HOSTS(5)] [-c COUNT(1000)] [-r RANGE(10.72.0.0/20)] [-k RUNS(3)] [-w WARMUP(0)] [-t]
set -euo pipefail
HOSTS=5 COUNT=1000 RANGE=10.72.0.0/20 RUNS=3 WARMUP=0 TLS=no
while getopts n:c:r:k:w:t o; do case $o in n) HOSTS=$OPTARG ;; c) COUNT=$OPTARG ;; r) RANGE=$OPTARG ;; k) RUNS=$OPTARG ;;
  w) WARMUP=$OPTARG ;; t) TLS=yes ;; *) exit 2 ;; esac; done
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab.sh
. "$HERE/lab.sh"
multihost_lab jcni-ipam ji etcd-server etcd-client iproute2 curl openssl
ETCD=http://192.168.78.1:2379
ETCD_TLS=() CLIENT_TLS=() IPAM_TLS=""
if [ "$TLS" = yes ]; then ETCD=https://192.168.78.1:2379; lab_pki "$WORK/pki" 192.168.78.1; fi
ctl() { in_lab env ETCDCTL_API=3 etcdctl --endpoints $ETCD "${CLIENT_TLS[@]}" "$@"; }
# metric NAME [LABEL_FILTER]: the sum of a counter in etcd's /metrics
metric() { in_lab curl -sS "${CLIENT_TLS[@]}" "$ETCD/metrics" | awk -v n="$1" -v f="${2:-}" '$1 ~ "^" n "({|$)" && index($1, f) {s += $2} END {printf "%.0f", s}'; }
metrics() { echo "$(metric grpc_server_handled_total 'grpc_method="Txn"') $(metric grpc_server_handled_total 'grpc_method="Range"')" \
  "$(metric etcd_disk_wal_fsync_duration_seconds_count) $(metric etcd_network_client_grpc_received_bytes_total) $(metric etcd_network_client_grpc_sent_bytes_total)"; }
host() { echo "ji-$SFX-h$1"; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN{printf "%.0f", n/((b-a)/1e9)}'; }

lab_bridge 192.168.78.1
nsenter --net=/var/run/netns/"$LAB" etcd --name b --data-dir "$WORK/etcd" --listen-client-urls $ETCD --advertise-client-urls $ETCD \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster b=http://127.0.0.1:2380 "${ETCD_TLS[@]}" >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
ETCD_PID=$!
for _ in $(seq 100); do ctl endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
lab_host_nses "$HOSTS"
echo "cluster-ipam from $HOSTS hosts, $COUNT allocations in $RANGE, $RUNS runs (etcd TLS: $TLS, warm-up $WARMUP a host): $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  ctl del --prefix /lab-ipam >/dev/null
  pids=()
  read -r tx0 rg0 fs0 rb0 sb0 <<<"$(metrics)"
  ec0=$(cpu_ms "$ETCD_PID")
  s=$(now)
  rm -f "$WORK/go"
  for i in $(seq 1 "$HOSTS"); do
    nsenter --net=/var/run/netns/"$(host "$i")" "${JAVA[@]}" -Djcni.ipam.extra="$IPAM_TLS" -Djcni.ipam.warmup="$WARMUP" -Djcni.ipam.go="$WORK/go" -Djcni.ipam.phases=true -cp "$CP" \
      io.jcni.overlay.IpamLoad add $ETCD "$RANGE" "r$run-h$i" $((COUNT / HOSTS)) 16 >"$WORK/ipam$i.out" 2>&1 &
    PIDS+=($!)
    pids+=($!)
  done
  if [ "$WARMUP" -gt 0 ]; then   # every host warm: the measured part starts now, for all at once
    for _ in $(seq 6000); do [ "$(cat "$WORK"/ipam*.out | grep -c '^# warm')" -ge "$HOSTS" ] && break; sleep 0.1; done
    read -r tx0 rg0 fs0 rb0 sb0 <<<"$(metrics)"
    ec0=$(cpu_ms "$ETCD_PID")
    s=$(now)
    touch "$WORK/go"
  fi
  for p in "${pids[@]}"; do wait "$p"; done
  e=$(now)
  ec1=$(cpu_ms "$ETCD_PID")
  read -r tx1 rg1 fs1 rb1 sb1 <<<"$(metrics)"
  ok=$(cat "$WORK"/ipam*.out | grep -c '^OK' || true)
  warm=$(cat "$WORK"/ipam*.out | grep -c '^OK [^ ]*-warm-' || true)
  uniq=$(cat "$WORK"/ipam*.out | awk '/^OK/{n = split($3, a, ","); for (i = 1; i <= n; i++) print a[i]}' | sort -u | wc -l)
  all=$(cat "$WORK"/ipam*.out | awk '/^OK/{n = split($3, a, ","); c += n} END {print c + 0}')
  grep -hv '^OK\|^#' "$WORK"/ipam*.out | cut -c1-220 | head -3 || true
  what="JVM start included"
  [ "$WARMUP" -gt 0 ] && what="warm, after $warm warm-up allocations"
  echo "run $run: $((ok - warm)) allocations in $(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.0f", (b-a)/1e6}') ms ($what) = $(rate "$((ok - warm))" "$s" "$e")/s; addresses $all, distinct $uniq (duplicates: $((all - uniq))); errors: $(cat "$WORK"/ipam*.out | grep -vc '^OK\|^#' || true); load average $(cut -d' ' -f1 /proc/loadavg)"
  grep -h '^#' "$WORK"/ipam*.out | sed 's/^/   /' || true
  gen=$(grep -h '^#' "$WORK"/ipam*.out | sed -n 's/.* cpu \([0-9]*\) ms$/\1/p' | awk '{s += $1} END {print s + 0}')
  gsteady=$(grep -h '^#' "$WORK"/ipam*.out | sed -n 's/.*, cpu \([0-9]*\) ms = .*/\1/p' | awk '{s += $1} END {print s + 0}')
  steady=$(grep -h '^#' "$WORK"/ipam*.out | sed -n 's/.* = \([0-9]*\)\/s,.*/\1/p' | awk '{s += $1} END {print s + 0}')
  awk -v n="$((ok - warm))" -v gen="$gen" -v ec="$((ec1 - ec0))" -v tx="$((tx1 - tx0))" -v rg="$((rg1 - rg0))" -v fs="$((fs1 - fs0))" -v rb="$((rb1 - rb0))" -v sb="$((sb1 - sb0))" -v st="$steady" -v gs="$gsteady" \
    'BEGIN {n = n ? n : 1; printf "   per allocation: generators cpu %.2f ms in their steady state (%.2f ms over their whole run), etcd cpu %.2f ms; etcd Txn %.2f, Range %.2f, WAL fsyncs %.2f, gRPC bytes in %.0f out %.0f; steady states summed: %d/s\n", gs / n, gen / n, ec / n, tx / n, rg / n, fs / n, rb / n, sb / n, st}'
done
s=$(now)
nsenter --net=/var/run/netns/"$(host 1)" "${JAVA[@]}" -Djcni.ipam.phases=true -cp "$CP" io.jcni.overlay.IpamLoad add $ETCD "${RANGE%%,*}" hl "$COUNT" 16 "$WORK/host-local" >"$WORK/hl.out" 2>"$WORK/hl.err"
e=$(now)
hl=$(grep -c '^OK' "$WORK/hl.out" || true)
echo "host-local, same harness, one host: $hl allocations = $(rate "$hl" "$s" "$e")/s"
sed 's/^/   /' "$WORK/hl.err"
