#!/usr/bin/env bash
# Runs every jcni test: unit tests everywhere, and as root the real-namespace integration tests and
# the interop tests against the reference Go plugins in /usr/lib/cni.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
need_packages "${JCNI_BUILD_PACKAGES[@]}" "${JCNI_TEST_PACKAGES[@]}"
need_command mvn maven
excluded=()
if [ "${1:-}" = "--fast" ]; then
  # The local loop: unit tests and the real-namespace tests of the modules, without the interop
  # tests (tag "interop": a peer beside jcni) and the end-to-end modules (testsuite, chaos).
  shift
  set -- -pl '!testsuite,!chaos' "$@"
  excluded+=(interop)
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "jcni: not root; running only the tests that need no privileges" >&2
  excluded+=(root)
else
  # The peers were installed above: an interop test that cannot find one fails instead of skipping.
  set -- -Djcni.require.interop=true "$@"
fi
if [ ${#excluded[@]} -gt 0 ]; then
  set -- "-DexcludedGroups=$(IFS=,; echo "${excluded[*]}")" "$@"
fi
exec mvn -B -ntp -e verify "$@"
