#!/usr/bin/env bash
# Docker with jcni's libnetwork driver against Docker's own bridge driver, side by side on one
# private dockerd (Debian's docker.io 20.10) in a scratch network namespace; nothing touches the
# root namespace. Prints medians and ratios:
#   1. jcnid start-up: from the launch to jcnid's socket answering (without the driver) and to the
#      driver's socket serving /Plugin.Activate (with --docker-driver), medians of S (9) runs each,
#      alternating, and their difference: what the driver adds (goal <= 100 ms). No dockerd needed:
#      -s measures this alone.
#   2. `docker run --rm IMAGE true` on a jcni network vs a user-defined bridge network (goal <= 1.05x)
#   3. `docker run -d -p PORT:80` with 0 and with P (500) published ports already on each network
#      (rounds alternate between the two networks) (goal for jcni: at P, adding one costs <= 1.2x what it costs at 0)
# dockerd runs with --userland-proxy=false, so that P published ports on Docker's bridge are P
# iptables rules rather than P docker-proxy processes (the rules are what moby#53466 is about).
# Needs root and a build (mvn -B -ntp -q -DskipTests package). Usage: bench/docker/run.sh [-n N] [-k K] [-p P] [-S S] [-s]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
need_packages docker.io busybox-static curl iproute2 util-linux
[ "$(id -u)" -eq 0 ] || { echo "bench/docker: needs root" >&2; exit 1; }
N=15 K=9 P=500 S=9 STARTUP_ONLY=no
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;; -k) K=$2; shift 2 ;; -p) P=$2; shift 2 ;; -S) S=$2; shift 2 ;; -s) STARTUP_ONLY=yes; shift ;;
    *) echo "usage: $0 [-n N] [-k K] [-p P] [-S S] [-s]" >&2; exit 2 ;;
  esac
done
[ -f docker/target/jcni-docker-*.jar ] 2>/dev/null || ls docker/target/jcni-docker-*.jar >/dev/null 2>&1 \
  || { echo "bench/docker: build first: mvn -B -ntp -q -DskipTests package" >&2; exit 1; }

ID=$$ NS=jbd-h-$$ DRIVER=jcnibench$$
W=$(mktemp -d /tmp/jcni-bench-docker.XXXXXX)
SOCK=/run/docker/plugins/$DRIVER.sock
DOCKER="/usr/bin/docker -H unix://$W/docker.sock"
JCNID_PID=
cleanup() {
  set +e
  $DOCKER rm -f $($DOCKER ps -aq 2>/dev/null) >/dev/null 2>&1
  for n in bj$ID bb$ID; do $DOCKER network rm "$n" >/dev/null 2>&1; done
  [ -n "$JCNID_PID" ] && kill "$JCNID_PID" 2>/dev/null && wait "$JCNID_PID" 2>/dev/null
  [ -f "$W/docker.pid" ] && kill "$(cat "$W/docker.pid")" 2>/dev/null
  for i in $(seq 100); do [ -f "$W/docker.pid" ] && kill -0 "$(cat "$W/docker.pid")" 2>/dev/null || break; sleep 0.2; done
  findmnt -rn -o TARGET | grep "^$W" | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -f "$SOCK"; ip netns del "$NS" 2>/dev/null; rm -rf "$W"
}
trap cleanup EXIT

ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f\n", (b-a)/1e6}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }

# jcni installed into the scratch directory from this build's jars
scripts/install.sh --no-build --prefix "$W/jcni" --bin-dir "$W/bin" --cmd-dir "$W/cmd" --socket "$W/run/jcnid.sock" >/dev/null
JCNID=$W/jcni/bin/jcnid

ip netns add "$NS"; ip -n "$NS" link set lo up
# 1. start-up: until the jcnid socket answers (alone) / until the plugin socket answers (with the driver)
startup() { # startup WITH_DRIVER -> ms
  local s e args=(start --foreground --socket "$W/s$1/jcnid.sock")
  [ "$1" = 1 ] && args+=(--docker-driver "${DRIVER}s" --docker-plugin-dir "$W/s-plugins" --docker-state-dir "$W/s-state")
  s=$(date +%s%N)
  nsenter --net=/var/run/netns/$NS "$JCNID" "${args[@]}" >>"$W/startup.log" 2>&1 & local pid=$!
  if [ "$1" = 1 ]; then
    until curl -s -m 1 --unix-socket "$W/s-plugins/${DRIVER}s.sock" -X POST http://x/Plugin.Activate | grep -q Implements; do sleep 0.005; done
  else
    until "$JCNID" status --socket "$W/s$1/jcnid.sock" >/dev/null 2>&1; do sleep 0.005; done
  fi
  e=$(date +%s%N); kill "$pid"; wait "$pid" 2>/dev/null || true
  ms "$s" "$e"
}
S0=() S1=()
for i in $(seq "$S"); do S0+=("$(startup 0)"); S1+=("$(startup 1)"); done
S0M=$(printf '%s\n' "${S0[@]}" | median); S1M=$(printf '%s\n' "${S1[@]}" | median)
# the driver's own account of its start (its log line): all of it, and the HTTP server's part
DRIVER_START=$(sed -n 's/.*jcnid docker started .*start_ms=\([0-9.]*\) http_ms=.*/\1/p' "$W/startup.log" | median)
DRIVER_HTTP=$(sed -n 's/.*jcnid docker started .*http_ms=\([0-9.]*\).*/\1/p' "$W/startup.log" | median)
DRIVER_OWN="its log: driver start $DRIVER_START ms, of it Jetty $DRIVER_HTTP ms (medians)"
STARTUP_ROW=$(printf '| %-58s | %10s | %10s | %6s |' "jcnid start: alone -> with --docker-driver ($S runs)" "$S1M" "$S0M" "$(awk -v a="$S1M" -v b="$S0M" 'BEGIN{printf "%+.1f", a-b}')")
if [ "$STARTUP_ONLY" = yes ]; then
  echo "bench/docker: jcnid start-up in netns $NS, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "alone (ms): ${S0[*]}"; echo "with the driver (ms): ${S1[*]}"; echo "$DRIVER_OWN"
  printf '| %-58s | %10s | %10s | %6s |\n' "what (median ms)" "driver" "alone" "diff"
  echo "$STARTUP_ROW"
  echo "goal: the driver's socket serves within 100 ms of jcnid's start without it"
  exit 0
fi

nsenter --net=/var/run/netns/$NS dockerd --data-root "$W/data" --exec-root "$W/exec" -H "unix://$W/docker.sock" \
  --pidfile "$W/docker.pid" --userland-proxy=false >"$W/dockerd.log" 2>&1 &
for i in $(seq 300); do $DOCKER version >/dev/null 2>&1 && break; sleep 0.2; done
mkdir -p "$W/bb"/{bin,etc,proc,sys,dev,tmp,root}; cp /bin/busybox "$W/bb/bin/"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$W/bb/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$W/bb/etc/passwd"; echo 'root:x:0:' >"$W/bb/etc/group"
tar -C "$W/bb" -cf "$W/bb.tar" .; $DOCKER import -c 'CMD ["/bin/sh"]' "$W/bb.tar" bb >/dev/null


# the driver for the rest
nsenter --net=/var/run/netns/$NS "$JCNID" start --foreground --socket "$W/run/jcnid.sock" --docker-driver "$DRIVER" \
  --docker-state-dir "$W/state" >"$W/jcnid.log" 2>&1 &
JCNID_PID=$!
until curl -s -m 1 --unix-socket "$SOCK" -X POST http://x/Plugin.Activate | grep -q Implements; do sleep 0.05; done
$DOCKER network create -d "$DRIVER" --ipam-driver "$DRIVER" --subnet 10.240.0.0/16 bj$ID >/dev/null
$DOCKER network create -d bridge --subnet 10.241.0.0/16 bb$ID >/dev/null

# 2. docker run --rm, interleaved
run_rm() { local s e; s=$(date +%s%N); $DOCKER run --rm --network "$1" bb true; e=$(date +%s%N); ms "$s" "$e"; }
for i in 1 2 3; do run_rm bj$ID >/dev/null; run_rm bb$ID >/dev/null; done
RJ=() RB=()
for i in $(seq "$N"); do RJ+=("$(run_rm bj$ID)"); RB+=("$(run_rm bb$ID)"); done
RJM=$(printf '%s\n' "${RJ[@]}" | median); RBM=$(printf '%s\n' "${RB[@]}" | median)

# 3. docker run -d -p with 0 and P existing published ports
run_p() { # run_p NET NAME -> ms of `docker run -d -p 18080:80`
  local s e; s=$(date +%s%N); $DOCKER run -d --name "$2" --network "$1" -p 18080:80 bb sleep 600 >/dev/null; e=$(date +%s%N)
  ms "$s" "$e"
}
ports_level() { # ports_level LEVEL: K rounds alternating the two networks, medians into PM[net,LEVEL]
  local aj=() ab=() i
  for i in $(seq "$K"); do
    aj+=("$(run_p bj$ID pt$ID)"); $DOCKER rm -f pt$ID >/dev/null
    ab+=("$(run_p bb$ID pt$ID)"); $DOCKER rm -f pt$ID >/dev/null
  done
  PM[bj$ID,$1]=$(printf '%s\n' "${aj[@]}" | median); PM[bb$ID,$1]=$(printf '%s\n' "${ab[@]}" | median)
}
declare -A PM
for net in bj$ID bb$ID; do run_p "$net" pt$ID >/dev/null; $DOCKER rm -f pt$ID >/dev/null; done   # warm-up
ports_level 0
# P published ports on each network: one container each, distinct host ports
$DOCKER run -d --name bulkj$ID --network bj$ID -p "20000-$((20000 + P - 1)):20000-$((20000 + P - 1))" bb sleep 3600 >/dev/null
$DOCKER run -d --name bulkb$ID --network bb$ID -p "30000-$((30000 + P - 1)):30000-$((30000 + P - 1))" bb sleep 3600 >/dev/null
ports_level "$P"
$DOCKER rm -f bulkj$ID bulkb$ID >/dev/null

echo "bench/docker: dockerd $($DOCKER version -f '{{.Server.Version}}') in netns $NS, image busybox, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-58s | %10s | %10s | %6s |\n' "what (median ms)" "jcni" "Docker" "ratio"
printf '|%s|%s|%s|%s|\n' "------------------------------------------------------------" "------------" "------------" "--------"
echo "$STARTUP_ROW   (columns: with the driver, alone, difference; $DRIVER_OWN)"
printf '| %-58s | %10s | %10s | %6s |\n' "docker run --rm (N=$N, interleaved)" "$RJM" "$RBM" "$(ratio "$RJM" "$RBM")"
printf '| %-58s | %10s | %10s | %6s |\n' "docker run -d -p, 0 ports on the network (K=$K)" "${PM[bj$ID,0]}" "${PM[bb$ID,0]}" "$(ratio "${PM[bj$ID,0]}" "${PM[bb$ID,0]}")"
printf '| %-58s | %10s | %10s | %6s |\n' "docker run -d -p, $P ports on the network (K=$K)" "${PM[bj$ID,$P]}" "${PM[bb$ID,$P]}" "$(ratio "${PM[bj$ID,$P]}" "${PM[bb$ID,$P]}")"
printf '| %-58s | %10s | %10s | %6s |\n' "growth: at $P ports / at 0 ports" "$(ratio "${PM[bj$ID,$P]}" "${PM[bj$ID,0]}")" "$(ratio "${PM[bb$ID,$P]}" "${PM[bb$ID,0]}")" ""
echo "goals: driver start-up difference <= 100 ms; docker run --rm ratio <= 1.05; jcni growth <= 1.20"
