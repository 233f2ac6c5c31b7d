#!/usr/bin/env bash
# jcnid's resident memory with many live attachments: -a (1000) pods attached with bridge +
# host-local through the shims (one private "host" netns holding one bridge, one netns per pod;
# a bridge takes at most 1024 ports), RSS read from /proc/PID/status before, at the peak, and after
# every pod is deleted again. Everything is created here and removed on exit. Run as root.
# -s: jcnid runs in the private host netns with every hosted service on: the Docker driver (its
# plugin socket in the work directory, answering /Plugin.Activate), DHCP (its own socket) and the
# overlay agent (VXLAN, against a real etcd on the host netns' loopback, a veth as underlay).
# Usage: bench/memory/run.sh [-a ATTACHMENTS(1000)] [-p PARALLEL(4)] [-s]
set -euo pipefail
cd "$(dirname "$0")/../.."
A=1000 P=4 SERVICES=no
while [ $# -gt 0 ]; do
  case "$1" in
    -a) A=$2; shift 2 ;;
    -p) P=$2; shift 2 ;;
    -s) SERVICES=yes; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
ip netns add "$HOST"
ip -n "$HOST" link set lo up
SERVICE_FLAGS=()
if [ "$SERVICES" = yes ]; then
  need_packages etcd-server curl
  # The overlay's underlay: one end of a veth pair with an address, both ends in the host netns
  # (no dummy: not every kernel here has the module).
  ip -n "$HOST" link add ul0 type veth peer name ul1
  ip -n "$HOST" addr add 192.168.79.1/24 dev ul0
  ip -n "$HOST" link set ul1 up
  ip -n "$HOST" link set ul0 up
  ip netns exec "$HOST" etcd --name m --data-dir "$TMP/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
    --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster m=http://127.0.0.1:2380 >"$TMP/etcd.log" 2>&1 &
  ETCD_PID=$!
  # set +e first: errexit holds in traps too, and etcd's exit status would end this one before the cleanup.
  trap 'set +e; bench_cleanup; kill "$ETCD_PID" 2>/dev/null; wait "$ETCD_PID" 2>/dev/null' EXIT
  for _ in $(seq 150); do
    ip netns exec "$HOST" curl -s -m 1 http://127.0.0.1:2379/health | grep -q true && break; sleep 0.2
  done
  ip netns exec "$HOST" curl -sS -m 5 -X POST http://127.0.0.1:2379/v3/kv/put -d "{\"key\":\"$(printf /jm-%s/network/config "$ID" | base64 -w0)\",\"value\":\"$(printf '{"Network":"10.200.0.0/16","SubnetLen":24,"Backend":{"Type":"vxlan"}}' | base64 -w0)\"}" >/dev/null
  SERVICE_FLAGS=(--docker-driver "jm$ID" --docker-plugin-dir "$TMP/docker-plugins" --docker-state-dir "$TMP/docker"
    --dhcp --dhcp-socket "$TMP/run/dhcp.sock" --dhcp-state-dir "$TMP/dhcp"
    --overlay --etcd-endpoints http://127.0.0.1:2379 --etcd-prefix "/jm-$ID/network" --iface ul0 --subnet-file "$TMP/subnet.env")
  ip netns exec "$HOST" "$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" "${SERVICE_FLAGS[@]}" ${JCNID_FLAGS:-} >&2
  ip netns exec "$HOST" curl -s -m 5 --unix-socket "$TMP/docker-plugins/jm$ID.sock" -X POST http://x/Plugin.Activate | grep -q Implements \
    || { echo "run.sh: the Docker driver does not answer" >&2; exit 1; }
  for _ in $(seq 300); do [ -s "$TMP/subnet.env" ] && break; sleep 0.1; done   # written once its lease is taken
  [ -s "$TMP/subnet.env" ] || { echo "run.sh: the overlay agent wrote no subnet.env within 30 s" >&2; exit 1; }
else
  "$PREFIX/bin/jcnid" start --socket "$SOCK" --log-file "$TMP/jcnid.log" ${JCNID_FLAGS:-} >&2
fi
PID=$(cat "$TMP/run/jcnid.pid")
rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
hwm() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$PID/status"; }
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
LIVE=$(ip -n "$HOST" -o link show type veth | awk '$2 !~ /^ul[01]@/' | wc -l)
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
[ "$SERVICES" = yes ] && echo "hosted services on: Docker driver, DHCP, overlay agent (VXLAN over etcd); $(ip netns exec "$HOST" "$PREFIX/bin/jcnid" status --socket "$SOCK" | grep -c ' running$') running"
echo "| | live veths in the host netns | jcnid RSS MB |"
echo "|---|---|---|"
echo "| after 20 warm-up lifecycles | 0 | $R0 |"
echo "| $A attached | $LIVE | $R1 (2 s later: $R1b) |"
echo "| all deleted again | $(ip -n "$HOST" -o link show type veth | awk '$2 !~ /^ul[01]@/' | wc -l) | $R2 |"
echo "| peak (VmHWM) | | $H |"
awk -v r="$H" 'BEGIN { printf "goal jcnid RSS at 1,000 attachments <= 128 MB: peak %.1f MB %s\n", r, (r <= 128 ? "met" : "MISSED") }'
