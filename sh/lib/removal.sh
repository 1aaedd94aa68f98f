# removal.sh: drv-upgrade.sh's removal of the node's pods, as the
# cluster's upgradePolicy says: the budgets and pods judged by pdb-check -y
# (waited for up to -w before the node is touched, judged again after the
# cordon and the wait for jobs, waited for there within the removal's
# timeout), the wait for the jobs waitForCompletion names, and the pod
# deletion's evictions or kubectl drain, with their waits (POSIX sh;
# sourced by drv-upgrade.sh only, after runtime.sh, api.sh and state.sh).
# It reads the caller's $tmp, $node, $pods_on_node, $budgets_read,
# $budget_wait, $pdb_check, $drain_log, $wait_sel, $wait_timeout and the
# policy ($pd_timeout, $dr_enable, $dr_sel, $dr_timeout, $dr_force,
# $dr_emptydir); it sets $pc, $method, $removal_state, $nremove, $njobs,
# $jobs_named, $ja_spent and $why, and writes $tmp/pdb, $tmp/remove and
# $tmp/drain.out.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# running_jobs: the pods on the node that the policy's
# waitForCompletion.podSelector selects and that still run (phase Running
# or Pending, as the operator counts: Succeeded, Failed and Unknown are
# not, the API server filtering), listed (pods_listed: $pw_still, $pw_rv);
# $njobs: how many, $jobs_named: the first five and how many more.
running_jobs() {
	jobs_path="/api/v1/pods?labelSelector=$(urlencode "$wait_sel")&fieldSelector=$(urlencode "spec.nodeName=$node,status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown")"
	jobs_relist || return
	jobs_count
}
# jobs_relist: the pods of $jobs_path listed again (pods_listed).
jobs_relist() {
	pods_listed "$jobs_path" "the pods waitForCompletion.podSelector '$wait_sel' selects on $node"
}
# jobs_count: $njobs and $jobs_named of $pw_still.
jobs_count() {
	# shellcheck disable=SC2086 # a word a pod
	set -- $pw_still
	njobs=$#
	jobs_named=
	for jc_p; do
		[ "$#" -gt $((njobs - 5)) ] || break
		jobs_named="${jobs_named:+$jobs_named }$jc_p"
		shift
	done
	[ "$njobs" -le 5 ] || jobs_named="$jobs_named and $((njobs - 5)) more"
}
# judge: pdb-check -s -y on $tmp/pp, its answer in $tmp/pdb, its status in
# $pc, its obstacles alone in $tmp/pdb.why.
judge() {
	pc=0
	"$pdb_check" -s -y "$tmp/policy" "$node" "$tmp/pp" >"$tmp/pdb" || pc=$?
	grep -v -e '^METHOD ' -e '^REMOVE ' -e '^SKIP ' "$tmp/pdb" >"$tmp/pdb.why" || :
}
# take_removal: from $tmp/pdb, the way (method, and the state it is
# recorded in, removal_state) and the pods ($tmp/remove, nremove).
take_removal() {
	method=$(sed -n 's/^METHOD \([a-z-]*\).*/\1/p' "$tmp/pdb")
	sed -n 's/^REMOVE //p' "$tmp/pdb" >"$tmp/remove"
	nremove=$(grep -c . "$tmp/remove") || :
	case $method in
	pod-deletion) removal_state="$S_POD_DELETION" ;;
	*) removal_state="$S_DRAIN" ;;
	esac
}
# judge_first: the budgets and the node's pods (-b's the first time),
# judged until the budgets leave room, within -w; refused, said, when
# they do not (or a pod the policy does not let go is there); then the
# way the pods go, said.  Nothing is changed before it returns.
judge_first() {
	waited=0
	while :; do
		if [ -n "$budgets_read" ] && [ "$waited" = 0 ]; then
			cp -- "$budgets_read" "$tmp/pp" 2>"$tmp/err" ||
				die "cannot read the budgets and pods of -b $budgets_read: $(said "$tmp/err"); nothing was changed"
		elif ! get_budget_pods "$tmp/pp" "$pods_on_node"; then
			say "$node: the budgets and the node's pods cannot be read; nothing was changed"
			finish 2
		fi
		judge
		[ "$pc" -eq 1 ] || break
		# A pod the policy does not let go waits for no budget: refused at once.
		if [ "$waited" -ge "$budget_wait" ] || grep -q -v ' BLOCKS ' "$tmp/pdb.why"; then
			emit "$tmp/pdb.why" 1
			say "$node: the removal of its pods would be refused by what is above; nothing was changed"
			[ "$budget_wait" -eq 0 ] || say "(waited ${waited}s for headroom)"
			refuse "the removal of its pods would be refused: $(head -n 1 "$tmp/pdb.why" | cut -c1-200)"
		fi
		nap 5
		waited=$((waited + 5))
	done
	if [ "$pc" != 0 ]; then
		say "$node: pdb-check cannot judge the answers to GET /apis/policy/v1/poddisruptionbudgets and GET $pods_on_node (exit $pc); nothing was changed"
		finish 2
	fi
	take_removal
	case $method in
	pod-deletion)
		if [ "$nremove" -gt 0 ]; then
			say "$node: the budgets leave room: the pod deletion removes the $nremove pod(s) that hold a GPU"
		else
			say "$node: no pod on the node holds a GPU: the pod deletion removes none"
		fi
		;;
	drain)
		fell=$(sed -n 's/^METHOD drain: //p' "$tmp/pdb")
		[ -z "$fell" ] || say "$node: $fell: the node is drained, as the GPU Operator drains where its pod deletion fails"
		say "$node: the budgets leave room for the drain (drain.enable, $nremove pod(s))"
		;;
	none) say "$node: no pod is removed: drain.enable is false and podDeletionFilter is none" ;;
	*) die "$node: pdb-check named no way to remove the pods; nothing was changed" ;;
	esac
}
# wait_jobs: the operator's wait-for-jobs-required: the pods the policy's
# selector picks on the node end (Succeeded or Failed: they leave the
# list), waited for by pods_gone, or its timeout passes and the removal
# takes those it takes.  With 0 only the run's deadline ends it.
wait_jobs() {
	if [ "$wait_timeout" -gt 0 ]; then limit="at most ${wait_timeout}s (waitForCompletion.timeoutSeconds)"; else limit="until the run's deadline (waitForCompletion.timeoutSeconds 0)"; fi
	gpudrv_clock
	t0=$gpudrv_now
	running_jobs || on_fail "cannot list the pods waitForCompletion.podSelector selects" 2
	if [ "$njobs" = 0 ]; then
		say "$node: no pod matching '$wait_sel' runs on the node"
		return 0
	fi
	say "$node: waiting for $njobs pod(s) matching '$wait_sel' to end, $limit: $jobs_named"
	wj_rc=0
	pods_gone jobs_relist "$jobs_path" "$wait_timeout" "$t0" "the pods matching '$wait_sel'" || wj_rc=$?
	gpudrv_clock
	waited=$((gpudrv_now - t0))
	[ "$wj_rc" != 2 ] || on_fail "cannot list the pods waitForCompletion.podSelector selects" 2
	if [ "$wj_rc" = 0 ]; then
		say "$node: the pods matching '$wait_sel' have ended, after ${waited}s"
		return 0
	fi
	jobs_count
	[ "$wait_timeout" -gt 0 ] ||
		on_fail "the run's deadline came ($gpudrv_why) while $njobs pod(s) matching '$wait_sel' still ran, after ${waited}s: $jobs_named" 2
	say "$node: $njobs pod(s) matching '$wait_sel' still run after ${waited}s (timeoutSeconds $wait_timeout): $jobs_named"
	say "$node: going on, as the GPU Operator does: the removal takes those it takes"
}
# judge_again WHEN: after the cordon (WHEN: "after the cordon", or "after
# the wait" for jobs), the removal judged again on the node as it is.
judge_again() {
	# Pods came through until the cordon took (an evicted pod's replacement
	# lands on any node still schedulable), and while the jobs ran some
	# ended: what the policy removes is judged on the node as it is now, as
	# the operator lists the pods at its removal.  A pod the policy does not
	# let go stops the run here.  A budget that leaves no room is waited for
	# here, a look every 5 s, rather than refused eviction by eviction: the
	# wait is the removal's (its timeout counts it, $ja_spent; 0: the
	# run's deadline).  A drain that never gets room fails when its
	# timeout would; a pod deletion goes on, to fail as the operator's does.
	ja_t0=
	ja_spent=0
	case $method in drain) ja_limit=$dr_timeout ;; pod-deletion) ja_limit=$pd_timeout ;; *) ja_limit=0 ;; esac
	while :; do
		get_budget_pods "$tmp/pp" "$pods_on_node" || on_fail "the budgets and the node's pods cannot be read again $1" 2
		judge
		[ "$pc" -le 1 ] || on_fail "pdb-check cannot judge the node's pods $1 (exit $pc)" 2
		# (the wait, and its clock, start at the first look without room)
		gpudrv_clock
		[ -z "$ja_t0" ] || ja_spent=$((gpudrv_now - ja_t0))
		[ "$pc" = 1 ] || break
		if grep -q -v ' BLOCKS ' "$tmp/pdb.why"; then
			emit "$tmp/pdb.why" 1
			on_fail "$1, the removal of its pods would be refused: $(grep -v ' BLOCKS ' "$tmp/pdb.why" | head -n 1 | cut -c1-200)" 1
		fi
		if [ -z "$ja_t0" ]; then
			ja_t0=$gpudrv_now
			say "$node: $1, the budgets leave no room for the removal of its pods: $(head -n 1 "$tmp/pdb.why" | cut -c1-200); waiting for headroom"
		fi
		if [ "$ja_limit" -gt 0 ] && [ $((ja_spent + 5)) -gt "$ja_limit" ]; then
			[ "$method" = drain ] || break
			emit "$tmp/pdb.why" 1
			on_fail "the budgets left no room for the drain after ${ja_spent}s (drain.timeoutSeconds $dr_timeout): $(head -n 1 "$tmp/pdb.why" | cut -c1-200)" 1
		fi
		nap 5
		gpudrv_time_left
		[ "$gpudrv_left" -gt 1 ] || on_fail "the run's deadline came ($gpudrv_why) while the budgets left no room for the removal, after $((gpudrv_now - ja_t0))s" 2
	done
	[ -z "$ja_t0" ] || [ "$pc" != 0 ] || say "$node: the budgets leave room, after ${ja_spent}s"
	take_removal
}
# The removal's words go to stderr as they come, indented, and to a file
# (-d): drain's through a fifo and a reader beside it, so that kubectl
# itself is the child the traps stop; the evictions' as they are made.
log_removal() {
	printf '%s\n' "$*" >>"$tmp/drain.out"
	printf '    %s\n' "$*" >&2 || :
}
# evict: the pods of $tmp/remove through the eviction API, as the GPU
# Operator's pod deletion removes them (kubectl's drain helper: an eviction
# a budget refuses, HTTP 429, is tried again every 5 s), then waited for
# until they are gone from the node (evicted_gone).
# All within podDeletion.timeoutSeconds (0: the run's deadline).  Status 1
# with $why when they did not all go (refused, or too slow), 2 when it
# cannot tell (an eviction that failed otherwise, a list not read whole).
evict() {
	gpudrv_clock
	ev_t0=$((gpudrv_now - ja_spent))
	cp "$tmp/remove" "$tmp/evict.todo"
	while [ -s "$tmp/evict.todo" ]; do
		: >"$tmp/evict.again"
		while IFS=/ read -r ev_ns ev_name; do
			printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"}}\n' \
				"$ev_name" "$ev_ns" >"$tmp/eviction.json"
			if kc /dev/null "$tmp/evict.err" create --raw "/api/v1/namespaces/$ev_ns/pods/$ev_name/eviction" -f "$tmp/eviction.json"; then
				log_removal "evicting pod $ev_ns/$ev_name"
			elif grep -q '(NotFound)' "$tmp/evict.err"; then
				log_removal "pod $ev_ns/$ev_name is gone already"
			elif grep -q '(TooManyRequests)' "$tmp/evict.err"; then
				log_removal "error when evicting pods/\"$ev_name\" -n \"$ev_ns\" (will retry after 5s): $(said "$tmp/evict.err")"
				echo "$ev_ns/$ev_name" >>"$tmp/evict.again"
			elif grep -q '(InternalError)' "$tmp/evict.err"; then
				# (more than one budget selects it: the API refuses, HTTP 500)
				why="the eviction of $ev_ns/$ev_name was refused: $(said "$tmp/evict.err")"
				return 1
			else
				why="the eviction of $ev_ns/$ev_name failed: $(said "$tmp/evict.err")"
				return 2
			fi
		done <"$tmp/evict.todo"
		mv "$tmp/evict.again" "$tmp/evict.todo"
		[ -s "$tmp/evict.todo" ] || break
		gpudrv_clock
		if [ "$pd_timeout" -gt 0 ] && [ $((gpudrv_now - ev_t0 + 5)) -gt "$pd_timeout" ]; then
			why="the budgets still refuse the eviction of $(tr '\n' ' ' <"$tmp/evict.todo")after $((gpudrv_now - ev_t0))s (podDeletion.timeoutSeconds $pd_timeout)"
			return 1
		fi
		nap 5
	done
	evicted_gone
}
# evicted_gone: the pods of $tmp/remove, evicted, waited for until they
# are gone from the node (pods_gone), within podDeletion.timeoutSeconds (0:
# the run's deadline), counted from ev_t0.  Status 1 with $why when they
# are not, 2 when it cannot tell.
evicted_gone() {
	left_pods || return 2
	eg_rc=0
	pods_gone left_pods "$pods_on_node" "$pd_timeout" "$ev_t0" "the node's pods" || eg_rc=$?
	gpudrv_clock
	case $eg_rc in
	0) log_removal "$nremove pod(s) evicted and gone, after $((gpudrv_now - ev_t0))s" ;;
	1)
		if [ "$pd_timeout" -gt 0 ]; then eg_why="podDeletion.timeoutSeconds $pd_timeout"; else eg_why="the run's deadline: $gpudrv_why"; fi
		why="evicted, but still on the node after $((gpudrv_now - ev_t0))s ($eg_why):$pw_still"
		;;
	esac
	return "$eg_rc"
}
# left_pods: the pods of $tmp/remove still on the node (pods_listed).
left_pods() {
	pods_listed "$pods_on_node" "the pods on $node" "$tmp/remove" && return 0
	why="the node's pods cannot be read to see the evicted ones go"
	return 2
}
# pods_listed PATH WHAT [FILE]: GET PATH, a PodList read by pdb-check -p -w:
# its pods (those FILE names, a namespace/name a line, if given) in
# $pw_still (" ns/name ... ", " " for none), its resourceVersion in $pw_rv
# ("-": none).  Status 2, said (WHAT: which pods), when it cannot be read
# whole.
pods_listed() {
	if ! get_list "$tmp/pl.json" "$1" "$2"; then
		return 2
	elif ! "$pdb_check" -p -w "$tmp/pl.json" >"$tmp/pl" 2>"$tmp/err"; then
		say "cannot list $2: pdb-check cannot read the answer to GET $1: $(said "$tmp/err")"
		return 2
	fi
	eval "$(awk -v only="${3:-}" 'FILENAME == only { take[$1] = 1; next }
		$1 == "ITEM" && (only == "" || $4 in take) { still = still $4 " " }
		$1 == "LIST" { rv = $2 }
		END { printf "pw_still=\" %s\" pw_rv=%s\n", still, rv }' ${3:+"$3"} "$tmp/pl")"
	[ -n "$pw_rv" ] && return 0
	say "cannot list $2: GET $1 answered with watch events, not a PodList"
	return 2
}
# pods_gone LIST PATH LIMIT T0 WHAT: the pods of $pw_still (those of the
# answer to GET PATH that LIST lists, with its $pw_rv) waited for until
# none is left, as the API tells it: watched from that list's
# resourceVersion, each taken off at its DELETED (pdb-check -p -w; a pod
# that stops matching PATH's selectors is DELETED from its watch too).  A
# watch that ends is resumed from the last resourceVersion it gave; one
# the API finds too old (410 Expired) lists again, as one that fails does
# (said); neither at once (2 s apart at least); one the API refuses
# (Forbidden: a Role without watch on pods) is said, and the pods are then
# listed every 2 s, as they are after a list without a resourceVersion.
# WHAT names the pods in a warning.  Status 0 once none is left; 1 once LIMIT seconds have passed
# since T0 (0: the run's deadline), $pw_still those left; 2 when LIST
# fails.
pods_gone() {
	pg_poll=0
	while :; do
		case $pw_still in *[!\ ]*) ;; *) return 0 ;; esac
		gpudrv_clock
		if [ "$3" -gt 0 ]; then
			pg_s=$(($3 - (gpudrv_now - $4)))
			[ "$pg_s" -gt 0 ] || return 1
		else
			# (a watch ends a second before the deadline, which would
			# stop kubectl as one that hangs)
			gpudrv_time_left
			[ "$gpudrv_left" -gt 0 ] || return 1
			pg_s=$((gpudrv_left - 1))
			if [ "$pg_s" -lt 1 ]; then
				nap 1
				continue
			fi
		fi
		if [ "$pg_poll" = 1 ] || [ "$pw_rv" = - ]; then
			[ "$pg_s" -le 2 ] || pg_s=2
			nap "$pg_s"
			"$1" || return 2
			continue
		fi
		pg_rc=0
		pg_i=$gpudrv_now
		watch_until "$2&resourceVersion=$pw_rv&watch=1" "$pg_s" pods_events pw_line || pg_rc=$?
		# What it saw: the pods gone, and where the next watch starts.
		while read -r pg_w pg_v; do
			case $pg_w in
			gone) pw_take "$pg_v" ;;
			rv) pw_rv=$pg_v ;;
			esac
		done <"$tmp/watch.rec"
		watch_after "$pg_rc" "$pg_i" "$5" "listing them every 2 s" pods "cannot watch $5" 410 || pg_poll=1
		[ "$pg_rc" = 2 ] || continue
		"$1" || return 2
	done
}
# pw_line LINE: pods_gone's watch (pods_events'): each line's
# resourceVersion, and each pod of $pw_still DELETED, said ("rv RV", "gone
# NS/NAME") and taken off; status 0 once none is left.
pw_line() {
	# (pdb-check's words: an event, a resourceVersion, a node, a pod)
	# shellcheck disable=SC2086 # split into its words; none is a pattern
	set -- $1
	# (an event's line has seven; a list's LIST line, were a list the
	# answer, two: no pod in it, and no resourceVersion of a watch)
	[ $# -ge 4 ] || return 1
	echo "rv $2"
	[ "$1" = DELETED ] || return 1
	case $pw_still in *" $4 "*) ;; *) return 1 ;; esac
	pw_take "$4"
	echo "gone $4"
	case $pw_still in *[!\ ]*) return 1 ;; esac
}
# pw_take NS/NAME: the pod off $pw_still.
pw_take() {
	case $pw_still in *" $1 "*) pw_still="${pw_still%% "$1" *} ${pw_still#* "$1" }" ;; esac
}
# drain: kubectl drain of the pods the policy's drain takes, as the
# operator's drain helper runs it: DaemonSets left, its podSelector (with
# the operator's skip), force and deleteEmptyDir as the policy says, its
# timeout (0: none but the run's).
drain() {
	dr_left=$dr_timeout
	[ "$dr_timeout" = 0 ] || dr_left=$((dr_timeout - ja_spent))
	[ "$dr_left" -ge 1 ] || [ "$dr_timeout" = 0 ] || dr_left=1
	set -- --ignore-daemonsets "--pod-selector=$dr_sel" "--timeout=${dr_left}s"
	[ "$dr_emptydir" = false ] || set -- "$@" --delete-emptydir-data
	[ "$dr_force" = false ] || set -- "$@" --force
	say "$node: kubectl drain $*"
	mkfifo "$tmp/drain.fifo"
	DRAIN_OUT=$tmp/drain.out
	export DRAIN_OUT
	awk 'BEGIN { out = ENVIRON["DRAIN_OUT"] } { print >> out; print "    " $0; fflush() }' \
		<"$tmp/drain.fifo" >&2 7>&- 8>&- &
	track_bg "$!"
	drain_rc=0
	kc "$tmp/drain.fifo" "$tmp/drain.fifo" drain "$node" "$@" || drain_rc=$?
	wait_bg || :
	rm -f "$tmp/drain.fifo"
	[ "$drain_rc" = 0 ] || on_fail "drain failed (exit $drain_rc): see kubectl's words above" 1
}
# remove_pods: the pods of $tmp/remove removed the way the policy says
# (pod-deletion, drain after a pod deletion that failed, or drain),
# their words kept for -d.
remove_pods() {
	: >"$tmp/drain.out"
	case $method in
	pod-deletion)
		[ "$nremove" = 0 ] || say "$node: evicting $nremove pod(s) that hold a GPU (podDeletion.timeoutSeconds $pd_timeout)"
		ev_rc=0
		[ "$nremove" = 0 ] || evict || ev_rc=$?
		[ "$ev_rc" != 2 ] || on_fail "the pod deletion could not go on: $why" 2
		if [ "$ev_rc" = 1 ]; then
			# updateNodeToDrainOrFailed: the drain, if the policy has one.
			[ "$dr_enable" = true ] || on_fail "the pod deletion failed: $why" 1
			say "$node: the pod deletion failed: $why; drain.enable is true: the node is drained, as the GPU Operator does"
			set_state "$S_DRAIN" || on_fail "the API refused a label" 2
			ja_spent=0
			drain
		fi
		;;
	drain) drain ;;
	esac
	# Replaced whole (put_file): never written through a link planted there.
	if [ -n "$drain_log" ] && ! put_file "$tmp/drain.out" "$drain_log" 644; then
		say "warning: cannot write the drain log $drain_log: $why"
	fi
}
