#!/usr/bin/env bash
# Builds the Debian package dist/jcni_<version>_amd64.deb: the plugins (shims) in /opt/cni/bin,
# jcni with its own trimmed Java runtime under /opt/jcni, `jcni` on PATH (/usr/bin/jcni), and
# jcnid's systemd units (socket and service, enabled by nobody but the admin). The AOT cache is
# made by the postinst on the target machine (it is only valid for the exact files installed).
# Usage: scripts/package.sh [--no-build] [--out DIR] [--fast]
#   --fast: gzip -1 instead of xz (for tests: the same contents, built in seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

BUILD=1 OUT=dist COMPRESS=(-Zxz -z6)
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    --fast) COMPRESS=(-Zgzip -z1); shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_command dpkg-deb dpkg-dev

# A Maven snapshot sorts before its release: 0.1.0-SNAPSHOT -> 0.1.0~snapshot (a native package: no revision).
VERSION=$(echo "$JCNI_VERSION" | sed 's/-SNAPSHOT$/~snapshot/; s/-/./g')
ARCH=amd64
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/jcni-deb.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/root

build=(); [ "$BUILD" = 1 ] || build=(--no-build)
scripts/install.sh "${build[@]}" --destdir "$ROOT" --prefix /opt/jcni --bin-dir /opt/cni/bin --cmd-dir /usr/bin \
  --socket /run/jcni/jcnid.sock --java jlink

# systemd looks for units in /lib/systemd/system (Debian 12); the copies under share/ are install.sh's.
mkdir -p "$ROOT/lib/systemd/system"
mv "$ROOT/opt/jcni/share/jcnid.service" "$ROOT/opt/jcni/share/jcnid.socket" "$ROOT/lib/systemd/system/"
# The Docker driver's drop-in stays under share/: a user copies it to turn the driver on (nothing unasked).

DOC=$ROOT/usr/share/doc/jcni
mkdir -p "$DOC" "$ROOT/usr/share/man/man1"
install -m 0644 scripts/deb/copyright "$DOC/copyright"
sed "s/@VERSION@/$VERSION/; s/@DATE@/$(date -R -d @"$(git log -1 --format=%ct 2>/dev/null || date +%s)")/" \
  scripts/deb/changelog | gzip -9n > "$DOC/changelog.gz"
gzip -9n < scripts/deb/jcni.1 > "$ROOT/usr/share/man/man1/jcni.1.gz"
mkdir -p "$ROOT/usr/share/lintian/overrides"
install -m 0644 scripts/deb/lintian-overrides "$ROOT/usr/share/lintian/overrides/jcni"
# The JVM's own licence texts come with the runtime it was linked from.
chmod -R u+w,go-w,a+rX "$ROOT"
find "$ROOT" -type f -name '*.so' -exec chmod 0644 {} +

mapfile -t elves < <(find "$ROOT" -type f \( -name '*.so' -o -perm -0100 \) -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
# Debian ships binaries stripped (the JDK's and the shim carry symbols and .comment sections).
for f in "${elves[@]}"; do strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"; done

# Depends: what the native code links against (the JVM and libjcni.so need only glibc).
mkdir -p "$STAGE/debian"
printf 'Source: jcni\n\nPackage: jcni\nArchitecture: any\n' > "$STAGE/debian/control"
DEPENDS=$(cd "$STAGE" && dpkg-shlibdeps -O --ignore-missing-info "${elves[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || DEPENDS="libc6"

mkdir -p "$ROOT/DEBIAN"
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@DEPENDS@/$DEPENDS/" \
  -e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)/" scripts/deb/control > "$ROOT/DEBIAN/control"
# preinst diverts, and postrm restores, /opt/cni/bin/<type> for exactly the plugins this package holds.
PLUGINS=$(cd "$ROOT/opt/cni/bin" && ls | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
for s in preinst postinst prerm postrm; do
  sed "s/@PLUGINS@/$PLUGINS/" "scripts/deb/$s" > "$ROOT/DEBIAN/$s"
  chmod 0755 "$ROOT/DEBIAN/$s"
done
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' md5sum > DEBIAN/md5sums)
chmod 0644 "$ROOT/DEBIAN/md5sums"

mkdir -p "$OUT"
DEB="$OUT/jcni_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group "${COMPRESS[@]}" --build "$ROOT" "$DEB" >/dev/null
echo "$DEB"
