#!/usr/bin/env bash
# Builds a container image with chorus in it, with no registry and no Docker: the built binary,
# its shared-library closure (as ldd resolves it here), busybox-static for a shell and the usual
# tools, and the system CA bundle, as an OCI image layout made with umoci (Debian package).
#
#   scripts/chorus-image.sh [-b BINARY] [-t TAG] OUT.tar
#
# BINARY defaults to build/bin/chorus, TAG to its `--version`. OUT.tar is an OCI image layout
# whose ref name is TAG; the image runs as root, PATH=/usr/local/bin:/bin, chorus in
# /usr/local/bin. What to do with it:
#   test cluster:  tests/k8s/cluster.sh import-image OUT.tar localhost/chorus  (-> localhost/chorus:TAG)
#   any containerd: ctr -n k8s.io images import --base-name REGISTRY/chorus OUT.tar
#   a registry:    skopeo copy oci-archive:OUT.tar:TAG docker://REGISTRY/chorus:TAG
# then `chorus submit --kubernetes --image REGISTRY/chorus:TAG wf.yaml`. The libraries are this
# machine's: the image runs on any x86-64 Linux node, whatever its distribution.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$HERE/../build/bin/chorus
TAG=
while getopts "b:t:h" o; do
  case $o in
    b) BIN=$OPTARG ;;
    t) TAG=$OPTARG ;;
    *)
      sed -n '2,20p' "$0" >&2
      exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
OUT=${1:?usage: $0 [-b BINARY] [-t TAG] OUT.tar}
[[ -x $BIN ]] || { echo "chorus-image.sh: no chorus binary at $BIN (build it first)" >&2; exit 1; }
command -v umoci >/dev/null || { echo "chorus-image.sh: needs umoci (apt-get install umoci)" >&2; exit 1; }
BUSYBOX=$(command -v busybox || true)
[[ -n $BUSYBOX ]] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || BUSYBOX=/bin/busybox
[[ -x $BUSYBOX ]] || { echo "chorus-image.sh: needs busybox-static (apt-get install busybox-static)" >&2; exit 1; }
BIN=$(realpath "$BIN")
OUT=$(realpath -m "$OUT")
[[ -n $TAG ]] || TAG=$("$BIN" --version)

W=$(mktemp -d)
# The check below mounts a /proc into the root: it must be gone before the root is removed.
trap 'umount "$W/b/rootfs/proc" 2>/dev/null || true; rm -rf "$W"' EXIT
L=$W/layout
umoci init --layout "$L"
umoci new --image "$L:$TAG"
umoci unpack --rootless --image "$L:$TAG" "$W/b" >/dev/null
R=$W/b/rootfs

mkdir -p "$R"/{bin,usr/local/bin,etc/ssl/certs,tmp,root}
chmod 1777 "$R/tmp"
cp "$BUSYBOX" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [[ $a == busybox ]] || ln -sf busybox "$R/bin/$a"; done
install -m 755 "$BIN" "$R/usr/local/bin/chorus"
# Every library at the path ldd resolved it to (the dynamic loader's default directories), as
# a file: symlinks such as Debian's /etc/alternatives ones are followed.
ldd "$BIN" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u | while read -r lib; do
  mkdir -p "$R$(dirname "$lib")"
  cp -L "$lib" "$R$lib"
done
[[ -f /etc/ssl/certs/ca-certificates.crt ]] && cp -L /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/"
echo 'root:x:0:0:root:/root:/bin/sh' >"$R/etc/passwd"
echo 'root:x:0:' >"$R/etc/group"
echo 'hosts: files dns' >"$R/etc/nsswitch.conf"
# The image must run what it was built for (checked where chroot is allowed). A container has a
# /proc, and a sanitizer build reads /proc/self/maps as it starts: the check gets one too, and
# the image keeps the empty mount point.
mkdir -p "$R/proc"
if [[ $(id -u) -eq 0 ]]; then
  mounted=0
  mount -t proc proc "$R/proc" 2>/dev/null && mounted=1
  out=$(chroot "$R" /usr/local/bin/chorus --version 2>&1)
  rc=$?
  [[ $mounted -eq 1 ]] && umount "$R/proc"
  if [[ $rc -ne 0 ]]; then
    echo "chorus-image.sh: chorus does not run inside the image's root (a library missing?):" >&2
    printf '%s\n' "$out" | tail -5 >&2
    exit 1
  fi
fi

umoci repack --image "$L:$TAG" "$W/b" >/dev/null
umoci config --image "$L:$TAG" --config.cmd /usr/local/bin/chorus \
  --config.env PATH=/usr/local/bin:/bin --config.workingdir / \
  --config.label org.opencontainers.image.title=chorus \
  --config.label "org.opencontainers.image.version=$TAG"
umoci gc --layout "$L"
mkdir -p "$(dirname "$OUT")"
(cd "$L" && tar cf "$OUT.tmp" .) && mv "$OUT.tmp" "$OUT"
echo "chorus-image.sh: wrote $OUT (ref $TAG, $(du -h "$OUT" | cut -f1))" >&2
