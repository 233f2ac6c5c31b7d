#!/usr/bin/env bash
# Start-up of jcni's JVMs: the trimmed runtime (jlink) against the full JDK, each with and without
# its AOT cache, and a freshly socket-activated jcnid (with and without its own AOT cache).
#   standalone  hyperfine: the `static` plugin's VERSION, and a host-local ADD+DEL pair (scratch dataDir)
#   jcni        hyperfine: `jcni version`
#   fresh jcnid systemd-socket-activate holds the socket; the clock runs from the first shim call
#               (which starts the daemon) to the end of 15 host-local ADD+DEL lifecycles; -r rounds
# Installs into a scratch directory (removed on exit) from the jars already built (mvn package).
# Usage: bench/startup/run.sh [-r ROUNDS(5)] [--runs N(20)]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=5 RUNS=20
while [ $# -gt 0 ]; do
  case "$1" in
    -r) ROUNDS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$ROUNDS" =~ ^[0-9]+$ && "$RUNS" =~ ^[0-9]+$ && "$ROUNDS" -le 100 && "$RUNS" -le 1000 ]] || { echo "run.sh: bad counts" >&2; exit 2; }
. scripts/env.sh
need_packages hyperfine systemd
W=$(mktemp -d /tmp/jcni-startup.XXXXXX)
cleanup() { rm -rf "$W"; }
trap cleanup EXIT

install_variant() { # name java aot(1|0)
  JCNI_AOT=$3 scripts/install.sh --no-build --java "$2" --bin-dir "$W/$1/bin" --prefix "$W/$1/jcni" --cmd-dir "$W/$1/cmd" \
    --socket "$W/$1/run/jcnid.sock" >/dev/null
}
echo "installing 4 variants into $W ..." >&2
install_variant jdk-aot jdk 1; install_variant jdk-noaot jdk 0
install_variant jlink-aot jlink 1; install_variant jlink-noaot jlink 0

echo "== sizes"
echo "full JDK ($JAVA_HOME): $(du -sh "$JAVA_HOME" | cut -f1); trimmed runtime: $(du -sh "$W/jlink-aot/jcni/runtime" | cut -f1)" \
  "($(ls "$W/jlink-aot/jcni/runtime/lib/modules" >/dev/null && du -sh "$W/jlink-aot/jcni/runtime/lib/modules" | cut -f1) modules image)"
echo "AOT caches: jcni.aot $(du -h "$W/jlink-aot/jcni/lib/jcni.aot" | cut -f1), jcnid.aot $(du -h "$W/jlink-aot/jcni/lib/jcnid.aot" | cut -f1)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

VCONF='{"cniVersion":"1.0.0","name":"v","type":"static"}'
HL="{\"cniVersion\":\"1.0.0\",\"name\":\"hl\",\"type\":\"host-local\",\"ipam\":{\"type\":\"host-local\",\"subnet\":\"10.99.0.0/24\",\"dataDir\":\"$W/ipam\"}}"
echo "$VCONF" > "$W/v.json"; echo "$HL" > "$W/hl.json"
export CNI_CONTAINERID=bench CNI_NETNS=/proc/self/ns/net CNI_IFNAME=eth0 CNI_PATH=/nonexistent
for what in version adddel jcni; do
  cmds=()
  for v in jdk-noaot jdk-aot jlink-noaot jlink-aot; do
    case $what in
      version) cmds+=(-n "$v" "CNI_COMMAND=VERSION $W/$v/jcni/libexec/static < $W/v.json") ;;
      adddel) cmds+=(-n "$v" "CNI_COMMAND=ADD $W/$v/jcni/libexec/host-local < $W/hl.json && CNI_COMMAND=DEL $W/$v/jcni/libexec/host-local < $W/hl.json") ;;
      jcni) cmds+=(-n "$v" "$W/$v/cmd/jcni version") ;;
    esac
  done
  echo "== $what: median wall ms, mean CPU (user+sys) ms; ratios against jdk-noaot"
  hyperfine --style none --warmup 3 --runs "$RUNS" --shell sh --export-json "$W/$what.json" "${cmds[@]}" >/dev/null 2>&1 || true
  python3 - "$W/$what.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]
for x in r:
    cpu, bcpu = (x["user"] + x["system"]) * 1000, (base["user"] + base["system"]) * 1000
    print(f"  {x['command']:<12} wall {x['median']*1000:7.1f} ({x['median']/base['median']:.2f})   cpu {cpu:7.1f} ({cpu/bcpu:.2f})")
PY
done

echo "== fresh jcnid: first shim call (starts the daemon) to the end of 15 ADD+DEL lifecycles, ms over $ROUNDS rounds"
fresh() { # variant: one round, prints ms (runs in a subshell: the daemon is stopped before it returns)
  local v=$1 sock="$W/$1/act/jcnid.sock"
  mkdir -p "$W/$v/act"
  rm -f "$sock"
  systemd-socket-activate -l "$sock" "$W/$v/jcni/bin/jcnid" start --foreground --socket "$sock" \
    --pid-file "$W/$v/act/pid" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.02; done
  local t0; t0=$(date +%s%N)
  for i in $(seq 15); do
    JCNI_SOCKET=$sock CNI_COMMAND=ADD CNI_CONTAINERID=f$i "$W/$v/bin/host-local" < "$W/hl.json" >/dev/null
    JCNI_SOCKET=$sock CNI_COMMAND=DEL CNI_CONTAINERID=f$i "$W/$v/bin/host-local" < "$W/hl.json" >/dev/null
  done
  echo $(( ($(date +%s%N) - t0) / 1000000 ))
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}
declare -A FRESH
for r in $(seq "$ROUNDS"); do   # interleaved, so load changes hit every variant alike
  for v in jlink-aot jlink-noaot jdk-aot jdk-noaot; do FRESH[$v]+="$(fresh "$v") "; done
done
for v in jlink-aot jlink-noaot jdk-aot jdk-noaot; do
  echo "  $v: ${FRESH[$v]} (median $(printf '%s\n' ${FRESH[$v]} | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p"))"
done
