# report.sh: what drv-rollout.sh says: its records on standard output, the
# nodes it leaves cordoned, the summary it ends with, the -M textfile, and
# the webhook's messages (-N) (POSIX sh; sourced by drv-rollout.sh only,
# after runtime.sh, node.sh, files.sh and table.sh).  It reads the caller's $tmp, $logdir, $metrics,
# $dry_run, $selector, $prog, the counts ($n_started, $n_done, $n_failed,
# $n_skipped, $total) and the table ($under, $tmp/table).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# out LINE...: the rollout's record on standard output, once; a write error
# stops it.
out() {
	gpudrv_hold
	printf '%s\n' "$@" >>"$tmp/stdout"
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
	gpudrv_release
}

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
		table_awk '$t_pid != "." { print $t_node, $t_state }' "$tmp/table" >"$tmp/recent"
		while read -r bn bs; do
			l=$(now_of "$bn")
			[ "$bs" != . ] || bs=-
			[ -n "$l" ] || l="$L_STATE=$bs (its last state line)"
			say "    $bn: $l"
		done <"$tmp/recent"
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
		if [ -n "$stop_why" ] || [ "$1" = 2 ]; then
			notify stop "stopped: ${stop_why:-an error (its stderr says which)}; done $n_done failed $n_failed skipped $n_skipped left $n_left (exit $1)"
		else
			notify end "ended: done $n_done failed $n_failed skipped $n_skipped left $n_left (exit $1)"
		fi
	fi
	finish "$1"
}

# dry_run_plan: -D's output, and its end: the policy of each owner of the
# rollout's nodes, field by field, and where each came from
# (upgrade-policy's lines), the canary, the gates it would apply
# (pace_show), then the plan: all of it once every read it rests on is
# made.
dry_run_plan() {
	[ "$canary" = 1 ] || read_draws
	plan_scope=
	plan "$tmp/plan" "$tmp/draws" -D || finish 2
	cp "$tmp/owned" "$tmp/stdout"
	[ "$canary" = 0 ] || sed 's/^/canary /' "$tmp/canary" >>"$tmp/stdout"
	pace_show >>"$tmp/stdout" || finish 2
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
}

# stop_rollout STATUS: ends the run; the nodes under way are stopped first.
stop_rollout() {
	stop_running
	summary "$1"
}
abort() {
	say "$1"
	stop_why=$1
	stop_running
	summary 2
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
	mw_pending=$(table_awk 'FILENAME == ARGV[1] { if ($1 == "DONE" || $1 == "FAILED" || $1 == "SKIP") k[$2] = 1; next }
		FILENAME == ARGV[2] { if ($t_gone == 1) k[$t_node] = 1; next } !($1 in k) { n++ } END { print n + 0 }' \
		"$tmp/mine" "$tmp/table" "$tmp/sel")
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

# notify EVENT TEXT [NODE]: a message to the webhook (-N URL), if one is
# named: a POST of {"text": "gpudrv: ROLLOUT: TEXT", "gpudrv": {"event":
# EVENT, "version", "cluster", "node": NODE}}, the body that
# Slack's and Teams' incoming webhooks take (they read text).  EVENT: start,
# failed, skipped, stop, end.  Sent with curl, bounded as every request is
# and by GPUDRV_NOTIFY_TIMEOUT seconds (default 10); one that fails is said
# on stderr and changes nothing else, and after one that timed out no other
# is sent (a webhook that hangs must not pace the rollout).
notify_url= # -N
notify_t=
stop_why=
notify_off=
# notify_option -N URL: the webhook, and GPUDRV_NOTIFY_TIMEOUT, checked.
notify_option() {
	need_arg "$@"
	check_value "$1" "$2" "a webhook's URL (https://...)"
	notify_url=$2
	notify_t=$(secs "${GPUDRV_NOTIFY_TIMEOUT:-10}") ||
		misuse "GPUDRV_NOTIFY_TIMEOUT takes seconds (10, 10s, 1m), not '$GPUDRV_NOTIFY_TIMEOUT'"
}
notify() {
	[ -n "$notify_url" ] && [ -z "$notify_off" ] && [ "$dry_run" = 0 ] || return 0
	# (The event, the version and a node's name need no quoting.)
	printf '{"text":"%s","gpudrv":{"event":"%s","version":"%s","cluster":"%s"%s}}\n' \
		"$(quoted "gpudrv: $prog $version on ${server:-the cluster}: $2")" "$1" "$version" "$(quoted "${server:-}")" \
		"${3:+,\"node\":\"$3\"}" >"$tmp/notify.json"
	nf_rt=$gpudrv_rt
	[ "$gpudrv_rt" -le "$notify_t" ] || gpudrv_rt=$notify_t
	nf_lim=$gpudrv_rt
	nf_st=0
	# The URL (a webhook's is its secret) in a config file of the run's own
	# directory, not on a command line every user can read.
	printf 'url = "%s"\n' "$(quoted "$notify_url")" >"$tmp/notify.curlrc"
	push "$tmp/notify.code" "$tmp/notify.err" -sS -X POST -H 'Content-Type: application/json' \
		--data-binary "@$tmp/notify.json" -o "$tmp/notify.body" -w '%{http_code}' -K "$tmp/notify.curlrc" || nf_st=$?
	gpudrv_rt=$nf_rt
	nf_code=$(cat "$tmp/notify.code" 2>/dev/null) || nf_code=
	if [ "$nf_st" = 0 ]; then
		case $nf_code in 2[0-9][0-9]) return 0 ;; esac
		say "warning: the webhook (-N) refused the $1 message: HTTP ${nf_code:-status unknown}; it said: $(head -c 200 "$tmp/notify.body" | tr -c '[:print:]' ' ')"
		return 0
	fi
	say "warning: cannot send the $1 message to the webhook (-N) (curl exit $nf_st): $(tail -n 1 "$tmp/notify.err" | cut -c1-200)"
	[ "$nf_st" != 28 ] || { notify_off=1 && say "warning: the webhook (-N) did not answer in ${nf_lim}s: no other message is sent"; }
}
