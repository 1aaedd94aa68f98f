#!/bin/sh
# push-tags.sh REPOSITORY [TAG...]: gives the sandbox registry the tags named
# (or, with none, read one per line from standard input) in REPOSITORY
# (e.g. nvidia/driver), each a tiny image of one config blob: what an audit
# lists, not what a node would run.  Plain HTTP on 127.0.0.1, with curl.
# Env: GPUDRV_SANDBOX_PORT_BASE, as up.sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -ge 1 ] || { echo "usage: $0 repository [tag...]" >&2 && exit 2; }
repo=$1
shift
url=http://127.0.0.1:$port_registry/v2/$repo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}' >"$work/config"
size=$(wc -c <"$work/config" | tr -d ' ')
digest=sha256:$(sha256sum "$work/config" | cut -d' ' -f1)
# The blob: an upload session (POST), then its bytes in one PUT.
loc=$(curl -sf -X POST -D - -o /dev/null "$url/blobs/uploads/" |
	sed -n 's/^[Ll]ocation: *\([^[:space:]]*\).*/\1/p')
if [ -z "$loc" ]; then
	echo "push-tags.sh: cannot start an upload to $url" >&2
	exit 1
fi
case $loc in /*) loc=http://127.0.0.1:$port_registry$loc ;; esac
case $loc in *\?*) sep='&' ;; *) sep='?' ;; esac
curl -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$work/config" \
	"$loc${sep}digest=$digest" >/dev/null ||
	{ echo "push-tags.sh: cannot upload a blob to $url" >&2 && exit 1; }
cat >"$work/manifest" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
 "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"$digest","size":$size},
 "layers":[]}
JSON

push() {
	curl -sf -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
		--data-binary "@$work/manifest" "$url/manifests/$1" >/dev/null ||
		{ echo "push-tags.sh: cannot put the tag $1 in $url" >&2 && exit 1; }
}
n=0
if [ $# -gt 0 ]; then
	for t in "$@"; do push "$t" && n=$((n + 1)); done
else
	while IFS= read -r t; do
		[ -z "$t" ] || { push "$t" && n=$((n + 1)); }
	done
fi
echo "push-tags.sh: $n tags in 127.0.0.1:$port_registry/$repo" >&2
