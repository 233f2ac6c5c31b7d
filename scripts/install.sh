#!/usr/bin/env bash
# Builds jcni and installs it:
#   plugin executables  -> BIN_DIR   (default /opt/cni/bin, the CNI convention; one file per plugin type:
#                                     the jcni-shim, which asks jcnid and falls back to PREFIX/libexec/<type>)
#   standalone plugins  -> PREFIX/libexec/<type>; jars + native lib -> PREFIX/lib (default /opt/jcni)
#   Java runtime        -> PREFIX/runtime (trimmed with jlink; --java jdk uses the build JDK instead)
#   jcnid, jcni, units  -> PREFIX/bin/{jcnid,jcni,jcni-aot}, PREFIX/share/jcnid.{service,socket}; CMD_DIR/jcni -> PREFIX/bin/jcni
# Usage: scripts/install.sh [--bin-dir DIR] [--prefix DIR] [--cmd-dir DIR] [--socket PATH] [--no-shim] [--no-build]
#                           [--java jlink|jdk] [--destdir DIR] [--no-aot]
#   --no-shim: BIN_DIR gets the plain JVM launchers (no daemon involved at all)
#   --destdir: stage every file under DIR (paths inside files stay the final ones; for packaging); implies --no-aot
#   --no-aot:  make no AOT cache now (PREFIX/bin/jcni-aot makes it later); JCNI_AOT=0 does the same
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

BIN_DIR=/opt/cni/bin PREFIX=/opt/jcni CMD_DIR=/usr/local/bin BUILD=1 SHIM=1 SOCKET=/run/jcni/jcnid.sock
JAVA_KIND=jlink DESTDIR= AOT=${JCNI_AOT:-1}
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) BIN_DIR=$2; shift 2 ;;
    --prefix) PREFIX=$2; shift 2 ;;
    --cmd-dir) CMD_DIR=$2; shift 2 ;;
    --socket) SOCKET=$2; shift 2 ;;
    --no-shim) SHIM=0; shift ;;
    --no-build) BUILD=0; shift ;;
    --java) JAVA_KIND=$2; shift 2 ;;
    --destdir) DESTDIR=$2; AOT=0; shift 2 ;;
    --no-aot) AOT=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$JAVA_KIND" in jlink|jdk) ;; *) echo "install.sh: --java must be jlink or jdk" >&2; exit 2 ;; esac

if [ "$BUILD" = 1 ]; then
  need_packages "${JCNI_BUILD_PACKAGES[@]}"
  need_command mvn maven
  # package, not install: the jars stay in each module's target/ (the local repository is shared).
  mvn -B -ntp -q -DskipTests package >&2
fi

VERSION=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
D=$DESTDIR  # every write goes to $D$path; every path written into a file is the final one
LIB="$PREFIX/lib"
mkdir -p "$D$LIB" "$D$BIN_DIR" "$D$CMD_DIR" "$D$PREFIX/libexec" "$D$PREFIX/bin" "$D$PREFIX/share"
JARS=()
for m in types linux etcd runtime plugins daemon overlay docker cli; do
  jar="$m/target/jcni-$m-$VERSION.jar"
  [ -f "$jar" ] || { echo "install.sh: $jar missing: build first (drop --no-build)" >&2; exit 1; }
  install -m 0644 "$jar" "$D$LIB/jcni-$m.jar"
  JARS+=("$jar")
done
# The Docker driver's own libraries (Jetty); on the classpath after every jcni jar, so a plugin never
# looks into them.
mkdir -p "$D$LIB/docker"
rm -f "$D$LIB"/docker/*.jar
for j in docker/target/lib/*.jar; do
  install -m 0644 "$j" "$D$LIB/docker/"
  JARS+=("$j")
done
DOCKER_CP=$(for j in docker/target/lib/*.jar; do printf ':%s' "$LIB/docker/$(basename "$j")"; done)
so=$(ls linux/target/classes/io/jcni/linux/native/libjcni.so 2>/dev/null || true)
[ -n "$so" ] && install -m 0644 "$so" "$D$LIB/libjcni.so"

if [ "$JAVA_KIND" = jlink ]; then
  RT=$(scripts/runtime.sh "${JARS[@]}")
  rm -rf "$D$PREFIX/runtime.tmp.$$"
  cp -a "$RT" "$D$PREFIX/runtime.tmp.$$"
  rm -rf "$D$PREFIX/runtime" && mv "$D$PREFIX/runtime.tmp.$$" "$D$PREFIX/runtime"
  JAVA="$PREFIX/runtime/bin/java"
else
  rm -rf "$D$PREFIX/runtime"
  JAVA="$JAVA_HOME/bin/java"
fi

CP="$LIB/jcni-types.jar:$LIB/jcni-linux.jar:$LIB/jcni-etcd.jar:$LIB/jcni-runtime.jar:$LIB/jcni-plugins.jar"
FULL_CP="$CP:$LIB/jcni-daemon.jar:$LIB/jcni-overlay.jar:$LIB/jcni-docker.jar:$LIB/jcni-cli.jar$DOCKER_CP"
# JVM warnings would corrupt the JSON on stdout: send them to stderr. C1 only and the serial GC
# because a plugin lives for milliseconds.
# CompileThresholdScaling=10: a plugin call is over before most of what C1 would compile pays off;
# compiling it cost a third of a standalone call's CPU time on this 2-core machine (242 -> 162 ms
# per ADD+DEL, docs/performance.md), and a long loop is still compiled, only later.
JVM_OPTS="-Xlog:disable -Xlog:all=warning:stderr -XX:TieredStopAtLevel=1 -XX:CompileThresholdScaling=10 -XX:+UseSerialGC -Xss1m -XX:-UsePerfData --enable-native-access=ALL-UNNAMED -Djcni.native.lib=$LIB/libjcni.so"
# The daemon lives long, but its Java work is small next to the kernel work it asks for: C1 only
# (TieredStopAtLevel=1). With full tiered compilation C2 was still compiling after 2,000 requests,
# 27 % of jcnid's CPU under 50 concurrent pods; C1 alone cut jcnid's CPU per pod 7.0 -> 5.3 ms
# (docs/performance.md). A small fixed young generation: the JVM's default
# first heap is 1/64 of the RAM, and every request's short-lived garbage touches more of its eden
# until the first collection, so the RSS grew to ~250 MB on a 24 GB machine for nothing live
# (bench/memory); young collections of 16 MB of almost all garbage take well under a millisecond.
# -Xmx128m: jcnid's whole RSS was 66 MB with 1,000 live attachments (heap, metaspace, code and
# threads together); 128 MB of heap is twice that, and a quarter of it is the budget for request
# bodies and answers held at once (daemon/README.md). Crash-only on OutOfMemoryError: jcnid exits at
# once (never half alive), systemd restarts it (Restart=on-failure), the shims run the standalone
# plugins meanwhile, and all state is on disk. DaemonControl adds the same two flags when it
# starts a detached jcnid from a JVM that lacks them (`jcni daemon start`: DaemonControl.childJvmFlags).
DAEMON_OPTS="-Xlog:disable -Xlog:all=warning:stderr -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms24m -Xmn12m -Xmx128m -XX:+ExitOnOutOfMemoryError --enable-native-access=ALL-UNNAMED -Djcni.native.lib=$LIB/libjcni.so"
AOT_FILE="$LIB/jcni.aot"
DAEMON_AOT_FILE="$LIB/jcnid.aot"

write_file() { # path mode: stdin to $D$path, atomically
  local tmp="$D$1.tmp.$$"
  cat > "$tmp"; chmod "$2" "$tmp"; mv -f "$tmp" "$D$1"
}

# A launcher uses the AOT cache when it exists: a missing or unreadable cache makes the JVM print
# errors on stderr, and the package makes the cache after its files are in place.
write_launcher() { # path main-args...   (JVM options from $OPTS, default $JVM_OPTS; cache $CACHE, default $AOT_FILE; $PRELUDE before the exec)
  local path=$1; shift
  local cache=${CACHE:-$AOT_FILE}
  write_file "$path" 0755 <<LAUNCHER
#!/bin/sh
# jcni-launcher: generated by jcni's scripts/install.sh; do not edit.
${PRELUDE:-}if [ -r "$cache" ]; then exec "$JAVA" ${OPTS:-$JVM_OPTS} -XX:AOTCache="$cache" -cp "$FULL_CP" $*; fi
exec "$JAVA" ${OPTS:-$JVM_OPTS} -cp "$FULL_CP" $*
LAUNCHER
}

# The JDK's AOT cache (JEP 483/515): classes a plugin needs, already loaded and linked, plus method
# profiles, from one training run (io.jcni.plugins.Training: VERSION, static, host-local and, as
# root, bridge/ptp in scratch namespaces). One cache serves every plugin type and the jcni command;
# it is only valid for this exact runtime, classpath and these flags, so jcni-aot remakes it on every
# install (the package's postinst runs it). A stale cache is ignored by the JVM (with a warning on stderr).
write_file "$PREFIX/bin/jcni-aot" 0755 <<AOTSCRIPT
#!/bin/sh
# jcni-aot: (re)makes jcni's AOT caches from training runs: $AOT_FILE for the plugins and the jcni
# command, $DAEMON_AOT_FILE for jcnid (its own JVM flags); logs in $LIB/aot-training.log.
# Generated by jcni's scripts/install.sh. Usage: jcni-aot [--remove]   (--remove: delete them only)
rm -f "$AOT_FILE" "$AOT_FILE.config" "$DAEMON_AOT_FILE" "$DAEMON_AOT_FILE.config" "$LIB/aot-training.log" "$LIB"/*.aot.tmp.*
[ "\${1:-}" = --remove ] && exit 0
rc=0
train() { # cache "jvm options" main
  tmp="\$1.tmp.\$\$"
  # The JVM reports the cache creation on stdout: keep ours clean.
  if "$JAVA" \$2 -XX:AOTCacheOutput="\$tmp" -cp "$FULL_CP" \$3 >>"$LIB/aot-training.log" 2>&1 && [ -s "\$tmp" ]; then
    chmod 0644 "\$tmp" && mv -f "\$tmp" "\$1"
  else
    rm -f "\$tmp" "\$tmp.config"
    echo "jcni-aot: AOT training for \$1 failed (see $LIB/aot-training.log); jcni works, but starts slower" >&2
    rc=1
  fi
}
train "$AOT_FILE" "$JVM_OPTS" io.jcni.plugins.Training
train "$DAEMON_AOT_FILE" "$DAEMON_OPTS" io.jcni.daemon.DaemonTraining
exit \$rc
AOTSCRIPT

TYPES=$("$JAVA_HOME/bin/java" -cp "$(echo "$CP" | sed "s:$LIB/:$D$LIB/:g")" io.jcni.plugins.PluginRegistry 2>/dev/null || true)
[ -n "$TYPES" ] || { echo "install.sh: could not list the plugin types" >&2; exit 1; }
if [ "$SHIM" = 1 ]; then
  # The shim's paths are compiled in (JCNI_SOCKET / JCNI_LIBEXEC in the environment override them).
  need_command gcc gcc
  gcc -std=c11 -O2 -Wall -D_FORTIFY_SOURCE=2 -fstack-protector-strong -Wl,-z,relro,-z,now -DJCNI_SOCKET="\"$SOCKET\"" -DJCNI_LIBEXEC="\"$PREFIX/libexec\"" \
    -o "$D$PREFIX/bin/jcni-shim.tmp.$$" daemon/src/main/c/jcni-shim.c
  mv -f "$D$PREFIX/bin/jcni-shim.tmp.$$" "$D$PREFIX/bin/jcni-shim"
fi
for t in $TYPES; do
  write_launcher "$PREFIX/libexec/$t" "io.jcni.plugins.PluginMain $t"
  if [ "$SHIM" = 1 ]; then
    install -m 0755 "$D$PREFIX/bin/jcni-shim" "$D$BIN_DIR/$t.tmp.$$" && mv -f "$D$BIN_DIR/$t.tmp.$$" "$D$BIN_DIR/$t"
  else
    install -m 0755 "$D$PREFIX/libexec/$t" "$D$BIN_DIR/$t.tmp.$$" && mv -f "$D$BIN_DIR/$t.tmp.$$" "$D$BIN_DIR/$t"
  fi
done
# systemd's socket activation passes the listening socket as fd 3 (LISTEN_FDS/LISTEN_PID, the pid
# being this script's, which exec keeps); the JVM can adopt an inherited socket only on stdin.
# MALLOC_ARENA_MAX=2: glibc gives each thread that mallocs its own arena (up to 8 per core), and
# jcnid's pooled namespace threads live long; with 1,000 attachments RSS was 124 MB, 113.5 with two
# arenas (bench/memory). A value set in the environment (e.g. by a unit drop-in) is kept.
PRELUDE='if [ "${LISTEN_FDS:-0}" = 1 ] && [ "${LISTEN_PID:-}" = "$$" ]; then exec 0<&3 3<&-; unset LISTEN_FDS LISTEN_PID LISTEN_FDNAMES; fi
 MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}; export MALLOC_ARENA_MAX
 ' OPTS=$DAEMON_OPTS CACHE=$DAEMON_AOT_FILE write_launcher "$PREFIX/bin/jcnid" 'io.jcni.daemon.Jcnid "$@"'
for unit in jcnid.service jcnid.socket; do
  sed -e "s:/opt/jcni/:$PREFIX/:g" -e "s:/run/jcni/jcnid.sock:$SOCKET:g" "daemon/src/main/dist/$unit" | write_file "$PREFIX/share/$unit" 0644
done
sed -e "s:/opt/jcni/:$PREFIX/:g" -e "s:/run/jcni/jcnid.sock:$SOCKET:g" docker/src/main/dist/jcnid-docker.conf | write_file "$PREFIX/share/jcnid-docker.conf" 0644
write_launcher "$PREFIX/bin/jcni" 'io.jcni.cli.Main "$@"'
ln -sfn "$PREFIX/bin/jcni" "$D$CMD_DIR/jcni"

if [ "$AOT" = 1 ]; then
  "$PREFIX/bin/jcni-aot" || true
fi
[ -n "$DESTDIR" ] && exit 0
MODE=$([ "$SHIM" = 1 ] && echo "shims (jcnid socket $SOCKET, fallback $PREFIX/libexec)" || echo "standalone launchers")
echo "jcni $VERSION installed: plugins [$(echo $TYPES)] in $BIN_DIR as $MODE, jcni in $CMD_DIR, jcnid in $PREFIX/bin, Java runtime: $JAVA"
