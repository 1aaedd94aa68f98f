#!/bin/sh
# drv-tag.sh: the precompiled driver image tag one node needs, from its labels.
set -eu

prog=drv-tag.sh
usage_line="usage: $prog [-b branch] [-k kernel] node"
# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv/gpudrv-lib.sh
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
if [ -r "$lib" ]; then . "$lib"; else echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; fi

branch=
kernel=
eval "set -- $(gpudrv_opts 'b:branch k:kernel' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-b | --branch) need_arg "$@"; branch=$2; shift ;;
	-k | --kernel) need_arg "$@"; kernel=$2; shift ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 1 ] || usage
labels2tag=$(find_tool labels2tag) || finish 2
node=$1
check_node "$node"
# One request: a whole run that hangs past GPUDRV_TIMEOUT gives up.
gpudrv_start 120 0

get_node "$node" "$tmp/node"
# The answer must be that one node, whole (labels2tag -F reads it as the
# other scripts do): a list, or another node, is not its tag.
"$labels2tag" -F "$tmp/node" >"$tmp/facts" || finish 2
if [ "$(grep -c . "$tmp/facts")" != 1 ] || [ "$(cut -d ' ' -f1 "$tmp/facts")" != "$node" ]; then
	die "the API's answer for node $node is not that one node (it holds: $(cut -d ' ' -f1 "$tmp/facts" | head -n 3 | tr '\n' ' ' | sed 's/ $//'))"
fi
set -- -N
[ -z "$branch" ] || set -- "$@" -b "$branch"
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
# labels2tag names what is wrong on stderr; the tag is printed last, checked.
"$labels2tag" "$@" "$tmp/node" >"$tmp/tag" || finish 2
emit "$tmp/tag" 0
finish 0
