#!/usr/bin/env bash
# Link deletion on DEL: what removing a container's veth costs, one by one and for 50 at once, done
# in each way a plugin could do it. Kernel work only (iproute2), so the figures are the floor every
# plugin pays; process start-up is measured too and reported apart.
#   host      RTM_DELLINK of the host end, in the host netns (one `ip` per link)
#   cont      RTM_DELLINK of the container end, inside the container netns (what bridge/ptp DEL do)
#   batch     all host ends in one `ip -batch` process: one socket, one message after the other
#   parallel  one `ip` per link, all started at once (concurrent DELs, each its own RTM_DELLINK)
#   group     every host end put in one device group, then one RTM_DELLINK for the group
#   netns     no RTM_DELLINK: `ip netns del` of the container netns, the kernel removes the veth
#   retire    address flush + down + rename of the container end (no deletion): what DEL would pay
#             if the link were deleted after DEL returned
# Everything lives in namespaces this script creates (ld-*-ID) and removes on exit. Run as root.
# Usage: bench/link-delete/run.sh [-n LINKS(50)] [-r ROUNDS(3)]
set -euo pipefail
N=50 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[0-9]+$ && "$ROUNDS" =~ ^[0-9]+$ && "$N" -ge 1 && "$N" -le 500 && "$ROUNDS" -le 20 ]] || { echo "run.sh: -n 1..500, -r 0..20" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root" >&2; exit 1; }
ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
H="ld-h-$ID"
cleanup() {
  set +e
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -- "^ld-.*-$ID\$"); do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$H"
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

# setup: N container netns, each with eth0 whose peer vN-ID is in the host netns (up, with an address).
setup() {
  local i
  for ((i = 0; i < N; i++)); do ip netns add "ld-c$i-$ID"; done
  { for ((i = 0; i < N; i++)); do echo "link add v$i-$ID type veth peer name eth0 netns ld-c$i-$ID"; echo "link set v$i-$ID up"; done; } | ip -n "$H" -batch -
  for ((i = 0; i < N; i++)); do
    ip -n "ld-c$i-$ID" -batch - <<B
addr add 10.77.$((i / 250)).$((i % 250 + 2))/16 dev eth0
link set eth0 up
B
  done
}
teardown_netns() { local i; for ((i = 0; i < N; i++)); do ip netns del "ld-c$i-$ID" 2>/dev/null || true; done; }

declare -A TOTAL
add() { TOTAL[$1]=$(( ${TOTAL[$1]:-0} + $2 )); }
run() {
  local v=$1 i t0 t1 pids
  setup
  t0=$(now_us)
  case "$v" in
    spawn) for ((i = 0; i < N; i++)); do ip -n "$H" link show lo >/dev/null; done ;;
    host) for ((i = 0; i < N; i++)); do ip -n "$H" link del "v$i-$ID"; done ;;
    cont) for ((i = 0; i < N; i++)); do ip -n "ld-c$i-$ID" link del eth0; done ;;
    batch) for ((i = 0; i < N; i++)); do echo "link del v$i-$ID"; done | ip -n "$H" -batch - ;;
    parallel)
      pids=()
      for ((i = 0; i < N; i++)); do ip -n "$H" link del "v$i-$ID" & pids+=($!); done
      for i in "${pids[@]}"; do wait "$i"; done ;;
    group)
      t0=-1
      for ((i = 0; i < N; i++)); do echo "link set v$i-$ID group 77"; done | ip -n "$H" -batch -
      t0=$(now_us)
      ip -n "$H" link del group 77 ;;
    netns) for ((i = 0; i < N; i++)); do ip netns del "ld-c$i-$ID"; done ;;
    retire)
      for ((i = 0; i < N; i++)); do
        ip -n "ld-c$i-$ID" -batch - <<B
addr flush dev eth0
link set eth0 down
link set eth0 name dead0
B
      done ;;
  esac
  t1=$(now_us)
  add "$v" $((t1 - t0))
  teardown_netns
  # the host ends of netns/retire go with their netns; wait until the kernel has removed them
  for ((i = 0; i < 200; i++)); do [ "$(ip -n "$H" -o link show type veth | wc -l)" -eq 0 ] && break; sleep 0.05; done
}

VARIANTS=(spawn host cont batch parallel group netns retire)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; r++)); do
  for v in "${VARIANTS[@]}"; do run "$v"; done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
echo "machine: $(nproc) cpus, kernel $(uname -r); load average before $LOAD_BEFORE, after $LOAD_AFTER"
echo "$N veth pairs per variant, mean of $ROUNDS rounds; ms for all $N, ms per link"
printf '| %-8s | %10s | %10s |\n' variant "all ms" "per link"
printf '|%s|%s|%s|\n' ---------- ------------ ------------
for v in "${VARIANTS[@]}"; do
  awk -v v="$v" -v t="${TOTAL[$v]}" -v r="$ROUNDS" -v n="$N" 'BEGIN { printf "| %-8s | %10.1f | %10.2f |\n", v, t / r / 1000, t / r / n / 1000 }'
done
