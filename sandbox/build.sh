#!/bin/sh
# Build the sandbox control plane from upstream Go modules (module proxy only):
#   etcd                         (sandbox/etcd/go.mod:  go.etcd.io/etcd/server/v3)
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#                                (sandbox/go.mod:       k8s.io/kubernetes)
#   kwok                         (sandbox/kwok/go.mod:  sigs.k8s.io/kwok)
# into $GPUDRV_SANDBOX_DIR/bin (default <repo>/.sandbox/bin).
# Rebuilds only when a pinned version (go.mod/go.sum), this script or the Go
# toolchain changed, or a binary is missing. -f forces a rebuild.
# The binaries of the last build are kept in the user's cache, as Go keeps
# its compiled packages: GPUDRV_SANDBOX_CACHE, default
# ${XDG_CACHE_HOME:-~/.cache}/gpudrv/sandbox (empty: no cache).  A fresh
# clone with the same versions links them from there (CI's clones: linking
# the six again takes 32 s of two cores, Go's cache warm).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
dir=${GPUDRV_SANDBOX_DIR:-$root/.sandbox}
bin=$dir/bin
force=0
case ${1-} in
-f | --force) force=1 ;;
'') ;;
*)
	echo "usage: $0 [-f|--force]" >&2
	exit 2
	;;
esac

GO=${GO:-go}
if ! command -v "$GO" >/dev/null 2>&1; then
	if [ -x /usr/local/go/bin/go ]; then
		GO=/usr/local/go/bin/go
	else
		echo "build.sh: no Go toolchain (set GO=/path/to/go; Go >= 1.26 needed)" >&2
		exit 1
	fi
fi

binaries="etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok"

stamp_of() {
	{
		"$GO" version
		cd "$here"
		cat build.sh go.mod go.sum tools.go etcd/go.mod etcd/go.sum etcd/tools.go \
			kwok/go.mod kwok/go.sum kwok/tools.go
	} | sha256sum | cut -d' ' -f1
}

stamp=$(stamp_of)
if [ "$force" = 0 ] && [ -f "$bin/.stamp" ] && [ "$(cat "$bin/.stamp")" = "$stamp" ]; then
	missing=
	for b in $binaries; do
		[ -x "$bin/$b" ] || missing="$missing $b"
	done
	if [ -z "$missing" ]; then
		echo "sandbox: binaries in $bin are up to date ($("$bin/kube-apiserver" --version))"
		exit 0
	fi
	echo "sandbox: missing:$missing; rebuilding"
fi

cache=${GPUDRV_SANDBOX_CACHE-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/gpudrv/sandbox}
# put FROM TO: the binaries, hard links where FROM and TO share a file system.
put() {
	for b in $binaries; do
		ln -f "$1/$b" "$2/$b" 2>/dev/null || { cp -f "$1/$b" "$2/$b.tmp" && mv -f "$2/$b.tmp" "$2/$b"; } || return 1
	done
}
mkdir -p "$bin"
rm -f "$bin/.stamp"
if [ "$force" = 0 ] && [ -n "$cache" ] && [ -f "$cache/$stamp/.stamp" ] && put "$cache/$stamp" "$bin"; then
	echo "$stamp" >"$bin/.stamp"
	echo "sandbox: binaries from the cache $cache/$stamp ($("$bin/kube-apiserver" --version))"
	exit 0
fi
# Static binaries, as upstream releases them; no C toolchain needed.
CGO_ENABLED=0
export CGO_ENABLED

# go.mod files are the only source of versions.
modver() { (cd "$1" && "$GO" list -m -f "$3" "$2"); }
kver=$(modver "$here" k8s.io/kubernetes '{{.Version}}')
kdate=$(modver "$here" k8s.io/kubernetes '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}')
# The module zip has no git metadata; record its go.sum hash instead of a sha1.
ksum=$(awk -v v="$kver" '$1 == "k8s.io/kubernetes" && $2 == v { print $3 }' "$here/go.sum")
kmajor=$(echo "$kver" | sed 's/^v\([0-9]*\)\..*/\1/')
kminor=$(echo "$kver" | sed 's/^v[0-9]*\.\([0-9]*\)\..*/\1/')
wver=$(modver "$here/kwok" sigs.k8s.io/kwok '{{.Version}}')

kldflags=
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kldflags="$kldflags -X $p.gitVersion=$kver -X $p.gitMajor=$kmajor -X $p.gitMinor=$kminor"
	kldflags="$kldflags -X $p.gitCommit=$ksum -X $p.gitTreeState=clean -X $p.buildDate=$kdate"
done

total0=$(date +%s)
# build <module dir> <output name> <package> <ldflags>
build() {
	t0=$(date +%s)
	echo "sandbox: building $2 ($3) ..."
	(cd "$1" && "$GO" build -trimpath -buildvcs=false -ldflags "-s -w$4" -o "$bin/$2.tmp" "$3")
	mv -f "$bin/$2.tmp" "$bin/$2"
	echo "sandbox: built $2 in $(($(date +%s) - t0))s"
}

build "$here/etcd" etcd go.etcd.io/etcd/server/v3 ""
build "$here" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kldflags"
build "$here" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kldflags"
build "$here" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kldflags"
build "$here" kubectl k8s.io/kubernetes/cmd/kubectl "$kldflags"
build "$here/kwok" kwok sigs.k8s.io/kwok/cmd/kwok " -X sigs.k8s.io/kwok/pkg/consts.Version=${wver#v}"

echo "$stamp" >"$bin/.stamp"
echo "sandbox: all binaries built in $(($(date +%s) - total0))s into $bin ($kver, kwok $wver)"
# Into the cache, the last build's only (400 MB); a cache that cannot be
# written is no error.
if [ -n "$cache" ] && mkdir -p "$cache" 2>/dev/null && rm -rf "$cache/$stamp.$$" && mkdir "$cache/$stamp.$$" &&
	put "$bin" "$cache/$stamp.$$" && echo "$stamp" >"$cache/$stamp.$$/.stamp"; then
	for old in "$cache"/*; do
		case $old in "$cache/$stamp" | "$cache/$stamp.$$") ;; *) rm -rf "$old" ;; esac
	done
	[ -d "$cache/$stamp" ] || mv "$cache/$stamp.$$" "$cache/$stamp" 2>/dev/null || :
fi
rm -rf "${cache:-/nonexistent}/$stamp.$$"
