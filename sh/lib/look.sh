# look.sh: drv-rollout.sh's look at the cluster and its decisions: the GPU
# nodes, the upgradePolicy in force for each, the budgets and pods, and
# rollout-plan's plan of this moment (POSIX sh; sourced by drv-rollout.sh
# only, after runtime.sh, node.sh, api.sh, report.sh and table.sh).  It
# reads the caller's $tmp, $version, $selector, $major, $policy_set,
# $plan_scope and the tools it found ($labels2tag, $upgrade_policy,
# $planner, $pdb_check); it writes $tmp/facts, $tmp/sel, $tmp/all.json,
# $tmp/policy, $tmp/mine, $tmp/draws and $tmp/plan.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# The nodes, as the API has them now: every GPU node (maxUnavailable counts
# them all) into $tmp/facts, one labels2tag -F record a node: name, tag for
# $version (or UNKNOWN:...), driver, upgrade state, skip, cordon, ready,
# initial; into $tmp/sel the names the rollout covers.  Each list is one GET
# that proves itself whole (get_list, then labels2tag: a NodeList, every
# byte), or the run knows nothing of the nodes.
# node_list SELECTOR JSON FILE: the GPU nodes (gpu_nodes, with SELECTOR)
# into JSON, and as labels2tag -F records into FILE.
node_list() {
	gpu_nodes "$2" "$1" || return 2
	"$labels2tag" -F -b "$major" "$2" >"$3" 2>"$tmp/l2t.err" && return 0
	say "the answer to GET $gpu_nodes_path is not a list of nodes:"
	sed 's/^/    /' "$tmp/l2t.err" >&2 || :
	return 2
}
read_facts() {
	node_list "" "$tmp/all.json" "$tmp/facts" || return 2
	if [ -n "$selector" ]; then
		node_list "$selector" "$tmp/sel.json" "$tmp/sel" || return 2
		record_awk '{ print $f_node }' "$tmp/sel" >"$tmp/sel.names" && mv "$tmp/sel.names" "$tmp/sel"
	else
		record_awk '{ print $f_node }' "$tmp/facts" >"$tmp/sel"
	fi
	sort -o "$tmp/sel" "$tmp/sel"
	# A node that joined since the start (its image was not checked) waits
	# for the next run.
	[ ! -f "$tmp/scope" ] || awk 'NR == FNR { s[$1] = 1; next } $1 in s' "$tmp/scope" "$tmp/sel" >"$tmp/sel.in"
	[ ! -f "$tmp/scope" ] || mv "$tmp/sel.in" "$tmp/sel"
	# shellcheck disable=SC2119 # it reads $policy_set
	policies || return 2
	classify
}
# policies: the upgradePolicy in force for every GPU node (upgrade-policy:
# its owner's, the defaults, the flags), into $tmp/policy, from the
# operator's objects read at the start and the nodes just read: each
# owner's limits are the planner's (-y), and every drv-upgrade.sh gets the
# objects (-O).
# shellcheck disable=SC2120 # set from $policy_set
policies() {
	eval "set -- $policy_set"
	"$upgrade_policy" "$@" "$tmp/objects" "$tmp/all.json" >"$tmp/policy" 2>"$tmp/policy.err" && {
		# (a field the operator does not read: said once)
		[ -s "$tmp/policy.said" ] || ! [ -s "$tmp/policy.err" ] || { sed 's/^/    /' "$tmp/policy.err" >&2 && cp "$tmp/policy.err" "$tmp/policy.said"; }
		return 0
	}
	say "the upgradePolicy of the GPU nodes cannot be read:"
	sed 's/^/    /' "$tmp/policy.err" >&2 || :
	return 2
}
# classify: what each node of the rollout is now, into $tmp/mine: the
# planner's DONE (at the version, upgrade-done or no state), SKIP (the
# operator's skip label) and FAILED (upgrade-failed) lines; the others are
# still to upgrade.
classify() {
	plan "$tmp/mine" /dev/null
}
# count CLASS...: how many nodes of $tmp/mine are of one of the CLASSes.
count() {
	awk -v want=" $* " 'index(want, " " $1 " ") { n++ } END { print n + 0 }' "$tmp/mine"
}
facts_or_die() {
	read_facts && return 0
	say "cannot list the GPU nodes"
	stop_rollout 2
}

# The budgets and every pod, read by pdb-check -a: each node's draws on each
# budget and what would block its drain, into $tmp/draws.  Read once, for
# the first plan: later each decision reads again the pods of the nodes it
# acts on (decide).
read_draws() {
	get_draws "$tmp/draws" "$tmp/policy" || stop_rollout 2
}


# plan OUT DRAWS [-D]: rollout-plan's decisions (rollout-plan(1)) into OUT,
# from the nodes' facts, DRAWS, and the table (table_plan): the nodes under
# way, those this run is done with, and the budgets each node under way
# drew on when it started (until its evicted pods' replacements
# are Ready, such a budget allows none, and a node that needs it waits
# rather than counts blocked): which nodes start now (START node tag),
# which wait and for what (WAIT node parallel|unavailable|budget B), whose
# drain would be refused even alone (BLOCKED), and what the others are
# (DONE, SKIP, FAILED); with -D the whole rollout, as if the nodes ended in
# the order they started.  The nodes $plan_without names (a file), if it is
# set, are passed over.
plan() {
	table_plan
	pl_scope=${plan_scope:-$tmp/sel}
	if [ -n "${plan_without:-}" ]; then
		grep -vxFf "$plan_without" "$pl_scope" >"$tmp/scope.now" || :
		pl_scope=$tmp/scope.now
	fi
	"$planner" ${3:+"$3"} -v "$version" -y "$tmp/policy" -s "$pl_scope" -r "$tmp/running" \
		-k "$tmp/held" -g "$tmp/gone" "$tmp/facts" "$2" >"$1" 2>"$tmp/plan.err" && return 0
	say "the planner cannot decide:"
	sed 's/^/    /' "$tmp/plan.err" >&2 || :
	return 2
}

# decide: the plan of this moment into $tmp/plan, each node it starts, finds
# blocked or begins waiting for a budget judged on its pods as they are now.
# A node's draws in $tmp/draws may be those of an earlier look (evicted
# pods land on other nodes): the pods of each node the plan acts on are
# read again (GET its pods, field-selected; then the budgets, once a pass),
# its lines of $tmp/draws replaced and the allowed count of every budget
# they draw on set to the one just read, and the plan made again, until it acts on no node
# judged on an older look.  A node that goes on waiting for the budget its
# wait record named (the table's wait) is not read again for it: it is when
# it would start, or be found blocked.  But a node under way draws on a
# budget only as long as its pods of that budget are on it (the eviction
# took its disruption from the budget's status): the nodes under way that
# draw on a budget a node waits for are read again at each decision, and
# once none does, one node waiting for it (the budget's status, as it is
# now), so that the nodes waiting start once the budget allows them, not
# once the nodes under way end.
# $tmp/judged.NODE: the budgets and the pods of a node read now, as
# drv-upgrade.sh takes them (-b).
decide() {
	: >"$tmp/fresh"
	dc_first=1
	while :; do
		plan "$tmp/plan" "$tmp/draws" || stop_rollout 2
		table_awk 'FILENAME == ARGV[1] { w[$t_node] = $t_wait; if ($t_pid != "." && $t_rc == ".") run[$t_node] = 1; next }
			FILENAME == ARGV[2] { f[$1] = 1; next }
			FILENAME == ARGV[3] {
				if ($2 == "DRAWS" && ($1 in run)) on[$3] = on[$3] " " $1
				if ($2 == "DRAWS" && ($1 in f)) fb[$3] = 1
				next
			}
			$1 == "WAIT" && $3 == "budget" && on[$4] != "" {
				k = split(on[$4], u, " ")
				for (i = 1; i <= k; i++) if (!(u[i] in f) && !(u[i] in out)) { out[u[i]] = 1; print u[i] }
			}
			$1 == "WAIT" && $3 == "budget" && on[$4] == "" && !($4 in fb) && !($4 in probe) && !($2 in f) {
				probe[$4] = 1
				if (!($2 in out)) { out[$2] = 1; print $2 }
			}
			$1 == "WAIT" && $3 == "budget" && w[$2] == $4 { next }
			($1 == "START" || $1 == "BLOCKED" || ($1 == "WAIT" && $3 == "budget")) && !($2 in f) && !($2 in out) { out[$2] = 1; print $2 }' \
			"$tmp/table" "$tmp/fresh" "$tmp/draws" "$tmp/plan" >"$tmp/stale"
		[ -s "$tmp/stale" ] || return 0
		while read -r bn; do
			if ! get_list "$tmp/pods.$bn" "/api/v1/pods?fieldSelector=spec.nodeName%3D$bn"; then
				say "cannot list the pods on $bn"
				stop_rollout 2
			fi
		done <"$tmp/stale"
		# The budgets after the pods, at each pass: a pod evicted from a node
		# is then in its budget's status (the eviction took the disruption
		# as it took the pod), never a budget read before the pod left.
		if ! get_list "$tmp/budgets" /apis/policy/v1/poddisruptionbudgets; then
			say "cannot list the budgets"
			stop_rollout 2
		fi
		# (the first list of the decision, the oldest it judges by: where
		# the budgets' watch begins)
		if [ "$dc_first" = 1 ]; then
			cp "$tmp/budgets" "$tmp/bw.list"
			dc_first=0
			bw_listed=1
		fi
		cp "$tmp/budgets" "$tmp/pp"
		while read -r bn; do
			# (A node under way keeps the look its run was started on.)
			grep -qxF "$bn" "$tmp/running" || cat "$tmp/budgets" "$tmp/pods.$bn" >"$tmp/judged.$bn"
			cat "$tmp/pods.$bn" >>"$tmp/pp"
		done <"$tmp/stale"
		pc=0
		"$pdb_check" -a -y "$tmp/policy" "$tmp/pp" >"$tmp/draws.now" || pc=$?
		if [ "$pc" -gt 1 ]; then
			say "pdb-check cannot judge the budgets and the pods of $(tr '\n' ' ' <"$tmp/stale")(exit $pc)"
			stop_rollout 2
		fi
		awk 'FILENAME == ARGV[1] { now[$1] = 1; next }
			FILENAME == ARGV[2] { if ($2 == "DRAWS") allowed[$3] = $5; print; next }
			$1 in now { next }
			$2 == "DRAWS" && ($3 in allowed) { $5 = allowed[$3] }
			{ print }' "$tmp/stale" "$tmp/draws.now" "$tmp/draws" >"$tmp/draws.new"
		mv "$tmp/draws.new" "$tmp/draws"
		cat "$tmp/stale" >>"$tmp/fresh"
	done
}

# The budgets watched while a node waits for one (bw_*).  A node that waits
# for a budget (WAIT budget), or that its budgets block and -w lets wait
# (BLOCKED), is judged again when one of those budgets changes: the waker, a
# subshell in the background, watches the budgets (watch_until, pdb-check -b
# -w) from the resourceVersion of the first list the last decision read (the
# oldest it judged by: a change after it is told, none is lost), and ends at
# the first change of one of them (ADDED, DELETED, or its status's counts
# other than the list's), or at the end of its watch ($bw_resync seconds, a
# new look then all the same, as an informer's resync); the rollout then
# looks again.  None while a gate holds every start (the gate says when to
# look).  Where the watch cannot be had (a Role without watch on the
# budgets, said once; a list with no resourceVersion; less than 2 s after
# the last watch began, unless it ended at a change), a look every 5 s, as
# before.
bw_pid=      # the waker's pid, while it runs or until it is waited for
bw_for=      # " ns/name ... ": the budgets it watches for
bw_known=    # " ns/name:allowed:healthy:desired:expected ...": theirs in the list
bw_names=    # the budgets the plan of this moment waits for (bw_want)
bw_rv=       # where the watch begins: the list's resourceVersion
bw_listed=0  # 1: decide listed the budgets ($tmp/bw.list) since a watch began
bw_off=0     # 1: the API refuses to watch the budgets
bw_at=       # when the last watch began (gpudrv_clock)
bw_said=     # the last failure said
bw_resync=30
gpudrv_hooks="$gpudrv_hooks bw_quiet"

# bw_want: $bw_names from the plan: the budgets WAIT lines name, and those
# that block a BLOCKED node ($tmp/draws' BLOCKS lines).
bw_want() {
	bw_names=$(awk 'FILENAME == ARGV[1] {
			if ($1 == "WAIT" && $3 == "budget") w[$4] = 1
			if ($1 == "BLOCKED") b[$2] = 1
			next
		}
		($1 in b) && $3 == "BLOCKS" { w[$2] = 1 }
		END { for (n in w) { printf " %s", n; k++ } if (k) printf " " }' "$tmp/plan" "$tmp/draws")
}

# bw_arm: a waker for $bw_names running (status 0), one already running
# kept if it watches for each of them; status 1 where there is none (the
# caller looks again in 5 s).
bw_arm() {
	bw_want
	if [ "$bw_off" = 1 ] || [ -z "$bw_names" ]; then
		bw_stop
		return 1
	fi
	if [ -n "$bw_pid" ] && kill -0 "$bw_pid" 2>/dev/null; then
		for bw_n in $bw_names; do
			case $bw_for in *" $bw_n "*) ;; *) bw_n= && break ;; esac
		done
		[ -z "$bw_n" ] || return 0
	fi
	bw_stop
	[ "$bw_off" = 0 ] || return 1
	gpudrv_clock
	[ -z "$bw_at" ] || [ $((gpudrv_now - bw_at)) -ge 2 ] || return 1
	# From the first list of the last decision, else from a list made now.
	if [ "$bw_listed" = 0 ] && ! get_list "$tmp/bw.list" /apis/policy/v1/poddisruptionbudgets "the budgets"; then
		return 1
	fi
	bw_listed=0
	"$pdb_check" -b -w "$tmp/bw.list" >"$tmp/bw.lines" 2>/dev/null || return 1
	# (the list's resourceVersion, then its counts of the budgets waited for)
	bw_known=$(awk -v want="$bw_names" '$1 == "LIST" { rv = $2; next }
		$1 == "ITEM" && index(want, " " $3 " ") { k = k " " $3 ":" $4 ":" $5 ":" $6 ":" $7 }
		END { print rv k " " }' "$tmp/bw.lines")
	bw_rv=${bw_known%% *}
	bw_known=" ${bw_known#* }"
	case $bw_rv in '' | -) return 1 ;; esac
	# (a watch ends before the run's deadline, never stopped by it)
	gpudrv_time_left
	bw_s=$bw_resync
	[ "$bw_s" -le $((gpudrv_left - 2)) ] || bw_s=$((gpudrv_left - 2))
	[ "$bw_s" -ge 1 ] || return 1
	bw_for=$bw_names
	bw_at=$gpudrv_now
	rm -rf "$tmp/bw"
	mkdir "$tmp/bw"
	(
		# TERM (bw_stop) or HUP: its kubectl and reader stopped with it
		# (fd 5 let go first: the reader ends as kubectl does); the run's
		# own way out (abort) never taken here.
		trap 'exec 5>&-; gpudrv_stop_children; exit 143' HUP TERM
		gpudrv_stopping=1
		under=
		under_pids=
		bw_files
		watch_until "/apis/policy/v1/poddisruptionbudgets?resourceVersion=$bw_rv&watch=1" \
			"$bw_s" bw_events bw_line
	) >/dev/null 2>"$tmp/bw/sh.err" </dev/null 7>&- 8>&- &
	bw_pid=$!
}
# bw_files: the waker's $tmp its own (watch_until's files are under $tmp).
bw_files() {
	tmp=$tmp/bw
}
# bw_events: the waker's filter; bw_line LINE: its reader of each line
# ("TYPE RV ns/name allowed healthy desired expected"): status 0 at a
# change of a budget of $bw_for.
bw_events() {
	"$pdb_check" -b -w
}
bw_line() {
	# shellcheck disable=SC2086 # pdb-check's words, none a pattern
	set -- $1
	[ $# -ge 7 ] || return 1
	case $bw_for in *" $3 "*) ;; *) return 1 ;; esac
	case $1 in
	ADDED | DELETED) return 0 ;;
	MODIFIED) case $bw_known in *" $3:$4:$5:$6:$7 "*) return 1 ;; esac ;;
	*) return 1 ;;
	esac
}
# bw_ended: the waker has ended (a look is due).
bw_ended() {
	[ -n "$bw_pid" ] && ! kill -0 "$bw_pid" 2>/dev/null
}
# bw_stop [quiet]: the waker stopped (TERM, if it still runs) and waited
# for; a watch that failed said (but quiet, on the way out), 410 Expired
# aside; one the API refuses said, and none started again.
bw_stop() {
	[ -n "$bw_pid" ] || return 0
	kill -TERM "$bw_pid" 2>/dev/null || :
	bw_st=0
	gpudrv_child=$bw_pid
	gpudrv_wait 2>/dev/null || bw_st=$?
	bw_pid=
	case $bw_st in
	0) bw_at='' bw_said='' && return 0 ;; # (a change: the next watch may begin at once)
	2) ;;
	*) bw_said='' && return 0 ;;
	esac
	[ -z "${1:-}" ] || return 0
	bw_why=$(said "$tmp/bw/err")
	[ -n "$bw_why" ] || bw_why=$(said "$tmp/bw/sh.err")
	[ -n "$bw_why" ] || bw_why="it ended (exit 2) with no word"
	case $bw_why in
	*'(Forbidden)'*)
		bw_off=1
		say "warning: the API refuses to watch the budgets: $bw_why; a look every 5 s instead while a node waits for one (add watch to the poddisruptionbudgets rule of the Role: deploy/20-upgrader.yaml)"
		;;
	*'code 410)'* | *'(Expired)'*) ;;
	*)
		# (the same failure again is not said again)
		[ "$bw_why" = "$bw_said" ] || say "warning: cannot watch the budgets: $bw_why; looking again"
		bw_said=$bw_why
		;;
	esac
}
bw_quiet() {
	bw_stop quiet
}
