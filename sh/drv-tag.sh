#!/bin/sh
# drv-tag.sh: the precompiled driver image tag one node needs, from its labels.
set -eu

prog=drv-tag.sh
usage() {
	echo "usage: $prog [-b branch] [-k kernel] node" >&2
	exit 2
}
die() {
	echo "$prog: $*" >&2
	exit 2
}

# labels2tag beside this script, else on PATH.
case $0 in
*/*) here=${0%/*} ;;
*) here= ;;
esac
if [ -n "$here" ] && [ -x "$here/labels2tag" ]; then
	labels2tag=$here/labels2tag
elif command -v labels2tag >/dev/null 2>&1; then
	labels2tag=labels2tag
else
	die "labels2tag not found beside $0 nor on PATH"
fi
kubectl=${KUBECTL:-kubectl}
# Every request is bounded: a hung API server must not hang cron.
kc() {
	"$kubectl" --request-timeout="${GPUDRV_REQUEST_TIMEOUT:-60s}" "$@"
}

branch=
kernel=
while getopts b:k:h opt; do
	case $opt in
	b) branch=$OPTARG ;;
	k) kernel=$OPTARG ;;
	h)
		echo "usage: $prog [-b branch] [-k kernel] node"
		exit 0
		;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
node=$1
case $node in
'' | -* | *[!a-z0-9.-]*) die "not a node name: '$(printf '%s' "$node" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'" ;;
esac

tmp=$(mktemp "${TMPDIR:-/tmp}/drv-tag.XXXXXX")
trap 'rm -f "$tmp" "$tmp.err"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A failed kubectl must never read as a node without labels.
if ! kc get node "$node" -o json >"$tmp" 2>"$tmp.err"; then
	if grep -q '(NotFound)' "$tmp.err"; then
		die "node $node not found in the cluster"
	fi
	echo "$prog: cannot read node $node from the cluster; kubectl said:" >&2
	sed 's/^/    /' "$tmp.err" >&2
	exit 2
fi
set -- -N
[ -z "$branch" ] || set -- "$@" -b "$branch"
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
rc=0
"$labels2tag" "$@" "$tmp" || rc=$?
exit "$rc"
