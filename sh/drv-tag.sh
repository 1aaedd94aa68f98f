#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-tag.sh: the precompiled driver image tag one node needs, from its labels.
set -eu

prog=drv-tag.sh
usage_line="usage: $prog [-b branch] [-k kernel] node"
# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"

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
if [ "$(grep -c . "$tmp/facts")" != 1 ] || [ "$(record_awk '{ print $f_node }' "$tmp/facts")" != "$node" ]; then
	die "the API's answer for node $node is not that one node (it holds: $(record_awk 'NR <= 3 { print $f_node }' "$tmp/facts" | tr '\n' ' ' | sed 's/ $//'))"
fi
set -- -N
[ -z "$branch" ] || set -- "$@" -b "$branch"
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
# labels2tag names what is wrong on stderr; the tag is printed last, checked.
"$labels2tag" "$@" "$tmp/node" >"$tmp/tag" || finish 2
emit "$tmp/tag" 0
finish 0
