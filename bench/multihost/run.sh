#!/usr/bin/env bash
# Multi-host overlay benchmarks on a lab built from namespaces (nothing in the root namespace is
# touched): an underlay bridge and a real etcd in a private "lab" netns, N host netns each running
# `jcnid start --foreground --overlay` (VXLAN).
#   1. convergence: a new host's lease (its agent's "leased" log line) -> the route to its subnet on
#      every other host; then a ping to the new host's flannel.1 address from host 1 must pass.
#   2. L (1,000) simulated remote leases written into etcd in one transaction -> all programmed on host 1
#      (routes seen by `ip route`; also the agent's own first..last "added remote" log span), host 1's
#      agent RSS (VmRSS, VmHWM) then; then one lease deleted -> its route gone on host 1 (median of R
#      deletions). -l 5000 is the flannel-sized cluster (at most 10,000: 10.88.0.0/24 .. 10.127.255.0/24
#      of the network 10.64.0.0/10, skipping the real hosts' subnets).
#   3. cluster-ipam: 1,000 allocations from the N hosts at once (16 in flight per host), allocations/s.
# Goals: convergence <= 1 s; 1,000 peers <= 2 s, 5,000 <= 5 s with the agent's RSS <= 128 MB;
# one change <= 100 ms (also at 5,000); 0 duplicates.
# -t: the same against etcd with TLS and --client-cert-auth (certificates made with openssl in the
# work directory; the agents and cluster-ipam get the CA, a client certificate and its key); run
# once without and once with -t to compare (goal: TLS costs <= 10 % on convergence and allocations/s).
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# Usage: bench/multihost/run.sh [-n HOSTS(5)] [-l LEASES(1000)] [-r DELETIONS(9)] [-t]
set -euo pipefail
HOSTS=5 LEASES=1000 ROUNDS=9 TLS=no
while getopts n:l:r:t o; do case $o in n) HOSTS=$OPTARG ;; l) LEASES=$OPTARG ;; r) ROUNDS=$OPTARG ;; t) TLS=yes ;; *) exit 2 ;; esac; done
[[ "$LEASES" =~ ^[0-9]+$ && "$LEASES" -ge 10 && "$LEASES" -le 10000 ]] || { echo "run.sh: -l 10..10000" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab.sh
. "$HERE/lab.sh"
multihost_lab jcni-mh jb etcd-server etcd-client curl iproute2 iputils-ping python3 openssl
ETCD=http://192.168.77.1:2379
[ "$TLS" = yes ] && ETCD=https://192.168.77.1:2379
PREFIX=/jcni-bench-$SFX/network
ETCD_TLS=() CLIENT_TLS=() CURL_TLS=() AGENT_TLS=() IPAM_TLS=""
if [ "$TLS" = yes ]; then
  lab_pki "$WORK/pki" 192.168.77.1
  CURL_TLS=("${CLIENT_TLS[@]}")
  AGENT_TLS=(--etcd-cafile "$WORK/pki/ca.pem" --etcd-certfile "$WORK/pki/client.pem" --etcd-keyfile "$WORK/pki/client.key")
fi
host() { echo "jb-$SFX-h$1"; }
gw() { in_lab curl -sS "${CURL_TLS[@]}" --fail-with-body -X POST "$ETCD$1" -d @"$2"; }   # the JSON gateway, a body file
log_ns() { date -d "$1" +%s%N; }                       # an agent log timestamp -> epoch ns
# until_true SECONDS CMD...: polls CMD until it succeeds; fails the run after SECONDS
until_true() {
  local end=$(($(date +%s) + $1)); shift
  until "$@"; do [ "$(date +%s)" -lt "$end" ] || { echo "timed out: $*" >&2; exit 1; }; done
}
has_route() { ip -n "$1" route show "$2" | grep -q flannel; }
no_route() { ! ip -n "$1" route show "$2" | grep -q .; }
routes_at_least() { [ "$(ip -n "$1" route show dev flannel.1 | wc -l)" -ge "$2" ]; }

lab_bridge 192.168.77.1
nsenter --net=/var/run/netns/"$LAB" etcd --name b --data-dir "$WORK/etcd" --listen-client-urls $ETCD --advertise-client-urls $ETCD \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster b=http://127.0.0.1:2380 --max-txn-ops $((LEASES + 10)) --max-request-bytes 10485760 "${ETCD_TLS[@]}" >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do in_lab env ETCDCTL_API=3 etcdctl --endpoints $ETCD "${CLIENT_TLS[@]}" endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
in_lab env ETCDCTL_API=3 etcdctl --endpoints $ETCD "${CLIENT_TLS[@]}" put "$PREFIX/config" '{"Network":"10.64.0.0/10","SubnetLen":24,"Backend":{"Type":"vxlan"}}' >/dev/null

add_host() { # add_host I
  local h; h=$(host "$1")
  lab_host_ns "$h" "h$1" "192.168.77.$((10 + $1))/24"
  mkdir -p "$WORK/$h"
  nsenter --net=/var/run/netns/"$h" "${JAVA[@]}" -cp "$CP" io.jcni.daemon.Jcnid start --foreground --socket "$WORK/$h/jcnid.sock" \
    --overlay --etcd-endpoints $ETCD --etcd-prefix "$PREFIX" --iface eth0 --subnet-file "$WORK/$h/subnet.env" \
    --subnet-lease-ttl 10 "${AGENT_TLS[@]}" >"$WORK/$h/jcnid.log" 2>&1 &
  PIDS+=($!)
}
await_env() { for _ in $(seq 600); do [ -f "$WORK/$(host "$1")/subnet.env" ] && return 0; sleep 0.1; done; echo "host $1: no subnet.env" >&2; exit 1; }
subnet_of() { sed -n 's/^FLANNEL_SUBNET=\(.*\)\.1\/\(.*\)$/\1.0\/\2/p' "$WORK/$(host "$1")/subnet.env"; }

echo "jcni multi-host benchmarks (etcd TLS: $TLS): $(nproc) cores, $(uname -r), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. convergence
for i in $(seq 1 $((HOSTS - 1))); do add_host "$i"; [ "$i" = 1 ] && AGENT1=${PIDS[-1]}; done
for i in $(seq 1 $((HOSTS - 1))); do await_env "$i"; done
sleep 1
add_host "$HOSTS"
await_env "$HOSTS"
NEW=$(subnet_of "$HOSTS")
done_at=()
for i in $(seq 1 $((HOSTS - 1))); do
  until_true 30 has_route "$(host "$i")" "$NEW"
  done_at+=("$(now)")
done
last=$(printf '%s\n' "${done_at[@]}" | sort -n | tail -1)
leased=$(log_ns "$(grep -m1 'msg="leased"' "$WORK/$(host "$HOSTS")/jcnid.log" | cut -d' ' -f1)")
ping_ok=no
nsenter --net=/var/run/netns/"$(host 1)" ping -c1 -W2 "${NEW%/*}" >/dev/null && ping_ok=yes
echo "1. convergence, new host's lease -> route on all $((HOSTS - 1)) other hosts: $(ms "$leased" "$last") ms (goal <= 1000); ping host 1 -> new host's flannel.1: $ping_ok"

# ---- 2. 1,000 simulated remote leases on host 1
python3 - "$PREFIX" "$LEASES" "$WORK/subnets.txt" $(for i in $(seq 1 "$HOSTS"); do subnet_of "$i"; done) >"$WORK/txn.json" <<'EOF'
import base64, json, sys
prefix, n, listing, taken = sys.argv[1], int(sys.argv[2]), sys.argv[3], {s.split('/')[0] for s in sys.argv[4:]}
b = lambda s: base64.b64encode(s.encode()).decode()
subnets = (f"10.{88 + j // 256}.{j % 256}.0" for j in range(40 * 256))   # 10.88.0.0 .. 10.127.255.0 of 10.64.0.0/10
subnets = [s for s in subnets if s not in taken][:n]                     # never a real host's (they pick at random)
open(listing, "w").write("\n".join(subnets) + "\n")   # the deletions below take the first ones
puts = []
for i in range(n):
    sub = subnets[i]
    val = {"PublicIP": f"192.168.{100 + i // 250}.{1 + i % 250}", "PublicIPv6": None, "BackendType": "vxlan",
           "BackendData": {"VNI": 1, "VtepMAC": "0a:bb:%02x:%02x:%02x:01" % (i >> 16 & 255, i >> 8 & 255, i & 255)}}
    puts.append({"request_put": {"key": b(f"{prefix}/subnets/{sub}-24"), "value": b(json.dumps(val, separators=(',', ':')))}})
print(json.dumps({"compare": [], "success": puts}))
EOF
H1=$(host 1)
base=$(ip -n "$H1" route show dev flannel.1 | wc -l)
c0=$(cpu_ms "$AGENT1")
t0=$(now)
gw /v3/kv/txn "$WORK/txn.json" >"$WORK/txn.out" || { echo "etcd txn failed: $(head -c 300 "$WORK/txn.out")" >&2; exit 1; }
until_true $((LEASES < 1200 ? 60 : LEASES / 20)) routes_at_least "$H1" $((base + LEASES))
t1=$(now)
c1=$(cpu_ms "$AGENT1")
first=$(grep -m1 'msg="added remote" subnet=10\.\(8[89]\|9[0-9]\|1[01][0-9]\|12[0-7]\)\.' "$WORK/$H1/jcnid.log" | cut -d' ' -f1)
lastadd=$(grep 'msg="added remote" subnet=10\.\(8[89]\|9[0-9]\|1[01][0-9]\|12[0-7]\)\.' "$WORK/$H1/jcnid.log" | tail -1 | cut -d' ' -f1)
GOAL=$((LEASES <= 1000 ? 2000 : 5000))
echo "2. $LEASES remote leases (one etcd txn) -> all routes on host 1: $(ms "$t0" "$t1") ms (goal <= $GOAL); agent's first..last 'added remote': $(ms "$(log_ns "$first")" "$(log_ns "$lastadd")") ms"
echo "   host 1 agent's CPU time for them: $((c1 - c0)) ms (load-independent, unlike the wall times)"
echo "   host 1 agent's RSS: $(rss_mb "$AGENT1" VmRSS) MB now, peak (VmHWM) $(rss_mb "$AGENT1" VmHWM) MB (goal <= 128; jcnid's JVM options)"
echo "   kernel state on host 1: $(ip -n "$H1" route show dev flannel.1 | wc -l) routes, $(ip -n "$H1" neigh show dev flannel.1 | wc -l) neighbours, $(bridge -n "$H1" fdb show dev flannel.1 | grep -c dst) FDB entries"
dels=() agent=()
for r in $(seq 1 "$ROUNDS"); do
  sub=$(sed -n "${r}p" "$WORK/subnets.txt")
  printf '{"key":"%s"}' "$(printf '%s' "$PREFIX/subnets/$sub-24" | base64 -w0)" >"$WORK/del.json"
  s=$(now)
  gw /v3/kv/deleterange "$WORK/del.json" >/dev/null
  c=$(now)
  until_true 10 no_route "$H1" "$sub/24"
  dels+=("$(ms "$s" "$(now)")")
  # The agent's own account: its "removed remote" line, after etcd answered the curl (without the ip polling).
  agent+=("$(ms "$c" "$(log_ns "$(grep "msg=\"removed remote\" subnet=$sub/24 " "$WORK/$H1/jcnid.log" | tail -n 1 | cut -d' ' -f1)")")")
done
echo "   one lease deleted -> its route gone on host 1: median $(printf '%s\n' "${dels[@]}" | median) ms of $ROUNDS (goal <= 100; includes the curl and ip processes)"
echo "   the agent's 'removed remote' line after etcd's answer to the delete: median $(printf '%s\n' "${agent[@]}" | median) ms (negative: before curl returned)"

# ---- 3. cluster-ipam allocations per second from all hosts
ipam_pids=()
s=$(now)
for i in $(seq 1 "$HOSTS"); do
  nsenter --net=/var/run/netns/"$(host "$i")" "${JAVA[@]}" -Djcni.ipam.extra="$IPAM_TLS" -cp "$CP" io.jcni.overlay.IpamLoad add $ETCD 10.72.0.0/20 "b$i" $((1000 / HOSTS)) 16 >"$WORK/ipam$i.out" 2>&1 &
  PIDS+=($!)
  ipam_pids+=($!)
done
for p in "${ipam_pids[@]}"; do wait "$p"; done
e=$(now)
ok=$(cat "$WORK"/ipam*.out | grep -c '^OK' || true)
uniq=$(cat "$WORK"/ipam*.out | awk '/^OK/{print $3}' | sort -u | wc -l)
echo "3. cluster-ipam: $ok allocations from $HOSTS hosts in $(ms "$s" "$e") ms (JVM start included) = $(awk -v n="$ok" -v a="$s" -v b="$e" 'BEGIN{printf "%.0f", n/((b-a)/1e9)}')/s; distinct addresses: $uniq (duplicates: $((ok - uniq)))"
s=$(now)
nsenter --net=/var/run/netns/"$(host 1)" "${JAVA[@]}" -cp "$CP" io.jcni.overlay.IpamLoad add $ETCD 10.73.0.0/20 hl 1000 16 "$WORK/host-local" >"$WORK/hl.out" 2>&1
e=$(now)
hl=$(grep -c '^OK' "$WORK/hl.out" || true)
echo "   host-local, same JVM harness, one host: $hl allocations in $(ms "$s" "$e") ms = $(awk -v n="$hl" -v a="$s" -v b="$e" 'BEGIN{printf "%.0f", n/((b-a)/1e9)}')/s"
