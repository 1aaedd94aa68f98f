#!/bin/sh
# drv-audit.sh: every GPU node whose precompiled driver image was never built.
# One API call for all GPU nodes, then labels2tag | matrix-grep.
set -eu

prog=drv-audit.sh
usage_line="usage: $prog [-e] [-m matrix | -r repository [-I]] [-p promfile] [-b version | -t] [-k kernel [-l selector]]"
# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
here=$(dirname -- "$(readlink -f -- "$0")")
lib=$here/../lib/gpudrv/gpudrv-lib.sh
[ -r "$lib" ] || { echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; }
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
. "$lib"

matrix=${GPUDRV_MATRIX:-$default_matrix}
prom=
kernel=
selector=
empty=
version=
target=
matrix_given=
repo=
insecure=
need_arg() {
	[ "$1" -ge 2 ] || usage
}
while [ $# -gt 0 ]; do
	case $1 in
	-m | --matrix) need_arg $# && matrix=$2 && matrix_given=1 && shift ;;
	-p | --prom) need_arg $# && prom=$2 && shift ;;
	-k | --kernel) need_arg $# && kernel=$2 && shift ;;
	-l | --selector) need_arg $# && selector=$2 && shift ;;
	-e | --allow-empty) empty=-e ;;
	-b | --driver) need_arg $# && version=$2 && shift ;;
	-t | --target) target=1 ;;
	-r | --registry) need_arg $# && repo=$2 && shift ;;
	-I | --insecure) insecure=1 ;;
	-h | --help) show_usage ;;
	*) usage ;;
	esac
	shift
done
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
if [ -n "$selector" ] && [ -z "$kernel" ]; then
	say "-l goes with -k (plan a kernel change for some nodes)"
	usage
fi
if [ -n "$prom" ] && [ -n "$kernel$version" ]; then
	say "-p records the fleet as it is; it does not go with -k or -b"
	usage
fi
if [ -n "$version" ] && [ -n "$target" ]; then
	say "-b names the version; -t asks the cluster for it: one or the other"
	usage
fi
image_source

# The textfile's directory must take it before the audit, not after.
if [ -n "$prom" ] && ! writable "$prom"; then
	die "cannot write $prom (-p): $why; no audit was made"
fi

# prom_write STATUS: the textfile-collector file, replaced atomically.  The
# last success time is carried over from the old file when this run failed.
prom_write() {
	[ -n "$prom" ] && [ -n "${tmp:-}" ] || return 0
	now=$(date +%s)
	last=
	if [ "$1" -le 1 ]; then
		last=$now
	elif [ -r "$prom" ]; then
		last=$(sed -n 's/^gpudrv_audit_last_success_timestamp_seconds \([0-9][0-9]*\)$/\1/p' "$prom")
	fi
	{
		if [ "$1" -le 1 ] || [ -s "$tmp/out" ]; then
			echo "# HELP gpudrv_audit_missing A GPU node whose precompiled driver image tag is not in the matrix."
			echo "# TYPE gpudrv_audit_missing gauge"
			sed -n 's/^\([^ ]*\) MISSING \([^ ]*\)$/gpudrv_audit_missing{node="\1",tag="\2"} 1/p' "$tmp/out"
			echo "# HELP gpudrv_audit_missing_nodes GPU nodes whose tag is not in the matrix."
			echo "# TYPE gpudrv_audit_missing_nodes gauge"
			echo "gpudrv_audit_missing_nodes $(grep -c ' MISSING ' "$tmp/out" || :)"
			echo "# HELP gpudrv_audit_unknown_nodes GPU nodes whose labels give no tag."
			echo "# TYPE gpudrv_audit_unknown_nodes gauge"
			echo "gpudrv_audit_unknown_nodes $(grep -c ' UNKNOWN ' "$tmp/out" || :)"
			echo "# HELP gpudrv_audit_skipped_nodes GPU nodes that need no precompiled image (-t)."
			echo "# TYPE gpudrv_audit_skipped_nodes gauge"
			echo "gpudrv_audit_skipped_nodes $(grep -c ' SKIP ' "$tmp/out" || :)"
			echo "# HELP gpudrv_audit_gpu_nodes GPU nodes audited."
			echo "# TYPE gpudrv_audit_gpu_nodes gauge"
			echo "gpudrv_audit_gpu_nodes $(grep -c . "$tmp/tags" || :)"
		fi
		echo "# HELP gpudrv_audit_exit_status Exit status of the last run: 0 OK, 1 missing images, 2 could not tell."
		echo "# TYPE gpudrv_audit_exit_status gauge"
		echo "gpudrv_audit_exit_status $1"
		echo "# HELP gpudrv_audit_last_run_timestamp_seconds When the audit last ran."
		echo "# TYPE gpudrv_audit_last_run_timestamp_seconds gauge"
		echo "gpudrv_audit_last_run_timestamp_seconds $now"
		if [ -n "$last" ]; then
			echo "# HELP gpudrv_audit_last_success_timestamp_seconds When the audit last saw the whole fleet."
			echo "# TYPE gpudrv_audit_last_success_timestamp_seconds gauge"
			echo "gpudrv_audit_last_success_timestamp_seconds $last"
		fi
	} >"$tmp/prom"
	# mv within one file system is a rename: readers see the old file or the new.
	promdir=$(dirname -- "$prom")
	if ! cp "$tmp/prom" "$promdir/.${prom##*/}.$$" ||
		! mv -f "$promdir/.${prom##*/}.$$" "$prom"; then
		rm -f "$promdir/.${prom##*/}.$$"
		die "cannot write $prom"
	fi
}

fail() {
	say "$*"
	prom_write 2
	finish 2
}
# A signal, the deadline, a write error: the textfile says the run failed.
abort() {
	fail "$1"
}

# One request: a whole run that hangs past GPUDRV_TIMEOUT gives up, and says so.
gpudrv_start 120 0
: >"$tmp/out"
: >"$tmp/tags"

if [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || fail "no audit was made"
	matrix=$tmp/tags.json
fi
[ -r "$matrix" ] || fail "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another)"

sel=nvidia.com/gpu.present=true
[ -z "$selector" ] || sel=$sel,$selector
# One fresh list call, whose failure must never read as an empty, healthy
# fleet.  --raw: one GET, not pages of 500, and the API server's own JSON
# (kubectl's printer takes 8x as long to re-encode 1,000 nodes; bench/README.md).
query=$(urlencode "$sel")
if ! kc "$tmp/nodes" "$tmp/err" get --raw "/api/v1/nodes?labelSelector=$query"; then
	kubectl_said "cannot list the GPU nodes" "$tmp/err"
	fail "no audit was made"
fi

# -t: the version the GPU Operator will deploy, from its ClusterPolicy and
# NVIDIADriver objects.
if [ -n "$target" ] && ! get_targets "$tmp/targets"; then
	fail "no audit was made"
fi

set -- -n -u
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
[ -z "$version" ] || set -- "$@" -b "$version"
[ -z "$target" ] || set -- "$@" -t "$tmp/targets"
l2t=0
"$labels2tag" "$@" "$tmp/nodes" >"$tmp/tags" || l2t=$?
if [ "$l2t" -ne 0 ] && ! grep -q . "$tmp/tags"; then
	if [ -n "$target" ]; then
		fail "the node list or the GPU Operator's objects could not be read; no audit was made"
	fi
	fail "the node list could not be read; no audit was made"
fi
[ "$l2t" -eq 0 ] || [ "$l2t" -eq 2 ] || fail "labels2tag failed (exit $l2t)"

rc=0
"$matrix_grep" ${empty:+"$empty"} -m "$matrix" "$tmp/tags" >"$tmp/out" || rc=$?
[ "$rc" -le 2 ] || rc=2
[ "$l2t" -eq 0 ] || rc=2
prom_write "$rc"
# Standard output last: a run that failed to record never printed OK.
emit "$tmp/out" "$rc"
finish "$rc"
