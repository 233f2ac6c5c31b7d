#!/usr/bin/env bash
# portmap ADD/DEL latency with 0, 500 and 2,000 existing mappings: jcni (nftables maps) against the
# reference Go plugin (/usr/lib/cni/portmap 1.1.1, iptables). Everything runs in private network
# namespaces created and deleted here (one per level and implementation); the root namespace is
# not touched. Rounds alternate between the levels, so machine load affects every level alike.
# Needs root. Build first: mvn -B -ntp -o -pl plugins -am install -DskipTests
# Usage: bench/portmap/run.sh [rounds-in-process [rounds-as-process]]
set -euo pipefail
ROUNDS=${1:-21}
PROC_ROUNDS=${2:-9}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/env.sh"
. "$ROOT/bench/lib/jcni-bench.sh"
JAVA=$JAVA_HOME/bin/java
CP=$ROOT/plugins/target/classes:$ROOT/linux/target/classes:$ROOT/types/target/classes:$ROOT/runtime/target/classes:$ROOT/common/target/classes
# The warm in-process runs get jcnid's JVM options (they stand for the daemon), the process runs a plugin's.
bench_jvm_options daemon; DAEMON_JVM=("${JVM_OPTIONS[@]}")
bench_jvm_options plugin; PLUGIN_JVM=("${JVM_OPTIONS[@]}")
GO=/usr/lib/cni/portmap
LEVELS=(0 500 2000)
TAG=jp-bench-$$
WORK=$(mktemp -d /tmp/jp-bench.XXXXXX)
NSES=()
cleanup() { for n in "${NSES[@]}"; do ip netns del "$n" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
conf() { # conf DATADIR PORT IP
  printf '{"cniVersion":"1.0.0","name":"bench","type":"portmap","dataDir":"%s","runtimeConfig":{"portMappings":[{"hostPort":%d,"containerPort":80,"protocol":"tcp"}]},"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/x"}],"ips":[{"address":"%s/16","interface":0}]}}' "$1" "$2" "$3"
}
# time_plugin NS CMD ID CONF EXE... : prints wall milliseconds of one plugin process
time_plugin() {
  local ns=$1 cmd=$2 id=$3 c=$4 s e; shift 4
  s=$(date +%s%N)
  echo "$c" | ip netns exec "$ns" env -i CNI_COMMAND="$cmd" CNI_CONTAINERID="$id" CNI_NETNS=/proc/self/ns/net \
    CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni PATH=/usr/sbin:/usr/bin:/sbin:/bin JCNI_AUTOSTART=0 "$@" >/dev/null
  e=$(date +%s%N)
  awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f\n", (b-a)/1e6}'
}
# go_prefill NS N: N mappings in the Go plugin's own iptables layout (a CNI-DN chain per container
# jumped to from CNI-HOSTPORT-DNAT, its mark rules), loaded with one iptables-restore.
go_prefill() {
  local ns=$1 n=$2 i ch ip
  {
    echo "*nat"
    printf ':CNI-HOSTPORT-DNAT - [0:0]\n:CNI-HOSTPORT-SETMARK - [0:0]\n:CNI-HOSTPORT-MASQ - [0:0]\n'
    for ((i = 0; i < n; i++)); do printf ':CNI-DN-%020x - [0:0]\n' "$i"; done
    printf -- '-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n'
    printf -- '-A POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ\n'
    printf -- '-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark 0x2000/0x2000\n'
    printf -- '-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE\n'
    for ((i = 0; i < n; i++)); do
      ch=$(printf 'CNI-DN-%020x' "$i")
      ip="10.92.$((i / 250)).$((2 + i % 250))"
      echo "-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment \"dnat name: \\\"bench\\\" id: \\\"pre$i\\\"\" -m multiport --dports $((10000 + i)) -j $ch"
      echo "-A $ch -s $ip/16 -p tcp -m tcp --dport $((10000 + i)) -j CNI-HOSTPORT-SETMARK"
      echo "-A $ch -s 127.0.0.1/32 -p tcp -m tcp --dport $((10000 + i)) -j CNI-HOSTPORT-SETMARK"
      echo "-A $ch -p tcp -m tcp --dport $((10000 + i)) -j DNAT --to-destination $ip:80"
    done
    echo "COMMIT"
  } | ip netns exec "$ns" iptables-restore
}

echo "== jcni in-process (warm JVM; median ms of $ROUNDS)"
"$JAVA" "${DAEMON_JVM[@]}" -Drounds="$ROUNDS" -cp "$CP" "$HERE/PortmapBench.java" "$WORK/j" "${LEVELS[@]}" | tee "$WORK/inproc"

echo "== preparing process runs"
for level in "${LEVELS[@]}"; do
  ip netns add "$TAG-p$level"; NSES+=("$TAG-p$level")
  ip netns exec "$TAG-p$level" "$JAVA" "${DAEMON_JVM[@]}" -cp "$CP" "$HERE/Prefill.java" "$WORK/p$level" 0 "$level"
  if [[ -x $GO ]]; then
    ip netns add "$TAG-g$level"; NSES+=("$TAG-g$level")
    go_prefill "$TAG-g$level" "$level"
  fi
done
JPLUGIN=("$JAVA" "${PLUGIN_JVM[@]}" -cp "$CP" io.jcni.plugins.PluginMain portmap)
for r in $(seq 1 "$PROC_ROUNDS"); do
  for level in "${LEVELS[@]}"; do
    c=$(conf "$WORK/p$level" $((51000 + r)) "10.91.0.$((2 + r))")
    time_plugin "$TAG-p$level" ADD "p$r" "$c" "${JPLUGIN[@]}" >> "$WORK/pa$level"
    time_plugin "$TAG-p$level" DEL "p$r" "$c" "${JPLUGIN[@]}" >> "$WORK/pd$level"
    if [[ -x $GO ]]; then
      c=$(conf "$WORK/g$level" $((52000 + r)) "10.93.0.$((2 + r))")
      time_plugin "$TAG-g$level" ADD "g$r" "$c" "$GO" >> "$WORK/ga$level"
      time_plugin "$TAG-g$level" DEL "g$r" "$c" "$GO" >> "$WORK/gd$level"
    fi
  done
done

echo
echo "== median ms, ADD / DEL (process figures include JVM or Go start; median of $PROC_ROUNDS)"
printf '%-9s | %-17s | %-17s | %-17s\n' existing "jcni in-process" "jcni process" "Go 1.1.1 iptables"
for level in "${LEVELS[@]}"; do
  a=$(awk -v l="$level" '$1==l {print $2" / "$3}' "$WORK/inproc")
  b="$(median < "$WORK/pa$level") / $(median < "$WORK/pd$level")"
  g="-"
  [[ -s $WORK/ga$level ]] && g="$(median < "$WORK/ga$level") / $(median < "$WORK/gd$level")"
  printf '%-9s | %-17s | %-17s | %-17s\n' "$level" "$a" "$b" "$g"
done
awk '$1==0 {a0=$2; d0=$3} $1==2000 {a2=$2; d2=$3} END {printf "jcni@2000 / jcni@0 (in-process): ADD %.2f, DEL %.2f  (goal <= 1.2)\n", a2/a0, d2/d0}' "$WORK/inproc"
