#!/usr/bin/env bash
# Builds dist/jcni-image.tar: an OCI image layout archive (`ctr images import`, `podman load`,
# `skopeo copy oci-archive:...`) named jcni:<version>, for the Kubernetes DaemonSet in
# deploy/kubernetes/. Its files are exactly the .deb's (scripts/package.sh), unpacked, plus:
#   - the few Debian 12 files they run on, copied from this host with their package names recorded
#     in /usr/share/jcni-image/packages: glibc's libraries (the JVM, libjcni.so and the shim need
#     only glibc), nft with its libraries (jcnid starts nft to put table structures in place) and
#     busybox-static (a /bin/sh and the coreutils for the scripts below);
#   - /opt/jcni/bin/jcni-install-cni and /opt/jcni/bin/jcni-node (scripts/image/), the init
#     container's installer and the main container's command.
# No Docker daemon, no registry: the layout (one gzip layer, config, manifest, index.json,
# oci-layout) is written here with tar, gzip and sha256sum; the same inputs give the same digests.
# Usage: scripts/image.sh [--deb FILE] [--no-build] [--out DIR]
#   --deb: use this .deb instead of building one with scripts/package.sh --fast
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

DEB= BUILD=1 OUT=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) DEB=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_command busybox busybox-static
need_command nft nftables
need_command sha256sum coreutils

VERSION=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
TAG="jcni:$VERSION"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/jcni-image.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/rootfs
mkdir -p "$ROOT"

if [ -z "$DEB" ]; then
  build=(); [ "$BUILD" = 1 ] || build=(--no-build)
  DEB=$(scripts/package.sh "${build[@]}" --fast --out "$STAGE/deb")
fi
dpkg-deb -x "$DEB" "$ROOT"
# What a node needs is the plugins, jcni and jcnid; systemd units, man page and lintian overrides are
# for a Debian host, not for a container.
rm -rf "$ROOT/lib/systemd" "$ROOT/usr/share/man" "$ROOT/usr/share/lintian" "$ROOT/usr/share/doc/jcni/changelog.gz"
# A Kubernetes node's pods are not Docker's: the Docker libnetwork driver (its jar, Jetty and the
# jcnid drop-in that turns it on) stays out of the image, and so out of jcnid's AOT training, which
# trains each hosted service it finds (about 6 MB of image for a service no node of this image runs).
rm -rf "$ROOT/opt/jcni/lib/docker" "$ROOT/opt/jcni/lib/jcni-docker.jar" "$ROOT/opt/jcni/share/jcnid-docker.conf"

# jcni-install-cni copies /opt/jcni to the node and checks an existing copy against this list.
printf '%s\n' "$VERSION" > "$ROOT/opt/jcni/share/image-version"
install -m 0755 scripts/image/jcni-install-cni "$ROOT/opt/jcni/bin/jcni-install-cni"
install -m 0755 scripts/image/jcni-node "$ROOT/opt/jcni/bin/jcni-node"


# The base: busybox for the shell and coreutils, nft, and the shared libraries of every ELF file.
mkdir -p "$ROOT/bin" "$ROOT/usr/sbin" "$ROOT/etc" "$ROOT/tmp" "$ROOT/run" "$ROOT/var/lib" "$ROOT/proc" "$ROOT/sys" \
  "$ROOT/dev" "$ROOT/host" "$ROOT/usr/share/jcni-image"
chmod 1777 "$ROOT/tmp"
install -m 0755 "$(command -v busybox)" "$ROOT/bin/busybox"
for a in $(busybox --list); do [ -e "$ROOT/bin/$a" ] || ln -s busybox "$ROOT/bin/$a"; done
NFT=$(readlink -f "$(command -v nft)")
install -m 0755 "$NFT" "$ROOT/usr/sbin/nft"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\n' > "$ROOT/etc/group"
printf 'hosts: files dns\n' > "$ROOT/etc/nsswitch.conf"

mapfile -t elves < <(find "$ROOT" -type f \( -name '*.so' -o -perm -0100 \) ! -path "$ROOT/bin/busybox" \
  -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
declare -A libs=()
for f in "${elves[@]}"; do
  # ldd resolves each library as the host's loader would (the runtime's own libraries by its RUNPATH).
  while read -r path; do
    case "$path" in "$ROOT"/*|"") continue ;; esac
    libs[$path]=1
  done < <(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^\s*\(\/[^ ]*\) (.*/\1/p')
done
for l in "${!libs[@]}"; do
  real=$(readlink -f "$l")
  mkdir -p "$ROOT$(dirname "$l")" "$ROOT$(dirname "$real")"
  [ -e "$ROOT$real" ] || cp -p "$real" "$ROOT$real"
  [ "$real" = "$l" ] || [ -e "$ROOT$l" ] || ln -s "$real" "$ROOT$l"
done
# Debian's /lib and /lib64 are where the loader path /lib64/ld-linux-x86-64.so.2 points; keep the
# paths the copied files were found under (merged /usr or not, as on this host).
{
  for f in "$NFT" /bin/busybox "${!libs[@]}"; do
    dpkg -S "$(readlink -f "$f")" 2>/dev/null || dpkg -S "$f" 2>/dev/null || true
  done
} | cut -d: -f1 | sort -u | while read -r p; do
  dpkg-query -W -f='${Package} ${Version}\n' "$p"
done > "$ROOT/usr/share/jcni-image/packages"

# One layer, reproducible: fixed owner, order and times (the source commit's time). The times are set
# before the AOT training: the JVM takes a cache only for jars of the size and time it was made with.
EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
find "$ROOT" -exec touch -h -d @"$EPOCH" {} +

# The AOT caches, made as the package's postinst makes them but here, once, for these exact files at
# their final paths (a chroot of the image's root): jcnid.aot is most of why jcnid answers in ~1 s,
# jcni.aot makes the standalone plugins the node falls back to start fast. The training runs the
# plugins in scratch network namespaces it deletes again; /proc, /sys, /dev are bound only inside a
# private mount namespace.
if unshare --mount --fork sh -c "mount --make-rprivate / && mount -t proc proc '$ROOT/proc' && mount --rbind /sys '$ROOT/sys' \
     && mount --rbind /dev '$ROOT/dev' && mkdir -p '$ROOT/run/netns' && chroot '$ROOT' /opt/jcni/bin/jcni-aot" >&2; then
  find "$ROOT/opt/jcni/lib" -newermt @"$EPOCH" -exec touch -h -d @"$EPOCH" {} +
else
  echo "image.sh: no AOT cache made (see the training log above); the image works, jcnid starts slower" >&2
fi
rm -rf "$ROOT/run/netns" "$ROOT"/tmp/* "$ROOT/root"
(cd "$ROOT/opt/jcni" && find . -type f ! -name image-files.sha256 | LC_ALL=C sort | xargs -d '\n' sha256sum) \
  > "$ROOT/opt/jcni/share/image-files.sha256"
touch -h -d @"$EPOCH" "$ROOT/opt/jcni/share/image-files.sha256"
OCI=$STAGE/oci
mkdir -p "$OCI/blobs/sha256"
tar -C "$ROOT" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@"$EPOCH" --format=posix \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$STAGE/layer.tar" .
DIFF_ID=$(sha256sum "$STAGE/layer.tar" | cut -d' ' -f1)
gzip -n -6 < "$STAGE/layer.tar" > "$STAGE/layer.tar.gz"
blob() { # file -> moves it into blobs/sha256, prints "digest size"
  local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1")
  mv "$1" "$OCI/blobs/sha256/$d"; echo "$d $s"
}
read -r LAYER_DIGEST LAYER_SIZE < <(blob "$STAGE/layer.tar.gz")
CREATED=$(date -u -d @"$EPOCH" +%Y-%m-%dT%H:%M:%SZ)
jq -cn --arg diff "sha256:$DIFF_ID" --arg created "$CREATED" --arg version "$VERSION" '{
  created: $created, architecture: "amd64", os: "linux",
  config: {
    Env: ["PATH=/opt/jcni/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    Cmd: ["/opt/jcni/bin/jcni-node"],
    Labels: {"org.opencontainers.image.title": "jcni", "org.opencontainers.image.version": $version}
  },
  rootfs: {type: "layers", diff_ids: [$diff]},
  history: [{created: $created, created_by: "jcni scripts/image.sh"}]
}' > "$STAGE/config.json"
read -r CONFIG_DIGEST CONFIG_SIZE < <(blob "$STAGE/config.json")
jq -cn --arg cd "sha256:$CONFIG_DIGEST" --argjson cs "$CONFIG_SIZE" --arg ld "sha256:$LAYER_DIGEST" --argjson ls "$LAYER_SIZE" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $ld, size: $ls}]
}' > "$STAGE/manifest.json"
read -r MANIFEST_DIGEST MANIFEST_SIZE < <(blob "$STAGE/manifest.json")
# ref.name is the whole name: podman load takes it as the image name; containerd reads its own annotation.
jq -cn --arg md "sha256:$MANIFEST_DIGEST" --argjson ms "$MANIFEST_SIZE" --arg tag "$TAG" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
    annotations: {"org.opencontainers.image.ref.name": $tag, "io.containerd.image.name": ("docker.io/library/" + $tag)}}]
}' > "$OCI/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' > "$OCI/oci-layout"

mkdir -p "$OUT"
tar -C "$OCI" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@"$EPOCH" -cf "$OUT/jcni-image.tar.tmp.$$" oci-layout index.json blobs
mv -f "$OUT/jcni-image.tar.tmp.$$" "$OUT/jcni-image.tar"
echo "$OUT/jcni-image.tar $TAG uncompressed=$(stat -c %s "$STAGE/layer.tar") compressed=$LAYER_SIZE"
