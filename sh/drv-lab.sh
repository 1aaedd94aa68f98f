#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-lab.sh: the driver-upgrade lab (drv-lab.sh(1)) end to end on a real control
# plane: facts, tags, audit, a new node, CUDA affinity, a budget that blocks
# a drain, the ordered upgrade, the report.  Run by `make lab`.
set -eu

prog=drv-lab.sh
usage_line="usage: $prog"
# The library, in ../lib/gpudrv from this script's directory: runtime.sh
# first, then what the script uses.
lib=$(cd "$(dirname -- "$0")" && pwd)/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: run make in the gpudrv checkout" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"
eval "set -- $(gpudrv_opts '' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 0 ] || usage

src=${GPUDRV_SRC:-$(dirname "$here")}
[ -d "$src/lab/k8s" ] || die "no lab/ under $src (set GPUDRV_SRC to the gpudrv checkout)"
home=${GPUDRV_HOME:-$HOME/gpudrv}
out=$home/out
wait_s=$(secs "${LAB_TIMEOUT:-120}") || die "LAB_TIMEOUT takes seconds (120, 120s, 2m), not '$LAB_TIMEOUT'"
make_tmp

# Every failure names the step it stopped ($at), and exits 2.
at=start
lab_die() {
	die "$at: $*"
}
# shellcheck disable=SC2317 # called by the library
abort() {
	say "$at: $1"
	finish 2
}
# show LINE...: progress on standard output; a write error ends the lab.
show() {
	printf '%s\n' "$@" 2>/dev/null || lab_die "cannot write to standard output"
}
# show_sed SED-SCRIPT FILE: FILE through sed, as progress.
show_sed() {
	sed "$1" "$2" 2>/dev/null || lab_die "cannot write to standard output"
}
step() {
	at=${1%%:*}
	show "== $1"
}

# k ARGS...: kubectl, as a child a signal stops at once, with its own
# children (a credential plugin that waits): timeout(1), without a limit
# (0), runs it in a process group of its own and passes a signal to the
# whole group.  Its failure ends the lab, naming the step (kubectl's own
# words are on stderr above).
k() {
	k_rc=0
	run_bg timeout 0 kubectl "$@" || k_rc=$?
	[ "$k_rc" -eq 0 ] || lab_die "kubectl $(printf '%s' "$*" | cut -c1-80) failed (exit $k_rc)"
}
# run TOOL ARGS...: a gpudrv command, as a child; its status in $rc.
run() {
	rc=0
	run_bg "$@" || rc=$?
}
# run_in OUT ERR TOOL ARGS...: run, TOOL's output in OUT, its errors in ERR.
run_in() {
	rc=0
	run_to "$@" || rc=$?
}

# wait_until DESCRIPTION COMMAND...: polls the condition, at most $wait_s s.
wait_until() {
	what=$1
	shift
	end=$(($(date +%s) + wait_s))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || lab_die "timed out after ${wait_s}s waiting for $what"
		nap 1
	done
}
# kq ARGS...: a look, kubectl ARGS run as k runs it (a signal stops it and
# its children at once), its output in $kq, its stderr dropped; its status.
kq() {
	kq_rc=0
	run_to "$tmp/kq" /dev/null timeout 0 kubectl "$@" || kq_rc=$?
	kq=$(cat "$tmp/kq")
	return "$kq_rc"
}
# The conditions wait_until polls (shellcheck sees no direct call).
# shellcheck disable=SC2317
is() { # is EXPECTED KIND/NAME JSONPATH
	kq get "$2" -o "jsonpath=$3" && [ "$kq" = "$1" ]
}
# shellcheck disable=SC2317
is_pod() { # is_pod EXPECTED POD JSONPATH, in gpu-drv
	kq -n gpu-drv get pod "$2" -o "jsonpath=$3" && [ "$kq" = "$1" ]
}

# The cluster: the sandbox with lab-node-0..2, or LAB_KUBECONFIG's.
at=cluster
if [ -n "${LAB_KUBECONFIG:-}" ]; then
	KUBECONFIG=$LAB_KUBECONFIG
	export KUBECONFIG
	for n in lab-node-0 lab-node-1 lab-node-2; do
		kq get node "$n" ||
			lab_die "LAB_KUBECONFIG's cluster has no node $n (the lab creates no base nodes in a cluster it did not start)"
	done
	step "cluster: $LAB_KUBECONFIG"
else
	sandbox=${GPUDRV_SANDBOX_DIR:-$src/.sandbox}
	step "cluster: the sandbox (sandbox/up.sh --lab; log in $sandbox/logs/up.log)"
	mkdir -p "$sandbox/logs" 2>"$tmp/err" || lab_die "cannot create $sandbox/logs ($(sed -n '$s/.*: //p' "$tmp/err"))"
	run_in /dev/null "$sandbox/logs/up.log" sh "$src/sandbox/up.sh" --lab
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$sandbox/logs/up.log" >&2
		lab_die "the sandbox did not start"
	fi
	KUBECONFIG=$sandbox/kubeconfig
	PATH=$(dirname "$KUBECONFIG")/bin:$PATH
	export KUBECONFIG PATH
fi

step "install: the tools into $home/bin, the lab's matrix and manifests into $home"
mkdir -p "$home/bin" "$home/lib/gpudrv" "$home/k8s" "$out" 2>"$tmp/err" ||
	lab_die "cannot create the lab's directories in $home ($(sed -n '$s/.*: //p' "$tmp/err")); GPUDRV_HOME names another place"
# put FROM TO: a copy, then a rename, so a running tool is never half written.
put() {
	if ! cp "$1" "$2.new" || ! mv -f "$2.new" "$2"; then
		lab_die "cannot install $2"
	fi
}
for t in labels2tag matrix-grep pdb-check report-fmt upgrade-policy states-fmt drv-tag.sh drv-audit.sh drv-upgrade.sh drv-states.sh; do
	put "$here/$t" "$home/bin/$t"
done
# The library these tools were built with: the one this script sourced.
for t in "$lib"/*.sh; do
	put "$t" "$home/lib/gpudrv/${t##*/}"
done
# The lab's own commands, $GPUDRV_HOME/drv-*.sh: the installed ones, with the
# lab's matrix as their default instead of /etc/gpudrv's.
for t in drv-tag.sh drv-audit.sh drv-upgrade.sh drv-states.sh; do
	# shellcheck disable=SC2016 # expanded when the wrapper runs
	# (An assignment, not : "${GPUDRV_MATRIX:=...}": in double quotes the
	# single quotes around the path would stay in it.)
	printf '#!/bin/sh\n# %s of the gpudrv lab: the installed one, with the lab matrix.\nGPUDRV_MATRIX=${GPUDRV_MATRIX:-%s}\nexport GPUDRV_MATRIX\nexec %s "$@"\n' \
		"$t" "$(shq "$home/support-matrix.csv")" "$(shq "$home/bin/$t")" >"$tmp/wrapper"
	chmod +x "$tmp/wrapper"
	put "$tmp/wrapper" "$home/$t"
done
for f in "$src/lab/k8s/"*.yaml; do
	put "$f" "$home/k8s/${f##*/}"
done
put "$src/lab/support-matrix.csv" "$home/support-matrix.csv"
rm -f "$out"/*.txt
matrix=$home/support-matrix.csv
PATH=$home/bin:$PATH
export PATH

# A rerun starts from the lab's first state: no namespace, no lab-node-3,
# lab-node-0..2 schedulable and without upgrade state.
at=reset
k delete namespace gpu-drv --ignore-not-found --wait=true --timeout="${wait_s}s" >/dev/null
k delete node lab-node-3 --ignore-not-found >/dev/null
for n in lab-node-0 lab-node-1 lab-node-2; do
	k uncordon "$n" >/dev/null
	k label node "$n" "$L_STATE-" >/dev/null
	k annotate node "$n" "$A_INITIAL-" >/dev/null
done

# add_row NODE [labels2tag options]: the matrix row NODE needs, appended
# atomically (a copy, then a rename).  The row is built by labels2tag from
# the node's labels, the same way the tag is.
add_row() {
	n=$1
	shift
	k get node "$n" -o json >"$tmp/node.json"
	row=$(labels2tag -N -c "$@" "$tmp/node.json") || lab_die "no matrix row for $n"
	cp "$matrix" "$tmp/matrix"
	[ -z "$(tail -c 1 "$tmp/matrix")" ] || echo >>"$tmp/matrix"
	echo "$row" >>"$tmp/matrix"
	put "$tmp/matrix" "$matrix"
	show "   support-matrix.csv += $row"
}

step "1. facts: namespace gpu-drv; driver, kernel and OS labels on lab-node-0..2"
k create namespace gpu-drv >/dev/null
wait_until "the default service account in gpu-drv" kq -n gpu-drv get serviceaccount default
facts() { # facts NODE MAJOR MINOR REV KERNEL OS-ID VERSION-ID
	k label node "$1" --overwrite "$L_PRESENT=true" "$L_MAJOR=$2" "$L_MINOR=$3" "$L_REV=$4" \
		"$L_KERNEL=$5" "$L_OSID=$6" "$L_OSVER=$7" >/dev/null
}
facts lab-node-0 550 90 07 5.15.0-119-generic ubuntu 22.04
facts lab-node-1 535 183 06 5.15.0-107-generic ubuntu 22.04
facts lab-node-2 550 90 07 6.8.0-45-generic ubuntu 24.04

step "2. tags: drv-tag.sh for each node -> out/tags.txt"
: >"$tmp/tags"
for n in lab-node-0 lab-node-1 lab-node-2; do
	run "$home/drv-tag.sh" "$n" >"$tmp/tag"
	[ "$rc" -eq 0 ] || lab_die "drv-tag.sh $n failed (exit $rc)"
	echo "$n $(cat "$tmp/tag")" >>"$tmp/tags"
done
put "$tmp/tags" "$out/tags.txt"
show_sed 's/^/   /' "$out/tags.txt"

step "3. audit against support-matrix.csv -> out/audit.txt"
run "$home/drv-audit.sh" >"$out/audit.txt"
[ "$rc" -eq 0 ] || lab_die "the audit of the first three nodes says $(cat "$out/audit.txt") (exit $rc), not OK"
show "   $(cat "$out/audit.txt")"

step "4. a new node, lab-node-3, on kernel 6.8.0-52: the image comes first"
k apply -f "$home/k8s/node3.yaml" >/dev/null
wait_until "lab-node-3 Ready" is True node/lab-node-3 '{.status.conditions[?(@.type=="Ready")].status}'
run "$home/drv-audit.sh" >"$out/skew.txt"
[ "$rc" -eq 1 ] || lab_die "the audit with lab-node-3 exited $rc, not 1 (MISSING)"
show "   $(cat "$out/skew.txt")"
add_row lab-node-3
run "$home/drv-audit.sh" >"$out/skew-fixed.txt"
[ "$rc" -eq 0 ] || lab_die "the audit after adding lab-node-3's row is not OK (exit $rc)"
show "   $(cat "$out/skew-fixed.txt")"

step "5. CUDA is only forward compatible: node affinity on the driver labels"
k apply -f "$home/k8s/cuda12-job.yaml" -f "$home/k8s/cuda13-job.yaml" >/dev/null
wait_until "cuda12-job Running" is_pod Running cuda12-job '{.status.phase}'
k -n gpu-drv get pod cuda12-job -o jsonpath='{.spec.nodeName}' >"$tmp/where"
[ "$(cat "$tmp/where")" = lab-node-0 ] || lab_die "cuda12-job runs on $(cat "$tmp/where"), not lab-node-0"
# shellcheck disable=SC2317
unsched() { is_pod Unschedulable cuda13-job '{.status.conditions[?(@.type=="PodScheduled")].reason}'; }
wait_until "cuda13-job's PodScheduled=False/Unschedulable" unsched
k -n gpu-drv get pod cuda13-job -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' >"$tmp/cuda"
echo >>"$tmp/cuda"
put "$tmp/cuda" "$out/cuda.txt"
show "   cuda12-job Running on lab-node-0; cuda13-job Pending: $(cat "$out/cuda.txt")"

step "6. the budget, not the driver, stops the upgrade"
k apply -f "$home/k8s/trainer.yaml" -f "$home/k8s/pdb.yaml" >/dev/null
# shellcheck disable=SC2317
four_running() {
	kq -n gpu-drv get pods -l app=trainer --field-selector=status.phase=Running -o name &&
		[ "$(printf '%s\n' "$kq" | grep -c .)" -eq 4 ]
}
wait_until "four trainer pods Running" four_running
# shellcheck disable=SC2317
pdb_settled() { # pdb_settled ALLOWED: status recomputed for the current spec
	kq -n gpu-drv get pdb trainer-pdb \
		-o jsonpath='{.status.observedGeneration} {.metadata.generation} {.status.currentHealthy} {.status.disruptionsAllowed}' || return
	# shellcheck disable=SC2086 # four words
	set -- "$1" $kq
	[ "$#" -eq 5 ] && [ "$2" = "$3" ] && [ "$4" = 4 ] && [ "$5" = "$1" ]
}
wait_until "trainer-pdb status: 4 healthy, 0 disruptions allowed" pdb_settled 0
k get pdb,pods -A -o json >"$tmp/pdb-pods.json"
run pdb-check lab-node-1 "$tmp/pdb-pods.json" >"$out/pdb-check.txt"
[ "$rc" -eq 1 ] || lab_die "pdb-check says the drain would pass (exit $rc): $(cat "$out/pdb-check.txt")"
show_sed 's/^/   pdb-check: /' "$out/pdb-check.txt"
# Refused on purpose: its failure is the point, not an error of the lab.
run_in "$out/drain-blocked.txt" "$out/drain-blocked.txt" \
	timeout 0 kubectl drain lab-node-1 --ignore-daemonsets --delete-emptydir-data --timeout=20s
[ "$rc" -ne 0 ] || lab_die "the drain with minAvailable 4 passed; it must be refused"
grep -q "disruption budget" "$out/drain-blocked.txt" ||
	lab_die "the drain failed, but not by the disruption budget: $(tail -n 3 "$out/drain-blocked.txt")"
show "   refused by the budget (exit $rc): $(grep -m 1 'disruption budget' "$out/drain-blocked.txt")"
# drain cordons first: say so, and undo it, so step 7 starts from a node in service.
show "   the refused drain left lab-node-1 cordoned; uncordoning it"
k uncordon lab-node-1 >/dev/null

step "7. image first, then headroom, then the whole way (drv-upgrade.sh)"
add_row lab-node-1 -b 550
k -n gpu-drv patch pdb trainer-pdb --type=merge -p '{"spec":{"minAvailable":3}}' >/dev/null
wait_until "trainer-pdb status: 1 disruption allowed" pdb_settled 1
# The lab's upgradePolicy, stated as flags over the cluster's: the drain
# of step 6, every pod of the node (its trainers hold no GPU), emptyDir data
# let go, with no pod deletion first; 20 s for it.
show "   policy: -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true -t 20"
run "$home/drv-upgrade.sh" -L -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true \
	-t 20 -d "$out/drain-ok.txt" lab-node-1 550.90.07 >"$out/upgrade.out" 2>"$out/upgrade.log"
show_sed 's/^drv-upgrade.sh: /   /' "$out/upgrade.log"
[ "$rc" -eq 0 ] || lab_die "drv-upgrade.sh exited $rc"
wait_until "four trainer pods Running again" four_running
run "$home/drv-audit.sh" >/dev/null
[ "$rc" -eq 0 ] || lab_die "the audit after the upgrade is not OK (exit $rc)"
show "   audit: OK"

step "8. the state machine and the report"
# The GPU Operator's states, in its documented order (without
# wait-for-jobs-required and upgrade-failed).  drv-upgrade.sh writes those
# where the node waits, each with what goes with it (drv-upgrade.sh(1)):
# the ones it wrote for lab-node-1 must come in that order.
printf '%s\n' "$S_REQUIRED" "$S_CORDON" "$S_POD_DELETION" "$S_DRAIN" \
	"$S_POD_RESTART" "$S_VALIDATION" "$S_UNCORDON" "$S_DONE" >"$tmp/states"
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' "$out/upgrade.log" >"$tmp/written"
awk 'FILENAME == ARGV[1] { at[$0] = FNR; next }
	!($0 in at) || at[$0] <= last { bad = 1 } { last = at[$0]; n++ }
	END { exit bad || n == 0 }' "$tmp/states" "$tmp/written" ||
	lab_die "drv-upgrade.sh wrote states out of the operator's order: $(paste -sd ' ' "$tmp/written")"
show "   states written: $(paste -sd ' ' "$tmp/written")"
cp "$tmp/states" "$out/upgrade-states.txt"
is "$S_DONE" node/lab-node-1 '{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}' ||
	k label node lab-node-1 --overwrite "$L_STATE=$S_DONE" >/dev/null
run "$home/drv-audit.sh" >"$tmp/audit"
[ "$rc" -le 1 ] || lab_die "the audit for the report could not tell (exit $rc)"
k get nodes -o json >"$tmp/nodes.json"
run report-fmt -a "$tmp/audit" -m "$matrix" lab-node-1 "$tmp/nodes.json" >"$out/upgrade-report.txt"
[ "$rc" -eq 0 ] || lab_die "report-fmt failed (exit $rc)"
show_sed 's/^/   /' "$out/upgrade-report.txt"
show "done: $out; the cluster stays up (KUBECONFIG=$KUBECONFIG); make sandbox-down stops it"
finish 0
