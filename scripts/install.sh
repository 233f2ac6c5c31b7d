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

D=$DESTDIR  # every write goes to $D$path; every path written into a file is the final one
LIB="$PREFIX/lib"
mkdir -p "$D$LIB" "$D$BIN_DIR" "$D$CMD_DIR" "$D$PREFIX/libexec" "$D$PREFIX/bin" "$D$PREFIX/share"
JARS=()
for m in "${JCNI_MODULES[@]}"; do
  jar="$m/target/jcni-$m-$JCNI_VERSION.jar"
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

CP=$(printf ":$LIB/jcni-%s.jar" "${JCNI_PLUGIN_MODULES[@]}"); CP=${CP#:}
FULL_CP=$(printf ":$LIB/jcni-%s.jar" "${JCNI_MODULES[@]}")$DOCKER_CP; FULL_CP=${FULL_CP#:}
# The JVM options and the launchers' text have one source, io.jcni.common.Launcher (why each
# option: there); the training runs of jcni-aot must use the same options as the launchers.
LAUNCHER=("$JAVA_HOME/bin/java" -cp "common/target/jcni-common-$JCNI_VERSION.jar" io.jcni.common.Launcher)
JVM_OPTS=$("${LAUNCHER[@]}" options plugin "$LIB/libjcni.so")
DAEMON_OPTS=$("${LAUNCHER[@]}" options daemon "$LIB/libjcni.so")
AOT_FILE="$LIB/jcni.aot"
DAEMON_AOT_FILE="$LIB/jcnid.aot"

write_file() { # path mode: stdin to $D$path, atomically
  local tmp="$D$1.tmp.$$"
  cat > "$tmp"; chmod "$2" "$tmp"; mv -f "$tmp" "$D$1"
}

write_launcher() { # path plugin|daemon cache main   (main: shell text, e.g. 'io.jcni.cli.Main "$@"')
  "${LAUNCHER[@]}" script "$2" "jcni's scripts/install.sh" "$JAVA" "$FULL_CP" "$LIB/libjcni.so" "$3" "$4" | write_file "$1" 0755
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
set -f # the JVM options are split into words below, and jcnid's hold '*' patterns: never glob them
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
  # The same build as the daemon module's tests (daemon/pom.xml).
  daemon/src/main/c/build-shim.sh "$D$PREFIX/bin/jcni-shim.tmp.$$" "$SOCKET" "$PREFIX/libexec"
  mv -f "$D$PREFIX/bin/jcni-shim.tmp.$$" "$D$PREFIX/bin/jcni-shim"
fi
# One JVM start for the plugin launchers' text, then one copy per type.
PLUGIN_LAUNCHER=$("${LAUNCHER[@]}" script plugin "jcni's scripts/install.sh" "$JAVA" "$FULL_CP" "$LIB/libjcni.so" "$AOT_FILE" "io.jcni.plugins.PluginMain @TYPE@")
for t in $TYPES; do
  printf '%s\n' "$PLUGIN_LAUNCHER" | sed "s/@TYPE@/$t/" | write_file "$PREFIX/libexec/$t" 0755
  if [ "$SHIM" = 1 ]; then
    install -m 0755 "$D$PREFIX/bin/jcni-shim" "$D$BIN_DIR/$t.tmp.$$" && mv -f "$D$BIN_DIR/$t.tmp.$$" "$D$BIN_DIR/$t"
  else
    install -m 0755 "$D$PREFIX/libexec/$t" "$D$BIN_DIR/$t.tmp.$$" && mv -f "$D$BIN_DIR/$t.tmp.$$" "$D$BIN_DIR/$t"
  fi
done
# jcnid's launcher also adopts a socket from systemd and caps malloc arenas (Launcher.DAEMON_PRELUDE says why).
write_launcher "$PREFIX/bin/jcnid" daemon "$DAEMON_AOT_FILE" 'io.jcni.daemon.Jcnid "$@"'
for unit in jcnid.service jcnid.socket; do
  sed -e "s:/opt/jcni/:$PREFIX/:g" -e "s:/run/jcni/jcnid.sock:$SOCKET:g" "daemon/src/main/dist/$unit" | write_file "$PREFIX/share/$unit" 0644
done
sed -e "s:/opt/jcni/:$PREFIX/:g" -e "s:/run/jcni/jcnid.sock:$SOCKET:g" docker/src/main/dist/jcnid-docker.conf | write_file "$PREFIX/share/jcnid-docker.conf" 0644
write_launcher "$PREFIX/bin/jcni" plugin "$AOT_FILE" 'io.jcni.cli.Main "$@"'
ln -sfn "$PREFIX/bin/jcni" "$D$CMD_DIR/jcni"

if [ "$AOT" = 1 ]; then
  "$PREFIX/bin/jcni-aot" || true
fi
[ -n "$DESTDIR" ] && exit 0
MODE=$([ "$SHIM" = 1 ] && echo "shims (jcnid socket $SOCKET, fallback $PREFIX/libexec)" || echo "standalone launchers")
echo "jcni $JCNI_VERSION installed: plugins [$(echo $TYPES)] in $BIN_DIR as $MODE, jcni in $CMD_DIR, jcnid in $PREFIX/bin, Java runtime: $JAVA"
