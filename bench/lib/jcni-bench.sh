# Shared by the bench scripts that run jcni beside the reference: a private world (temp directory,
# names ending in a random id, a jcni installation in it) that is removed on exit whatever happens,
# jcnid's per-phase table, and the JVM options and launchers of the JVMs a bench starts itself (from
# common's Launcher). Source it after scripts/env.sh:  . bench/lib/jcni-bench.sh
# Nothing here touches the root namespace.

# bench_world TMP_PREFIX HOST_PREFIX: sets ID, TMP, SCRATCH, HOST, SOCK, PREFIX and VERSION, and the
# traps that stop jcnid, delete every netns whose name ends in -ID and remove TMP and SCRATCH.
# SCRATCH is on tmpfs, for the harness's own small files (each call's output): creating files on
# the root ext4 costs the shell ~1 ms each under load (the inode allocator's recently_deleted scan),
# which is the harness's cost, not the plugins'. State the plugins write stays under TMP, on disk.
bench_world() {
  ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  TMP=$(mktemp -d "/tmp/$1.XXXXXX")
  SCRATCH=$(mktemp -d "/dev/shm/$1.XXXXXX")
  HOST="$2-h-$ID"
  SOCK="$TMP/run/jcnid.sock"
  PREFIX="$TMP/jcni"
  VERSION=$JCNI_VERSION
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  set +e
  if [ -x "$PREFIX/bin/jcnid" ]; then "$PREFIX/bin/jcnid" stop --socket "$SOCK" >/dev/null 2>&1; fi
  if [ -f "$TMP/run/jcnid.pid" ]; then kill -9 "$(cat "$TMP/run/jcnid.pid")" 2>/dev/null; fi
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -- "-$ID\$"); do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP" "$SCRATCH"
}

# bench_jvm_options plugin|daemon: sets JVM_OPTIONS (an array) to the options jcni's launchers give
# that kind of JVM. Their one source is common's Launcher, asked the way scripts/install.sh asks it,
# so a bench that starts a JVM of its own measures the JVM users run. Needs common compiled.
bench_jvm_options() {
  local line
  line=$(bench_launcher_main options "$1" "") || exit 1
  read -r -a JVM_OPTIONS <<<"$line"
}

# bench_launcher FILE plugin|daemon CLASSPATH MAIN: writes an executable launcher at FILE, as
# scripts/install.sh writes them (no AOT cache); MAIN is shell text, e.g. 'io.jcni.plugins.PluginMain dhcp'.
bench_launcher() {
  bench_launcher_main script "$2" "jcni's bench" "$JAVA_HOME/bin/java" "$3" "" "" "$4" >"$1" || exit 1
  chmod 0755 "$1"
}

bench_launcher_main() {
  local classes="$JCNI_ROOT/common/target/classes"
  [ -d "$classes" ] || { echo "bench: $classes missing: build first (mvn -B -ntp -q -pl common package -DskipTests)" >&2; return 1; }
  "$JAVA_HOME/bin/java" -cp "$classes" io.jcni.common.Launcher "$@"
}

# bench_jars: builds the jars when one is missing (package, never install: ~/.m2 may be shared).
bench_jars() {
  local m
  for m in "${JCNI_MODULES[@]}"; do
    if [ ! -f "$m/target/jcni-$m-$VERSION.jar" ]; then
      echo "run.sh: $m/target/jcni-$m-$VERSION.jar missing: building (mvn package -DskipTests)" >&2
      mvn -B -ntp -q -DskipTests package >&2
      return
    fi
  done
}

# bench_install [standalone] [shim]: installs jcni into PREFIX: plain JVM launchers in TMP/standalone,
# shims asking jcnid on SOCK in TMP/shim.
bench_install() {
  echo "installing jcni into $PREFIX ..." >&2
  local what
  for what in "$@"; do
    case "$what" in
      standalone) scripts/install.sh --no-build --no-shim --bin-dir "$TMP/standalone" --prefix "$PREFIX" --cmd-dir "$TMP/cmd" >&2 ;;
      shim) scripts/install.sh --no-build --bin-dir "$TMP/shim" --prefix "$PREFIX" --cmd-dir "$TMP/cmd" --socket "$SOCK" >&2 ;;
    esac
  done
}

# bench_phase_table METRICS_BEFORE METRICS_AFTER: jcnid's time per request and phase between two
# scrapes of `jcnid metrics` (jcnid_request_phase_seconds_total), as a markdown table.
bench_phase_table() {
  python3 - "$1" "$2" <<'PY'
import re, sys
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r'(jcnid_request_phase_seconds_total|jcnid_requests_total)\{plugin="([^"]*)",command="([^"]*)"(?:,phase="([^"]*)")?\} (\S+)', line)
        if m: d[m.groups()[:4]] = float(m.group(5))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
keys = sorted({(k[1], k[2]) for k in b if k[0] == 'jcnid_requests_total'})
phases = ['queue', 'parse', 'netns', 'plugin', 'ipam', 'nft', 'link_delete', 'result']
print('| plugin cmd | n | ' + ' | '.join(phases) + ' | total |')
print('|' + '---|' * (len(phases) + 3))
for pl, cmd in keys:
    n = b.get(('jcnid_requests_total', pl, cmd, None), 0) - a.get(('jcnid_requests_total', pl, cmd, None), 0)
    if n <= 0: continue
    ms = [(b.get(('jcnid_request_phase_seconds_total', pl, cmd, ph), 0) - a.get(('jcnid_request_phase_seconds_total', pl, cmd, ph), 0)) * 1000 / n for ph in phases]
    print(f'| {pl} {cmd} | {int(n)} | ' + ' | '.join(f'{x:.2f}' for x in ms) + f' | {sum(ms):.2f} |')
PY
}
