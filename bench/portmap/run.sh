#!/usr/bin/env bash
# portmap ADD/DEL latency with 0, 500 and 2,000 existing mappings: jcni (nftables maps) against the
# reference Go plugin (/usr/lib/cni/portmap, iptables). Everything runs in private network
# namespaces created and deleted here; the root namespace is not touched. Needs root.
# Usage: bench/portmap/run.sh [rounds]   (build first: mvn -pl plugins -am install -DskipTests)
set -euo pipefail
ROUNDS=${1:-21}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JAVA_HOME=${JCNI_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA=$JAVA_HOME/bin/java
CP=$ROOT/plugins/target/classes:$ROOT/linux/target/classes:$ROOT/spec/target/classes:$ROOT/runtime/target/classes
GO=/usr/lib/cni/portmap
LEVELS=(0 500 2000)
TAG=jp-bench-$$
WORK=$(mktemp -d /tmp/jp-bench.XXXXXX)
cleanup() { for n in "$TAG-j" "$TAG-p" "$TAG-g"; do ip netns del "$n" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now_ms() { date +%s%N | awk '{printf "%.2f", $1/1e6}'; }

echo "== jcni in-process (JVM warm; ms per operation, median of $ROUNDS)"
ip netns add "$TAG-j"
ip netns exec "$TAG-j" "$JAVA" -Drounds="$ROUNDS" -cp "$CP" "$HERE/PortmapBench.java" "$WORK/j" "${LEVELS[@]}" | tee "$WORK/inproc"

conf() { # conf DATADIR PORT IP
  printf '{"cniVersion":"1.0.0","name":"bench","type":"portmap","dataDir":"%s","runtimeConfig":{"portMappings":[{"hostPort":%d,"containerPort":80,"protocol":"tcp"}]},"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/x"}],"ips":[{"address":"%s/16","interface":0}]}}' "$1" "$2" "$3"
}
run_plugin() { # run_plugin NS CMD ID CONF EXE...
  local ns=$1 cmd=$2 id=$3 c=$4; shift 4
  echo "$c" | ip netns exec "$ns" env -i CNI_COMMAND="$cmd" CNI_CONTAINERID="$id" CNI_NETNS=/proc/self/ns/net \
    CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@" >/dev/null
}
time_ms() { local s e; s=$(date +%s%N); "$@"; e=$(date +%s%N); awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f\n", (b-a)/1e6}'; }

PROC_ROUNDS=$(( ROUNDS < 7 ? ROUNDS : 7 ))
echo "== jcni as a process (java PluginMain portmap: JVM start included; median of $PROC_ROUNDS)"
ip netns add "$TAG-p"
: > "$WORK/proc"
existing=0
for level in "${LEVELS[@]}"; do
  # Existing mappings loaded as the plugin would leave them, quickly: via the in-process bench's ADDs.
  if (( level > existing )); then
    ip netns exec "$TAG-p" "$JAVA" -Drounds=1 -cp "$CP" "$HERE/PortmapBench.java" "$WORK/p" "$level" >/dev/null
    existing=$level
  fi
  : > "$WORK/a"; : > "$WORK/d"
  for r in $(seq 1 "$PROC_ROUNDS"); do
    c=$(conf "$WORK/p" $((51000 + r)) "10.91.0.$((2 + r))")
    time_ms run_plugin "$TAG-p" ADD "p$r" "$c" "$JAVA" -XX:TieredStopAtLevel=1 -Xshare:auto -cp "$CP" io.jcni.plugins.PluginMain portmap >> "$WORK/a"
    time_ms run_plugin "$TAG-p" DEL "p$r" "$c" "$JAVA" -XX:TieredStopAtLevel=1 -Xshare:auto -cp "$CP" io.jcni.plugins.PluginMain portmap >> "$WORK/d"
  done
  echo "$level $(median < "$WORK/a") $(median < "$WORK/d")" | tee -a "$WORK/proc"
done

echo "== reference Go portmap 1.1.1 (iptables) as a process (median of $PROC_ROUNDS)"
: > "$WORK/go"
if [[ -x $GO ]]; then
  ip netns add "$TAG-g"
  existing=0
  for level in "${LEVELS[@]}"; do
    # Existing mappings in the Go plugin's own layout (a CNI-DN chain per container, jumped to from
    # CNI-HOSTPORT-DNAT, plus its mark rules), loaded with one iptables-restore.
    if (( level > existing )); then
      {
        echo "*nat"
        [[ $existing == 0 ]] && printf ':CNI-HOSTPORT-DNAT - [0:0]\n:CNI-HOSTPORT-SETMARK - [0:0]\n:CNI-HOSTPORT-MASQ - [0:0]\n-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n-A POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ\n-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark 0x2000/0x2000\n-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE\n'
        for i in $(seq "$existing" $((level - 1))); do
          ch=$(printf 'CNI-DN-%024x' "$i")
          ip="10.92.$((i / 250)).$((2 + i % 250))"
          echo ":$ch - [0:0]"
          echo "-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment \"dnat name: \\\"bench\\\" id: \\\"pre$i\\\"\" -m multiport --dports $((10000 + i)) -j $ch"
          echo "-A $ch -s $ip/16 -p tcp -m tcp --dport $((10000 + i)) -j CNI-HOSTPORT-SETMARK"
          echo "-A $ch -s 127.0.0.1/32 -p tcp -m tcp --dport $((10000 + i)) -j CNI-HOSTPORT-SETMARK"
          echo "-A $ch -p tcp -m tcp --dport $((10000 + i)) -j DNAT --to-destination $ip:80"
        done
        echo "COMMIT"
      } | ip netns exec "$TAG-g" iptables-restore --noflush
      existing=$level
    fi
    : > "$WORK/a"; : > "$WORK/d"
    for r in $(seq 1 "$PROC_ROUNDS"); do
      c=$(conf "$WORK/g" $((52000 + r)) "10.93.0.$((2 + r))")
      time_ms run_plugin "$TAG-g" ADD "g$r" "$c" "$GO" >> "$WORK/a"
      time_ms run_plugin "$TAG-g" DEL "g$r" "$c" "$GO" >> "$WORK/d"
    done
    echo "$level $(median < "$WORK/a") $(median < "$WORK/d")" | tee -a "$WORK/go"
  done
else
  echo "(not installed: $GO)"
fi

echo
echo "== summary: median ms (ADD / DEL)"
printf '%-10s %-22s %-22s %-22s\n' existing "jcni in-process" "jcni process" "Go portmap (iptables)"
for level in "${LEVELS[@]}"; do
  a=$(awk -v l="$level" '$1==l {print $2" / "$3}' "$WORK/inproc")
  b=$(awk -v l="$level" '$1==l {print $2" / "$3}' "$WORK/proc")
  g=$(awk -v l="$level" '$1==l {print $2" / "$3}' "$WORK/go")
  printf '%-10s %-22s %-22s %-22s\n' "$level" "$a" "$b" "${g:--}"
done
awk 'NR==FNR && $1==0 {a0=$2; d0=$3} NR==FNR && $1==2000 {a2=$2; d2=$3} END {printf "jcni@2000 / jcni@0 (in-process): ADD %.2f, DEL %.2f  (goal <= 1.2)\n", a2/a0, d2/d0}' "$WORK/inproc" "$WORK/inproc"
