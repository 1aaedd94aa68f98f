#!/bin/sh
# drv-tag.sh: the precompiled driver image tag one node needs, from its labels.
set -eu

prog=drv-tag.sh
usage_line="usage: $prog [-b branch] [-k kernel] node"
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
. "$here/gpudrv-lib.sh"
labels2tag=$(find_tool labels2tag)

branch=
kernel=
while getopts b:k:h opt; do
	case $opt in
	b) branch=$OPTARG ;;
	k) kernel=$OPTARG ;;
	h)
		echo "$usage_line"
		exit 0
		;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
node=$1
check_node "$node"

tmp=$(mktemp "${TMPDIR:-/tmp}/drv-tag.XXXXXX")
trap 'rm -f "$tmp" "$tmp.err"' EXIT
trap 'exit 2' HUP INT
trap 'exit 2' TERM

get_node "$node" "$tmp"
set -- -N
[ -z "$branch" ] || set -- "$@" -b "$branch"
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
rc=0
"$labels2tag" "$@" "$tmp" || rc=$?
exit "$rc"
