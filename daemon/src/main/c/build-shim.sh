#!/bin/sh
# The one build of jcni-shim: the daemon module's tests (daemon/pom.xml) and the installation
# (scripts/install.sh, and so the package) both run this, so the tests run the binary users get.
# Usage: build-shim.sh OUT SOCKET LIBEXEC   (the default socket and launcher directory, compiled
# in; JCNI_SOCKET / JCNI_LIBEXEC in the environment override them at run time)
set -eu
[ $# -eq 3 ] || { echo "usage: build-shim.sh OUT SOCKET LIBEXEC" >&2; exit 2; }
# Debian's hardening flags (lintian checks them in the package); warnings are errors.
exec gcc -std=c11 -O2 -Wall -Wextra -Werror \
  -D_FORTIFY_SOURCE=2 -fstack-protector-strong -Wl,-z,relro,-z,now \
  -DJCNI_SOCKET="\"$2\"" -DJCNI_LIBEXEC="\"$3\"" \
  -o "$1" "$(dirname "$0")/jcni-shim.c"
