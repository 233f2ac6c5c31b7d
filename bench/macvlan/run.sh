#!/usr/bin/env bash
# macvlan lifecycle benchmark: macvlan ADD + DEL (host-local IPAM) for one pod netns, side by side
# on this machine in one run, interleaved:
#   go          the reference Go plugin (/usr/lib/cni, override with GO_CNI_DIR)
#   standalone  jcni's plain JVM launchers (install.sh --no-shim)
#   daemon      jcni's shims + jcnid on a private socket
# Prints the median ADD, DEL and ADD+DEL per variant and the ratios to go, with the load average.
# Everything runs in network namespaces this script creates (a private "host" netns holding one
# veth master per variant; one netns per pod, made before the timing) and removes on exit. Root.
# Usage: bench/macvlan/run.sh [-n ITERATIONS(30)] [-w WARMUP(5)] [--daemon-warmup N(100)] [--only go,standalone,daemon]
set -euo pipefail
cd "$(dirname "$0")/../.."

N=30 WARMUP=5 DWARM=100 ONLY="go,standalone,daemon"
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    -w) WARMUP=$2; shift 2 ;;
    --daemon-warmup) DWARM=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for x in "$N" "$WARMUP" "$DWARM"; do [[ "$x" =~ ^[0-9]+$ ]] || { echo "run.sh: counts must be numbers" >&2; exit 2; }; done
[ "$N" -ge 1 ] && [ "$N" -le 10000 ] || { echo "run.sh: -n 1..10000" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (network namespaces)" >&2; exit 1; }
. scripts/env.sh
need_command ip iproute2
GO_DIR=${GO_CNI_DIR:-/usr/lib/cni}
IFS=, read -r -a VARIANTS <<< "$ONLY"
for v in "${VARIANTS[@]}"; do
  case "$v" in go|standalone|daemon) ;; *) echo "run.sh: unknown variant $v" >&2; exit 2 ;; esac
done
if [[ ",$ONLY," == *,go,* ]] && [ ! -x "$GO_DIR/macvlan" ]; then
  echo "run.sh: no reference macvlan in $GO_DIR (apt-get install containernetworking-plugins, or set GO_CNI_DIR)" >&2; exit 1
fi

. bench/lib/jcni-bench.sh
bench_world jcni-bench-mv jcbm

# --- jcni: build the jars if needed (package, never install: ~/.m2 is shared); install twice ---
if [[ ",$ONLY," == *,standalone,* || ",$ONLY," == *,daemon,* ]]; then
  bench_jars
  bench_install standalone shim
fi
if [[ ",$ONLY," == *,daemon,* ]]; then
  "$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" >&2
fi

ip netns add "$HOST"
ip -n "$HOST" link set lo up
declare -A DIR=([go]=$GO_DIR [standalone]=$TMP/standalone [daemon]=$TMP/shim)
declare -A NET=([go]=1 [standalone]=2 [daemon]=3)
for v in go standalone daemon; do
  # The master: a veth whose peer stays in the host netns (up, so the macvlan has carrier).
  ip -n "$HOST" link add "jm${NET[$v]}-$ID" type veth peer name "jp${NET[$v]}-$ID"
  ip -n "$HOST" link set "jm${NET[$v]}-$ID" up
  ip -n "$HOST" link set "jp${NET[$v]}-$ID" up
  cat > "$TMP/$v.conf" <<CONF
{"cniVersion":"1.0.0","name":"jcbm-$v","type":"macvlan","master":"jm${NET[$v]}-$ID","mode":"bridge",
 "ipam":{"type":"host-local","subnet":"10.${NET[$v]}$((RANDOM % 9)).0.0/16","dataDir":"$TMP/ipam-$v"}}
CONF
done

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

cni() { # VARIANT COMMAND CONTAINER NETNS
  local v=$1 out
  if ! out=$(CNI_COMMAND=$2 CNI_CONTAINERID=$3 CNI_NETNS=/var/run/netns/$4 CNI_IFNAME=eth0 CNI_PATH=${DIR[$v]} \
      ip netns exec "$HOST" "${DIR[$v]}/macvlan" < "$TMP/$v.conf" 2>"$TMP/err"); then
    echo "run.sh: $v $2 $3 failed: $out $(cat "$TMP/err")" >&2
    return 1
  fi
}

lifecycle() { # VARIANT INDEX : prints "add_us del_us"
  local v=$1 pod="jcbm-$1-$2-$ID" cid="jcbm-$1-$2" t1 t2 t3
  ip netns add "$pod"
  t1=$(now_us)
  cni "$v" ADD "$cid" "$pod"
  t2=$(now_us)
  cni "$v" DEL "$cid" "$pod"
  t3=$(now_us)
  ip netns del "$pod"
  echo "$((t2 - t1)) $((t3 - t2))"
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
  ip netns add "jcbm-dw-$ID"
  for ((i = 0; i < DWARM && i < 10000; i++)); do
    cni daemon ADD "jcbm-dw" "jcbm-dw-$ID"
    cni daemon DEL "jcbm-dw" "jcbm-dw-$ID"
  done
  ip netns del "jcbm-dw-$ID"
fi
echo "measuring: $N lifecycles per variant, interleaved ..." >&2
for ((i = 0; i < N; i++)); do
  for v in "${VARIANTS[@]}"; do lifecycle "$v" "$i" >> "$TMP/seq.$v"; done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
echo "load average (1/5/15 min): before $LOAD_BEFORE, after $LOAD_AFTER"
echo "macvlan lifecycle = macvlan (bridge mode) + host-local ADD, then DEL, of one pod netns; plugins run via ip netns exec <host netns>"
echo "median of $N, interleaved (after $WARMUP warm-up lifecycles each, and $DWARM ADD/DEL pairs for jcnid), ms"
echo
printf '| %-10s | %8s | %8s | %10s | %7s |\n' variant "ADD ms" "DEL ms" "ADD+DEL ms" "× go"
printf '|%s|%s|%s|%s|%s|\n' ------------ ---------- ---------- ------------ ---------
declare -A MED
for v in "${VARIANTS[@]}"; do MED[$v]=$(awk '{print $1 + $2}' "$TMP/seq.$v" | median); done
for v in "${VARIANTS[@]}"; do
  add=$(awk '{print $1}' "$TMP/seq.$v" | median); del=$(awk '{print $2}' "$TMP/seq.$v" | median)
  ratio=-
  [ -n "${MED[go]:-}" ] && ratio=$(awk -v a="${MED[$v]}" -v b="${MED[go]}" 'BEGIN { printf "%.2f", a / b }')
  printf '| %-10s | %8s | %8s | %10s | %7s |\n' "$v" "$(ms "$add")" "$(ms "$del")" "$(ms "${MED[$v]}")" "$ratio"
done
