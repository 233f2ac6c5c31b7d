#!/usr/bin/env bash
# What TLS costs the overlay's convergence, measured so that it can decide the goal (TLS costs <= 10 %):
# ONE lab with two etcds side by side on the same underlay address (plain http on :2379, TLS with
# client certificates on :2389, lab.sh's lab_pki) and two clusters of N hosts each, every host a netns
# running `jcnid start --foreground --overlay` (VXLAN, jcnid's JVM options) on one of the two etcds.
# A round writes one new remote lease (as flanneld writes it: PublicIP, VtepMAC) into one etcd and
# takes its convergence to the last of the N agents' "added remote" log lines for it (the agents' own
# clocks: no polling of `ip route` in the measured span), twice: from just before the write leaves the
# bench's client (etcd's own TLS on the write included), and from the write's answer (run.sh's
# convergence starts at the new host's "leased" log line, written once etcd has answered its write). The bench's client keeps one connection to each etcd, so neither kind pays a
# handshake inside a round. Then the lease is deleted and every agent's "removed remote" awaited.
# WARMUP rounds of each kind first (not counted), then K rounds of each, interleaved plain, TLS,
# plain, TLS ...: per kind the median and p90, TLS/plain of the medians, and the median of the
# pairs' own TLS/plain ratios (a pair's two rounds follow each other and see nearly the same load).
# Needs root. Build first: mvn -B -ntp -q -pl overlay -am package -DskipTests
# -J OPTS: more JVM options for the agents (after jcnid's own).
# Usage: bench/multihost/tls-convergence.sh [-n HOSTS_PER_KIND(4)] [-k ROUNDS(40)] [-w WARMUP(20)] [-J OPTS]
set -euo pipefail
HOSTS=4 ROUNDS=40 WARMUP=20 JOPTS=""
while getopts n:k:w:J: o; do case $o in n) HOSTS=$OPTARG ;; k) ROUNDS=$OPTARG ;; w) WARMUP=$OPTARG ;; J) JOPTS=$OPTARG ;; *) exit 2 ;; esac; done
[[ "$HOSTS" =~ ^[0-9]+$ && "$HOSTS" -ge 1 && "$HOSTS" -le 40 ]] || { echo "tls-convergence.sh: -n 1..40" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[0-9]+$ && "$WARMUP" =~ ^[0-9]+$ && $((ROUNDS + WARMUP)) -le 200 && "$ROUNDS" -ge 1 ]] || { echo "tls-convergence.sh: -k >= 1, -k + -w <= 200" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab.sh
. "$HERE/lab.sh"
multihost_lab jcni-tlsconv jv etcd-server etcd-client iproute2 python3 openssl
IP=192.168.76.1
PREFIX=/jcni-bench-$SFX/network
lab_pki "$WORK/pki" $IP
declare -A BASE=([plain]=10 [tls]=50)
host() { echo "jv-$SFX-$1$2"; } # host KIND I

lab_bridge $IP
lab_two_etcds $IP
for k in plain tls; do ctl "$k" put "$PREFIX/config" '{"Network":"10.64.0.0/10","SubnetLen":24,"Backend":{"Type":"vxlan"}}' >/dev/null; done

LOGS=()
for k in plain tls; do
  agent_tls=()
  [ "$k" = tls ] && agent_tls=(--etcd-cafile "$WORK/pki/ca.pem" --etcd-certfile "$WORK/pki/client.pem" --etcd-keyfile "$WORK/pki/client.key")
  for i in $(seq 1 "$HOSTS"); do
    h=$(host "$k" "$i")
    lab_host_ns "$h" "$k$i" "192.168.76.$((BASE[$k] + i))/24"
    mkdir -p "$WORK/$h"
    # shellcheck disable=SC2086 # JOPTS is an option list
    nsenter --net=/var/run/netns/"$h" "${JAVA[@]}" $JOPTS -cp "$CP" io.jcni.daemon.Jcnid start --foreground --socket "$WORK/$h/jcnid.sock" \
      --overlay --etcd-endpoints "${URL[$k]}" --etcd-prefix "$PREFIX" --iface eth0 --subnet-file "$WORK/$h/subnet.env" \
      --subnet-lease-ttl 10 "${agent_tls[@]}" >"$WORK/$h/jcnid.log" 2>&1 &
    PIDS+=($!)
    LOGS+=("$k=$WORK/$h/jcnid.log")
  done
done
for k in plain tls; do
  for i in $(seq 1 "$HOSTS"); do
    h=$(host "$k" "$i")
    for _ in $(seq 600); do [ -f "$WORK/$h/subnet.env" ] && break; sleep 0.1; done
    [ -f "$WORK/$h/subnet.env" ] || { echo "$h: no subnet.env:" >&2; tail -5 "$WORK/$h/jcnid.log" >&2; exit 1; }
  done
done
echo "TLS convergence: $HOSTS hosts a kind, $WARMUP warm-up and $ROUNDS measured rounds a kind, interleaved: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The rounds: one Python process in the lab's netns holds a connection to each etcd's JSON gateway.
in_lab python3 - "$PREFIX" "$WARMUP" "$ROUNDS" "$HOSTS" "${URL[plain]}" "${URL[tls]}" "$WORK/pki" "${LOGS[@]}" <<'EOF'
import base64, datetime, http.client, json, ssl, statistics, sys, threading, time, urllib.parse

prefix, warmup, rounds, hosts, plain_url, tls_url, pki = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
logs = {"plain": [], "tls": []}
for a in sys.argv[8:]:
    k, path = a.split("=", 1)
    logs[k].append(path)
b64 = lambda s: base64.b64encode(s.encode()).decode()

def connection(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme == "http":
        return http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.pem")
    ctx.load_cert_chain(f"{pki}/client.pem", f"{pki}/client.key")
    return http.client.HTTPSConnection(u.hostname, u.port, timeout=10, context=ctx)

conns = {"plain": connection(plain_url), "tls": connection(tls_url)}
urls = {"plain": plain_url, "tls": tls_url}

# A reference watcher on each etcd (Python's TLS is OpenSSL's): when etcd delivered each put to a
# watcher, which splits a round into etcd's part and the agents' part.
delivered = {}
def reference_watch(kind):
    w = connection(urls[kind])
    w.request("POST", "/v3/watch", json.dumps({"create_request": {"key": b64(prefix + "/subnets/"), "range_end": b64(prefix + "/subnets0")}}),
              {"Content-Type": "application/json"})
    r = w.getresponse()
    while True:
        line = r.readline()
        if not line:
            return
        at = time.time_ns()
        for ev in json.loads(line).get("result", {}).get("events", []):
            if ev.get("type", "PUT") == "PUT":
                delivered[(kind, base64.b64decode(ev["kv"]["key"]).decode())] = at
for kind in urls:
    threading.Thread(target=reference_watch, args=(kind,), daemon=True).start()

def call(kind, path, body):
    c = conns[kind]
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"etcd {kind} {path}: HTTP {r.status}: {data[:200]!r}")

def log_ns(line):
    # jcnid's log lines start with Instant.toString(): 2026-11-26T12:01:02.123456789Z
    stamp = line.split(" ", 1)[0].rstrip("Z")
    whole, _, frac = stamp.partition(".")
    t = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1_000_000_000 + int((frac + "000000000")[:9])

offsets = {p: 0 for k in logs for p in logs[k]}

def await_lines(kind, needle, deadline_s=20):
    """Each host's first new log line containing needle, as epoch ns; fails the run after deadline_s."""
    found = {}
    end = time.monotonic() + deadline_s
    while len(found) < len(logs[kind]):
        for p in logs[kind]:
            if p in found:
                continue
            with open(p, "rb") as f:
                f.seek(offsets[p])
                chunk = f.read()
            cut = chunk.rfind(b"\n") + 1  # whole lines only
            for line in chunk[:cut].decode(errors="replace").splitlines():
                if needle in line and p not in found:
                    found[p] = log_ns(line)
            offsets[p] += cut
        if time.monotonic() > end:
            sys.exit(f"{kind}: '{needle}' not logged by {len(logs[kind]) - len(found)} of {len(logs[kind])} hosts within {deadline_s} s")
        if len(found) < len(logs[kind]):
            time.sleep(0.002)
    return max(found.values())

def one_round(kind, n):
    subnet = f"10.{88 + n // 256}.{n % 256}.0"
    key = f"{prefix}/subnets/{subnet}-24"
    value = {"PublicIP": f"192.168.{100 + n // 250}.{1 + n % 250}", "PublicIPv6": None, "BackendType": "vxlan",
             "BackendData": {"VNI": 1, "VtepMAC": "0a:cc:%02x:%02x:%02x:01" % (n >> 16 & 255, n >> 8 & 255, n & 255)}}
    sent = time.time_ns()
    call(kind, "/v3/kv/put", {"key": b64(key), "value": b64(json.dumps(value, separators=(",", ":")))})
    answered = time.time_ns()
    last = await_lines(kind, f'msg="added remote" subnet={subnet}/24 ')
    call(kind, "/v3/kv/deleterange", {"key": b64(key)})
    await_lines(kind, f'msg="removed remote" subnet={subnet}/24')
    seen = delivered.get((kind, key), last)
    return (last - sent) / 1e6, (last - answered) / 1e6, (seen - sent) / 1e6, (last - seen) / 1e6

for kind in conns:  # open both connections (and the TLS handshake) before anything is timed
    call(kind, "/v3/kv/range", {"key": b64(prefix + "/config")})
spans = {s: {"plain": [], "tls": []} for s in ("written", "leased", "etcd", "agents")}
for n in range(warmup + rounds):
    for kind in ("plain", "tls"):
        figures = one_round(kind, n)
        if n >= warmup:
            for span, ms in zip(spans, figures):
                spans[span][kind].append(ms)
    if n == warmup - 1:
        print(f"warm-up done ({warmup} rounds a kind)", flush=True)

def p90(xs):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]

titles = {
    "written": "from the write leaving the client (etcd's own TLS on the write included)",
    "leased": "from the write's answer, as run.sh's convergence starts at the new host's 'leased' line",
    "etcd": "its etcd part: the write leaving the client -> the reference watcher's event",
    "agents": "its agents' part: the reference watcher's event -> the last agent's 'added remote'",
}
for span, figures in spans.items():
    print(f"convergence, {titles[span]}, ms:" if span in ("etcd", "agents") else f"convergence to the last of the agents' 'added remote', {titles[span]}, ms:")
    for kind in ("plain", "tls"):
        xs = figures[kind]
        print(f"  {kind:5s} median {statistics.median(xs):6.1f}  p90 {p90(xs):6.1f}  min {min(xs):6.1f}  max {max(xs):6.1f}  ({len(xs)} rounds)")
    mp, mt = statistics.median(figures["plain"]), statistics.median(figures["tls"])
    pairs = [t / p for p, t in zip(figures["plain"], figures["tls"]) if p > 0 and t > 0]
    print(f"  TLS/plain: medians {mt / mp:.2f} (TLS costs {(mt / mp - 1) * 100:+.0f} %: {mt - mp:+.1f} ms); pair by pair, median {statistics.median(pairs):.2f}")
EOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
