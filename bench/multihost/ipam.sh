#!/usr/bin/env bash
# cluster-ipam alone: run.sh's part 3 without the overlay agents (they do not take part in it), so
# it can be repeated quickly. A lab netns with an underlay bridge and a real etcd, N host netns;
# from each host, COUNT/N allocations through cluster-ipam in one JVM (16 in flight per host, as
# jcnid runs calls), all at once; then the same through host-local on one host for comparison.
# Goal (issue: cluster-ipam faster): >= 400 allocations/s from 5 hosts, 0 duplicates.
# RANGE: one CIDR, or several comma-separated (one range set each: dual-stack "10.72.0.0/20,fd00:72::/116").
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# Usage: bench/multihost/ipam.sh [-n HOSTS(5)] [-c COUNT(1000)] [-r RANGE(10.72.0.0/20)] [-k RUNS(3)]
set -euo pipefail
HOSTS=5 COUNT=1000 RANGE=10.72.0.0/20 RUNS=3
while getopts n:c:r:k: o; do case $o in n) HOSTS=$OPTARG ;; c) COUNT=$OPTARG ;; r) RANGE=$OPTARG ;; k) RUNS=$OPTARG ;; *) exit 2 ;; esac; done
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../../scripts/env.sh
. "$ROOT/scripts/env.sh"
need_packages etcd-server etcd-client iproute2
. "$ROOT/bench/lib/jcni-bench.sh"
. "$HERE/lab.sh"
multihost_lab jcni-ipam ji
ETCD=http://192.168.78.1:2379
host() { echo "ji-$SFX-h$1"; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN{printf "%.0f", n/((b-a)/1e9)}'; }

netns "$LAB"
ip -n "$LAB" link add ul type bridge
ip -n "$LAB" addr add 192.168.78.1/24 dev ul
ip -n "$LAB" link set ul up
nsenter --net=/var/run/netns/"$LAB" etcd --name b --data-dir "$WORK/etcd" --listen-client-urls $ETCD --advertise-client-urls $ETCD \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster b=http://127.0.0.1:2380 >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do nsenter --net=/var/run/netns/"$LAB" env ETCDCTL_API=3 etcdctl --endpoints $ETCD endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
for i in $(seq 1 "$HOSTS"); do
  h=$(host "$i")
  netns "$h"
  ip -n "$LAB" link add "h$i" type veth peer name eth0 netns "$h"
  ip -n "$LAB" link set "h$i" master ul up
  ip -n "$h" addr add "192.168.78.$((10 + i))/24" dev eth0
  ip -n "$h" link set eth0 up
done
echo "cluster-ipam from $HOSTS hosts, $COUNT allocations in $RANGE, $RUNS runs: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  nsenter --net=/var/run/netns/"$LAB" env ETCDCTL_API=3 etcdctl --endpoints $ETCD del --prefix /lab-ipam >/dev/null
  pids=()
  s=$(now)
  for i in $(seq 1 "$HOSTS"); do
    nsenter --net=/var/run/netns/"$(host "$i")" $JAVA -cp "$CP" io.jcni.overlay.IpamLoad add $ETCD "$RANGE" "r$run-h$i" $((COUNT / HOSTS)) 16 >"$WORK/ipam$i.out" 2>&1 &
    PIDS+=($!)
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  e=$(now)
  ok=$(cat "$WORK"/ipam*.out | grep -c '^OK' || true)
  uniq=$(cat "$WORK"/ipam*.out | awk '/^OK/{n = split($3, a, ","); for (i = 1; i <= n; i++) print a[i]}' | sort -u | wc -l)
  all=$(cat "$WORK"/ipam*.out | awk '/^OK/{n = split($3, a, ","); c += n} END {print c + 0}')
  grep -hv '^OK' "$WORK"/ipam*.out | cut -c1-220 | head -3 || true
  echo "run $run: $ok allocations in $(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.0f", (b-a)/1e6}') ms (JVM start included) = $(rate "$ok" "$s" "$e")/s; addresses $all, distinct $uniq (duplicates: $((all - uniq))); errors: $(cat "$WORK"/ipam*.out | grep -vc '^OK' || true)"
done
s=$(now)
nsenter --net=/var/run/netns/"$(host 1)" $JAVA -cp "$CP" io.jcni.overlay.IpamLoad add $ETCD "${RANGE%%,*}" hl "$COUNT" 16 "$WORK/host-local" >"$WORK/hl.out" 2>&1
e=$(now)
hl=$(grep -c '^OK' "$WORK/hl.out" || true)
echo "host-local, same harness, one host: $hl allocations = $(rate "$hl" "$s" "$e")/s"
