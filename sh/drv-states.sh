#!/bin/sh
# drv-states.sh: every GPU node at a glance, from one API call: name,
# upgrade state, schedulable or cordoned, tag, and whether its image exists.
set -eu

prog=drv-states.sh
usage_line="usage: $prog [-e] [-t] [-m matrix | -r repository [-I]]"
# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
here=$(dirname -- "$(readlink -f -- "$0")")
lib=$here/../lib/gpudrv/gpudrv-lib.sh
[ -r "$lib" ] || { echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; }
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
. "$lib"
matrix=
matrix_given=
repo=
insecure=
empty=0
target=

while [ $# -gt 0 ]; do
	case $1 in
	-m | --matrix) [ $# -ge 2 ] || usage; check_file -m "$2"; matrix=$2; matrix_given=1; shift ;;
	-r | --registry) [ $# -ge 2 ] || usage; check_value -r "$2" "a repository (registry/path/name)"; repo=$2; shift ;;
	-I | --insecure) insecure=1 ;;
	-e | --allow-empty) empty=1 ;;
	-t | --target) target=1 ;;
	-h | --help) show_usage ;;
	*) usage ;;
	esac
	shift
done
image_source
# Which images exist: the registry's tags (-r), the matrix named (-m, else
# GPUDRV_MATRIX), else the default one if there is one; else none is known
# and the image column is "-": the states and cordons are worth seeing still.
if [ -z "$repo" ] && [ -z "$matrix_given" ]; then
	if [ -n "${GPUDRV_MATRIX:-}" ]; then
		check_file GPUDRV_MATRIX "$GPUDRV_MATRIX"
		matrix=$GPUDRV_MATRIX
	elif [ -e "$default_matrix" ] || [ -h "$default_matrix" ]; then
		matrix=$default_matrix
	fi
fi
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
gpudrv_start 120 0

# A matrix named is read, or the run stops here, before any request.
if [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || finish 2
	matrix=$tmp/tags.json
elif [ -n "$matrix" ]; then
	[ -r "$matrix" ] ||
		die "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another, -r a registry)"
else
	say "no matrix was given (-m, GPUDRV_MATRIX, or $default_matrix), nor a registry (-r): no image is checked; the image column is '-'"
fi

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
if [ "$l2t" -ne 0 ] && ! [ -s "$tmp/states" ]; then
	[ -z "$target" ] || die "the node list or the GPU Operator's objects could not be read"
	die "the node list could not be read"
fi
if ! [ -s "$tmp/states" ]; then
	[ "$empty" = 1 ] && finish 0
	die "no GPU node (nvidia.com/gpu.present=true) in the cluster; -e accepts that"
fi
# The nodes with a tag, as matrix-grep reads them.
awk 'NF == 4 && $2 != "UNKNOWN" { print $1, $2 }' "$tmp/states" >"$tmp/tags"
rc=0
: >"$tmp/audit"
if [ -n "$matrix" ]; then
	# Even with no tag to look up (every node SKIP or UNKNOWN): the matrix
	# is read, and a broken one said (-e: no tag is not NONE's exit 2).
	"$matrix_grep" -e -m "$matrix" "$tmp/tags" >"$tmp/audit" || rc=$?
	[ "$rc" -le 1 ] || finish 2
fi
[ "$l2t" -eq 0 ] || rc=2

# <node> <state> <schedulable|cordoned> <tag> <image: ok|MISSING|UNKNOWN|->
# for every GPU node; an item whose name is not a node name (#N) has no
# state to show; a node that needs no precompiled image (-t) shows "-" and
# why in their place.  The MISSING lines are read first, on their own: the
# nodes are never taken for them (an empty audit is no reason to drop them).
awk -v audit="$tmp/audit" -v known="${matrix:+1}" '
	BEGIN { while ((getline l < audit) > 0) { split(l, f, " "); if (f[2] == "MISSING") miss[f[1]] = 1 } }
	NF == 3 { print $1, "-", "-", "UNKNOWN", "UNKNOWN"; next }
	$2 == "SKIP" { print $1, $4, $5, "-", $3; next }
	{ img = $2 == "UNKNOWN" ? "UNKNOWN" : !known ? "-" : ($1 in miss) ? "MISSING" : "ok"
	  print $1, $3, $4, $2, img }' "$tmp/states" >"$tmp/out"
emit "$tmp/out" "$rc"
finish "$rc"
