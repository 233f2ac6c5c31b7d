#!/usr/bin/env bash
# Builds the trimmed Java runtime jcni runs on (jlink: only the JDK modules the jars use, found by
# jdeps) into target/jcni-runtime, and prints its path. Reuses the last one while the JDK, the
# module list and this script are unchanged. The runtime needs nothing on the host but glibc.
# Usage: scripts/runtime.sh [JAR...]   (default: the module jars in */target; build them first: mvn package)
#   install.sh passes the jars it installs, so a new module or library is seen by jdeps too.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

JARS=("$@")
if [ ${#JARS[@]} -eq 0 ]; then
  for m in "${JCNI_MODULES[@]}"; do JARS+=("$m/target/jcni-$m-$JCNI_VERSION.jar"); done
fi
for jar in "${JARS[@]}"; do
  [ -f "$jar" ] || { echo "runtime.sh: $jar missing: build first (mvn package)" >&2; exit 1; }
done
OUT=target/jcni-runtime
# jdeps finds java.base, java.management (the daemon's own JVM arguments), jdk.httpserver (metrics
# over HTTP), jdk.net (SO_PEERCRED) and java.net.http (the etcd client). Nothing reflective hides a
# module from it.
# The Docker driver's Jetty jars are named modules whose module-info says `requires static
# java.desktop` and `requires static java.sql` (optional: a JavaBeans helper and a JDBC leak
# preventer nothing of ours loads); on the class path they are never needed, and java.desktop would
# drag X11 and ALSA libraries into the package's dependencies. java.naming stays (Jetty's TLS code).
MODULES=$("$JAVA_HOME/bin/jdeps" --print-module-deps --ignore-missing-deps --multi-release 25 "${JARS[@]}" \
  | tr ',' '\n' | grep -v -x -e java.desktop -e java.sql | paste -sd, -)
STAMP="$("$JAVA_HOME/bin/java" -version 2>&1 | tr '\n' ' ') | $MODULES | $(sha256sum "$0" | cut -c1-16)"
if [ -x "$OUT/bin/java" ] && [ "$(cat "$OUT.stamp" 2>/dev/null)" = "$STAMP" ]; then
  echo "$PWD/$OUT"; exit 0
fi
rm -rf "$OUT" "$OUT.stamp"
mkdir -p target
# --generate-cds-archive: the JDK's default class-data archive for this module set, so a JVM starts
# quickly even before jcni's own AOT cache exists. The archive for uncompressed oops (heaps over
# 32 GB) is dropped: jcni never runs with one. No --compress: compressed classes start slower.
"$JAVA_HOME/bin/jlink" --add-modules "$MODULES" --strip-debug --no-man-pages --no-header-files \
  --generate-cds-archive --output "$OUT" >target/jcni-runtime.log 2>&1 \
  || { cat target/jcni-runtime.log >&2; echo "runtime.sh: jlink failed" >&2; exit 1; }
rm -f "$OUT/lib/server/classes_nocoops.jsa"
# Tools that come with the modules and that jcni never runs.
rm -f "$OUT/bin/jwebserver" "$OUT/bin/keytool" "$OUT/lib/jexec"
echo "$STAMP" > "$OUT.stamp"
echo "$PWD/$OUT"
