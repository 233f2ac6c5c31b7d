# Shared by the bench/multihost scripts: each sources it first (`. "$HERE/lab.sh"`); it sets ROOT and
# brings in scripts/env.sh and bench/lib/jcni-bench.sh.
# multihost_lab WORK_PREFIX NAME_PREFIX PACKAGE... checks the Debian packages the script needs, and sets CP
# (the built modules' classes and overlay's test classes,
# where the IpamLoad load generator is), JAVA (an array: java with jcnid's JVM options from common's Launcher:
# the agents and the load generators are long-lived JVMs making many calls, as jcnid is), SFX (a
# random id), LAB (the lab netns's name), WORK (a temporary directory), and the exit trap that kills
# every pid in PIDS, deletes every netns in NSES and removes WORK. Nothing here touches the root
# namespace. The small measures below are the scripts' common vocabulary.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/env.sh
. "$ROOT/scripts/env.sh"
# shellcheck source=../lib/jcni-bench.sh
. "$ROOT/bench/lib/jcni-bench.sh"

multihost_lab() {
  local m
  need_packages "${@:3}"
  CP=""
  for m in overlay daemon plugins runtime etcd linux types common; do
    [ -d "$ROOT/$m/target/classes" ] || { echo "build first: mvn -B -ntp -q -pl overlay -am package -DskipTests" >&2; exit 1; }
    CP="$CP:$ROOT/$m/target/classes"
  done
  CP="${CP#:}:$ROOT/overlay/target/test-classes"
  bench_jvm_options daemon
  JAVA=("$JAVA_HOME/bin/java" "${JVM_OPTIONS[@]}") # an array: jcnid's options hold * patterns, never to be globbed
  SFX=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  LAB=$2-$SFX-lab
  WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  NSES=() PIDS=()
  trap multihost_cleanup EXIT
}

multihost_cleanup() {
  local p n
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in "${NSES[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$WORK"
}

now() { date +%s%N; }
cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$1/stat"; }   # utime + stime, 100 Hz ticks -> ms
rss_mb() { awk -v k="${2:-VmRSS}:" '$1 == k {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }   # rss_mb PID [VmRSS|VmHWM]
ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", (b-a)/1e6}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
in_lab() { nsenter --net=/var/run/netns/"$LAB" "$@"; }
netns() { ip netns add "$1"; NSES+=("$1"); ip -n "$1" link set lo up; }

# lab_bridge IP: the lab netns with the underlay bridge ul at IP/24.
lab_bridge() {
  netns "$LAB"
  ip -n "$LAB" link add ul type bridge
  ip -n "$LAB" addr add "$1/24" dev ul
  ip -n "$LAB" link set ul up
}

# lab_host_ns NAME PEER ADDR/PREFIX: a host namespace NAME whose eth0 is on the lab's bridge ul (its
# veth peer PEER in the lab netns), at ADDR/PREFIX.
lab_host_ns() {
  netns "$1"
  ip -n "$LAB" link add "$2" type veth peer name eth0 netns "$1"
  ip -n "$LAB" link set "$2" master ul up
  ip -n "$1" addr add "$3" dev eth0
  ip -n "$1" link set eth0 up
}

# lab_host_nses N: N host namespaces (named by the caller's `host I`), each with eth0 on the lab's bridge
# ul at 192.168.78.(10+I)/24 (ipam.sh and tls-cost.sh, whose hosts run only load generators).
lab_host_nses() {
  local i
  for i in $(seq 1 "$1"); do lab_host_ns "$(host "$i")" "h$i" "192.168.78.$((10 + i))/24"; done
}

# lab_two_etcds IP [etcd flag...]: TLS against plain in one lab (tls-cost.sh, tls-convergence.sh): after
# lab_bridge and lab_pki, two etcds in the lab netns on IP, "plain" (http on :2379) and "tls" (https with
# client certificates on :2389), with the extra flags given to both, each answering before it returns.
# Sets URL and ETCD_PID (by kind); tls_flags KIND and ctl KIND ARGS... (etcdctl) go with them.
declare -A URL=() ETCD_PID=()
lab_two_etcds() {
  local ip=$1 k
  shift
  URL=([plain]=http://$ip:2379 [tls]=https://$ip:2389)
  lab_etcd plain 2380 "$@"
  lab_etcd tls 2390 "$@" "${ETCD_TLS[@]}"
  for k in plain tls; do
    for _ in $(seq 100); do ctl "$k" endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
    ctl "$k" endpoint health >/dev/null 2>&1 || { echo "etcd $k did not start:" >&2; tail -5 "$WORK/etcd-$k.log" >&2; exit 1; }
  done
}
lab_etcd() { # KIND PEER_PORT [etcd flag...]
  local k=$1 peer=http://127.0.0.1:$2
  shift 2
  nsenter --net=/var/run/netns/"$LAB" etcd --name "$k" --data-dir "$WORK/etcd-$k" --listen-client-urls "${URL[$k]}" \
    --advertise-client-urls "${URL[$k]}" --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "$k=$peer" "$@" >"$WORK/etcd-$k.log" 2>&1 &
  PIDS+=($!)
  ETCD_PID[$k]=$!
}
# etcdctl's and curl's TLS flags for one of the two etcds (none for plain)
tls_flags() { [ "$1" = tls ] && printf '%s\n' "${CLIENT_TLS[@]}"; return 0; }
ctl() { local k=$1 f; shift; mapfile -t f < <(tls_flags "$k"); in_lab env ETCDCTL_API=3 etcdctl --endpoints "${URL[$k]}" "${f[@]}" "$@"; }

# lab_pki DIR IP: a CA, etcd's server certificate for IP and a client certificate without CN (the
# etcd README: etcd's gateway refuses a CN once auth is on), EC P-256, made with openssl in DIR; sets
# ETCD_TLS (etcd's flags), CLIENT_TLS (etcdctl's and curl's) and IPAM_TLS (cluster-ipam's keys, as
# JSON to append to its ipam section).
lab_pki() {
  local p=$1
  mkdir -p "$p"
  for k in ca server client; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$p/$k.key" 2>/dev/null; done
  openssl req -x509 -new -key "$p/ca.key" -subj /CN=bench-ca -days 2 -out "$p/ca.pem"
  openssl req -new -key "$p/server.key" -subj /CN=etcd -out "$p/server.csr"
  printf 'subjectAltName=IP:%s\n' "$2" >"$p/server.ext"
  openssl x509 -req -in "$p/server.csr" -CA "$p/ca.pem" -CAkey "$p/ca.key" -CAcreateserial -days 2 -extfile "$p/server.ext" -out "$p/server.pem" 2>/dev/null
  openssl req -new -key "$p/client.key" -subj /O=jcni-bench -out "$p/client.csr"
  openssl x509 -req -in "$p/client.csr" -CA "$p/ca.pem" -CAkey "$p/ca.key" -CAcreateserial -days 2 -out "$p/client.pem" 2>/dev/null
  ETCD_TLS=(--cert-file "$p/server.pem" --key-file "$p/server.key" --trusted-ca-file "$p/ca.pem" --client-cert-auth)
  CLIENT_TLS=(--cacert "$p/ca.pem" --cert "$p/client.pem" --key "$p/client.key")
  IPAM_TLS=",\"etcdCACertFile\":\"$p/ca.pem\",\"etcdCertFile\":\"$p/client.pem\",\"etcdKeyFile\":\"$p/client.key\""
}
