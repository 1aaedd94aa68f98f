#!/bin/sh
# drv-states.sh: every GPU node at a glance, from one API call: name,
# upgrade state, schedulable or cordoned, tag, and whether its image exists.
set -eu

prog=drv-states.sh
usage_line="usage: $prog [-e] [-t] [-m matrix]"
# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
here=$(dirname -- "$(readlink -f -- "$0")")
lib=$here/../lib/gpudrv/gpudrv-lib.sh
[ -r "$lib" ] || { echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; }
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
. "$lib"
matrix=${GPUDRV_MATRIX:-$default_matrix}
empty=0
target=

while [ $# -gt 0 ]; do
	case $1 in
	-m | --matrix) [ $# -ge 2 ] || usage; matrix=$2; shift ;;
	-e | --allow-empty) empty=1 ;;
	-t | --target) target=1 ;;
	-h | --help) show_usage ;;
	*) usage ;;
	esac
	shift
done
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
gpudrv_start 120 0

# One GET, the API server's own JSON (see drv-audit.sh).
if ! kc "$tmp/nodes" "$tmp/err" get --raw '/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue'; then
	kubectl_said "cannot list the GPU nodes" "$tmp/err"
	finish 2
fi
# -t: each node's tag of the driver the GPU Operator will deploy.
set -- -s -u
if [ -n "$target" ]; then
	get_targets "$tmp/targets" || finish 2
	set -- "$@" -t "$tmp/targets"
fi
l2t=0
"$labels2tag" "$@" "$tmp/nodes" >"$tmp/states" || l2t=$?
[ "$l2t" -eq 0 ] || [ -s "$tmp/states" ] || finish 2
if ! [ -s "$tmp/states" ]; then
	[ "$empty" = 1 ] && finish 0
	die "no GPU node (nvidia.com/gpu.present=true) in the cluster; -e accepts that"
fi
# The nodes with a tag, as matrix-grep reads them.
awk 'NF == 4 && $2 != "UNKNOWN" { print $1, $2 }' "$tmp/states" >"$tmp/tags"
rc=0
if [ -s "$tmp/tags" ]; then
	"$matrix_grep" -m "$matrix" "$tmp/tags" >"$tmp/audit" || rc=$?
	[ "$rc" -le 1 ] || finish 2
else
	: >"$tmp/audit"
fi
[ "$l2t" -eq 0 ] || rc=2

# <node> <state> <schedulable|cordoned> <tag> <image: ok|MISSING|UNKNOWN>;
# an item whose name is not a node name (#N) has no state to show; a node
# that needs no precompiled image (-t) shows "-" and why in their place.
awk 'NR == FNR { if ($2 == "MISSING") miss[$1] = 1; next }
	NF == 3 { print $1, "-", "-", "UNKNOWN", "UNKNOWN"; next }
	$2 == "SKIP" { print $1, $4, $5, "-", $3; next }
	{ img = $2 == "UNKNOWN" ? "UNKNOWN" : ($1 in miss) ? "MISSING" : "ok"
	  print $1, $3, $4, $2, img }' "$tmp/audit" "$tmp/states" >"$tmp/out"
emit "$tmp/out" "$rc"
finish "$rc"
