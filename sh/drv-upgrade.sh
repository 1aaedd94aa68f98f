#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-upgrade.sh: move one GPU node to a new driver in the only safe order:
# image first, budget headroom, cordon, the pods the cluster's upgradePolicy
# removes (with a timeout), driver, validation, a GPU health check, uncordon,
# audit.  It records the GPU Operator's upgrade-state label (and an Event) as
# it goes and never leaves a node cordoned without saying so.  As the
# operator, it waits for the jobs the policy names after the cordon, removes
# the pods that hold a GPU (or drains, as the policy says), leaves a node
# cordoned before cordoned, and leaves alone a node labelled
# nvidia.com/gpu-driver-upgrade.skip=true.
set -eu

prog=drv-upgrade.sh
usage_line="usage: $prog [-fLNPR] [-U field=value]... [-O objects] [-b budgets-read] [-d drain-log] [-m matrix] [-t drain-timeout] [-w budget-wait] [-g validate-timeout] [-j job-selector [-J job-timeout]] [-V gate-manifest [-G gate-timeout] [-e gate-namespace]] [-n driver-namespace] [-s driver-selector] node version"

# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"; . "$lib/files.sh"
. "$lib/state.sh"; . "$lib/removal.sh"; . "$lib/validate.sh"

lab=0
force=0        # -f: go on where the policy says autoUpgrade (the operator acts too)
resumable=0    # -R: a signal leaves a state to resume from, not upgrade-failed
no_audit=0     # -N: no fleet audit at the end
progress=0     # -P: a record on standard output at each change of state (drv-rollout.sh reads them)
matrix=${GPUDRV_MATRIX:-$default_matrix}
drain_timeout= # -t: podDeletion's and drain's timeoutSeconds, as a flag
budget_wait=0
validate_timeout=600
driver_ns=gpu-operator
driver_sel=app=nvidia-driver-daemonset
drain_log=
budgets_read=  # -b: the budgets and the node's pods as the caller just read them
objects=       # -O: the GPU Operator's objects as the caller just read them
wait_sel=      # -j: waitForCompletion.podSelector, as a flag
wait_timeout=  # -J: waitForCompletion.timeoutSeconds, as a flag
policy_u=      # -U: FIELD=VALUE flags over the policy, quoted words (policy_option)
policy_r=      # the same, for the command that resumes
gate_manifest= # -V: the health gate's pod manifest
gate_timeout=300
gate_ns=gpudrv
# The API server judges selectors and names (before the node is touched);
# upgrade_option only what is empty or would garble a message or a request.
eval "set -- $(gpudrv_opts 'b:budgets-read d:drain-log m:matrix t:drain-timeout w:budget-wait g:validate-timeout j:wait-for J:wait-timeout n:driver-namespace s:driver-selector U:policy O:objects V:gate G:gate-timeout e:gate-namespace' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-f | --force) force=1 ;;
	-L | --lab) lab=1 ;;
	-R | --resumable) resumable=1 ;;
	-N | --no-audit) no_audit=1 ;;
	-P | --progress) progress=1 ;;
	-b | --budgets-read) need_arg "$@"; check_file "$1" "$2"; budgets_read=$2; shift ;;
	-O | --objects) need_arg "$@"; check_file "$1" "$2"; objects=$2; shift ;;
	-U | --policy) policy_option "$@"; shift ;;
	-V | --gate) need_arg "$@"; check_file "$1" "$2"; gate_manifest=$2; shift ;;
	-G | --gate-timeout) need_arg "$@"; gate_timeout=$(seconds "$2" "$1") || finish 2; shift ;;
	-e | --gate-namespace) need_arg "$@"; check_value "$1" "$2" "a namespace"; gate_ns=$2; shift ;;
	-d | --drain-log) need_arg "$@"; drain_log=$2; shift ;;
	-m | --matrix) source_option "$@"; shift ;;
	-t | --drain-timeout | -w | --budget-wait | -g | --validate-timeout | -j | --wait-for | -J | --wait-timeout | \
		-n | --driver-namespace | -s | --driver-selector) upgrade_option "$@"; shift ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 2 ] || usage
upgrade_options_end
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
pdb_check=$(find_tool pdb-check) || finish 2
upgrade_policy=$(find_tool upgrade-policy) || finish 2
drv_audit=$(find_tool drv-audit.sh) || finish 2
gate_pod=
[ -z "$gate_manifest" ] || gate_pod=$(find_tool gate-pod) || finish 2
# The flags that set fields of the policy, then every -U (which wins).
policy_flags
# shellcheck disable=SC2119 # it reads $policy_set, not the script's arguments
policy_check
# The options again, quoted for a shell: the command that resumes (the
# policy's flags as given: the cluster's objects are read again).
resume_opts="-m $(shq "$matrix") -w $budget_wait -g $validate_timeout"
resume_opts="$resume_opts -n $(shq "$driver_ns") -s $(shq "$driver_sel")"
[ -z "$drain_timeout" ] || resume_opts="$resume_opts -t $drain_timeout"
[ -z "$drain_log" ] || resume_opts="$resume_opts -d $(shq "$drain_log")"
[ -z "$wait_sel" ] || resume_opts="$resume_opts -j $(shq "$wait_sel")"
[ -z "$wait_timeout" ] || resume_opts="$resume_opts -J $wait_timeout"
[ -z "$policy_u" ] || resume_opts="$resume_opts$policy_r"
[ -z "$gate_manifest" ] || resume_opts="$resume_opts -V $(shq "$gate_manifest") -G $gate_timeout -e $(shq "$gate_ns")"
[ "$force" = 0 ] || resume_opts="-f $resume_opts"
[ "$lab" = 0 ] || resume_opts="-L $resume_opts"
[ "$resumable" = 0 ] || resume_opts="-R $resume_opts"
[ "$no_audit" = 0 ] || resume_opts="-N $resume_opts"
[ "$progress" = 0 ] || resume_opts="-P $resume_opts"
node=$1
version=$2
check_node "$node"
driver_version "$version"
# The drain log's directory must take it before the node is touched.
if [ -n "$drain_log" ] && ! writable "$drain_log"; then
	die "cannot write the drain log $drain_log (-d): $why; nothing was changed"
fi

phase=none       # none, cordoned, drained, uncordoned, validated, finished: what the failure path must undo
initial_note=    # the initial-state annotation to write with the cordon (a node cordoned by someone else)
prev_state=      # the state label before we touched it
state_set=0      # 1 once we have written the state label
we_cordoned=0
cordoned=0       # 1 from our cordon until the node is schedulable again
cur_state=       # the state label as we last set it (or found it)
gate_name=       # the health gate's pod while it exists
gate_made=0      # 1: its creation asked for, the pod perhaps there
r_uid=           # the node's uid, once read: its Events name it
# The run's deadline, made again once the policy's timeouts are known
# (policy): for now, the steps this script times itself, and three request
# timeouts kept to put the node back (GPUDRV_TIMEOUT replaces the whole).
gpudrv_start $((budget_wait + validate_timeout + 300)) 3
host=$(uname -n)
# (made fit for an Event's source only where it is not: no process else)
if case $host in *[!A-Za-z0-9.-]*) true ;; *) [ "${#host}" -gt 63 ] ;; esac; then
	host=$(printf '%s' "$host" | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63)
fi

# The health gate's manifest made into its pod before anything else is
# read: one that cannot be used stops the run here (sh/lib/validate.sh).
gate_make

# -P's records go to the standard output the script was given (record,
# runtime.sh's fd 7): one closed is refused before anything is done.
[ "$progress" = 0 ] || [ -n "$gpudrv_fd7" ] ||
	die "$node: standard output is closed: -P has nowhere to write its records; nothing was changed"

# on_fail REASON STATUS: the one exit path after a failure, a signal or the
# deadline.  It undoes what is safe to undo, within the time kept for it, and
# says exactly where the node stands.
on_fail() {
	stopping
	say "$node: $1"
	gate_delete
	event Warning GPUDriverUpgradeFailed "$1"
	resume="$prog $resume_opts $node $version"
	# -R and a signal: the upgrade was stopped, not failed.  The state says
	# where a rerun (drv-rollout.sh's) takes it up again.
	failed="$S_FAILED"
	if [ "$resumable" = 1 ] && [ -n "$gpudrv_signalled" ]; then
		case $phase in
		cordoned) failed="$S_REQUIRED" ;;
		drained | uncordoned) failed=$cur_state ;;
		esac
	fi
	case $phase in
	none)
		if [ "$state_set" = 0 ]; then
			:
		elif [ -n "$prev_state" ]; then
			kc /dev/null /dev/null label node "$node" --overwrite "$L_STATE=$prev_state" &&
				record "$prev_state"
		else
			kc /dev/null /dev/null label node "$node" "$L_STATE-" && record -
		fi
		say "$node: nothing was changed"
		;;
	cordoned)
		# The driver is unchanged: the node can go back into service as it
		# was.  A cordon this run set goes with its record, in the write of
		# the state; one that was there before stays, recorded (the write
		# that failed may not have made it: a rerun must not uncordon it).
		if [ "$we_cordoned" = 1 ]; then
			if set_state "$failed" "" "\"$A_CORDONED\":null" '"unschedulable":null' >/dev/null 2>&1 &&
				[ "$r_cordon" = schedulable ]; then
				cordoned=0
				where="schedulable again (uncordoned)"
			else
				where="CORDONED: uncordon failed; run: kubectl uncordon $node"
			fi
		else
			set_state "$failed" "" "$initial_note" >/dev/null 2>&1
			where="cordoned, as it was before the upgrade"
		fi
		say "$node: driver unchanged; the node is $where; $L_STATE=${cur_state:--}"
		say "$node: pods already removed are rescheduled by their controllers"
		say "to resume: $resume"
		;;
	drained)
		[ "$failed" = "$cur_state" ] || set_state "$failed" >/dev/null 2>&1
		say "$node: the node is CORDONED and its pods removed; $L_STATE=${cur_state:--}"
		say "to resume: $resume"
		say "to return it to service as it is: kubectl uncordon $node"
		;;
	uncordoned)
		# The new driver is in; whether the uncordon took, the look below says.
		[ "$failed" = "$cur_state" ] || set_state "$failed" >/dev/null 2>&1
		say "$node: driver $version validated; the uncordon was sent, not confirmed; $L_STATE=${cur_state:--}"
		say "to resume: $resume"
		;;
	validated)
		# The new driver is in and the node as it was before: only the record is missing.
		set_state "$S_DONE" "" "\"$A_INITIAL\":null,\"$A_CORDONED\":null" >/dev/null 2>&1
		if [ "$cordoned" = 0 ]; then where="schedulable again"; else where="cordoned, as it was before the upgrade"; fi
		say "$node: driver $version validated; the node is $where; $L_STATE=${cur_state:--}"
		;;
	finished)
		say "$node: upgraded: driver $version, the node as it was before; $L_STATE=${cur_state:--}"
		;;
	esac
	# Say what the API says now, so message and node agree.
	if look; then
		u=
		[ "$r_cordon" = schedulable ] || u=true
		say "$node: now: unschedulable=$u state=${r_state#-}"
		record now "$r_state" "$r_cordon"
	else
		record now unknown
		say "$node: now: unknown: the API did not answer; last known: $(
			if [ "$cordoned" = 1 ]; then echo cordoned; else echo schedulable; fi), $L_STATE=${cur_state:--}"
		say "when it answers, check with: kubectl get node $node --show-labels"
	fi
	finish "$2"
}
# A signal, the deadline, a write error or an unexpected exit: the same path.
abort() {
	on_fail "$1" 2
}

# Step 0: the node as it is, one GET: its labels (the tag, the driver, the
# upgrade state, the skip label), its cordon and the annotations that say
# whose it is.
get_node "$node" "$tmp/node"
facts "$tmp/node" || on_fail "the API's answer for the node cannot be read: $(said "$tmp/err")" 2
prev_state=${r_state#-}
cur_state=$prev_state
skip=
[ "$r_skip" = - ] || skip=true
unsched=
[ "$r_cordon" = schedulable ] || unsched=true
have=$r_driver

if [ "$have" = "$version" ] && [ "$prev_state" = "$S_DONE" ] && [ "$unsched" != true ]; then
	say "$node: already at driver $version, schedulable, $L_STATE=$S_DONE"
	echo "$node $S_DONE $version" >"$tmp/stdout"
	emit "$tmp/stdout" 0
	finish 0
fi
# The operator's skip label: only "true" counts, as for the operator.
if [ "$skip" = true ]; then
	where=schedulable
	[ "$unsched" != true ] || where=CORDONED
	say "$node: labelled $L_SKIP=true: left alone, as the GPU Operator leaves it; nothing was changed; the node is $where, $L_STATE=${prev_state:--}"
	say "to upgrade it, first: kubectl label node $node $L_SKIP-"
	refuse "labelled $L_SKIP=true: left alone"
fi
# The upgradePolicy in force for the node: its owner's (the NVIDIADriver
# that selects it, else the ClusterPolicy), the operator's defaults for
# what it leaves out, the flags over it (upgrade-policy(1)); the objects as
# the caller read them (-O), else three GETs (get_targets).  Into p_*.
if [ -n "$objects" ]; then
	cp -- "$objects" "$tmp/objects" 2>"$tmp/err" ||
		die "cannot read the GPU Operator's objects of -O $objects: $(said "$tmp/err"); nothing was changed"
elif ! get_targets "$tmp/objects"; then
	say "$node: the GPU Operator's objects, where its upgradePolicy is, cannot be read; nothing was changed"
	finish 2
fi
eval "set -- $policy_set"
if ! "$upgrade_policy" "$@" "$tmp/objects" "$tmp/node" >"$tmp/policy" 2>"$tmp/err"; then
	sed 's/^/    /' "$tmp/err" >&2 || :
	die "$node: its upgradePolicy cannot be read (see above); nothing was changed"
fi
sed 's/^/    /' "$tmp/err" >&2 || : # (a field the operator does not read: said)
owner=-
p_auto=
dr_sel=
while read -r p_kind _ p_field p_src p_value; do
	case $p_kind:$p_field in
	node:*) owner=$p_field ;;
	policy:autoUpgrade) p_auto=$p_value auto_src=$p_src ;;
	policy:waitForCompletion.podSelector) wait_sel=$p_value ;;
	policy:waitForCompletion.timeoutSeconds) wait_timeout=$p_value ;;
	policy:podDeletion.timeoutSeconds) pd_timeout=$p_value ;;
	policy:drain.enable) dr_enable=$p_value ;;
	policy:drain.force) dr_force=$p_value ;;
	policy:drain.podSelector) dr_sel=$p_value ;;
	policy:drain.timeoutSeconds) dr_timeout=$p_value ;;
	policy:drain.deleteEmptyDir) dr_emptydir=$p_value ;;
	esac
done <"$tmp/policy"
if [ -z "$p_auto" ] || [ -z "$dr_sel" ]; then die "$node: upgrade-policy gave no whole policy for it"; fi
if [ "$owner" = - ]; then
	say "$node: upgradePolicy: the GPU Operator's defaults (no ClusterPolicy or NVIDIADriver owns the node)"
else
	say "$node: upgradePolicy of $owner"
fi
# The run's deadline again, from the policy's timeouts (0: none; a day).
day() { if [ "$1" -gt 0 ]; then echo "$1"; else echo 86400; fi; }
jobs_time=0
[ -z "$wait_sel" ] || jobs_time=$(day "$wait_timeout")
removal_time=$(day "$pd_timeout")
[ "$dr_enable" = false ] || removal_time=$((removal_time + $(day "$dr_timeout")))
gate_time=0
[ -z "$gate_manifest" ] || gate_time=$gate_timeout
gpudrv_deadline $((budget_wait + jobs_time + removal_time + validate_timeout + gate_time + 120))

# Two controllers must never move one node: where the policy says
# autoUpgrade, the operator's upgrade controller moves it too.
if [ "$p_auto" = true ] && [ "$force" = 0 ]; then
	if [ "$auto_src" = default ]; then w="$owner has no upgradePolicy, and an NVIDIADriver's upgrades are automatic by default"; else w="$owner's upgradePolicy says autoUpgrade: true"; fi
	say "$node: $w: the GPU Operator's upgrade controller upgrades this node itself, and two controllers must never move one node; nothing was changed"
	say "set autoUpgrade: false in $owner's upgradePolicy, or, if the operator's upgrade controller does not run, go on with -f"
	refuse "the GPU Operator's upgrade controller acts on this node ($w)"
fi
[ "$p_auto" = false ] || say "$node: warning: autoUpgrade is true ($owner), and -f goes on beside the operator's upgrade controller"

# Step 1: the image first.  The tag comes from labels2tag, never from a split.
case $r_tag in
UNKNOWN:*)
	f=${r_tag#UNKNOWN:}
	on_fail "the target tag cannot be computed from the node's labels: label ${f#*:} is ${f%%:*}" 2
	;;
esac
target=$r_tag
mg=0
printf '%s %s\n' "$node" "$target" | "$matrix_grep" -m "$matrix" >/dev/null || mg=$?
case $mg in
0) say "$node: image $target is in $matrix" ;;
1)
	say "$node needs image $target, which is not in $matrix"
	say "build and push it first, then add this row to $matrix:"
	"$labels2tag" -N -c -b "$major" "$tmp/node" >"$tmp/stdout" ||
		on_fail "the matrix row cannot be computed from the node's labels" 2
	emit "$tmp/stdout" 1
	refuse "image $target is not in the matrix: build it first"
	;;
*) finish 2 ;;
esac

# Step 2: what the policy removes from the node, and whether the budgets
# let it go.  Two GETs, the API server's own JSON: every budget, and the
# node's pods (no other is removed); with -b, the first look is the
# caller's answers to the same two GETs.  pdb-check -y judges the pods the
# policy removes, and says which way (METHOD) and which (REMOVE).
# (check_node let only [a-z0-9.-] through: nothing to encode but the '='.)
pods_on_node="/api/v1/pods?fieldSelector=spec.nodeName%3D$node"
judge_first
# The pods the policy waits for, listed once before the node is touched:
# the API server judges the selector here rather than after the cordon.
if [ -n "$wait_sel" ]; then
	if ! running_jobs; then
		say "$node: nothing was changed"
		finish 2
	fi
fi

# Whose cordon?  A cordon this tool set carries its own record (a
# resumed upgrade takes it up); the operator's record of a cordon from
# before the upgrade, or a cordon with no record, is someone else's, and
# stays: the operator's record is written with the first write, as the
# operator writes it.  (labels2tag -F trusts a record only while the node
# is cordoned, gpudrv's while no other manager owns the cordon; each write
# of one removes the other.)
case $r_initial in
was-cordoned) we_cordoned=0 ;;
gpudrv) we_cordoned=1 ;;
*)
	if [ "$unsched" = true ]; then
		we_cordoned=0
		initial_note="\"$A_INITIAL\":\"true\",\"$A_CORDONED\":null"
	else
		we_cordoned=1
	fi
	;;
esac
ours_note=
[ "$we_cordoned" = 0 ] || ours_note="\"$A_CORDONED\":\"true\",\"$A_INITIAL\":null"

# Steps 3 to 6, recorded in the operator's states.  The cordon and the
# state the operator's cordon leads to (wait-for-jobs-required with a
# selector to wait for, else the removal's own state) are one write: no
# moment when the node is cordoned and its state says otherwise.  Its
# answer is the node after it: the cordon is seen to have taken.
first_state=$removal_state
[ -z "$wait_sel" ] || first_state="$S_WAIT_JOBS"
phase=cordoned
set_state "$first_state" "" "$(ann "$initial_note" "$ours_note")" '"unschedulable":true' || on_fail "the cordon was not written" 2
[ "$r_cordon" = cordoned ] || on_fail "the cordon did not take: the API left the node schedulable" 2
cordoned=1
# The jobs the policy names waited for; then the pods it removes, judged
# again on the node as it is (pods came until the cordon took), in the
# removal's state (sh/lib/removal.sh).
if [ -n "$wait_sel" ]; then
	wait_jobs
	judge_again "after the wait"
else
	judge_again "after the cordon"
fi
[ "$removal_state" = "$first_state" ] || set_state "$removal_state" || on_fail "the API refused a label" 2
remove_pods
phase=drained

if [ "$lab" = 1 ]; then
	# The lab has no driver: loading it is the change of the three labels,
	# written with validation-required (the restart is that write).
	set_state "$S_VALIDATION" "\"$L_MAJOR\":\"$major\",\"$L_MINOR\":\"$minor\",\"$L_REV\":\"$rev\"" ||
		on_fail "cannot set the driver labels" 2
else
	# The driver pod on the node restarts with the new image.
	set_state "$S_POD_RESTART" || on_fail "the API refused a label" 2
	kc "$tmp/del" "$tmp/err" delete pod -n "$driver_ns" -l "$driver_sel" --field-selector "spec.nodeName=$node" \
		--wait=false || on_fail "cannot restart the driver pod: $(said "$tmp/err")" 2
	grep -q . "$tmp/del" || say "$node: warning: no driver pod ($driver_sel in $driver_ns) on the node"
	set_state "$S_VALIDATION" || on_fail "the API refused a label" 2
fi
# Validation: the new driver, as gpu-feature-discovery reports it.
wait_driver

# The health gate (-V), the user's check on the node's GPUs: it passes,
# or the node stays cordoned, in upgrade-failed.  Its pod is deleted either way.
if [ -n "$gate_manifest" ]; then
	gate_create
	gate_wait
	if [ "$g_phase" = Succeeded ]; then
		say "$node: health gate passed after ${g_after}s (exit ${g_exit})"
		event Normal GPUDriverHealthCheck "the health gate's pod $gate_ns/$gate_name succeeded with driver $version"
		gate_delete
	else
		gate_fail
	fi
fi

# The end in one write: upgrade-done, the initial-state annotation and this
# tool's record gone, and the uncordon of a node this run cordoned (the
# operator's uncordon-required and upgrade-done at once).  A node cordoned
# by someone else goes from validation-required to upgrade-done and stays
# cordoned, as the operator moves it.
if [ "$we_cordoned" = 1 ]; then
	phase=uncordoned
	set_state "$S_DONE" "" "\"$A_INITIAL\":null,\"$A_CORDONED\":null" '"unschedulable":null' ||
		on_fail "the uncordon was not written" 2
	[ "$r_cordon" = schedulable ] || on_fail "the uncordon did not take: the node is still cordoned" 2
	cordoned=0
else
	say "$node: left cordoned: it was cordoned by someone else before the upgrade"
	phase=validated
	set_state "$S_DONE" "" "\"$A_INITIAL\":null,\"$A_CORDONED\":null" || on_fail "the API refused a label" 2
fi
phase=finished

# Step 7: the fleet after the change, in what is left of the run (not with
# -N: drv-rollout.sh audits every node once, before it starts).
: >"$tmp/stdout"
if [ "$no_audit" = 0 ]; then
	GPUDRV_TIMEOUT=$(time_left)
	[ "$GPUDRV_TIMEOUT" -ge 1 ] || GPUDRV_TIMEOUT=1
	export GPUDRV_TIMEOUT
	audit=0
	run_bg "$drv_audit" -m "$matrix" >"$tmp/audit" || audit=$?
	[ "$audit" -ne 2 ] || say "warning: the audit after the upgrade could not tell (exit 2)"
	sed "s/^/audit: /" "$tmp/audit" >"$tmp/stdout"
fi
echo "$node $S_DONE $version $target" >>"$tmp/stdout"
emit "$tmp/stdout" 0
finish 0
