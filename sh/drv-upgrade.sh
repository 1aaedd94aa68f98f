#!/bin/sh
# drv-upgrade.sh: move one GPU node to a new driver in the only safe order:
# image first, budget headroom, cordon and drain (with a timeout), driver,
# validation, uncordon, audit.  It records the GPU Operator's upgrade-state
# label as it goes and never leaves a node cordoned without saying so.  As the
# operator, it waits for the jobs named by -j after the cordon, leaves a node
# cordoned before cordoned (its initial-state annotation), and leaves alone a
# node labelled nvidia.com/gpu-driver-upgrade.skip=true.
set -eu

prog=drv-upgrade.sh
usage_line="usage: $prog [-LNPR] [-b budgets-read] [-d drain-log] [-m matrix] [-t drain-timeout] [-w budget-wait] [-g validate-timeout] [-j job-selector [-J job-timeout]] [-n driver-namespace] [-s driver-selector] node version"

# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv/gpudrv-lib.sh
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
if [ -r "$lib" ]; then . "$lib"; else echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; fi

lab=0
resumable=0    # -R: a signal leaves a state to resume from, not upgrade-failed
no_audit=0     # -N: no fleet audit at the end
progress=0     # -P: a record on standard output at each change of state (drv-rollout.sh reads them)
matrix=${GPUDRV_MATRIX:-$default_matrix}
drain_timeout=300
budget_wait=0
validate_timeout=600
driver_ns=gpu-operator
driver_sel=app=nvidia-driver-daemonset
drain_log=
budgets_read=  # -b: the budgets and the node's pods as the caller just read them
wait_sel=      # -j: the pods to wait for after the cordon (waitForCompletion.podSelector)
wait_timeout=  # -J: how long, 0 for as long as the run lasts (waitForCompletion.timeoutSeconds)
# The API server judges selectors and names (before the node is touched);
# upgrade_option only what is empty or would garble a message or a request.
eval "set -- $(gpudrv_opts 'b:budgets-read d:drain-log m:matrix t:drain-timeout w:budget-wait g:validate-timeout j:wait-for J:wait-timeout n:driver-namespace s:driver-selector' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-L | --lab) lab=1 ;;
	-R | --resumable) resumable=1 ;;
	-N | --no-audit) no_audit=1 ;;
	-P | --progress) progress=1 ;;
	-b | --budgets-read) need_arg "$@"; check_file "$1" "$2"; budgets_read=$2; shift ;;
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
wait_timeout=${wait_timeout:-0}
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
pdb_check=$(find_tool pdb-check) || finish 2
drv_audit=$(find_tool drv-audit.sh) || finish 2
# The options again, quoted for a shell: the command that resumes.
resume_opts="-m $(shq "$matrix") -t $drain_timeout -w $budget_wait -g $validate_timeout"
resume_opts="$resume_opts -n $(shq "$driver_ns") -s $(shq "$driver_sel")"
[ -z "$drain_log" ] || resume_opts="$resume_opts -d $(shq "$drain_log")"
[ -z "$wait_sel" ] || resume_opts="$resume_opts -j $(shq "$wait_sel") -J $wait_timeout"
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
initial_note=    # the initial-state annotation to write with the cordon (a node cordoned by hand)
prev_state=      # the state label before we touched it
state_set=0      # 1 once we have written the state label
we_cordoned=0
cordoned=0       # 1 from our cordon until the node is schedulable again
cur_state=       # the state label as we last set it (or found it)
# The run's deadline: each step's own timeout (a day for -J 0, the wait
# without a timeout of its own), 120 s for the other requests, and three
# request timeouts kept to put the node back (GPUDRV_TIMEOUT replaces the whole).
jobs_time=0
if [ -n "$wait_sel" ]; then jobs_time=$wait_timeout; [ "$jobs_time" -gt 0 ] || jobs_time=86400; fi
gpudrv_start $((budget_wait + drain_timeout + validate_timeout + jobs_time + 120)) 3

# Records (-P) go to the standard output the script was given, as they come,
# even while a failure path silences its messages.
exec 3>&1

# facts FILE: the node in FILE (its JSON) read by labels2tag -F, the one
# reader of a node: $n_tag (the tag it needs for $version, or UNKNOWN:...),
# $n_driver (major.minor.rev or -), $n_state (or -), $n_skip (skip or -),
# $n_cordon (cordoned or schedulable), $n_initial (was-cordoned or -).
# Status 2 with the reason in $tmp/err when FILE is not this node whole.
facts() {
	"$labels2tag" -F -b "$major" "$1" >"$tmp/facts" 2>"$tmp/err" || return 2
	read -r n_name n_tag n_driver n_state n_skip n_cordon _ n_initial _ <"$tmp/facts" || {
		echo "no record of the node in the API's answer" >"$tmp/err"
		return 2
	}
	[ "$n_name" = "$node" ] || {
		echo "the API answered with node $n_name, not $node" >"$tmp/err"
		return 2
	}
}
# look: the node as the API has it now (one GET of its JSON), into facts'
# variables.
look() {
	kc "$tmp/look" "$tmp/err" get --raw "/api/v1/nodes/$node" || return 2
	facts "$tmp/look"
}
# record WORDS...: with -P, "node WORDS" on standard output at once: "node
# state" at each change of the state label ("-": removed), "node now state
# cordon" where a failure or a signal left it, as the API said ("node now
# unknown": it did not answer).  Only this script writes there: what kubectl
# or a server says goes to standard error, indented or on one line.
record() {
	[ "$progress" = 1 ] || return 0
	printf '%s %s\n' "$node" "$*" >&3 2>/dev/null || gpudrv_abort "cannot write to standard output"
}
# running_jobs: into $tmp/jobs, pdb-check -p's line of each pod on the node that
# -j selects and that still runs: phase Running or Pending, as the operator
# counts (Succeeded, Failed and Unknown are not), the API server filtering;
# $njobs: how many, $jobs_named: the first five and how many more.
running_jobs() {
	get_pods "$tmp/jobs" "the pods -j '$wait_sel' selects on $node" \
		"/api/v1/pods?labelSelector=$(urlencode "$wait_sel")&fieldSelector=$(urlencode "spec.nodeName=$node,status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown")" || return
	njobs=$(grep -c . "$tmp/jobs") || :
	jobs_named=$(awk 'NR <= 5 { printf "%s%s", (NR > 1 ? " " : ""), $2 } END { if (NR > 5) printf " and %d more", NR - 5 }' "$tmp/jobs")
}

# set_state STATE [LABELS [ANNOTATIONS [SPEC]]]: the upgrade-state label
# STATE, with the members given ("key":value,... of the node's other labels,
# its annotations, its spec), in one merge patch of the node (field manager
# gpudrv).  The API server answers with the node as it is after the write:
# read into facts' variables, so that what took is seen without another GET.
# Status 1, said, when the write or its answer fails.
set_state() {
	p="\"labels\":{\"$L_STATE\":\"$1\"${2:+,$2}}"
	[ -z "${3:-}" ] || p="$p,\"annotations\":{$3}"
	p="{\"metadata\":{$p}"
	[ -z "${4:-}" ] || p="$p,\"spec\":{$4}"
	if ! kc "$tmp/look" "$tmp/err" patch node "$node" --type=merge --field-manager=gpudrv -p "$p}" -o json; then
		say "cannot set $L_STATE=$1 on $node: $(said "$tmp/err")"
		return 1
	fi
	cur_state=$1
	state_set=1
	if ! facts "$tmp/look"; then
		say "$node: the API's answer to setting $L_STATE=$1 cannot be read: $(said "$tmp/err")"
		return 1
	fi
	if [ "$n_state" != "$1" ]; then
		say "$node: the API answered the write of $L_STATE=$1 with $L_STATE=$n_state"
		return 1
	fi
	say "$node: $L_STATE=$1"
	record "$1"
}

# on_fail REASON STATUS: the one exit path after a failure, a signal or the
# deadline.  It undoes what is safe to undo, within the time kept for it, and
# says exactly where the node stands.
on_fail() {
	stopping
	say "$node: $1"
	resume="$prog $resume_opts $node $version"
	# -R and a signal: the upgrade was stopped, not failed.  The state says
	# where a rerun (drv-rollout.sh's) takes it up again.
	failed=upgrade-failed
	if [ "$resumable" = 1 ] && [ -n "$gpudrv_signalled" ]; then
		case $phase in
		cordoned) failed=upgrade-required ;;
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
		# The driver is unchanged: the node can go back into service as it was.
		if [ "$we_cordoned" = 1 ] && kc /dev/null /dev/null uncordon "$node"; then
			cordoned=0
			where="schedulable again (uncordoned)"
		elif [ "$we_cordoned" = 1 ]; then
			where="CORDONED: uncordon failed; run: kubectl uncordon $node"
		else
			where="cordoned, as it was before the upgrade"
		fi
		# (with the initial-state annotation of a node cordoned by hand, which
		# the write that failed may not have made: a rerun must not uncordon it)
		set_state "$failed" "" "$initial_note" >/dev/null 2>&1
		say "$node: driver unchanged; the node is $where; $L_STATE=${cur_state:--}"
		say "$node: pods already evicted are rescheduled by their controllers"
		say "to resume: $resume"
		;;
	drained)
		[ "$failed" = "$cur_state" ] || set_state "$failed" >/dev/null 2>&1
		say "$node: the node is CORDONED and drained; $L_STATE=${cur_state:--}"
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
		set_state upgrade-done "" "\"$A_INITIAL\":null" >/dev/null 2>&1
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
		[ "$n_cordon" = schedulable ] || u=true
		say "$node: now: unschedulable=$u state=${n_state#-}"
		record now "$n_state" "$n_cordon"
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
# upgrade state, the skip label), its cordon and the initial-state annotation.
get_node "$node" "$tmp/node"
facts "$tmp/node" || on_fail "the API's answer for the node cannot be read: $(said "$tmp/err")" 2
prev_state=${n_state#-}
cur_state=$prev_state
skip=
[ "$n_skip" = - ] || skip=true
unsched=
[ "$n_cordon" = schedulable ] || unsched=true
have=$n_driver
initial=
[ "$n_initial" = - ] || initial=true
if [ "$have" = "$version" ] && [ "$prev_state" = upgrade-done ] && [ "$unsched" != true ]; then
	say "$node: already at driver $version, schedulable, $L_STATE=upgrade-done"
	echo "$node upgrade-done $version" >"$tmp/stdout"
	emit "$tmp/stdout" 0
	finish 0
fi
# The operator's skip label: only "true" counts, as for the operator.
if [ "$skip" = true ]; then
	where=schedulable
	[ "$unsched" != true ] || where=CORDONED
	say "$node: labelled $L_SKIP=true: left alone, as the GPU Operator leaves it; nothing was changed; the node is $where, $L_STATE=${prev_state:--}"
	say "to upgrade it, first: kubectl label node $node $L_SKIP-"
	finish 1
fi

# Step 1: the image first.  The tag comes from labels2tag, never from a split.
case $n_tag in
UNKNOWN:*)
	f=${n_tag#UNKNOWN:}
	on_fail "the target tag cannot be computed from the node's labels: label ${f#*:} is ${f%%:*}" 2
	;;
esac
target=$n_tag
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
	finish 1
	;;
*) finish 2 ;;
esac

# Step 2: headroom in every budget the drain would draw on.  Two GETs, the
# API server's own JSON: every budget, and the node's pods (the drain evicts
# no other); with -b, the first look is the caller's answers to the same two
# GETs.  (check_node let only [a-z0-9.-] through: nothing to encode but the
# '='.)
pods_on_node="/api/v1/pods?fieldSelector=spec.nodeName%3D$node"
waited=0
while :; do
	if [ -n "$budgets_read" ] && [ "$waited" = 0 ]; then
		cp -- "$budgets_read" "$tmp/pp" 2>"$tmp/err" ||
			die "cannot read the budgets and pods of -b $budgets_read: $(said "$tmp/err"); nothing was changed"
	elif ! get_budget_pods "$tmp/pp" "$pods_on_node"; then
		say "$node: the budgets and the node's pods cannot be read; nothing was changed"
		finish 2
	fi
	pc=0
	"$pdb_check" "$node" "$tmp/pp" >"$tmp/pdb" || pc=$?
	[ "$pc" -eq 1 ] || break
	if [ "$waited" -ge "$budget_wait" ]; then
		emit "$tmp/pdb" 1
		say "$node: a drain now would be refused by the budget(s) above; nothing was changed"
		[ "$budget_wait" -eq 0 ] || say "(waited ${waited}s for headroom)"
		finish 1
	fi
	nap 5
	waited=$((waited + 5))
done
if [ "$pc" != 0 ]; then
	say "$node: pdb-check cannot judge the answers to GET /apis/policy/v1/poddisruptionbudgets and GET $pods_on_node (exit $pc); nothing was changed"
	finish 2
fi
say "$node: the budgets leave room for the drain"
# The pods -j names, listed once before the node is touched: the API server
# judges the selector here rather than after the cordon.
if [ -n "$wait_sel" ]; then
	if ! running_jobs; then
		say "$node: nothing was changed"
		finish 2
	fi
fi

# Was the node schedulable before any upgrade began?  A resume keeps the
# first run's answer, as the GPU Operator does with its initial-state
# annotation, written with the cordon.
if [ "$initial" = true ]; then
	we_cordoned=0
elif [ "$unsched" = true ] && { [ -z "$prev_state" ] || [ "$prev_state" = upgrade-done ]; }; then
	# A fresh upgrade of a node someone cordoned: it stays cordoned.
	we_cordoned=0
	initial_note="\"$A_INITIAL\":\"true\""
else
	we_cordoned=1
fi

# Steps 3 to 6, recorded in the operator's states.  The cordon and the
# state the operator's cordon leads to (wait-for-jobs-required, or with no
# job to wait for and no pod deletion, drain-required) are one write: no
# moment when the node is cordoned and its state says otherwise.  Its
# answer is the node after it: the cordon is seen to have taken.
first_state=drain-required
[ -z "$wait_sel" ] || first_state=wait-for-jobs-required
phase=cordoned
set_state "$first_state" "" "$initial_note" '"unschedulable":true' || on_fail "the cordon was not written" 2
[ "$n_cordon" = cordoned ] || on_fail "the cordon did not take: the API left the node schedulable" 2
cordoned=1
# With -j, the operator's wait-for-jobs-required: the pods it selects on the
# node end (Succeeded or Failed), or -J passes and the drain evicts them as
# it evicts the rest.  With -J 0 only the run's deadline ends the wait.
if [ -n "$wait_sel" ]; then
	if [ "$wait_timeout" -gt 0 ]; then limit="at most ${wait_timeout}s (-J)"; else limit="until the run's deadline (-J 0)"; fi
	t0=$(date +%s)
	first=1
	while :; do
		running_jobs || on_fail "cannot list the pods -j selects" 2
		waited=$(($(date +%s) - t0))
		if [ "$njobs" = 0 ] && [ "$first" = 1 ]; then
			say "$node: no pod matching '$wait_sel' runs on the node"
			break
		elif [ "$njobs" = 0 ]; then
			say "$node: the pods matching '$wait_sel' have ended, after ${waited}s"
			break
		fi
		[ "$first" = 0 ] || say "$node: waiting for $njobs pod(s) matching '$wait_sel' to end, $limit: $jobs_named"
		first=0
		if [ "$wait_timeout" -gt 0 ] && [ "$waited" -ge "$wait_timeout" ]; then
			say "$node: $njobs pod(s) matching '$wait_sel' still run after ${waited}s (-J $wait_timeout): $jobs_named"
			say "$node: going on, as the GPU Operator does: the drain evicts them"
			break
		fi
		step=2
		[ "$wait_timeout" = 0 ] || [ $((wait_timeout - waited)) -ge "$step" ] || step=$((wait_timeout - waited))
		nap "$step"
		# (The next look needs a second of the run: none is the deadline.)
		[ "$(time_left)" -gt 1 ] ||
			on_fail "the run's deadline came ($gpudrv_why) while $njobs pod(s) matching '$wait_sel' still ran, after $(($(date +%s) - t0))s: $jobs_named" 2
	done
	set_state drain-required || on_fail "the API refused a label" 2
fi
say "$node: kubectl drain --timeout=${drain_timeout}s"
# kubectl's words go to stderr as they come, indented, and to a file (-d):
# through a fifo and a reader beside it, so that kubectl itself is the child
# the traps stop.
mkfifo "$tmp/drain.fifo"
: >"$tmp/drain.out"
DRAIN_OUT=$tmp/drain.out
export DRAIN_OUT
awk 'BEGIN { out = ENVIRON["DRAIN_OUT"] } { print > out; print "    " $0; fflush() }' \
	<"$tmp/drain.fifo" >&2 &
track_bg "$!"
drain_rc=0
kc "$tmp/drain.fifo" "$tmp/drain.fifo" drain "$node" --ignore-daemonsets --delete-emptydir-data \
	--timeout="${drain_timeout}s" || drain_rc=$?
wait_bg || :
if [ -n "$drain_log" ] && ! cp "$tmp/drain.out" "$drain_log"; then
	say "warning: cannot write the drain log $drain_log"
fi
[ "$drain_rc" = 0 ] || on_fail "drain failed (exit $drain_rc): see kubectl's words above" 1
phase=drained

if [ "$lab" = 1 ]; then
	# The lab has no driver: loading it is the change of the three labels,
	# written with validation-required (the restart is that write).
	set_state validation-required "\"$L_MAJOR\":\"$major\",\"$L_MINOR\":\"$minor\",\"$L_REV\":\"$rev\"" ||
		on_fail "cannot set the driver labels" 2
else
	# The driver pod on the node restarts with the new image.
	set_state pod-restart-required || on_fail "the API refused a label" 2
	kc "$tmp/del" "$tmp/err" delete pod -n "$driver_ns" -l "$driver_sel" --field-selector "spec.nodeName=$node" \
		--wait=false || on_fail "cannot restart the driver pod: $(said "$tmp/err")" 2
	grep -q . "$tmp/del" || say "$node: warning: no driver pod ($driver_sel in $driver_ns) on the node"
	set_state validation-required || on_fail "the API refused a label" 2
fi
# The driver the node reports, from the answer to the last write, then a
# look every 2 seconds.
have=$n_driver
waited=0
while [ "$have" != "$version" ]; do
	[ "$waited" -lt "$validate_timeout" ] ||
		on_fail "gpu-feature-discovery reports driver '$have', not $version, after ${waited}s" 2
	nap 2
	waited=$((waited + 2))
	# A look that fails is not an answer: said, and tried again.
	have=
	if look; then
		have=$n_driver
	else
		say "$node: warning: cannot read the node while waiting for the driver: $(said "$tmp/err"); looking again"
	fi
done
say "$node: the node reports driver $version"

# The end in one write: upgrade-done, the initial-state annotation gone,
# and the uncordon of a node this run cordoned (the operator's
# uncordon-required and upgrade-done at once).  A node cordoned before the
# upgrade goes from validation-required to upgrade-done and stays cordoned,
# as the operator moves it.
if [ "$we_cordoned" = 1 ]; then
	phase=uncordoned
	set_state upgrade-done "" "\"$A_INITIAL\":null" '"unschedulable":null' || on_fail "the uncordon was not written" 2
	[ "$n_cordon" = schedulable ] || on_fail "the uncordon did not take: the node is still cordoned" 2
	cordoned=0
else
	say "$node: left cordoned: it was unschedulable before the upgrade began"
	phase=validated
	set_state upgrade-done "" "\"$A_INITIAL\":null" || on_fail "the API refused a label" 2
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
echo "$node upgrade-done $version $target" >>"$tmp/stdout"
emit "$tmp/stdout" 0
finish 0
