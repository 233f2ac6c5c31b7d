#!/usr/bin/env bash
# Runs every jcni test: unit tests everywhere, and as root the real-namespace integration tests and
# the interop tests against the reference Go plugins in /usr/lib/cni.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
need_packages "${JCNI_BUILD_PACKAGES[@]}" "${JCNI_TEST_PACKAGES[@]}"
need_command mvn maven
if [ "$(id -u)" -ne 0 ]; then
  echo "jcni: not root; running only the tests that need no privileges" >&2
  set -- -DexcludedGroups=root "$@"
fi
exec mvn -B -ntp -e verify "$@"
