#!/usr/bin/env bash
# jcnid's resident memory with many live attachments: -a (1000) pods attached with bridge +
# host-local through the shims (one private "host" netns holding one bridge, one netns per pod;
# a bridge takes at most 1024 ports), RSS read from /proc/PID/status before, at the peak, and after
# every pod is deleted again. Everything is created here and removed on exit. Run as root.
# Usage: bench/memory/run.sh [-a ATTACHMENTS(1000)] [-p PARALLEL(4)]
set -euo pipefail
cd "$(dirname "$0")/../.."
A=1000 P=4
while [ $# -gt 0 ]; do
  case "$1" in
    -a) A=$2; shift 2 ;;
    -p) P=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$A" =~ ^[0-9]+$ && "$P" =~ ^[0-9]+$ && "$A" -ge 1 && "$A" -le 1020 && "$P" -ge 1 && "$P" -le 16 ]] || { echo "run.sh: -a 1..1020, -p 1..16" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root" >&2; exit 1; }
. scripts/env.sh
. bench/lib/jcni-bench.sh
bench_world jcni-mem jm
bench_jars
bench_install shim
"$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" ${JCNID_FLAGS:-} >&2
PID=$(cat "$TMP/run/jcnid.pid")
rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
hwm() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
ip netns add "$HOST"
cat > "$TMP/conf" <<CONF
{"cniVersion":"1.0.0","name":"jm-$ID","type":"bridge","bridge":"jm-$ID","isGateway":true,
 "ipam":{"type":"host-local","subnet":"10.66.0.0/16","dataDir":"$TMP/ipam"}}
CONF
cni() {
  CNI_COMMAND=$1 CNI_CONTAINERID="c$2" CNI_NETNS="/var/run/netns/jm-$2-$ID" CNI_IFNAME=eth0 CNI_PATH="$TMP/shim" \
    ip netns exec "$HOST" "$TMP/shim/bridge" < "$TMP/conf" > /dev/null
}
# a few lifecycles first: the daemon as it is once it has served
for ((i = 0; i < 20; i++)); do ip netns add "jm-w-$ID"; cni ADD w; cni DEL w; ip netns del "jm-w-$ID"; done
R0=$(rss)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "attaching $A pods ($P at a time) ..." >&2
attach() { local i=$1; ip netns add "jm-$i-$ID" && cni ADD "$i"; }
export -f attach cni; export TMP HOST ID
seq 0 $((A - 1)) | xargs -P "$P" -I{} bash -c 'attach {}'
LIVE=$(ip -n "$HOST" -o link show type veth | wc -l)
R1=$(rss)
sleep 2
R1b=$(rss)
echo "deleting them ..." >&2
detach() { local i=$1; cni DEL "$i" && ip netns del "jm-$i-$ID"; }
export -f detach
seq 0 $((A - 1)) | xargs -P "$P" -I{} bash -c 'detach {}'
R2=$(rss)
H=$(hwm)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
echo "machine: $(nproc) cpus, kernel $(uname -r); load average before $LOAD_BEFORE, after $LOAD_AFTER"
echo "jcnid (trimmed runtime, AOT cache, default heap settings of scripts/install.sh) with bridge + host-local attachments"
echo "| | live veths in the host netns | jcnid RSS MB |"
echo "|---|---|---|"
echo "| after 20 warm-up lifecycles | 0 | $R0 |"
echo "| $A attached | $LIVE | $R1 (2 s later: $R1b) |"
echo "| all deleted again | $(ip -n "$HOST" -o link show type veth | wc -l) | $R2 |"
echo "| peak (VmHWM) | | $H |"
awk -v r="$H" 'BEGIN { printf "goal jcnid RSS at 1,000 attachments <= 128 MB: peak %.1f MB %s\n", r, (r <= 128 ? "met" : "MISSED") }'
