# Sourced by every jcni script: picks the JDK and installs the Debian packages a step needs.
# shellcheck shell=bash

JCNI_JAVA_HOME_DEFAULT=/usr/lib/jvm/temurin-25-jdk-amd64
export JAVA_HOME="${JCNI_JAVA_HOME:-${JAVA_HOME_25:-$JCNI_JAVA_HOME_DEFAULT}}"
if [ ! -x "$JAVA_HOME/bin/java" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q 'version "2[5-9]'; then
  echo "jcni: needs a Java 25 JDK; none at $JAVA_HOME. Debian 12 has none: install temurin-25-jdk from Eclipse Adoptium's Debian repository, or set JCNI_JAVA_HOME to any JDK 25" >&2
  exit 1
fi
export PATH="$JAVA_HOME/bin:$PATH"

# The one version and the one module list: pom.xml's. JCNI_MODULES is every module that ships (all
# but the test-only ones), in the reactor's order, which is also the class-path order; the plugins
# need the ones up to plugins (JCNI_PLUGIN_MODULES).
JCNI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JCNI_VERSION=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$JCNI_ROOT/pom.xml" | head -1)
JCNI_TEST_MODULES=(testfixtures testkit testsuite chaos)
mapfile -t JCNI_MODULES < <(sed -n 's:.*<module>\(.*\)</module>.*:\1:p' "$JCNI_ROOT/pom.xml" \
  | grep -v -x "${JCNI_TEST_MODULES[@]/#/-e}")
JCNI_PLUGIN_MODULES=()
for _m in "${JCNI_MODULES[@]}"; do JCNI_PLUGIN_MODULES+=("$_m"); [ "$_m" = plugins ] && break; done
unset _m

# need_packages PKG... : apt-get installs the packages that are not installed yet.
need_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "jcni: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "jcni: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || { echo "jcni: apt-get update failed" >&2; exit 1; }
  apt-get install -y -q "${missing[@]}" >/dev/null || { echo "jcni: apt-get install ${missing[*]} failed" >&2; exit 1; }
}

need_command() {
  command -v "$1" >/dev/null 2>&1 || { echo "jcni: '$1' not found on PATH (install $2)" >&2; exit 1; }
}

# The packages the build and the tests use.
JCNI_BUILD_PACKAGES=(maven gcc libc6-dev iproute2)
JCNI_TEST_PACKAGES=(containernetworking-plugins nftables iptables busybox-static curl podman runc iputils-ping procps util-linux
  golang-go golang-github-containerd-go-cni-dev etcd-server etcd-client docker.io dnsmasq-base)
