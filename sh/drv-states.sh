#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-states.sh: every GPU node at a glance, from one API call: name,
# upgrade state, schedulable or cordoned, tag, whether its image exists,
# how long it has been in its state and what it waits for, with the fix.
set -eu

prog=drv-states.sh
usage_line="usage: $prog [-eRt] [-m matrix | -r repository [-I]] [-S | -o text|json]"
# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"
matrix=
matrix_given=
repo=
insecure=
empty=0
target=
format=text
summary=
revisions=

eval "set -- $(gpudrv_opts 'm:matrix r:registry o:output' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-m | --matrix | -r | --registry) source_option "$@"; shift ;;
	-I | --insecure) insecure=1 ;;
	-e | --allow-empty) empty=1 ;;
	-t | --target) target=1 ;;
	-R | --revisions) revisions=1 ;;
	-S | --summary) summary=1 ;;
	-o | --output)
		need_arg "$@"
		case $2 in text | json) format=$2 ;; *) die "$1 takes text or json, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-40)'" ;; esac
		shift
		;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 0 ] || usage
if [ -n "$summary" ] && [ "$format" = json ]; then
	misuse "-S is the summary for people; -o json gives every node to a program: one or the other"
fi
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
pdb_check=$(find_tool pdb-check) || finish 2
states_fmt=$(find_tool states-fmt) || finish 2
[ -z "$revisions" ] || revision_drift=$(find_tool revision-drift) || finish 2
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

# One GET (gpu_nodes), with managedFields: when each state label last
# changed.
gpu_nodes "$tmp/nodes" || finish 2
# -t: each node's tag of the driver the GPU Operator will deploy.
set -- -F
if [ -n "$target" ]; then
	get_targets "$tmp/targets" || finish 2
	set -- "$@" -t "$tmp/targets"
fi
l2t=0
"$labels2tag" "$@" "$tmp/nodes" >"$tmp/facts" || l2t=$?
if [ "$l2t" -ne 0 ] && ! [ -s "$tmp/facts" ]; then
	[ -z "$target" ] || die "the node list or the GPU Operator's objects could not be read"
	die "the node list could not be read"
fi
if ! [ -s "$tmp/facts" ]; then
	if [ "$empty" = 1 ]; then
		[ "$format" != json ] || echo '[]'
		finish 0
	fi
	die "no GPU node ($L_PRESENT=true) in the cluster; -e accepts that"
fi
# The nodes with a tag, as matrix-grep reads them.
record_awk '$f_tag !~ /^(UNKNOWN|SKIP):/ { print $f_node, $f_tag }' "$tmp/facts" >"$tmp/tags"
rc=0
: >"$tmp/audit"
if [ -n "$matrix" ]; then
	# Even with no tag to look up (every node SKIP or UNKNOWN): the matrix
	# is read, and a broken one said (-e: no tag is not NONE's exit 2).
	"$matrix_grep" -e -m "$matrix" "$tmp/tags" >"$tmp/audit" || rc=$?
	[ "$rc" -le 1 ] || finish 2
fi
# A node whose labels give no tag: what its image is cannot be told.
[ "$l2t" -eq 0 ] && ! record_awk '$f_tag ~ /^UNKNOWN:/ { f = 1 } END { exit !f }' "$tmp/facts" || rc=2

# What a node waits for is in the pods only in some states, and only those
# are read: the budgets and every pod when a drain or a pod deletion is
# under way (pdb-check -a: what holds it), the driver and validator pods
# (the labels the GPU Operator selects them by) when a node waits for one.
# A list that cannot be read whole is exit 2, never "nothing holds it".
: >"$tmp/draws"
: >"$tmp/gpupods"
if record_awk '$f_state == S_DRAIN || $f_state == S_POD_DELETION { f = 1 } END { exit !f }' "$tmp/facts"; then
	get_draws "$tmp/draws" || finish 2
fi
if record_awk '$f_state == S_POD_RESTART || $f_state == S_POST_MAINTENANCE || $f_state == S_VALIDATION || $f_state == S_FAILED { f = 1 } END { exit !f }' "$tmp/facts"; then
	for role in driver:app.kubernetes.io/component=nvidia-driver validator:app=nvidia-operator-validator; do
		get_pods "$tmp/pods.${role%%:*}" "the ${role%%:*} pods (${role#*:})" \
			"/api/v1/pods?labelSelector=$(urlencode "${role#*:}")" || finish 2
		sed "s|^|${role%%:*} |" "$tmp/pods.${role%%:*}" >>"$tmp/gpupods"
	done
fi
# -R: whether each node's driver pod is from its DaemonSet's newest
# revision (revision-drift): the GPU Operator's driver DaemonSets, their
# ControllerRevisions and their pods, by the label the operator gives them
# all, in every namespace.
if [ -n "$revisions" ]; then
	ds_sel=$(urlencode app.kubernetes.io/component=nvidia-driver)
	get_list "$tmp/ds.json" "/apis/apps/v1/daemonsets?labelSelector=$ds_sel" "the driver DaemonSets" || finish 2
	get_list "$tmp/cr.json" "/apis/apps/v1/controllerrevisions?labelSelector=$ds_sel" "the driver DaemonSets' revisions" || finish 2
	get_list "$tmp/dpods.json" "/api/v1/pods?labelSelector=$ds_sel" "the driver pods" || finish 2
	rd=0
	"$revision_drift" "$tmp/ds.json" "$tmp/cr.json" "$tmp/dpods.json" >"$tmp/revisions" || rd=$?
	[ "$rd" -le 1 ] || die "revision-drift cannot judge the answers to GET /apis/apps/v1/daemonsets, /apis/apps/v1/controllerrevisions and /api/v1/pods?labelSelector=$ds_sel (exit $rd)"
fi
# Each node: its columns, then how long it has been in its state, what it
# waits for (one word), the phrase and the fix (states-fmt(1)), in the
# order of the facts.
set -- -d "$tmp/draws" -p "$tmp/gpupods"
[ -z "$matrix" ] || set -- "$@" -a "$tmp/audit"
[ "$format" != json ] || set -- "$@" -j
[ -z "$summary" ] || set -- "$@" -S
[ -z "$revisions" ] || set -- "$@" -r "$tmp/revisions"
"$states_fmt" "$@" "$tmp/facts" >"$tmp/out" || finish 2
emit "$tmp/out" "$rc"
finish "$rc"
