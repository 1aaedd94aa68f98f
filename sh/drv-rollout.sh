#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-rollout.sh: every GPU node (or those a selector picks) to one driver
# version, with drv-upgrade.sh's steps and states, a node started as soon as
# a slot frees and the GPU Operator's upgradePolicy limits
# (maxParallelUpgrades, maxUnavailable) and the PodDisruptionBudgets allow
# it (rollout-plan decides), each owner's (NVIDIADriver, ClusterPolicy)
# apart.  It refuses before any change when an image is missing or the
# operator's own upgrades are on, can take a canary first, stops after the
# failures it allows, and the nodes' upgrade-state labels are its only
# record: run again after a crash, it carries on from where each node
# stands.
set -eu

prog=drv-rollout.sh
usage_line="usage: $prog [-cDfL] [-U field=value]... [-l selector] [-p max-parallel] [-u max-unavailable] [-C canary-count | -S canary-selector] [-k max-failures] [-m matrix | -r repository [-I]] [-t drain-timeout] [-g validate-timeout] [-w budget-wait] [-j job-selector [-J job-timeout]] [-V gate-manifest [-G gate-timeout] [-e gate-namespace]] [-n driver-namespace] [-s driver-selector] [-W window [-x]] [-Z soak] [-B blocking-pod-selector]... [-P prometheus-url [-A alert-regexp [-Q]] [-F]] [-o log-dir] [-M metrics-file] [-N webhook-url] version"

# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"; . "$lib/lease.sh"; . "$lib/files.sh"; . "$lib/table.sh"; . "$lib/report.sh"; . "$lib/look.sh"; . "$lib/pace.sh"

matrix=${GPUDRV_MATRIX:-$default_matrix}
matrix_given=
repo=
insecure=
selector=
max_parallel=       # -p: maxParallelUpgrades over the policy's (0: no limit)
max_unavailable=    # -u: maxUnavailable over the policy's
dry_run=0
keep_going=0        # -c: no number of failures stops it
max_failures=1      # -k: the failures after which no node starts
force=0             # -f: beside the operator's own upgrades (autoUpgrade)
canary_count=       # -C: the first N nodes alone, first
canary_sel=         # -S: the nodes this selector picks alone, first
policy_u=           # -U: fields of the policy, quoted words (policy_option)
policy_r=
gate_manifest=      # -V, -G, -e: drv-upgrade.sh's health gate, passed on
gate_timeout=
gate_ns=
logdir=
metrics=        # -M: a node_exporter textfile
budget_wait=120 # -w: how long a node whose drain the budgets refuse is waited for
# drv-upgrade.sh's own options, passed on when given (upgrade_option)
lab=
drain_timeout=
validate_timeout=
driver_ns=
driver_sel=
wait_sel=
wait_timeout=
# The command that runs this rollout again, as typed, and the one that
# resumes it past the failed nodes (-c first: an option after the version
# operand would be an operand).
rerun=$prog
for a; do rerun="$rerun $(shw "$a")"; done
resume="$prog -c${rerun#"$prog"}"
eval "set -- $(gpudrv_opts 'l:selector p:max-parallel u:max-unavailable m:matrix r:registry t:drain-timeout g:validate-timeout J:wait-timeout j:wait-for w:budget-wait n:driver-namespace s:driver-selector o:log-dir M:metrics N:notify U:policy C:canary S:canary-selector k:max-failures V:gate G:gate-timeout e:gate-namespace W:window Z:soak B:blocking-pod-selector P:prometheus-url A:alert-filter-regexp' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-c | --keep-going) keep_going=1 ;;
	-D | --dry-run) dry_run=1 ;;
	-f | --force) force=1 ;;
	-U | --policy) policy_option "$@"; shift ;;
	-C | --canary)
		need_arg "$@"
		case $2 in '' | *[!0-9]* | 0) misuse "$1 takes a number of nodes, 1 or more, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-40)'" ;; esac
		canary_count=$2
		shift
		;;
	-S | --canary-selector) need_arg "$@"; check_value "$1" "$2" "a label selector (pool=canary)"; canary_sel=$2; shift ;;
	-k | --max-failures)
		need_arg "$@"
		case $2 in '' | *[!0-9]* | 0) misuse "$1 takes a number of failures, 1 or more, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-40)'" ;; esac
		max_failures=$2
		shift
		;;
	-V | --gate) need_arg "$@"; check_file "$1" "$2"; gate_manifest=$2; shift ;;
	-G | --gate-timeout) need_arg "$@"; gate_timeout=$(seconds "$2" "$1") || finish 2; shift ;;
	-e | --gate-namespace) need_arg "$@"; check_value "$1" "$2" "a namespace"; gate_ns=$2; shift ;;
	-L | --lab) lab=1 ;;
	-l | --selector) need_arg "$@"; check_value "$1" "$2" "a label selector (pool=a100)"; selector=$2; shift ;;
	-p | --max-parallel) need_arg "$@"; max_parallel=$2; shift ;;
	-u | --max-unavailable) need_arg "$@"; max_unavailable=$2; shift ;;
	-m | --matrix | -r | --registry) source_option "$@"; shift ;;
	-I | --insecure) insecure=1 ;;
	-t | --drain-timeout | -w | --budget-wait | -g | --validate-timeout | -j | --wait-for | -J | --wait-timeout | \
		-n | --driver-namespace | -s | --driver-selector) upgrade_option "$@"; shift ;;
	-o | --log-dir) need_arg "$@"; logdir=$2; shift ;;
	-M | --metrics) need_arg "$@"; metrics=$2; shift ;;
	-N | --notify) notify_option "$@"; shift ;;
	-W | --window | -Z | --soak | -B | --blocking-pod-selector | -P | --prometheus-url | -A | --alert-filter-regexp) pace_option "$@"; shift ;;
	-x | --exit-outside) window_exit=1 ;;
	-Q | --alert-filter-match-only) alert_match=-m ;;
	-F | --alert-firing-only) alert_firing=-F ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 1 ] || usage
upgrade_options_end
if [ -n "$canary_count" ] && [ -n "$canary_sel" ]; then
	misuse "-C takes the first nodes as the canary, -S those a selector picks: one or the other"
fi
if [ -n "$gate_manifest$gate_timeout$gate_ns" ] && [ -z "$gate_manifest" ]; then
	misuse "-G and -e are the health gate's: give -V too"
fi
[ "$keep_going" = 0 ] || max_failures=0
pace_check
version=$1
driver_version "$version"
image_source
planner=$(find_tool rollout-plan) || finish 2
upgrade_policy=$(find_tool upgrade-policy) || finish 2
# -p and -u are the planner's to judge, before any request; every flag that
# sets a field of the policy is upgrade-policy's.
if [ -n "$max_parallel$max_unavailable" ] &&
	! why=$("$planner" -v "$version" -p "${max_parallel:-1}" -u "${max_unavailable:-25%}" /dev/null /dev/null 2>&1 >/dev/null); then
	misuse "${why#rollout-plan: }"
fi
policy_flags
# shellcheck disable=SC2119 # it reads $policy_set, not the script's arguments
policy_check
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
pdb_check=$(find_tool pdb-check) || finish 2
drv_upgrade=$(find_tool drv-upgrade.sh) || finish 2
if [ -n "$logdir" ] && ! [ -d "$logdir" ]; then
	mkdir -p -- "$logdir" 2>/dev/null || die "cannot create the log directory $logdir (-o)"
fi
if [ -n "$metrics" ] && ! writable "$metrics"; then
	die "cannot write $metrics (-M): $why; nothing was changed"
fi
if [ -n "$logdir" ] && ! writable "$logdir/x"; then
	die "cannot write in the log directory $logdir (-o): $why; nothing was changed"
fi
# Another user who can write there could plant a link for a node's log
# to be written through.
if [ -n "$logdir" ] && ! own_path "$logdir/." directory; then
	die "the log directory $logdir (-o) $why: refusing it (another user could plant a link there for a node's log to be written through); make it yours and writable by you alone, or name another; nothing was changed"
fi

# A rollout lasts as long as its nodes take: a week unless GPUDRV_TIMEOUT
# says otherwise; three request timeouts kept to report where nodes stand.
gpudrv_start 604800 3
[ -n "$logdir" ] || { logdir=$tmp/logs && mkdir "$logdir"; }

# Counts for the summary.
n_started=0
n_done=0
n_failed=0
n_skipped=0
total=0
# The table of the nodes this run acted on, and what it derives from it
# (table.sh): the nodes under way, their pids, those that ended at the
# last look.
: >"$tmp/table"
under=
under_pids=
ended=
: >"$tmp/stdout"
: >"$tmp/draws"

# One rollout a cluster at a time, from any machine: a Lease in the cluster,
# renewed while the run goes on and released on the way out; and a lock on a
# file named after the API server, in a directory only the user can write,
# held by the run and everything it starts, so that a rerun after the run
# itself was killed waits for the upgrades it left running rather than take
# their nodes a second time (rollout_lock, lib/lease.sh).
if [ "$dry_run" = 0 ]; then
	server=default
	if kc "$tmp/server" /dev/null config view --minify -o 'jsonpath={.clusters[0].cluster.server}' &&
		[ -s "$tmp/server" ]; then
		server=$(cat "$tmp/server")
	fi
	rollout_lock "$server"
fi

# Step 0: the GPU Operator's objects, where its upgradePolicy is: read once
# (every drv-upgrade.sh gets them as read, -O).
if ! get_targets "$tmp/objects"; then
	say "the GPU Operator's objects, where its upgradePolicy is, cannot be read; nothing was changed"
	stop_rollout 2
fi
# Step 1: the nodes, and the image each would need.
facts_or_die
total=$(grep -c . "$tmp/sel") || :
[ "$total" -gt 0 ] || die "no GPU node${selector:+ matching $selector} in the cluster"
# The rollout's nodes are those of this first read: one that joins later
# waits for the next run (its image was not checked).
cp "$tmp/sel" "$tmp/scope"
record_awk '{ print $f_node, $f_tag }' "$tmp/facts" >"$tmp/tags"

# The nodes left out for good: the operator's skip label.
sed -n 's/^SKIP //p' "$tmp/mine" >"$tmp/skiplabel"
while read -r sn; do
	say "$sn: labelled $L_SKIP=true: left out, as the GPU Operator leaves it"
	out "$sn skipped $L_SKIP=true"
	n_skipped=$((n_skipped + 1))
done <"$tmp/skiplabel"
sed 's/$/ gone=1/' "$tmp/skiplabel" | table_apply

# Step 2: refuse early.  Every node still to upgrade needs its image now.
awk 'NR == FNR { if ($1 == "DONE" || $1 == "SKIP") k[$2] = 1; next } !($1 in k)' "$tmp/mine" "$tmp/sel" >"$tmp/todo"
awk 'NR == FNR { t[$1] = 1; next } $1 in t' "$tmp/todo" "$tmp/tags" >"$tmp/todo.tags"
# A node to upgrade whose labels give no tag: its image cannot be checked.
# (A node left out by its skip label needs none, whatever its labels.)
awk '$2 ~ /^UNKNOWN:/' "$tmp/todo.tags" >"$tmp/untagged"
if [ -s "$tmp/untagged" ]; then
	while read -r un ut; do
		f=${ut#UNKNOWN:}
		say "$un: its labels give no tag for driver $version (label ${f#*:} is ${f%%:*}): its image cannot be checked"
	done <"$tmp/untagged"
	die "nothing was changed"
fi
if [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || die "nothing was changed"
	matrix=$tmp/tags.json
fi
[ -r "$matrix" ] || die "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another); nothing was changed"
mg=0
if [ -s "$tmp/todo.tags" ]; then
	"$matrix_grep" -m "$matrix" "$tmp/todo.tags" >"$tmp/audit" || mg=$?
	[ "$mg" -le 1 ] || die "the images could not be checked; nothing was changed"
fi
if [ "$mg" = 1 ]; then
	grep -v '^OK$' "$tmp/audit" >"$tmp/stdout" || :
	emit "$tmp/stdout" 1
	: >"$tmp/stdout"
	n=$(grep -c ' MISSING ' "$tmp/audit") || :
	say "$n node(s) need an image that is not in ${repo:-$matrix}: build and push it first; nothing was changed"
	[ -n "$repo" ] || {
		say "the rows to add to $matrix:"
		"$labels2tag" -c -n -b "$major" "$tmp/all.json" 2>/dev/null |
			awk 'NR == FNR { if ($2 == "MISSING") m[$1] = 1; next } ($1 in m) && !seen[$2]++ { print "    " $2 }' \
				"$tmp/audit" - >&2 || :
	}
	summary 1
fi

# A node in upgrade-failed stops the rollout before it starts, unless -c.
if grep -q '^FAILED ' "$tmp/mine" && [ "$keep_going" = 0 ]; then
	sed -n 's/^FAILED //p' "$tmp/mine" >"$tmp/failed"
	while read -r fn; do
		say "$fn: $L_STATE=$S_FAILED from an earlier upgrade: see why, then resume it with drv-upgrade.sh, or run with -c to go on past it"
		out "$fn $S_FAILED"
	done <"$tmp/failed"
	say "nothing was changed"
	summary 1
fi

# The owners of the rollout's nodes, and their policies: $tmp/owned.  Two
# controllers must never move one node: where an owner's policy says
# autoUpgrade, the operator's upgrade controller upgrades its nodes itself,
# and the rollout refuses them all unless -f.
awk 'FILENAME == ARGV[1] { s[$1] = 1; next } $1 == "node" && ($2 in s) { print $3 }' "$tmp/todo" "$tmp/policy" |
	sort -u >"$tmp/owners"
awk 'FILENAME == ARGV[1] { o[$1] = 1; next } $1 == "policy" && ($2 in o)' "$tmp/owners" "$tmp/policy" >"$tmp/owned"
awk '$3 == "autoUpgrade" && $5 == "true" { print $2, $4 }' "$tmp/owned" >"$tmp/auto"
if [ -s "$tmp/auto" ] && [ "$force" = 0 ]; then
	while read -r ao as; do
		if [ "$as" = default ]; then
			say "$ao has no upgradePolicy, and an NVIDIADriver's upgrades are automatic by default: the GPU Operator's upgrade controller upgrades its nodes itself"
		else
			say "$ao's upgradePolicy says autoUpgrade: true: the GPU Operator's upgrade controller upgrades its nodes itself"
		fi
	done <"$tmp/auto"
	say "two controllers must never move one node: set autoUpgrade: false there, or, if the operator's upgrade controller does not run, go on with -f; nothing was changed"
	summary 2
fi
[ ! -s "$tmp/auto" ] || say "warning: autoUpgrade is true for $(cut -d' ' -f1 "$tmp/auto" | tr '\n' ' ')and -f goes on beside the operator's upgrade controller"

# Step 3: node by node, as slots free.  Each start is decided from the
# cluster as it is then: the nodes just read, the budgets and pods just read,
# and the nodes under way (a dry run decides them all from now, as if the
# nodes ended in the order they started and gave back what they took).
# blocked NODE [WHY]: NODE's drain would be refused even alone: skipped, with
# pdb-check's words (on standard output in a dry run: they are the plan).
blocked() {
	awk -v n="$1" '$1 == n && $2 != "DRAWS" && $2 != "SKIP"' "$tmp/draws" >"$tmp/why"
	if [ "$dry_run" = 1 ]; then
		cat "$tmp/why" >>"$tmp/stdout"
	else
		if grep -q -v ' BLOCKS ' "$tmp/why"; then
			say "$1: the removal of its pods would be refused by what is below${2:+ $2}; the node is left as it is:"
		else
			say "$1: its drain would be refused by the budget(s) below${2:+ $2}; the node is left as it is:"
		fi
		sed 's/^/    /' "$tmp/why" >&2 || :
	fi
	out "$1 skipped budget"
	[ "$dry_run" = 1 ] || notify skipped "$1: skipped: its drain would be refused${2:+ $2} (pdb-check -s $1 says why)" "$1"
	table_set "$1" gone=1
	n_skipped=$((n_skipped + 1))
}


# The canary (-C, -S): those nodes alone first, each to its end (its
# health gate too, -V); the rest only if none of them failed.  -C: the
# first N the plan would start; -S: those its selector picks.  Into
# $tmp/canary, the scope of the plan meanwhile (plan_scope).
canary_pick() {
	if [ -n "$canary_sel" ]; then
		node_list "$canary_sel" "$tmp/canary.json" "$tmp/canary.facts" ||
			stop_rollout 2
		record_awk 'FILENAME == ARGV[1] { t[$1] = 1; next } ($f_node in t) { print $f_node }' "$tmp/todo" "$tmp/canary.facts" | sort >"$tmp/canary"
		[ -s "$tmp/canary" ] || die "-S $canary_sel picks no node this rollout upgrades; nothing was changed"
	else
		plan "$tmp/canary.plan" "$tmp/draws" -D || stop_rollout 2
		sed -n 's/^START \([^ ]*\) .*/\1/p' "$tmp/canary.plan" | head -n "$canary_count" | sort >"$tmp/canary"
	fi
}
canary=0
if [ -n "$canary_count$canary_sel" ]; then
	read_draws
	canary_pick
	canary=1
	plan_scope=$tmp/canary
	say "canary: $(tr '\n' ' ' <"$tmp/canary")alone first; the other nodes only once each of them is done"
fi

[ "$dry_run" = 0 ] || dry_run_plan

# A quarter of a second between looks at the nodes under way (coreutils'
# sleep takes fractions; another sleep, a second).
tick=1
! sleep 0.01 2>/dev/null || tick=0.25

# The classes of the plan, acted on (the loop below builds the plan, then
# acts on each class, as the GPU Operator's ApplyState does).
# act_blocked: the BLOCKED nodes.  One a pod no budget holds refuses is
# skipped (no wait lifts it); the others are waited for (-w, from when the
# plan first found them blocked) while the rest go on, then skipped
# ($blocked_left: the seconds until the first of them is).  A node no
# longer blocked waits afresh if it is again.
act_blocked() {
	blocked_left=
	sed -n 's/^BLOCKED //p' "$tmp/plan" >"$tmp/blocked"
	table_awk 'FILENAME == ARGV[1] { b[$1] = 1; next }
		$t_since != "." && !($t_node in b) { print $t_node, "since=." }' "$tmp/blocked" "$tmp/table" >"$tmp/unblocked"
	[ ! -s "$tmp/unblocked" ] || table_apply <"$tmp/unblocked"
	awk 'FILENAME == ARGV[1] { b[$1] = 1; next }
		($1 in b) && $2 != "DRAWS" && $2 != "SKIP" && $0 !~ / BLOCKS / { print $1 }' \
		"$tmp/blocked" "$tmp/draws" | sort -u >"$tmp/refused"
	while read -r bn; do
		if grep -qxF "$bn" "$tmp/refused"; then
			blocked "$bn"
			continue
		fi
		table_read "$bn"
		first=$tr_since
		[ "$first" != . ] || { first=$now && table_set "$bn" since="$now"; }
		if [ $((now - first)) -ge "$budget_wait" ]; then
			if [ "$budget_wait" -gt 0 ]; then blocked "$bn" "(after ${budget_wait}s, -w)"; else blocked "$bn"; fi
		else
			waiting=1
			bl=$((first + budget_wait - now))
			[ -n "$blocked_left" ] && [ "$blocked_left" -le "$bl" ] || blocked_left=$bl
		fi
	done <"$tmp/blocked"
}
# act_waiting: the nodes that WAIT for a budget: the budget said when a
# node starts waiting for it.
act_waiting() {
	sed -n 's/^WAIT \([^ ]*\) budget \([^ ]*\)$/\1 \2/p' "$tmp/plan" >"$tmp/bwait"
	[ -s "$tmp/bwait" ] || return 0
	waiting=1
	table_awk -v said="$tmp/stdout" 'FILENAME == ARGV[1] { w[$t_node] = $t_wait; next }
		w[$1] != $2 { print "wait", $1, "budget", $2 >>said; print $1, "wait=" $2 }' "$tmp/table" "$tmp/bwait" >"$tmp/waits"
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
	[ ! -s "$tmp/waits" ] || table_apply <"$tmp/waits"
}
# bw_wake: while nodes wait and no gate holds every start, the budgets they
# need watched (bw_arm): then $pace_wake is the first -w that runs out, or 0
# (the watch's end, within its 30 s, wakes the run); else the 5-s look (or
# the gate's time) stands.
bw_wake() {
	# (none while a gate holds every start: the gate says when to look)
	if [ -n "$pace_why" ]; then
		bw_stop
		return 0
	fi
	bw_arm || return 0
	pace_wake=0
	[ -n "$blocked_left" ] || return 0
	[ "$blocked_left" -ge 1 ] || blocked_left=1
	pace_wake=$blocked_left
}
# act_start: the nodes to START, each its drv-upgrade.sh.
act_start() {
	go=$(sed -n 's/^START \([^ ]*\) .*/\1/p' "$tmp/plan")
	for bn in $go; do start "$bn"; done
}

stopped=0
canary_short=0  # the canary stopped with a node of it not DONE, none failed
halt=           # -k failures (1 without -c): no node starts after them
n_failed_run=0  # the nodes this run failed
failed_run=
[ "$canary" = 1 ] || read_draws
notify start "started: $total node(s) to driver $version${selector:+ ($selector)}, $(count DONE SKIP) of them done or skipped already"
while :; do
	# The state of this moment: the plan (none after a halt), each node as
	# the API has it, the table of those under way.
	if [ -z "$halt" ]; then pace_decide; else : >"$tmp/plan" && pace_hold=0; fi
	now=$(date +%s)
	waiting=$pace_hold
	# Each class acted on.
	act_blocked
	act_waiting
	act_start
	metrics_write
	if [ -z "$under" ]; then
		[ -z "$halt" ] || break
		if [ "$canary" = 1 ] && [ "$waiting" = 0 ]; then
			# The canary passes when each of its nodes is DONE now (a node
			# skipped for its budgets, or left by a limit, is not a pass).
			short=$(awk 'FILENAME == ARGV[1] { c[$1] = 1; next }
				$1 == "DONE" { d[$2] = 1 }
				END { for (n in c) if (!(n in d)) print n }' "$tmp/canary" "$tmp/mine" | sort | tr '\n' ' ')
			if [ -n "$short" ]; then
				halt=" ${short% }"
				canary_short=1
				break
			fi
			# The canary is through, none failed: the other nodes now.
			say "canary passed: $(tr '\n' ' ' <"$tmp/canary")went through; the other nodes now"
			canary=0
			plan_scope=
			continue
		fi
		if [ "$waiting" = 1 ]; then
			if [ "$pace_closed$window_exit" = 11 ]; then
				# 75 (try again later) only when nothing failed.
				stop_why="the window closed (-x)"
				say "nothing under way, and $pace_why: the run ends here (-x); run it again then: $rerun"
				if [ "$n_failed_run" = 0 ] && [ "$(count FAILED)" = 0 ]; then summary "$pace_out"; else summary 1; fi
			fi
			bw_wake
			pace_sleep
			[ "$(time_left)" -gt 5 ] || gpudrv_abort "the run's deadline came ($gpudrv_why) while nodes waited (${pace_waits:-for their budgets})"
			facts_or_die
			continue
		fi
		! say_left WAIT || stopped=1
		break
	fi
	# Until a node ends; while a node waits for a budget (or a drain the
	# budgets refuse), a new look when one of those budgets changes (or
	# every 5 seconds, bw_wake), or when a gate is worth judging again.
	wake=0
	if [ "$waiting" = 1 ] && [ -z "$halt" ]; then
		bw_wake
		wake=$pace_wake
	else
		bw_stop
	fi
	await "$wake"
	if [ -z "$ended" ]; then
		[ -n "$under" ] || continue
		facts_or_die
		continue
	fi
	pace_last=$(date +%s)
	pace_last_node=${ended##* }
	fresh=1
	read_facts || fresh=0
	ended "$fresh"
	if [ "$fresh" = 0 ]; then
		say "cannot list the GPU nodes after${ended} ended"
		stop_rollout 2
	fi
	for bn in $failed_now; do n_failed_run=$((n_failed_run + 1)) && failed_run="$failed_run $bn"; done
	if [ -n "$failed_now" ] && [ -z "$halt" ] &&
		{ [ "$canary" = 1 ] || { [ "$max_failures" -gt 0 ] && [ "$n_failed_run" -ge "$max_failures" ]; }; }; then
		halt=$failed_run
		if [ "$canary" = 1 ]; then
			what="the canary failed (${failed_run# })"
		else
			what="$n_failed_run node(s) failed (${failed_run# }), -k $max_failures"
		fi
		[ -z "$under" ] || say "$what: no node starts after it; the node(s) under way (${under# }) go on to their end"
	fi
done
if [ -n "$halt" ]; then
	if [ "$canary_short" = 1 ]; then
		say "stopped: the canary did not go through: ${halt# } not DONE (skipped or left); the other nodes are left as they are"
	elif [ "$canary" = 1 ]; then
		say "stopped: the canary failed: ${halt# }; the other nodes are left as they are"
	else
		say "stopped: ${halt# } failed (-k $max_failures); the nodes not started are left as they are"
	fi
	if [ "$canary_short" = 1 ]; then
		say "see why (pdb-check -s, drv-states.sh), then run it again: $rerun"
	else
		say "see why (drv-states.sh, the nodes' logs), then resume, past the failed: $resume"
	fi
	stopped=1
	stop_why="${halt# } not through"
fi

# The end: every node of the rollout done, or left out by its skip label, is
# exit 0; anything else (failed, skipped for its budgets, left) exit 1.
facts_or_die
rc=0
[ "$stopped" = 0 ] || rc=1
[ "$(count DONE SKIP)" -eq "$total" ] || rc=1
summary "$rc"
