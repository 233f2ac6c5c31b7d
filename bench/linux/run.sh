#!/usr/bin/env bash
# jcni-linux benchmarks (not a test; run by hand as root):
#   A. cold JVM: time from main() to the first native call, JNI (libjcni) vs FFM (Linker downcall)
#   B. cold process: JVM start to the first netlink reply inside a netns, vs `ip -n NS link show`
#   C. warm JVM: veth into a netns + address + up + route + delete, per operation, vs `ip -batch`
# Everything happens in namespaces this script creates (jl-bench-*) and removes on exit.
# Usage: bench/linux/run.sh [runs]     (needs root, hyperfine, python3; builds jcni-linux if needed)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
. bench/lib/jcni-bench.sh
RUNS="${1:-20}"
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (network namespaces)" >&2; exit 1; }
need_packages hyperfine python3 iproute2

# jcni-linux and the IP types its API takes (IpAddr, Cidr)
jar_of() { ls "$1"/target/jcni-"$1"-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1 || true; }
JAR=$(jar_of linux); TYPES_JAR=$(jar_of types)
if [ -z "$JAR" ] || [ -z "$TYPES_JAR" ]; then
  mvn -B -ntp -q -pl linux -am package -DskipTests
  JAR=$(jar_of linux); TYPES_JAR=$(jar_of types)
fi
OUT=bench/linux/target
rm -rf "$OUT" && mkdir -p "$OUT/classes"
javac -XDstringConcat=inline -d "$OUT/classes" -cp "$JAR:$TYPES_JAR" bench/linux/src/io/jcni/linux/*.java
jar cf "$OUT/bench.jar" -C "$OUT/classes" .
CP="$JAR:$TYPES_JAR:$OUT/bench.jar"   # jars only: the AOT cache of part B refuses class directories
JAVA=(java --enable-native-access=ALL-UNNAMED -Xlog:disable -cp "$CP")

NS_C="jl-bench-c$$"
NS_H="jl-bench-h$$"
cleanup() { ip netns del "$NS_C" 2>/dev/null || true; ip netns del "$NS_H" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$NS_C"
ip netns add "$NS_H"
ip -n "$NS_C" link set lo up

median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.stdin.read().split()))'; }
# per command, one line: median wall-clock ms, mean CPU (user+sys) ms. CPU time moves less than
# wall-clock time when other work competes for the cores.
hf() {
  local json="$OUT/hf-$1.json"; shift
  hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$json" "$@" >/dev/null 2>&1
  python3 - "$json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f %.1f" % (r["median"] * 1000, (r["user"] + r["system"]) * 1000))
PY
}

echo "jcni-linux benchmarks: $(nproc) cores, $(uname -r), $(java -version 2>&1 | head -1), $RUNS runs each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ---- A. first native call in a cold JVM
"${JAVA[@]}" io.jcni.linux.BenchFirstJni >/dev/null   # extracts libjcni once, as the first plugin run on a host does
for impl in Jni Ffm; do
  for _ in $(seq "$RUNS"); do "${JAVA[@]}" "io.jcni.linux.BenchFirst$impl" | awk '{print $3}'; done > "$OUT/first-$impl.txt"
done
JNI_US=$(median < "$OUT/first-Jni.txt"); FFM_US=$(median < "$OUT/first-Ffm.txt")
mapfile -t A < <(hf first "${JAVA[*]} io.jcni.linux.BenchNoop" "${JAVA[*]} io.jcni.linux.BenchFirstJni" "${JAVA[*]} io.jcni.linux.BenchFirstFfm")
echo "A. First native call in a fresh JVM (median)"
echo
w() { echo "${1% *}"; }; c() { echo "${1#* }"; }
echo "| | main() to first call returned | whole process, wall | whole process, CPU |"
echo "|---|---:|---:|---:|"
printf "| JVM only (no native call) | - | %s ms | %s ms |\n" "$(w "${A[0]}")" "$(c "${A[0]}")"
printf "| JNI (libjcni, gettid) | %.2f ms | %s ms | %s ms |\n" "$(python3 -c "print($JNI_US/1000)")" "$(w "${A[1]}")" "$(c "${A[1]}")"
printf "| FFM (Linker downcall, gettid) | %.2f ms | %s ms | %s ms |\n" "$(python3 -c "print($FFM_US/1000)")" "$(w "${A[2]}")" "$(c "${A[2]}")"
echo

# ---- B. cold process: first netlink answer from inside a netns
COLD=(io.jcni.linux.BenchColdLink "/var/run/netns/$NS_C" lo)
"${JAVA[@]}" -XX:AOTCacheOutput="$OUT/cold.aot" "${COLD[@]}" >/dev/null 2>&1 || true
AOT_CMD=""; LEAN_CMD=""
if [ -f "$OUT/cold.aot" ]; then
  AOT_CMD="${JAVA[*]} -XX:AOTCache=$OUT/cold.aot ${COLD[*]}"
  # The options jcni's plugin launchers add on top (common's Launcher: serial GC, C1 only, ...).
  bench_jvm_options plugin
  LEAN_CMD="${JAVA[*]} -XX:AOTCache=$OUT/cold.aot ${JVM_OPTIONS[*]} ${COLD[*]}"
fi
mapfile -t B < <(hf cold "ip -n $NS_C link show lo" "${JAVA[*]} ${COLD[*]}" ${AOT_CMD:+"$AOT_CMD"} ${LEAN_CMD:+"$LEAN_CMD"})
echo "B. Cold process: start to first netlink reply inside a netns (median)"
echo
echo "| command | wall | vs ip | CPU |"
echo "|---|---:|---:|---:|"
row() { printf "| %s | %s ms | %.1fx | %s ms |\n" "$1" "$(w "$2")" "$(python3 -c "print($(w "$2")/$(w "${B[0]}"))")" "$(c "$2")"; }
row "ip -n NS link show lo" "${B[0]}"
row "java BenchColdLink (Netns.open + Rtnl.open + link)" "${B[1]}"
if [ -n "$AOT_CMD" ]; then
  row "same, with a JDK 25 AOT cache (-XX:AOTCache)" "${B[2]}"
  row "same, AOT cache + jcni's plugin JVM options" "${B[3]}"
fi
for _ in $(seq "$RUNS"); do "${JAVA[@]}" "${COLD[@]}"; done > "$OUT/cold-phases.txt"
ph() { printf "%.1f" "$(awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) / 1000}' "$OUT/cold-phases.txt" | median)"; }
echo
echo "Inside that JVM, from main() (median ms): Netns.open $(ph open-netns-us), Rtnl.open(ns) $(ph rtnl-open-us)," \
  "first reply (link lo) $(ph first-reply-us), total $(ph total-us)"
echo

# ---- C. warm JVM: the container side of ADD and DEL, per operation
PAIRS=100
"${JAVA[@]}" io.jcni.linux.BenchWarmOps "$NS_C" "$NS_H" "$PAIRS" 5 2 > "$OUT/warm.txt"
SETUP="$OUT/setup.batch"; TEARDOWN="$OUT/teardown.batch"
: > "$SETUP"; : > "$TEARDOWN"
for i in $(seq 0 $((PAIRS - 1))); do
  cat >> "$SETUP" <<B
link add c$i type veth peer name h$i netns $NS_H
addr add 10.100.$i.2/24 dev c$i
link set c$i up
route add 10.200.$i.0/24 via 10.100.$i.1 dev c$i
B
  echo "link del c$i" >> "$TEARDOWN"
done
for _ in 1 2 3 4 5; do
  s=$(date +%s%N); ip -n "$NS_C" -batch "$SETUP"; m=$(date +%s%N); ip -n "$NS_C" -batch "$TEARDOWN"; e=$(date +%s%N)
  echo "$(( (m - s) / 1000 / PAIRS )) $(( (e - m) / 1000 / PAIRS ))"
done > "$OUT/batch.txt"
BATCH_SETUP=$(cut -d' ' -f1 "$OUT/batch.txt" | median); BATCH_DEL=$(cut -d' ' -f2 "$OUT/batch.txt" | median)
for _ in $(seq "$RUNS"); do
  s=$(date +%s%N)
  ip -n "$NS_C" link add c0 type veth peer name h0 netns "$NS_H"
  ip -n "$NS_C" addr add 10.100.0.2/24 dev c0
  ip -n "$NS_C" link set c0 up
  ip -n "$NS_C" route add 10.200.0.0/24 via 10.100.0.1 dev c0
  m=$(date +%s%N)
  ip -n "$NS_C" link del c0
  e=$(date +%s%N)
  echo "$(( (m - s) / 1000 )) $(( (e - m) / 1000 ))"
done > "$OUT/exec.txt"
EXEC_SETUP=$(cut -d' ' -f1 "$OUT/exec.txt" | median); EXEC_DEL=$(cut -d' ' -f2 "$OUT/exec.txt" | median)
echo "C. Warm JVM: container side of ADD and DEL ($PAIRS pairs x 5 rounds after 2 warm-up rounds; median per operation)"
echo
echo "| operation | jcni, warm JVM |"
echo "|---|---:|"
while IFS=$'\t' read -r op us; do printf "| %s | %.0f µs |\n" "$op" "$us"; done < "$OUT/warm.txt"
J_SETUP=$(grep '^setup total' "$OUT/warm.txt" | cut -f2)
J_DEL=$(grep '^delete link' "$OUT/warm.txt" | cut -f2)
echo
echo "| per container | setup (veth+addr+up+route) | vs jcni | delete | vs jcni |"
echo "|---|---:|---:|---:|---:|"
printf "| jcni, warm JVM | %.0f µs | 1.0x | %.0f µs | 1.0x |\n" "$J_SETUP" "$J_DEL"
printf "| ip -batch (one ip process, %d pairs) | %.0f µs | %.1fx | %.0f µs | %.1fx |\n" "$PAIRS" "$BATCH_SETUP" \
  "$(python3 -c "print($BATCH_SETUP/$J_SETUP)")" "$BATCH_DEL" "$(python3 -c "print($BATCH_DEL/$J_DEL)")"
printf "| one ip process per step | %.0f µs | %.1fx | %.0f µs | %.1fx |\n" "$EXEC_SETUP" \
  "$(python3 -c "print($EXEC_SETUP/$J_SETUP)")" "$EXEC_DEL" "$(python3 -c "print($EXEC_DEL/$J_DEL)")"
