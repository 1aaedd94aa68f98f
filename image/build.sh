#!/bin/sh
# image/build.sh DEB KUBECTL OUT: the gpudrv OCI image (make image).
#
# A root file system of Debian packages only, unpacked by mmdebstrap
# (--variant=extract: no maintainer script runs, so nothing but what is
# listed and what it depends on), the .deb that make deb built unpacked on
# top, and the kubectl given; then imported with podman, in a storage of
# its own that is removed after, and written to OUT as an oci-archive.
# The suite is this machine's (/etc/os-release): the .deb was linked
# against its libraries.  Run as root (mmdebstrap --mode=root, podman).
set -eu

prog=image/build.sh
die() { echo "$prog: $*" >&2; exit 2; }
[ $# = 3 ] || die "usage: $prog DEB KUBECTL OUT"
deb=$1 kubectl=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$deb" ] || die "no .deb at $deb: make deb builds it"
[ -x "$kubectl" ] || die "no kubectl at $kubectl: sh sandbox/build.sh builds it"
[ "$(id -u)" = 0 ] || die "run as root: mmdebstrap --mode=root and podman import need it"
for c in mmdebstrap podman dpkg-deb ldconfig; do
	command -v "$c" >/dev/null 2>&1 || die "$c not found: make image installs mmdebstrap, podman and runc (as root)"
done

version=$(dpkg-deb -f "$deb" Version)
arch=$(dpkg-deb -f "$deb" Architecture)
# shellcheck disable=SC1091 # the build machine's own
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || die "cannot tell this machine's Debian suite (VERSION_CODENAME in /etc/os-release)"

# What runs in the image: sh and the tools the scripts call, curl for the
# Pushgateway (-P), the webhook (-N) and Prometheus's alerts, the
# certificates it trusts, the time zones (drv-rollout.sh -W), the .deb's
# libraries (util-linux: flock, the rollout's lock); no apt, perl or shell
# but dash.
pkgs="base-files dash coreutils util-linux sed grep mawk libc-bin ca-certificates
curl tzdata libcjson1 libyaml-0-2"

# The packages come from where this machine's apt takes them.
set --
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ ! -s "$f" ] || set -- "$@" "$f"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gpudrv-image.XXXXXX")
# (--one-file-system: a mount mmdebstrap left in the root if it was killed
# is not descended into.)
cleanup() { rm -rf --one-file-system "$work" "$out.tmp"; }
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
podman() {
	CONTAINERS_CONF=$here/containers.conf command podman --root "$work/storage" \
		--runroot "$work/run" --storage-driver vfs "$@"
}

r=$work/rootfs
echo "$prog: Debian $suite packages into a root file system (mmdebstrap)" >&2
# shellcheck disable=SC2086 # a list of package names
if ! mmdebstrap --quiet --variant=extract --mode=root --architectures="$arch" \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --skip=cleanup/apt/cache \
	--include="$(echo $pkgs | tr ' ' ,)" "$suite" "$r" "$@" >"$work/log" 2>&1; then
	cat "$work/log" >&2
	die "mmdebstrap failed (its words above): are the mirrors of $* reachable?"
fi
# tar, not dpkg-deb -x, so that /lib stays the link to usr/lib; no cron
# job or systemd timer: the cluster schedules the audit.
dpkg-deb --fsys-tarfile "$deb" |
	tar -x --keep-directory-symlink --exclude=./etc/cron.d --exclude=./lib/systemd -C "$r"
install -m 0755 "$kubectl" "$r/usr/bin/kubectl"
# dpkg's record of every package unpacked, the .deb too, as dpkg would have
# kept it: what a scanner (trivy, grype) reads to match the image against
# Debian's security advisories.
for d in "$r"/var/cache/apt/archives/*.deb "$deb"; do
	dpkg-deb -f "$d" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print } END { print "" }'
done >>"$r/var/lib/dpkg/status"

# What the maintainer scripts that did not run would have made: awk (an
# alternative, mawk), the certificates' bundle (update-ca-certificates).
ln -s mawk "$r/usr/bin/awk"
cat "$r"/usr/share/ca-certificates/mozilla/*.crt >"$r/etc/ssl/certs/ca-certificates.crt"
# Users: root, the one that runs the tools (numeric, so that the kubelet can
# check runAsNonRoot), nobody.
printf '%s\n' 'root:x:0:0:root:/root:/usr/sbin/nologin' \
	'gpudrv:x:10001:10001:gpudrv:/tmp:/usr/sbin/nologin' \
	'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$r/etc/passwd"
printf '%s\n' 'root:x:0:' 'gpudrv:x:10001:' 'nogroup:x:65534:' >"$r/etc/group"
# Nothing the tools read: docs but the copyrights, manuals, translations,
# iconv's modules, apt's leftovers.
find "$r/usr/share/doc" -type f ! -name copyright -exec rm -f {} +
find "$r/usr/share/doc" -depth -type d -empty -exec rmdir {} +
rm -rf "$r/usr/share/man" "$r/usr/share/info" "$r/usr/share/locale" "$r/usr/share/lintian" \
	"$r/usr/lib/$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH)/gconv" \
	"$r/var/cache/apt" "$r/var/lib/apt" "$r/var/log"/*
chmod 1777 "$r/tmp"
# No way to another user: util-linux's su goes, and no file keeps a set-id bit.
rm -f "$r/usr/bin/su"
find "$r" -xdev -type f -perm /6000 -exec chmod ug-s {} +
ldconfig -r "$r"

tar --numeric-owner -C "$r" -cf "$work/rootfs.tar" .
name=localhost/gpudrv:$version
echo "$prog: importing $name (podman)" >&2
podman import \
	--change 'USER 10001:10001' \
	--change 'WORKDIR /tmp' \
	--change 'ENV HOME=/tmp' \
	--change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
	--change 'CMD ["drv-audit.sh"]' \
	--change "LABEL org.opencontainers.image.title=gpudrv" \
	--change "LABEL org.opencontainers.image.version=$version" \
	--change "LABEL org.opencontainers.image.description=\"Precompiled NVIDIA driver images and upgrades for Kubernetes GPU nodes\"" \
	"$work/rootfs.tar" "$name" >"$work/import.log" 2>&1 ||
	{ cat "$work/import.log" >&2; die "podman import failed (its words above)"; }
mkdir -p "$(dirname "$out")"
rm -f "$out.tmp"
podman save --quiet --format oci-archive -o "$out.tmp" "$name"
mv -f "$out.tmp" "$out"
size=$(podman image inspect --format '{{.Size}}' "$name")
echo "$prog: $out: $name, $((size / 1000000)) MB unpacked, $(($(wc -c <"$out") / 1000000)) MB archived" >&2
