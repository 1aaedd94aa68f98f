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
usage_line="usage: $prog [-cDfL] [-U field=value]... [-l selector] [-p max-parallel] [-u max-unavailable] [-C canary-count | -S canary-selector] [-k max-failures] [-m matrix | -r repository [-I]] [-t drain-timeout] [-g validate-timeout] [-w budget-wait] [-j job-selector [-J job-timeout]] [-V gate-manifest [-G gate-timeout] [-e gate-namespace]] [-n driver-namespace] [-s driver-selector] [-o log-dir] [-M metrics-file] version"

# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"; . "$lib/lease.sh"; . "$lib/files.sh"

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
eval "set -- $(gpudrv_opts 'l:selector p:max-parallel u:max-unavailable m:matrix r:registry t:drain-timeout g:validate-timeout J:wait-timeout j:wait-for w:budget-wait n:driver-namespace s:driver-selector o:log-dir M:metrics U:policy C:canary S:canary-selector k:max-failures V:gate G:gate-timeout e:gate-namespace' "$@")"
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

# A rollout lasts as long as its nodes take: a week unless GPUDRV_TIMEOUT
# says otherwise; three request timeouts kept to report where nodes stand.
gpudrv_start 604800 3
[ -n "$logdir" ] || { logdir=$tmp/logs && mkdir "$logdir"; }

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
# from the nodes' facts, DRAWS, the nodes under way ($tmp/running) and those
# this run is done with ($tmp/gone), and the budgets each node under way
# drew on when it started ($tmp/held: until its evicted pods' replacements
# are Ready, such a budget allows none, and a node that needs it waits
# rather than counts blocked): which nodes start now (START node tag),
# which wait and for what (WAIT node parallel|unavailable|budget B), whose
# drain would be refused even alone (BLOCKED), and what the others are
# (DONE, SKIP, FAILED); with -D the whole rollout, as if the nodes ended in
# the order they started.
plan() {
	"$planner" ${3:+"$3"} -v "$version" -y "$tmp/policy" -s "${plan_scope:-$tmp/sel}" -r "$tmp/running" \
		-k "$tmp/held" -g "$tmp/gone" "$tmp/facts" "$2" >"$1" 2>"$tmp/plan.err" && return 0
	say "the planner cannot decide:"
	sed 's/^/    /' "$tmp/plan.err" >&2 || :
	return 2
}

# decide: the plan of this moment into $tmp/plan, each node it starts, finds
# blocked or begins waiting for a budget judged on its pods as they are now.
# A node's draws in $tmp/draws may be those of an earlier look (evicted
# pods land on other nodes): the pods of each node the plan acts on are
# read again (GET its pods, field-selected; the budgets once a decision),
# its lines of $tmp/draws replaced and every budget's allowed count set to
# the one just read, and the plan made again, until it acts on no node
# judged on an older look.  A node that goes on waiting for the budget its
# wait record named ($tmp/wait.NODE) is not read again for it: it is when
# it would start, or be found blocked.  $tmp/judged.NODE: the budgets and
# the pods of a node read now, as drv-upgrade.sh takes them (-b).
decide() {
	: >"$tmp/fresh"
	rm -f "$tmp/budgets"
	while :; do
		plan "$tmp/plan" "$tmp/draws" || stop_rollout 2
		awk -v dir="$tmp" 'FILENAME == ARGV[1] { f[$1] = 1; next }
			$1 == "WAIT" && $3 == "budget" {
				b = ""
				w = dir "/wait." $2
				if ((getline b <w) > 0 && b == $4) { close(w); next }
				close(w)
			}
			($1 == "START" || $1 == "BLOCKED" || ($1 == "WAIT" && $3 == "budget")) && !($2 in f) { print $2 }' \
			"$tmp/fresh" "$tmp/plan" >"$tmp/stale"
		[ -s "$tmp/stale" ] || return 0
		if [ ! -f "$tmp/budgets" ] && ! get_list "$tmp/budgets" /apis/policy/v1/poddisruptionbudgets; then
			say "cannot list the budgets"
			stop_rollout 2
		fi
		cp "$tmp/budgets" "$tmp/pp"
		while read -r bn; do
			if ! get_list "$tmp/pods.$bn" "/api/v1/pods?fieldSelector=spec.nodeName%3D$bn"; then
				say "cannot list the pods on $bn"
				stop_rollout 2
			fi
			cat "$tmp/budgets" "$tmp/pods.$bn" >"$tmp/judged.$bn"
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

# out LINE...: the rollout's record on standard output; a write error stops it.
out() {
	printf '%s\n' "$@" >>"$tmp/stdout"
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
}

# Counts for the summary.
n_started=0
n_done=0
n_failed=0
n_skipped=0
under=          # the nodes under way, one drv-upgrade.sh each
running=        # their pids
recent=         # the nodes started whose end no node list has shown yet
ended=          # those that ended at the last look

# report_cordoned: every node of the rollout that is cordoned now, and why:
# no node is left cordoned without a word.
report_cordoned() {
	[ -s "$tmp/facts" ] || return 0
	record_awk 'NR == FNR { sel[$1] = 1; next } ($f_node in sel) && $f_cordon == "cordoned" { print $f_node, $f_state }' \
		"$tmp/sel" "$tmp/facts" | while read -r cn cs; do
		case $cs in
		- | "$S_DONE") say "$cn is cordoned, as it was before (the rollout leaves it so)" ;;
		"$S_FAILED") say "$cn is CORDONED and $L_STATE=$S_FAILED: see its messages; to return it to service: kubectl uncordon $cn" ;;
		*) say "$cn is CORDONED, its upgrade under way ($L_STATE=$cs): run $prog again to finish it, or kubectl uncordon $cn" ;;
		esac
	done
}

# now_of NODE: where this run's drv-upgrade.sh of NODE last said the node
# stands ("unschedulable=... state=..."), if it did: its "node now state
# cordon" record (drv-upgrade.sh -P), on its standard output, which only it
# writes.
now_of() {
	awk -v n="$1" '$1 == n && $2 == "now" && NF == 4 {
			l = "unschedulable=" ($4 == "cordoned" ? "true" : "") " state=" ($3 == "-" ? "" : $3)
		}
		$1 == n && $2 == "now" && NF == 3 { l = "" }
		END { print l }' "$logdir/$1.out" 2>/dev/null
}

# summary STATUS: the counts from the nodes as they stand now, then exit
# STATUS.  An error before any node started says nothing on standard
# output; nor does one after which the API does not answer (no count is
# made up): then the nodes last under way are named as their runs last saw
# them.
summary() {
	if [ "$1" = 2 ] && { [ "$n_started" = 0 ] || [ "$dry_run" = 1 ]; }; then finish 2; fi
	if ! read_facts 2>/dev/null; then
		say "the API does not answer: no summary; the nodes last under way, as their runs last saw them:"
		for bn in $recent; do
			l=$(now_of "$bn")
			[ -n "$l" ] || l="$L_STATE=$(cat "$tmp/last.$bn" 2>/dev/null || echo -) (its last state line)"
			say "    $bn: $l"
		done
		say "when it answers: drv-states.sh, and $prog again to carry on"
		finish 2
	fi
	n_done=$(count DONE)
	n_failed=$(count FAILED)
	# A node of the rollout the API no longer lists (deleted, or no longer
	# a GPU node) was not upgraded by this run: said, and counted left.
	if [ -f "$tmp/scope" ]; then
		awk 'FILENAME == ARGV[1] { s[$1] = 1; next } !($1 in s)' "$tmp/sel" "$tmp/scope" >"$tmp/vanished"
		while read -r vn; do
			say "$vn: no longer listed among the GPU nodes${selector:+ matching $selector}: left as it is"
		done <"$tmp/vanished"
	fi
	total=$(grep -c . "$tmp/scope" 2>/dev/null || grep -c . "$tmp/sel") || :
	[ "$dry_run" = 1 ] || report_cordoned
	n_left=$((total - n_done - n_failed - n_skipped))
	[ "$n_left" -ge 0 ] || n_left=0
	under=
	[ "$dry_run" = 1 ] || metrics_write
	if [ "$dry_run" = 1 ]; then
		out "plan: upgrade $n_started done $n_done failed $n_failed skipped $n_skipped left $((n_left - n_started))"
	else
		out "done $n_done failed $n_failed skipped $n_skipped left $n_left"
	fi
	finish "$1"
}

# stop_rollout STATUS: ends the run; the nodes under way are stopped first.
stop_rollout() {
	stop_running
	summary "$1"
}
abort() {
	say "$1"
	stop_running
	summary 2
}

# stop_running: TERM to every drv-upgrade.sh under way; each puts its node
# where a rerun takes it up (-R) and says so; then their last states, as
# they said them.
stop_running() {
	[ -n "$running" ] || return 0
	stopping
	for p in $running; do kill -TERM "$p" 2>/dev/null || :; done
	for p in $running; do
		gpudrv_child=$p
		gpudrv_wait 2>/dev/null || :
	done
	running=
	progress
	for bn in $under; do
		l=$(now_of "$bn")
		[ -n "$l" ] || continue
		say "$bn: now: $l"
		st=${l##*state=}
		case $l in *"state="*) ;; *) continue ;; esac
		[ "$st" = "$(cat "$tmp/last.$bn" 2>/dev/null)" ] || out "$bn ${st:--}"
	done
}

# progress: the state changes the drv-upgrade.sh runs under way recorded
# since the last look, one "node state" line each: their "node state"
# records (drv-upgrade.sh -P) on their standard output, which nothing else
# writes (what kubectl says goes to their standard error); only whole lines
# are read.
progress() {
	for bn in $under; do
		f=$logdir/$bn.out
		[ -f "$f" ] || continue
		whole=$(wc -l <"$f")
		seen=$(cat "$tmp/seen.$bn" 2>/dev/null || echo 0)
		LAST=$tmp/last.$bn
		export LAST
		[ "$whole" -gt "$seen" ] || continue
		awk -v from="$seen" -v to="$whole" -v node="$bn" '
			NR > from && NR <= to && NF == 2 && $1 == node { last = $2; print node, last }
			END { if (last != "") print last >ENVIRON["LAST"] }
		' "$f" >>"$tmp/stdout"
		echo "$whole" >"$tmp/seen.$bn"
	done
	[ ! -s "$tmp/stdout" ] || last_progress=$(date +%s)
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
	metrics_write
}

# metrics_write: the rollout's counts as the GPU Operator exports its own
# (gpu_operator_nodes_upgrades_*), under gpudrv_rollout_, into the -M
# textfile, replaced atomically (put_file), when they changed: the nodes
# under way, done, failed, pending (still to start), the starts the limits
# allow now, and when a node last moved.
last_progress=$(date +%s)
metrics_last=
metrics_write() {
	[ -n "$metrics" ] && [ -s "$tmp/mine" ] || return 0
	mw_under=$(echo "$under" | wc -w)
	mw_done=$(count DONE)
	mw_failed=$(count FAILED)
	# pending: the rollout's nodes neither done, failed nor skipped, that
	# this run has not started or skipped
	mw_pending=$(awk 'FILENAME == ARGV[1] { if ($1 == "DONE" || $1 == "FAILED" || $1 == "SKIP") k[$2] = 1; next }
		FILENAME == ARGV[2] { k[$1] = 1; next } !($1 in k) { n++ } END { print n + 0 }' \
		"$tmp/mine" "$tmp/gone" "$tmp/sel")
	mw_avail=$(grep -c '^START ' "$tmp/plan" 2>/dev/null) || :
	mw_now="$mw_under $mw_done $mw_failed $mw_pending ${mw_avail:-0} $last_progress"
	[ "$mw_now" != "$metrics_last" ] || return 0
	metrics_last=$mw_now
	{
		for mw in "in_progress $mw_under Nodes of the rollout under way" \
			"done $mw_done Nodes of the rollout at the new driver" \
			"failed $mw_failed Nodes of the rollout in $S_FAILED" \
			"pending $mw_pending Nodes of the rollout still to start" \
			"available ${mw_avail:-0} Nodes the limits and budgets let start at the last decision"; do
			# shellcheck disable=SC2086 # the words of one line
			set -- $mw
			mw_name=$1 mw_val=$2
			shift 2
			gauge "gpudrv_rollout_nodes_upgrades_$mw_name" "$*." "$mw_val"
		done
		gauge gpudrv_rollout_last_progress_timestamp_seconds "When a node of the rollout last changed state." "$last_progress"
	} >"$tmp/metrics"
	# Mode 0644: node_exporter reads it, whatever this run's umask.
	put_file "$tmp/metrics" "$metrics" 644 || say "warning: cannot write $metrics (-M): $why"
}

: >"$tmp/gone"
: >"$tmp/running"
: >"$tmp/held"
: >"$tmp/stdout"
: >"$tmp/draws"
total=0

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
	echo "$sn" >>"$tmp/gone"
	n_skipped=$((n_skipped + 1))
done <"$tmp/skiplabel"

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
tag_of() {
	awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/tags"
}
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
	echo "$1" >>"$tmp/gone"
	n_skipped=$((n_skipped + 1))
}

# say_left KIND: the nodes the plan's KIND lines (LEFT, WAIT) leave with
# nothing under way, said with the limit that holds them (each owner's);
# status 1 if none.
say_left() {
	left=$(grep -c "^$1 " "$tmp/plan") || :
	[ "$left" -gt 0 ] || return 1
	sed -n 's/^UNAVAILABLE //p' "$tmp/plan" | while read -r un um uo; do
		[ "$un" -ge "$um" ] || continue
		[ "$uo" != - ] || uo=
		say "$left node(s) left: $un GPU node(s)${uo:+ of $uo} are cordoned or not Ready, and maxUnavailable is $um"
	done
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

if [ "$dry_run" = 1 ]; then
	# The policy of each owner of the rollout's nodes, field by field, and
	# where each came from (upgrade-policy's lines), then the plan: all of
	# it once every read it rests on is made.
	[ "$canary" = 1 ] || read_draws
	plan_scope=
	plan "$tmp/plan" "$tmp/draws" -D || finish 2
	cp "$tmp/owned" "$tmp/stdout"
	[ "$canary" = 0 ] || sed 's/^/canary /' "$tmp/canary" >>"$tmp/stdout"
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
	# The plan's records in one pass (5,000 nodes are 5,000 lines): each
	# start numbered, each wait, and for a blocked drain pdb-check's lines
	# of the node (the plan), then "node skipped budget".
	awk 'FILENAME == ARGV[1] { if ($2 != "DRAWS" && $2 != "SKIP") why[$1] = why[$1] $0 "\n"; next }
		$1 == "START" { print "start", ++n, $2, $3 }
		$1 == "WAIT" { print "wait", $2, $3, $4 }
		$1 == "BLOCKED" { printf "%s%s skipped budget\n", why[$2], $2 }' \
		"$tmp/draws" "$tmp/plan" >"$tmp/stdout"
	emit "$tmp/stdout" 0
	n_started=$(grep -c '^START ' "$tmp/plan") || :
	n_skipped=$((n_skipped + $(grep -c '^BLOCKED ' "$tmp/plan"))) || :
	: >"$tmp/stdout"
	say_left LEFT || :
	rc=0
	[ $((n_started + $(count DONE SKIP))) -eq "$total" ] || rc=1
	summary "$rc"
fi

# A quarter of a second between looks at the nodes under way (coreutils'
# sleep takes fractions; another sleep, a second).
tick=1
! sleep 0.01 2>/dev/null || tick=0.25
# start NODE: its drv-upgrade.sh, -R so that a signal leaves a state to
# resume from; its words in its log; its state changes as they come.
start() {
	node=$1
	n_started=$((n_started + 1))
	out "start $n_started $1 $(tag_of "$1")"
	echo "$1" >>"$tmp/gone"
	awk -v n="$1" '$1 == n && $2 == "DRAWS" { print n, $3 }' "$tmp/draws" >>"$tmp/held"
	# (its records: this run's alone; -o: its log goes on from an earlier
	# run's)
	echo 0 >"$tmp/seen.$1"
	rm -f "$tmp/last.$1" "$tmp/wait.$1"
	# Each has its own deadline (its timeouts); the rollout's is enforced
	# here, by stopping the nodes under way (-R: resumable).
	(
		unset GPUDRV_TIMEOUT
		# shellcheck disable=SC2086 # quoted words, for eval
		eval "set -- $policy_u"
		[ "$force" = 0 ] || set -- -f "$@"
		[ -z "$gate_manifest" ] || set -- "$@" -V "$gate_manifest" ${gate_timeout:+-G "$gate_timeout"} ${gate_ns:+-e "$gate_ns"}
		exec "$drv_upgrade" -R -N -P ${lab:+-L} -b "$tmp/judged.$node" -O "$tmp/objects" -m "$matrix" ${drain_timeout:+-t "$drain_timeout"} \
			${validate_timeout:+-g "$validate_timeout"} ${wait_sel:+-j "$wait_sel"} ${wait_timeout:+-J "$wait_timeout"} \
			${driver_ns:+-n "$driver_ns"} ${driver_sel:+-s "$driver_sel"} "$@" \
			"$node" "$version"
	) >"$logdir/$1.out" 2>>"$logdir/$1.log" </dev/null &
	running="$running $!"
	echo "$!" >"$tmp/pid.$1"
	under="$under $1"
	recent="$recent $1"
	echo "$1" >>"$tmp/running"
}
# await SECONDS: until a node under way ends (its name into $ended), or
# SECONDS have passed (0: no limit); its state changes as they come.
await() {
	ended=
	t0=$(date +%s)
	while [ -n "$running" ]; do
		run_bg sleep "$tick"
		[ "$(time_left)" -gt 0 ] ||
			gpudrv_abort "the run's deadline came ($gpudrv_why) with$under under way"
		lease_renew
		progress
		still=
		for p in $running; do
			if kill -0 "$p" 2>/dev/null; then
				still="$still $p"
				continue
			fi
			st=0
			wait "$p" || st=$?
			for bn in $under; do
				[ "$(cat "$tmp/pid.$bn")" != "$p" ] || { echo "$st" >"$tmp/rc.$bn" && ended="$ended $bn"; }
			done
		done
		running=$still
		[ -z "$ended" ] || break
		[ "$1" = 0 ] || [ $(($(date +%s) - t0)) -lt "$1" ] || break
	done
	progress
	# The ended nodes are no longer under way.
	left_under=
	for bn in $under; do
		case " $ended " in *" $bn "*) ;; *) left_under="$left_under $bn" ;; esac
	done
	under=$left_under
	for bn in $under; do echo "$bn"; done >"$tmp/running"
}
# ended FRESH: how each node that ended did, from the node list just read
# (FRESH 1) or, the API silent, from what its run said last; the failures
# in $failed_now.
ended() {
	failed_now=
	for bn in $ended; do
		st=$(cat "$tmp/rc.$bn")
		if [ "$1" = 1 ]; then
			now=$(record_awk -v n="$bn" '$f_node == n { print $f_state }' "$tmp/facts")
			last=$(cat "$tmp/last.$bn" 2>/dev/null) || last=-
			# The state a failure path wrote without a record: said here.
			[ "${now:--}" = "$last" ] || out "$bn ${now:--}"
		fi
		[ "$st" != 0 ] || continue
		# Refused: drv-upgrade.sh stopped before it recorded a state (its own
		# look at the budgets, the image, the skip label).  Judged again at
		# the next decision, on what is then; refused twice, skipped.
		if [ "$st" = 1 ] && ! [ -e "$tmp/last.$bn" ] && ! [ -e "$tmp/refused.$bn" ]; then
			say "$bn: drv-upgrade.sh refused (exit 1); nothing was changed; judged again; its last words:"
			: >"$tmp/refused.$bn"
			grep -vxF "$bn" "$tmp/gone" >"$tmp/gone.new" || :
			mv "$tmp/gone.new" "$tmp/gone"
			awk -v n="$bn" '$1 != n' "$tmp/held" >"$tmp/held.new"
			mv "$tmp/held.new" "$tmp/held"
		elif [ "$st" = 1 ] && ! [ -e "$tmp/last.$bn" ]; then
			say "$bn: drv-upgrade.sh refused (exit 1) again; nothing was changed; skipped; its last words:"
			n_skipped=$((n_skipped + 1))
		else
			say "$bn: the upgrade failed (drv-upgrade.sh exit $st); its last words:"
			failed_now="$failed_now $bn"
		fi
		grep -v '^    ' "$logdir/$bn.log" | tail -n 6 | sed 's/^/    /' >&2 || :
	done
}

stopped=0
canary_short=0  # the canary stopped with a node of it not DONE, none failed
halt=           # -k failures (1 without -c): no node starts after them
n_failed_run=0  # the nodes this run failed
failed_run=
[ "$canary" = 1 ] || read_draws
while :; do
	if [ -z "$halt" ]; then
		decide
	else
		: >"$tmp/plan"
	fi
	now=$(date +%s)
	waiting=0
	sed -n 's/^BLOCKED //p' "$tmp/plan" >"$tmp/blocked"
	# A node no longer blocked waits afresh if it is again.
	for f in "$tmp"/blocked.*; do
		[ -e "$f" ] || continue
		grep -qxF "${f#"$tmp/blocked."}" "$tmp/blocked" || rm -f "$f"
	done
	# (A pod the policy does not let go, no budget's: no wait lifts it.)
	awk 'FILENAME == ARGV[1] { b[$1] = 1; next }
		($1 in b) && $2 != "DRAWS" && $2 != "SKIP" && $0 !~ / BLOCKS / { print $1 }' \
		"$tmp/blocked" "$tmp/draws" | sort -u >"$tmp/refused"
	while read -r bn; do
		if grep -qxF "$bn" "$tmp/refused"; then
			blocked "$bn"
			continue
		fi
		# Waited for (-w) while the others go on.
		first=$(cat "$tmp/blocked.$bn" 2>/dev/null) || { first=$now && echo "$now" >"$tmp/blocked.$bn"; }
		if [ $((now - first)) -ge "$budget_wait" ]; then
			if [ "$budget_wait" -gt 0 ]; then blocked "$bn" "(after ${budget_wait}s, -w)"; else blocked "$bn"; fi
		else
			waiting=1
		fi
	done <"$tmp/blocked"
	# The budget a node waits for, said when it starts waiting for it.
	sed -n 's/^WAIT \([^ ]*\) budget \([^ ]*\)$/\1 \2/p' "$tmp/plan" >"$tmp/bwait"
	while read -r bn bb; do
		[ "$(cat "$tmp/wait.$bn" 2>/dev/null)" = "$bb" ] || { out "wait $bn budget $bb" && echo "$bb" >"$tmp/wait.$bn"; }
		waiting=1
	done <"$tmp/bwait"
	go=$(sed -n 's/^START \([^ ]*\) .*/\1/p' "$tmp/plan")
	for bn in $go; do start "$bn"; done
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
			[ "$(time_left)" -gt 5 ] || gpudrv_abort "the run's deadline came ($gpudrv_why) while nodes waited for their budgets"
			nap 5
			lease_renew
			facts_or_die
			continue
		fi
		! say_left WAIT || stopped=1
		break
	fi
	# Until a node ends; while a node waits for a budget (or a drain the
	# budgets refuse), a new look every 5 seconds as well.
	wake=0
	[ "$waiting" = 0 ] || [ -n "$halt" ] || wake=5
	await "$wake"
	if [ -z "$ended" ]; then
		[ -n "$under" ] || continue
		facts_or_die
		continue
	fi
	fresh=1
	read_facts || fresh=0
	ended "$fresh"
	if [ "$fresh" = 0 ]; then
		say "cannot list the GPU nodes after${ended} ended"
		stop_rollout 2
	fi
	recent=$under
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
fi

# The end: every node of the rollout done, or left out by its skip label, is
# exit 0; anything else (failed, skipped for its budgets, left) exit 1.
facts_or_die
rc=0
[ "$stopped" = 0 ] || rc=1
[ "$(count DONE SKIP)" -eq "$total" ] || rc=1
summary "$rc"
