#!/usr/bin/env bash
# Docker cluster networks (`-o jcni.cluster=NAME`) on a lab of namespaces; nothing touches the root
# namespace. An underlay bridge and a real etcd in a "lab" netns, H (3) host netns plugged into it,
# and on each host a private dockerd (Debian's docker.io 20.10) and the jcnid of this build with
# --docker-driver and --etcd-endpoints. Each host's driver has its own name (dockerd finds drivers in
# the one /run/docker/plugins); the cluster name ties them together. Prints, with the load average:
#   1. `docker run --rm IMAGE true` on host 1: the cluster network against a local jcni network of
#      the same driver, interleaved, N (15) each: medians and the ratio (goal <= 1.15x).
#   2. reachable across hosts: R (15) times, a container started on host 1 (`docker run -d`, a fixed
#      --ip, so nothing is asked after it) and pinged from a container on host 2 (iputils ping in that
#      container's netns, every 10 ms, from the moment `docker run -d` returned, i.e. the container
#      runs) until the first reply: median and p90 (goal <= 300 ms); also from the moment `docker run`
#      was issued.
#   3. C (300) concurrent `docker run -d` spread over the hosts (P (4) in flight per host): failures,
#      duplicate addresses (goal 0), wall time; then all removed (P per host) and the endpoints left in
#      etcd counted.
# Needs root and a build (mvn -B -ntp -q -DskipTests package). Usage: bench/docker/cluster.sh [-n N] [-r R] [-c C] [-p P] [-H H]
set -euo pipefail
N=15 R=15 C=300 PAR=4 H=3
while getopts n:r:c:p:H: o; do
  case $o in n) N=$OPTARG ;; r) R=$OPTARG ;; c) C=$OPTARG ;; p) PAR=$OPTARG ;; H) H=$OPTARG ;; *) echo "usage: $0 [-n N] [-r R] [-c C] [-p P] [-H H]" >&2; exit 2 ;; esac
done
[[ "$H" =~ ^[0-9]+$ && "$H" -ge 2 && "$H" -le 9 ]] || { echo "cluster.sh: -H 2..9" >&2; exit 2; }
[[ "$R" =~ ^[0-9]+$ && "$R" -le 200 ]] || { echo "cluster.sh: -r at most 200" >&2; exit 2; }
[[ "$C" =~ ^[0-9]+$ && "$C" -le 1000 ]] || { echo "cluster.sh: -c at most 1000 (the range holds 1,022)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../multihost/lab.sh
. "$HERE/../multihost/lab.sh" # ROOT, scripts/env.sh, bench/lib/jcni-bench.sh
cd "$ROOT"
need_packages docker.io busybox-static curl iproute2 iputils-ping util-linux etcd-server etcd-client
[ "$(id -u)" -eq 0 ] || { echo "bench/docker: needs root" >&2; exit 1; }
ls docker/target/jcni-docker-*.jar >/dev/null 2>&1 || { echo "bench/docker: build first: mvn -B -ntp -q -DskipTests package" >&2; exit 1; }
multihost_lab jcni-bench-dcl jdc

ETCD_IP=192.168.79.1 ETCD=http://192.168.79.1:2379
CLUSTER=bench-$SFX NET=jcl$SFX LOCAL=jlo$SFX
SUBNET=10.236.0.0/16 RANGE=10.236.4.0/22 GATEWAY=10.236.0.1   # fixed addresses of part 2: 10.236.1.x, outside the range
DOCKERD_PIDS=() JCNID_PIDS=() BATCH=()
host_ns() { echo "jdc-$SFX-h$1"; }
driver() { echo "jdc${SFX}h$1"; }
dk() { local h=$1; shift; /usr/bin/docker -H "unix://$WORK/h$h/docker.sock" "$@"; }

cluster_cleanup() {
  set +e
  local h p i
  for p in "${BATCH[@]}"; do kill "$p" 2>/dev/null; done   # an interrupted part 3: no new docker run
  for h in $(seq "$H"); do
    [ -S "$WORK/h$h/docker.sock" ] || continue
    dk "$h" ps -aq | xargs -r -n 10 -P 4 /usr/bin/docker -H "unix://$WORK/h$h/docker.sock" rm -f >/dev/null 2>&1
    for n in "$NET" "$LOCAL"; do dk "$h" network rm "$n" >/dev/null 2>&1; done
  done
  # dockerd first (SIGTERM: it stops its containerd and shims), then the drivers it no longer needs
  for p in "${DOCKERD_PIDS[@]}" "${JCNID_PIDS[@]}"; do
    kill "$p" 2>/dev/null
    for i in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null
  done
  for h in $(seq "$H"); do rm -f "/run/docker/plugins/$(driver "$h").sock"; done
  findmnt -rn -o TARGET | grep "^$WORK/" | sort -r | xargs -r -n1 umount -l 2>/dev/null
  multihost_cleanup
}
trap cluster_cleanup EXIT
trap 'exit 130' INT TERM

p90() { sort -n | awk '{a[NR]=$1} END {i=int(NR*0.9+0.999); if (i<1) i=1; print a[i]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
LOAD_START=$(load)

echo "installing jcni into $WORK/jcni ..." >&2
scripts/install.sh --no-build --prefix "$WORK/jcni" --bin-dir "$WORK/bin" --cmd-dir "$WORK/cmd" --socket "$WORK/run/jcnid.sock" >/dev/null

# the underlay and etcd
lab_bridge "$ETCD_IP"
# started directly (not through in_lab, a function: $! would be its subshell, and etcd would outlive the kill)
nsenter --net="/var/run/netns/$LAB" etcd --data-dir "$WORK/etcd" --listen-client-urls "$ETCD" --advertise-client-urls "$ETCD" \
  --listen-peer-urls http://127.0.0.1:2380 >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
etcdctl() { in_lab env ETCDCTL_API=3 /usr/bin/etcdctl --endpoints "$ETCD" "$@"; }
for _ in $(seq 150); do etcdctl endpoint health >/dev/null 2>&1 && break; sleep 0.2; done

# the busybox image, once
mkdir -p "$WORK/bb"/{bin,etc,proc,sys,dev,tmp,root}; cp /bin/busybox "$WORK/bb/bin/"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$WORK/bb/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$WORK/bb/etc/passwd"; echo 'root:x:0:' >"$WORK/bb/etc/group"
tar -C "$WORK/bb" -cf "$WORK/bb.tar" .

# the hosts: uplink, dockerd, jcnid
for h in $(seq "$H"); do
  ns=$(host_ns "$h"); netns "$ns"; mkdir -p "$WORK/h$h"
  ip -n "$LAB" link add "u$h" type veth peer name uplink netns "$ns"; ip -n "$LAB" link set "u$h" master ul up
  ip -n "$ns" addr add "192.168.79.1$h/24" dev uplink; ip -n "$ns" link set uplink up
  nsenter --net="/var/run/netns/$ns" dockerd --data-root "$WORK/h$h/data" --exec-root "$WORK/h$h/exec" \
    -H "unix://$WORK/h$h/docker.sock" --pidfile "$WORK/h$h/docker.pid" >"$WORK/h$h/dockerd.log" 2>&1 &
  DOCKERD_PIDS+=($!)
  nsenter --net="/var/run/netns/$ns" "$WORK/jcni/bin/jcnid" start --foreground --socket "$WORK/h$h/jcnid.sock" \
    --docker-driver "$(driver "$h")" --docker-state-dir "$WORK/h$h/driver" --etcd-endpoints "$ETCD" --iface uplink \
    --docker-etcd-prefix "/jcni-bench-$SFX/docker" >"$WORK/h$h/jcnid.log" 2>&1 </dev/null &
  JCNID_PIDS+=($!)
done
for h in $(seq "$H"); do
  for i in $(seq 450); do
    dk "$h" version >/dev/null 2>&1 && curl -s -m 2 --unix-socket "/run/docker/plugins/$(driver "$h").sock" -X POST http://x/Plugin.Activate \
      | grep -q IpamDriver && break
    [ "$i" -lt 450 ] || { echo "cluster.sh: host $h's dockerd or driver did not start; see $WORK/h$h/*.log" >&2; tail -5 "$WORK/h$h"/*.log >&2; exit 1; }
    sleep 0.2
  done
  dk "$h" import -c 'CMD ["/bin/sh"]' "$WORK/bb.tar" bb >/dev/null
  dk "$h" network create -d "$(driver "$h")" --ipam-driver "$(driver "$h")" --subnet "$SUBNET" --gateway "$GATEWAY" \
    --ip-range "$RANGE" -o "jcni.cluster=$CLUSTER" "$NET" >/dev/null
done
dk 1 network create -d "$(driver 1)" --ipam-driver "$(driver 1)" --subnet 10.237.0.0/24 "$LOCAL" >/dev/null
echo "lab: $H hosts, dockerd $(dk 1 version -f '{{.Server.Version}}'), cluster $CLUSTER ($SUBNET, range $RANGE), etcd in $LAB" >&2

# 1. docker run --rm, cluster vs local network, interleaved, on host 1
run_rm() { local s e; s=$(now); dk 1 run --rm --network "$1" bb true; e=$(now); ms "$s" "$e"; echo; }
for _ in 1 2 3; do run_rm "$NET" >/dev/null; run_rm "$LOCAL" >/dev/null; done
RC=() RL=()
for _ in $(seq "$N"); do RC+=("$(run_rm "$NET")"); RL+=("$(run_rm "$LOCAL")"); done
RCM=$(printf '%s\n' "${RC[@]}" | median); RLM=$(printf '%s\n' "${RL[@]}" | median)
LOAD_1=$(load)

# 2. from a container running on host 1 to its first ping reply from host 2
dk 2 run -d --name probe --network "$NET" bb sleep 3600 >/dev/null
PROBE_PID=$(dk 2 inspect -f '{{.State.Pid}}' probe)
# ping's -D timestamps (epoch seconds with microseconds) of its first reply, in ns
first_reply_ns() {
  nsenter --net="/proc/$PROBE_PID/ns/net" ping -n -D -c 1 -w 10 -i 0.01 "$1" 2>/dev/null \
    | sed -n 's/^\[\([0-9]*\)\.\([0-9]*\)\] .*bytes from.*/\1\2000/p' | head -1
}
REACH=() TOTAL=() UNREACHED=0
for i in $(seq "$R"); do
  ip=10.236.1.$((10 + i))
  s=$(now)
  dk 1 run -d --name "reach$i" --network "$NET" --ip "$ip" bb sleep 600 >/dev/null
  r=$(now)
  t=$(first_reply_ns "$ip")
  if [ -z "$t" ]; then UNREACHED=$((UNREACHED + 1)); else REACH+=("$(ms "$r" "$t")"); TOTAL+=("$(ms "$s" "$t")"); fi
  dk 1 rm -f "reach$i" >/dev/null
done
REACH_MED=$(printf '%s\n' "${REACH[@]}" | median); REACH_P90=$(printf '%s\n' "${REACH[@]}" | p90)
TOTAL_MED=$(printf '%s\n' "${TOTAL[@]}" | median); TOTAL_P90=$(printf '%s\n' "${TOTAL[@]}" | p90)
dk 2 rm -f probe >/dev/null
LOAD_2=$(load)

# 3. C concurrent starts spread over the hosts, P in flight per host
s=$(now) BATCH=()
for h in $(seq "$H"); do
  n=$(( C / H + (h <= C % H ? 1 : 0) ))
  seq "$n" | xargs -P "$PAR" -I{} /usr/bin/docker -H "unix://$WORK/h$h/docker.sock" run -d --name "c$h-{}" --network "$NET" bb sleep 3600 \
    >"$WORK/h$h/started" 2>"$WORK/h$h/failed" &
  BATCH+=($!)
done
wait_all=0
for j in "${BATCH[@]}"; do wait "$j" || wait_all=1; done
e=$(now)
STARTED=0 FAILED_LINES=0
: >"$WORK/ips"
for h in $(seq "$H"); do
  STARTED=$((STARTED + $(grep -c . "$WORK/h$h/started" || true)))
  FAILED_LINES=$((FAILED_LINES + $(grep -c . "$WORK/h$h/failed" || true)))
  ids=$(dk "$h" ps -q --filter "name=c$h-")
  [ -z "$ids" ] || dk "$h" inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" $ids >>"$WORK/ips"
done
ADDRESSES=$(grep -c . "$WORK/ips" || true)
DUPLICATES=$(sort "$WORK/ips" | uniq -d | wc -l)
START_S=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", (b-a)/1e9}')
LOAD_3=$(load)
s=$(now) BATCH=()
for h in $(seq "$H"); do
  dk "$h" ps -aq --filter "name=c$h-" | xargs -r -n 5 -P "$PAR" /usr/bin/docker -H "unix://$WORK/h$h/docker.sock" rm -f >/dev/null &
  BATCH+=($!)
done
for j in "${BATCH[@]}"; do wait "$j" || true; done
e=$(now)
RM_S=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", (b-a)/1e9}')
ENDPOINTS_LEFT=$(etcdctl get --prefix --keys-only "/jcni-bench-$SFX/docker/clusters/$CLUSTER/endpoints/" | grep -c . || true)

echo "bench/docker/cluster: $H hosts (netns), dockerd $(dk 1 version -f '{{.Server.Version}}'), etcd $(etcd --version | sed -n 's/^etcd Version: //p'), image busybox"
echo "load average: start $LOAD_START, after 1: $LOAD_1, after 2: $LOAD_2, after 3: $LOAD_3, end $(load)"
printf '| %-70s | %15s | %10s | %6s |\n' "what (ms)" "cluster" "local" "ratio"
printf '|%s|%s|%s|%s|\n' "------------------------------------------------------------------------" "-----------------" "------------" "--------"
printf '| %-70s | %15s | %10s | %6s |\n' "docker run --rm on host 1, median (N=$N, interleaved)" "$RCM" "$RLM" "$(ratio "$RCM" "$RLM")"
printf '| %-70s | %15s | %10s | %6s |\n' "host 1 container running -> first ping reply on host 2, median (R=$R)" "$REACH_MED" "" ""
printf '| %-70s | %15s | %10s | %6s |\n' "  the same, p90" "$REACH_P90" "" ""
printf '| %-70s | %15s | %10s | %6s |\n' "  from \`docker run -d\` issued, median / p90" "$TOTAL_MED / $TOTAL_P90" "" ""
echo "not reached within 10 s: $UNREACHED of $R"
echo "$C concurrent docker run -d over $H hosts ($PAR in flight per host): $STARTED started, $FAILED_LINES error lines," \
  "$ADDRESSES addresses, $DUPLICATES duplicated; $START_S s to start all, $RM_S s to remove all; endpoints left in etcd: $ENDPOINTS_LEFT"
for h in $(seq "$H"); do [ -s "$WORK/h$h/failed" ] && { echo "host $h's errors (first 3):"; head -3 "$WORK/h$h/failed"; }; done
echo "samples: run --rm cluster ${RC[*]}; local ${RL[*]}; reach ${REACH[*]}"
echo "goals: docker run --rm ratio <= 1.15; reachable across hosts <= 300 ms; 0 duplicates over $C concurrent starts"
[ "$DUPLICATES" -eq 0 ] && [ "$wait_all" -eq 0 ] && [ "$ADDRESSES" -eq "$C" ]
