#!/usr/bin/env bash
# The main job, end to end: builds and installs jcni into a scratch directory, then in a private
# "host" network namespace connects two "containers" (network namespaces) to one bridge network
# with `jcni add`, prints their addresses, pings one from the other, and tears everything down with
# `jcni del`, showing that no allocation, cache file or interface is left behind. Then the same
# again with the jcnid daemon serving the plugin calls (the fast path), and its metrics. Then Docker:
# a private dockerd in the host namespace gets jcni as its network driver (jcnid --docker-driver),
# two containers on a jcni network ping each other by name, and a published port answers. Last, two
# "hosts" on one underlay with a real etcd, each running `jcnid --overlay`: pods on different hosts
# ping each other over VXLAN (the flannel plugin delegating to bridge + host-local); then the same two
# hosts each get a dockerd and a jcnid with the Docker driver on that etcd, and one cluster network
# (`-o jcni.cluster=NAME`) created on both carries a container on each across hosts. And DHCP: a
# container on a LAN served by dnsmasq gets its address through jcni's dhcp IPAM plugin, the lease
# held and renewed by `jcnid --dhcp`, and dropped on `jcni del`.
#
# Usage: scripts/demo.sh [--reference] [--no-docker]
#   --reference: drive the reference Go plugins instead (no jcnid, no Docker part)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (it creates network namespaces)" >&2; exit 1; }
need_packages "${JCNI_BUILD_PACKAGES[@]}" iputils-ping containernetworking-plugins etcd-server etcd-client dnsmasq-base

PLUGINS=jcni DOCKER=1
for a in "$@"; do
  case "$a" in --reference) PLUGINS=reference ;; --no-docker) DOCKER=0 ;; *) echo "usage: $0 [--reference] [--no-docker]" >&2; exit 2 ;; esac
done
[ "$PLUGINS" = jcni ] || DOCKER=0
[ "$DOCKER" = 1 ] && need_packages docker.io busybox-static curl
DRIVER=jcnidemo$$ DOCKERD_PID= DRIVER_PID=

ID=$$
WORK=$(mktemp -d /tmp/jcni-demo.XXXXXX)
DOCKER_CLI="/usr/bin/docker -H unix://$WORK/docker.sock"
HOST=jcni-demo-host-$ID A=jcni-demo-a-$ID B=jcni-demo-b-$ID
OV_NS=() ETCD_PID= DNSMASQ_PID= MH_DOCKERD_PIDS=() MH_DRIVER_PIDS=()
mh_docker() { local h=$1; shift; /usr/bin/docker -H "unix://$WORK/mh$h/docker.sock" "$@"; }
# the multi-host Docker part: containers and networks while the drivers still answer, then dockerd, then the
# drivers; called by the demo (set -e) and by cleanup, so nothing here may fail
mh_stop() {
  local h p i
  for h in 1 2; do
    [ -S "$WORK/mh$h/docker.sock" ] || continue
    mh_docker "$h" rm -f "jcni-demo-mh$h" >/dev/null 2>&1 || true
    mh_docker "$h" network rm jcni-demo-cluster >/dev/null 2>&1 || true
  done
  for p in "${MH_DOCKERD_PIDS[@]}" "${MH_DRIVER_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    for i in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  done
  MH_DOCKERD_PIDS=() MH_DRIVER_PIDS=()
  rm -f "/run/docker/plugins/${DRIVER}h1.sock" "/run/docker/plugins/${DRIVER}h2.sock"
  findmnt -rn -o TARGET | { grep "^$WORK/mh" || true; } | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}
cleanup() {
  set +e
  mh_stop
  [ -S "$WORK/run/dhcp.sock" ] && "$WORK/jcni/bin/jcnid" stop --socket "$WORK/run/jcnid-dhcp.sock" --pid-file "$WORK/run/jcnid-dhcp.pid" >/dev/null 2>&1
  [ -n "$DNSMASQ_PID" ] && kill "$DNSMASQ_PID" 2>/dev/null && wait "$DNSMASQ_PID" 2>/dev/null
  for h in 1 2; do [ -S "$WORK/ov/h$h.sock" ] && nsenter --net="/var/run/netns/jcni-demo-h$h-$ID" "$WORK/jcni/bin/jcnid" stop --socket "$WORK/ov/h$h.sock" --pid-file "$WORK/ov/h$h.pid" >/dev/null 2>&1; done
  [ -n "$ETCD_PID" ] && kill "$ETCD_PID" 2>/dev/null && wait "$ETCD_PID" 2>/dev/null
  for ns in "${OV_NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  if [ -n "$DOCKERD_PID" ]; then
    $DOCKER_CLI rm -f jcni-demo-web jcni-demo-client >/dev/null 2>&1
    $DOCKER_CLI network rm jcni-demo >/dev/null 2>&1
    kill "$DOCKERD_PID" 2>/dev/null
    for i in $(seq 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
    findmnt -rn -o TARGET | grep "^$WORK" | sort -r | xargs -r -n1 umount -l 2>/dev/null
  fi
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null && wait "$DRIVER_PID" 2>/dev/null
  rm -f "/run/docker/plugins/$DRIVER.sock"
  [ -x "$WORK/jcni/bin/jcnid" ] && "$WORK/jcni/bin/jcnid" stop --socket "$WORK/run/jcnid.sock" >/dev/null 2>&1
  for ns in "$A" "$B" "$HOST"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# DEL only retires a veth (down, no addresses, renamed, in device group 0x6a636e69 = 1784901225)
# before it answers; the kernel's slow deletion follows the answer (docs/performance.md).
# await_retired NETNS: waits (at most 10 s) until that namespace has no retired link left.
await_retired() {
  local i t0=$EPOCHREALTIME n
  for ((i = 0; i < 200; i++)); do
    n=$(ip -n "$1" -o link show group 1784901225 | wc -l)
    [ "$n" -eq 0 ] && break
    sleep 0.05
  done
  [ "$i" -gt 0 ] && echo "retired veths deleted after DEL's answer (waited $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }') ms)"
  return 0
}

step "build and install jcni into $WORK"
./scripts/install.sh --bin-dir "$WORK/bin" --prefix "$WORK/jcni" --cmd-dir "$WORK/cmd" --socket "$WORK/run/jcnid.sock" >/dev/null
if [ "$PLUGINS" = reference ]; then CNI_PATH=/usr/lib/cni; else CNI_PATH="$WORK/bin:/usr/lib/cni"; fi
export CNI_PATH NETCONFPATH="$WORK/net.d" JCNI_CACHE_DIR="$WORK/cache"
# The demo starts each jcnid itself, to show the standalone plugins first: the shims must not start one.
export JCNI_AUTOSTART=0
JCNI="$WORK/cmd/jcni"
echo "plugins from: ${CNI_PATH%%:*}"

step "a host and two containers (network namespaces)"
for ns in "$HOST" "$A" "$B"; do ip netns add "$ns"; ip -n "$ns" link set lo up; echo "  /var/run/netns/$ns"; done

mkdir -p "$NETCONFPATH"
cat > "$NETCONFPATH/10-demo.conflist" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "demo",
  "plugins": [
    { "type": "bridge", "bridge": "jcni-demo0", "isGateway": true,
      "ipam": { "type": "host-local", "subnet": "10.123.0.0/24", "dataDir": "$WORK/ipam",
                "routes": [ { "dst": "0.0.0.0/0" } ] } },
    { "type": "tuning", "sysctl": { "net.ipv4.conf.eth0.accept_redirects": "0" } }
  ]
}
CONF
step "the network: $NETCONFPATH/10-demo.conflist"
cat "$NETCONFPATH/10-demo.conflist"

# jcni runs inside the host namespace so the bridge and its veths land there, not on this machine.
injcni() { ip netns exec "$HOST" "$JCNI" "$@"; }

step "jcni add demo (container A)"
injcni add demo "/var/run/netns/$A" | tee "$WORK/a.json"
step "jcni add demo (container B)"
injcni add demo "/var/run/netns/$B" > "$WORK/b.json"
B_IP=$(sed -n 's/.*"address": "\([0-9.]*\)\/.*/\1/p' "$WORK/b.json" | head -1)

step "addresses"
for ns in "$A" "$B"; do echo "$ns:"; ip -n "$ns" -br addr show dev eth0; done
echo "host bridge:"; ip -n "$HOST" -br addr show dev jcni-demo0

step "ping container B ($B_IP) from container A"
ip netns exec "$A" ping -c 3 -W 2 "$B_IP"

step "jcni check, then jcni del both"
injcni check demo "/var/run/netns/$A" && echo "check A: ok"
injcni del demo "/var/run/netns/$A"
injcni del demo "/var/run/netns/$B"

step "nothing left behind"
await_retired "$HOST"
left=$(ls "$WORK/ipam/demo" 2>/dev/null | grep -v -e '^lock$' -e '^last_reserved_ip' || true)
cached=$(ls "$WORK/cache/results" 2>/dev/null || true)
veths=$(ip -n "$HOST" -o link show type veth | wc -l)
echo "allocations: ${left:-none}; cached results: ${cached:-none}; veths in host: $veths"
[ -z "$left" ] && [ -z "$cached" ] && [ "$veths" -eq 0 ] || { echo "demo: something was left behind" >&2; exit 1; }

if [ "$PLUGINS" = jcni ]; then
  step "the fast path: jcnid serves the plugin calls (the installed plugins are shims that ask it first)"
  "$WORK/jcni/bin/jcnid" start --socket "$WORK/run/jcnid.sock" --log-file "$WORK/jcnid.log"
  injcni add demo "/var/run/netns/$A" > /dev/null
  injcni add demo "/var/run/netns/$B" > "$WORK/b.json"
  B_IP=$(sed -n 's/.*"address": "\([0-9.]*\)\/.*/\1/p' "$WORK/b.json" | head -1)
  ip netns exec "$A" ping -c 1 -W 2 "$B_IP" | grep 'bytes from'
  injcni del demo "/var/run/netns/$A"
  injcni del demo "/var/run/netns/$B"
  echo "jcnid served (from its Prometheus metrics):"
  "$WORK/jcni/bin/jcnid" metrics --socket "$WORK/run/jcnid.sock" | grep '^jcnid_requests_total' | sed 's/^/  /'
  echo "its request log:"; sed 's/^/  /' "$WORK/jcnid.log" | grep -v '^  *$' | tail -4
  await_retired "$HOST"
  "$WORK/jcni/bin/jcnid" stop --socket "$WORK/run/jcnid.sock" >/dev/null
  left=$(ls "$WORK/ipam/demo" 2>/dev/null | grep -v -e '^lock$' -e '^last_reserved_ip' || true)
  [ -z "$left" ] && [ "$(ip -n "$HOST" -o link show type veth | wc -l)" -eq 0 ] || { echo "demo: something was left behind" >&2; exit 1; }
fi
if [ "$DOCKER" = 1 ]; then
  step "Docker: a private dockerd in the host namespace, with jcni as its network and IPAM driver"
  nsenter --net="/var/run/netns/$HOST" dockerd --data-root "$WORK/docker" --exec-root "$WORK/docker-exec" \
    -H "unix://$WORK/docker.sock" --pidfile "$WORK/docker.pid" >"$WORK/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  nsenter --net="/var/run/netns/$HOST" "$WORK/jcni/bin/jcnid" start --foreground --socket "$WORK/run/jcnid.sock" \
    --docker-driver "$DRIVER" --docker-state-dir "$WORK/docker-driver" >"$WORK/jcnid-docker.log" 2>&1 &
  DRIVER_PID=$!
  for i in $(seq 300); do $DOCKER_CLI version >/dev/null 2>&1 && [ -S "/run/docker/plugins/$DRIVER.sock" ] && break; sleep 0.2; done
  mkdir -p "$WORK/bb"/{bin,etc,proc,sys,dev,tmp,root}; cp /bin/busybox "$WORK/bb/bin/"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$WORK/bb/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$WORK/bb/etc/passwd"; echo 'root:x:0:' >"$WORK/bb/etc/group"
  tar -C "$WORK/bb" -cf "$WORK/bb.tar" .; $DOCKER_CLI import -c 'CMD ["/bin/sh"]' "$WORK/bb.tar" bb >/dev/null
  echo "\$ docker network create -d $DRIVER --ipam-driver $DRIVER --subnet 10.124.0.0/24 jcni-demo"
  $DOCKER_CLI network create -d "$DRIVER" --ipam-driver "$DRIVER" --subnet 10.124.0.0/24 jcni-demo >/dev/null
  echo "\$ docker run -d --name jcni-demo-web --network jcni-demo -p 8080:80 bb httpd -f -p 80 -h /www"
  $DOCKER_CLI run -d --name jcni-demo-web --network jcni-demo -p 8080:80 bb \
    sh -c 'mkdir /www && echo "hello from a container on a jcni network" >/www/index.html && exec httpd -f -p 80 -h /www' >/dev/null
  echo "\$ docker run --rm --network jcni-demo bb ping -c 1 jcni-demo-web"
  $DOCKER_CLI run --rm --network jcni-demo bb ping -c 1 -W 2 jcni-demo-web | grep -e PING -e 'bytes from'
  echo "\$ curl http://127.0.0.1:8080/   (in the host namespace: the published port, through jcni's portmap)"
  ip netns exec "$HOST" curl -s -m 5 http://127.0.0.1:8080/
  echo "the driver's calls (jcnid log):"; grep 'docker call=' "$WORK/jcnid-docker.log" | awk '{print $4}' | sort | uniq -c | sort -rn | head -8
  $DOCKER_CLI rm -f jcni-demo-web >/dev/null
  $DOCKER_CLI network rm jcni-demo >/dev/null
  await_retired "$HOST"
  [ "$(ip -n "$HOST" -o link show type veth | wc -l)" -eq 0 ] || { echo "demo: a veth was left behind" >&2; exit 1; }
  echo "network removed; no veth left in the host namespace"
fi
if [ "$PLUGINS" = jcni ]; then
  step "multi-host: an underlay, a real etcd, two hosts running 'jcnid start --overlay' (flannel-compatible, VXLAN)"
  LAB=jcni-demo-lab-$ID ETCD=http://192.168.77.1:2379
  mkdir -p "$WORK/ov"
  for ns in "$LAB" jcni-demo-h1-$ID jcni-demo-h2-$ID jcni-demo-p1-$ID jcni-demo-p2-$ID; do
    ip netns add "$ns"; OV_NS+=("$ns"); ip -n "$ns" link set lo up
  done
  ip -n "$LAB" link add ul type bridge; ip -n "$LAB" addr add 192.168.77.1/24 dev ul; ip -n "$LAB" link set ul up
  nsenter --net="/var/run/netns/$LAB" etcd --data-dir "$WORK/ov/etcd" --listen-client-urls $ETCD --advertise-client-urls $ETCD \
    --listen-peer-urls http://127.0.0.1:2380 > "$WORK/ov/etcd.log" 2>&1 &
  ETCD_PID=$!
  etcdctl() { nsenter --net="/var/run/netns/$LAB" env ETCDCTL_API=3 /usr/bin/etcdctl --endpoints $ETCD "$@"; }
  for _ in $(seq 50); do etcdctl endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
  etcdctl put /coreos.com/network/config '{"Network":"10.124.0.0/16","Backend":{"Type":"vxlan"}}'
  for h in 1 2; do
    H=jcni-demo-h$h-$ID
    ip -n "$LAB" link add "h$h" type veth peer name eth0 netns "$H"; ip -n "$LAB" link set "h$h" master ul up
    ip -n "$H" addr add "192.168.77.1$h/24" dev eth0; ip -n "$H" link set eth0 up
    nsenter --net="/var/run/netns/$H" sysctl -qw net.ipv4.ip_forward=1
    nsenter --net="/var/run/netns/$H" "$WORK/jcni/bin/jcnid" start --socket "$WORK/ov/h$h.sock" --pid-file "$WORK/ov/h$h.pid" --log-file "$WORK/ov/h$h.log" \
      --overlay --etcd-endpoints $ETCD --iface eth0 --subnet-file "$WORK/ov/h$h.env" --ip-masq
    mkdir -p "$WORK/ov/h$h.d"
    printf '{"cniVersion":"1.0.0","name":"overlay","plugins":[{"type":"flannel","subnetFile":"%s","dataDir":"%s","ipam":{"dataDir":"%s"}}]}\n' \
      "$WORK/ov/h$h.env" "$WORK/ov/h$h.flannel" "$WORK/ov/h$h.ipam" > "$WORK/ov/h$h.d/10-overlay.conflist"
  done
  for h in 1 2; do
    for _ in $(seq 100); do [ -f "$WORK/ov/h$h.env" ] && break; sleep 0.1; done
    echo "host $h: $(tr '\n' ' ' < "$WORK/ov/h$h.env")"
  done
  echo "subnet leases in etcd:"; etcdctl get --prefix /coreos.com/network/subnets/ | sed 's/^/  /'
  for h in 1 2; do  # the flannel plugin through the host's own jcnid (JCNI_SOCKET), in that host's namespace
    ip netns exec "jcni-demo-h$h-$ID" env NETCONFPATH="$WORK/ov/h$h.d" JCNI_SOCKET="$WORK/ov/h$h.sock" \
      "$JCNI" add overlay "/var/run/netns/jcni-demo-p$h-$ID" > "$WORK/ov/p$h.json"
  done
  P2=$(sed -n 's/.*"address": "\([0-9.]*\)\/.*/\1/p' "$WORK/ov/p2.json" | head -1)
  echo "host 1's route to host 2's pods:"; ip -n "jcni-demo-h1-$ID" route show dev flannel.1 | sed 's/^/  /'
  step "ping the pod on host 2 ($P2) from the pod on host 1, over VXLAN (full size, DF set)"
  ip netns exec "jcni-demo-p1-$ID" ping -c 3 -W 2 -M do -s 1422 "$P2"
  for h in 1 2; do
    ip netns exec "jcni-demo-h$h-$ID" env NETCONFPATH="$WORK/ov/h$h.d" JCNI_SOCKET="$WORK/ov/h$h.sock" \
      "$JCNI" del overlay "/var/run/netns/jcni-demo-p$h-$ID"
    nsenter --net="/var/run/netns/jcni-demo-h$h-$ID" "$WORK/jcni/bin/jcnid" stop --socket "$WORK/ov/h$h.sock" --pid-file "$WORK/ov/h$h.pid" >/dev/null
  done
  leases=$(etcdctl get --prefix --keys-only /coreos.com/network/subnets/ | grep -c . || true)
  echo "leases after both agents stopped (released on shutdown): $leases"
  [ "$leases" -eq 0 ] || { echo "demo: a lease was not released" >&2; exit 1; }
fi
if [ "$DOCKER" = 1 ]; then
  step "multi-host Docker: the same two hosts, each with its own dockerd and 'jcnid --docker-driver --etcd-endpoints'"
  for h in 1 2; do
    mkdir -p "$WORK/mh$h"
    nsenter --net="/var/run/netns/jcni-demo-h$h-$ID" dockerd --data-root "$WORK/mh$h/docker" --exec-root "$WORK/mh$h/exec" \
      -H "unix://$WORK/mh$h/docker.sock" --pidfile "$WORK/mh$h/docker.pid" >"$WORK/mh$h/dockerd.log" 2>&1 &
    MH_DOCKERD_PIDS+=($!)
    # each host's driver has a name of its own only because both dockerds look into this machine's one
    # /run/docker/plugins; on real hosts both would be called jcni
    echo "host $h: jcnid start --docker-driver ${DRIVER}h$h --etcd-endpoints $ETCD --iface eth0"
    nsenter --net="/var/run/netns/jcni-demo-h$h-$ID" "$WORK/jcni/bin/jcnid" start --foreground --socket "$WORK/mh$h/jcnid.sock" \
      --docker-driver "${DRIVER}h$h" --docker-state-dir "$WORK/mh$h/driver" --etcd-endpoints "$ETCD" --iface eth0 \
      >"$WORK/mh$h/jcnid.log" 2>&1 </dev/null &
    MH_DRIVER_PIDS+=($!)
  done
  for h in 1 2; do
    for i in $(seq 450); do
      mh_docker "$h" version >/dev/null 2>&1 && [ -S "/run/docker/plugins/${DRIVER}h$h.sock" ] && break
      [ "$i" -lt 450 ] || { echo "demo: host $h's dockerd or driver did not start:" >&2; tail -5 "$WORK/mh$h"/*.log >&2; exit 1; }
      sleep 0.2
    done
    mh_docker "$h" import -c 'CMD ["/bin/sh"]' "$WORK/bb.tar" bb >/dev/null
    echo "host $h: \$ docker network create -d ${DRIVER}h$h --ipam-driver ${DRIVER}h$h --subnet 10.126.0.0/24 -o jcni.cluster=demo jcni-demo-cluster"
    mh_docker "$h" network create -d "${DRIVER}h$h" --ipam-driver "${DRIVER}h$h" --subnet 10.126.0.0/24 -o jcni.cluster=demo jcni-demo-cluster >/dev/null
  done
  echo "the cluster network in etcd (definition, shared address pool, hosts):"; etcdctl get --prefix --keys-only /jcni/docker/ | grep . | sed 's/^/  /'
  mh_docker 2 run -d --name jcni-demo-mh2 --network jcni-demo-cluster bb sleep 600 >/dev/null
  IP2=$(mh_docker 2 inspect -f '{{(index .NetworkSettings.Networks "jcni-demo-cluster").IPAddress}}' jcni-demo-mh2)
  echo "host 2: \$ docker run -d --name jcni-demo-mh2 --network jcni-demo-cluster bb sleep 600    -> $IP2"
  # Docker's embedded DNS knows only its own dockerd's containers: across hosts, give the name with --add-host
  echo "host 1: \$ docker run -d --name jcni-demo-mh1 --network jcni-demo-cluster --add-host jcni-demo-mh2:$IP2 bb sleep 600"
  mh_docker 1 run -d --name jcni-demo-mh1 --network jcni-demo-cluster --add-host "jcni-demo-mh2:$IP2" bb sleep 600 >/dev/null
  IP1=$(mh_docker 1 inspect -f '{{(index .NetworkSettings.Networks "jcni-demo-cluster").IPAddress}}' jcni-demo-mh1)
  echo "host 1's VXLAN device on the network's bridge, and host 2's container in its forwarding table:"
  ip -n "jcni-demo-h1-$ID" -br link show type vxlan | grep jcvx | sed 's/^/  /'
  ip netns exec "jcni-demo-h1-$ID" bridge fdb show | grep 'dev jcvx.* dst ' | sed 's/^/  /'
  step "ping the container on host 2 from the container on host 1 ($IP1), by the name given with --add-host"
  mh_docker 1 exec jcni-demo-mh1 ping -c 3 -W 2 jcni-demo-mh2
  echo "and back: $(mh_docker 2 exec jcni-demo-mh2 ping -c 1 -W 2 "$IP1" | grep 'bytes from')"
  for h in 1 2; do
    mh_docker "$h" rm -f "jcni-demo-mh$h" >/dev/null
    mh_docker "$h" network rm jcni-demo-cluster >/dev/null
  done
  keys=$(etcdctl get --prefix --keys-only /jcni/docker/ | grep -c . || true)
  echo "network removed on both hosts; keys left in etcd under /jcni/docker/ (the last host's rm removes the cluster): $keys"
  [ "$keys" -eq 0 ] || { echo "demo: the cluster network was left in etcd" >&2; exit 1; }
  for h in 1 2; do
    [ -z "$(ip -n "jcni-demo-h$h-$ID" -o link show type vxlan | grep jcvx)" ] || { echo "demo: host $h kept its VXLAN device" >&2; exit 1; }
  done
  mh_stop
fi
if [ "$PLUGINS" = jcni ]; then
  step "DHCP: a LAN served by dnsmasq; a container gets its address through the dhcp IPAM plugin and 'jcnid --dhcp'"
  ip -n "$HOST" link add jcni-lan0 type bridge; ip -n "$HOST" addr add 10.125.0.1/24 dev jcni-lan0; ip -n "$HOST" link set jcni-lan0 up
  ip netns exec "$HOST" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --no-ping --user=root --group=root \
    --interface=jcni-lan0 --bind-interfaces --dhcp-range=10.125.0.50,10.125.0.99,255.255.255.0,2m \
    --dhcp-option=option:router,10.125.0.1 --dhcp-option=option:dns-server,10.125.0.1 \
    --dhcp-leasefile="$WORK/dnsmasq.leases" --pid-file="$WORK/dnsmasq.pid" --log-facility="$WORK/dnsmasq.log" &
  DNSMASQ_PID=$!
  "$WORK/jcni/bin/jcnid" start --socket "$WORK/run/jcnid-dhcp.sock" --pid-file "$WORK/run/jcnid-dhcp.pid" \
    --log-file "$WORK/jcnid-dhcp.log" --dhcp --dhcp-socket "$WORK/run/dhcp.sock" --dhcp-state-dir "$WORK/dhcp-leases"
  mkdir -p "$WORK/dhcp.d"
  printf '{"cniVersion":"1.0.0","name":"lan","plugins":[{"type":"bridge","bridge":"jcni-lan0","ipam":{"type":"dhcp","daemonSocketPath":"%s","timeout":"10s"}}]}\n' \
    "$WORK/run/dhcp.sock" > "$WORK/dhcp.d/10-lan.conflist"
  cat "$WORK/dhcp.d/10-lan.conflist"
  ip netns exec "$HOST" env NETCONFPATH="$WORK/dhcp.d" JCNI_SOCKET="$WORK/run/jcnid-dhcp.sock" "$JCNI" add lan "/var/run/netns/$A" | tee "$WORK/lan.json"
  echo "dnsmasq's lease file:"; sed 's/^/  /' "$WORK/dnsmasq.leases"
  echo "jcnid's lease (survives a jcnid restart): $(ls "$WORK/dhcp-leases")"
  ip netns exec "$A" ping -c 1 -W 2 10.125.0.1 | grep 'bytes from'
  ip netns exec "$HOST" env NETCONFPATH="$WORK/dhcp.d" JCNI_SOCKET="$WORK/run/jcnid-dhcp.sock" "$JCNI" del lan "/var/run/netns/$A"
  [ -z "$(ls "$WORK/dhcp-leases")" ] || { echo "demo: jcnid still holds the DHCP lease" >&2; exit 1; }
  echo "jcnid no longer holds the lease. bridge's DEL removes eth0 before it calls IPAM (as the reference"
  echo "bridge does), so no DHCPRELEASE can leave the container and dnsmasq lets the lease expire;"
  echo "macvlan, ipvlan and host-device call IPAM first, and there the RELEASE reaches the server."
  "$WORK/jcni/bin/jcnid" stop --socket "$WORK/run/jcnid-dhcp.sock" --pid-file "$WORK/run/jcnid-dhcp.pid" >/dev/null
  kill "$DNSMASQ_PID"; wait "$DNSMASQ_PID" 2>/dev/null || true; DNSMASQ_PID=
fi
echo; echo "demo: OK"
