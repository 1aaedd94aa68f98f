# pace.sh: when drv-rollout.sh may start a node: its window (-W, -x), the
# soak after a node ends (-Z), kured's blocking pods (-B) and a
# Prometheus's alerts (-P, -A, -Q, -F) (POSIX sh; sourced by drv-rollout.sh
# only, after runtime.sh, options.sh, api.sh, files.sh and look.sh).  The
# gates are judged at each decision that would start a node, after the
# plan, before any start: a closed gate starts no node, and never stops one
# under way.  It reads the caller's $tmp, $under, $pdb_check and the plan
# ($tmp/plan); it sets $pace_hold (1: nodes could start and a gate holds
# them) and $pace_wake (seconds after which the gate is worth judging
# again).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

window=        # -W: "days start end [zone]", time-window(1)'s operands
window_exit=0  # -x: out when the window is closed and no node is under way
soak=0         # -Z: seconds after a node's end before the next start
block_sel=     # -B: label selectors, one a line (kured's, ORed)
prom_url=      # -P: a Prometheus, its /api/v1/alerts
alert_re=      # -A: alerts whose name matches are passed over...
alert_match=0  # -Q: ...or are the only ones that count
alert_firing=0 # -F: only firing alerts count, not pending ones
pace_last=     # when this run's last node ended (date +%s), and which
pace_last_node=
pace_said=     # what the gates said last: not said again while it holds
pace_hold=0
pace_wake=5
pace_out=75    # -x's exit status (sysexits' EX_TEMPFAIL: try again later)
pace_period=30 # how often a gate that holds (alerts, pods) is asked again

# pace_option OPTION VALUE: a pacing option that takes a value.
pace_option() {
	need_arg "$@"
	case $1 in
	-W | --window) window=$2 ;;
	-Z | --soak) soak=$(seconds "$2" "$1") || finish 2 ;;
	-B | --blocking-pod-selector)
		check_value "$1" "$2" "a label selector (app=training)"
		block_sel="$block_sel$2
"
		;;
	-P | --prometheus-url) check_value "$1" "$2" "a Prometheus's URL (http://prometheus:9090)"; prom_url=${2%/} ;;
	-A | --alert-filter-regexp) check_value "$1" "$2" "an extended regular expression of alert names"; alert_re=$2 ;;
	esac
}

# pace_check: the pacing options, checked together, before any request:
# the window by time-window, the expression by alert-gate.
pace_check() {
	pace_period=$(secs "${GPUDRV_GATE_PERIOD:-30}") ||
		misuse "GPUDRV_GATE_PERIOD takes seconds (30, 30s, 1m), not '$GPUDRV_GATE_PERIOD'"
	if [ -n "$alert_re" ] || [ "$alert_match$alert_firing" != 00 ]; then
		[ -n "$prom_url" ] || misuse "-A, -Q and -F filter the alerts of a Prometheus: give -P too"
	fi
	[ "$alert_match" = 0 ] || [ -n "$alert_re" ] || misuse "-Q counts only the alerts -A matches: give -A too"
	[ "$window_exit" = 0 ] || [ -n "$window" ] || misuse "-x ends the run when its window is closed: give -W too"
	if [ -n "$window" ]; then
		time_window=$(find_tool time-window) || finish 2
		set -f
		# shellcheck disable=SC2086 # the window's words, as given
		set -- $window
		set +f
		case $# in 3 | 4) ;; *) misuse "-W takes 'days start end [zone]' (mon-fri 22:00 06:00 Europe/Berlin), not '$window'" ;; esac
		pace_words=$*
		[ $# = 4 ] || pace_words="$pace_words UTC"
		why=$("$time_window" "$@" 2>&1 >/dev/null) || [ $? = 1 ] || misuse "-W: ${why#time-window: }"
	fi
	if [ -n "$prom_url" ]; then
		alert_gate=$(find_tool alert-gate) || finish 2
		why=$(echo '{"status":"success","data":{"alerts":[]}}' | "$alert_gate" ${alert_re:+-r "$alert_re"} 2>&1 >/dev/null) ||
			misuse "-A: ${why#alert-gate: }"
	fi
}

# window_now: time-window's line for now into $pace_w ("open|closed EPOCH
# LOCAL"); status 1 when the window is closed.
window_now() {
	set -f
	# shellcheck disable=SC2086 # checked words (pace_check)
	pace_w=$("$time_window" $pace_words) && { set +f && return 0; }
	set +f
	return 1
}

# alerts_now: the alerts that hold the rollout now into $tmp/alerts (a line
# each, alert-gate's); status 0 none, 1 some, 2 cannot tell (why in
# $pace_err).  One GET of /api/v1/alerts, bounded as every request is, its
# URL in a config file (it may hold a password), read by alert-gate.
alerts_now() {
	printf 'url = "%s"\n' "$(quoted "$prom_url/api/v1/alerts")" >"$tmp/prom.curlrc"
	if ! push "$tmp/alerts.json" "$tmp/alerts.err" -sS -g -K "$tmp/prom.curlrc"; then
		pace_err="GET $prom_url/api/v1/alerts failed: $(tail -n 1 "$tmp/alerts.err" | cut -c1-200)"
		return 2
	fi
	ag=0
	"$alert_gate" ${alert_re:+-r "$alert_re"} ${alert_match#0} ${alert_firing#0} "$tmp/alerts.json" >"$tmp/alerts" 2>"$tmp/alerts.err" || ag=$?
	[ "$ag" -le 1 ] && return "$ag"
	pace_err="the answer of $prom_url/api/v1/alerts: $(sed -n '$s/^alert-gate: //p' "$tmp/alerts.err" | cut -c1-300)"
	return 2
}

# pods_now: the nodes on which pods that -B picks run, into $tmp/podheld
# (node namespace/pod, a line each, the node's first pod); status 2,
# saying why, when a list cannot be read whole.  kured's rule: every
# namespace, pods not Succeeded, Failed or Unknown; selectors ORed.
pods_now() {
	: >"$tmp/podheld.all"
	printf '%s' "$block_sel" >"$tmp/podsel"
	while IFS= read -r ps; do
		get_pods "$tmp/blockpods" "the pods matching $ps (-B)" \
			"/api/v1/pods?labelSelector=$(urlencode "$ps")&fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed%2Cstatus.phase%21%3DUnknown" ||
			return 2
		cat "$tmp/blockpods" >>"$tmp/podheld.all"
	done <"$tmp/podsel"
	awk '$1 != "-" && !seen[$1]++ { print $1, $2 }' "$tmp/podheld.all" | sort >"$tmp/podheld"
}

# pace_decide: decide (look.sh), then the gates on the nodes the plan would
# start: the window, the soak, the alerts (no node starts, the plan's START
# lines go), then the blocking pods (the plan is made again without their
# nodes, which other nodes may then take the place of).  Sets $pace_hold
# and $pace_wake.
pace_decide() {
	: >"$tmp/podheld"
	plan_without=
	decide
	pace_hold=0
	pace_wake=5
	pace_why=
	pace_closed=0
	now=$(date +%s)
	if grep -q '^START ' "$tmp/plan"; then
		if [ -n "$window" ] && ! window_now; then
			# shellcheck disable=SC2086 # time-window's three words
			set -- $pace_w
			pace_why="the window ($window) is closed: it opens at $3"
			pace_wake=$(($2 - now))
			pace_closed=1
		elif [ -n "$pace_last" ] && [ $((pace_last + soak - now)) -gt 0 ]; then
			pace_why="the soak (-Z ${soak}s) after $pace_last_node ended runs until $(date -d "@$((pace_last + soak))" '+%Y-%m-%dT%H:%M:%S%z')"
			pace_wake=$((pace_last + soak - now))
		elif [ -n "$prom_url" ]; then
			as=0
			alerts_now || as=$?
			pace_wake=$pace_period
			case $as in
			1) pace_why="alert(s) fire ($(cut -d' ' -f1,2 "$tmp/alerts" | sed 's/ / is /' | head -n 5 | tr '\n' ',' | sed 's/,$//; s/,/, /g'))" ;;
			2) pace_why="it cannot tell whether alerts fire: $pace_err" ;;
			esac
		fi
	fi
	if [ -z "$pace_why" ] && [ -n "$block_sel" ] && grep -q '^START ' "$tmp/plan"; then
		if pods_now; then
			sed -n 's/^START \([^ ]*\) .*/\1/p' "$tmp/plan" | sort >"$tmp/starts"
			if [ -n "$(join "$tmp/starts" "$tmp/podheld")" ]; then
				join "$tmp/starts" "$tmp/podheld" | while read -r pn pp; do
					grep -qxF "$pn" "$tmp/podsaid" 2>/dev/null ||
						say "$pn: $pp and maybe more pods that -B picks run on it: not started; judged again at each decision"
				done
				cut -d' ' -f1 "$tmp/podheld" >"$tmp/podsaid"
				cut -d' ' -f1 "$tmp/podheld" >"$tmp/podheld.names"
				plan_without=$tmp/podheld.names
				decide
				plan_without=
			fi
		else
			pace_why="it cannot tell which nodes pods that -B picks run on"
			pace_wake=$pace_period
		fi
	fi
	# A node held by its pods, still to upgrade, keeps the run waiting for
	# it.
	if [ -s "$tmp/podheld" ] && awk 'FILENAME == ARGV[1] { h[$1] = 1; next }
		FILENAME == ARGV[2] { if ($1 == "DONE" || $1 == "SKIP" || $1 == "FAILED") d[$2] = 1; next }
		($1 in h) && !($1 in d)' "$tmp/podheld" "$tmp/mine" "$tmp/todo" | grep -q .; then
		pace_hold=1
		grep -q '^WAIT .* budget \|^BLOCKED ' "$tmp/plan" || pace_wake=$pace_period
	fi
	if [ -z "$pace_why" ]; then
		pace_said=
		return 0
	fi
	pace_hold=1
	sed '/^START /d' "$tmp/plan" >"$tmp/plan.held" && mv "$tmp/plan.held" "$tmp/plan"
	[ "$pace_why" = "$pace_said" ] || say "no node starts: $pace_why${under:+ (the nodes under way go on)}"
	pace_said=$pace_why
}

# pace_show: -D's lines of the gates the run would apply, each judged now:
# "window DAYS START END ZONE open|closed EPOCH LOCAL" (time-window's
# words), "soak SECONDS", "blocking-pods SELECTOR" for each -B and
# "blocking NODE NAMESPACE/POD" for each node of the rollout such a pod
# holds now, "alerts URL" with "firing-only", "ignore REGEXP" or "only
# REGEXP", then "alert NAME STATE SINCE" for each alert that holds now, or
# "alerts-unknown" (why on standard error).  Status 2 when the pods cannot
# be listed.
pace_show() {
	if [ -n "$window" ]; then
		window_now || :
		echo "window $pace_words $pace_w"
	fi
	[ "$soak" = 0 ] || echo "soak $soak"
	if [ -n "$block_sel" ]; then
		printf '%s' "$block_sel" | sed 's/^/blocking-pods /'
		pods_now || return 2
		awk 'FILENAME == ARGV[1] { t[$1] = 1; next } ($1 in t) { print "blocking", $1, $2 }' "$tmp/todo" "$tmp/podheld"
	fi
	[ -n "$prom_url" ] || return 0
	ps="alerts $prom_url"
	[ "$alert_firing" = 0 ] || ps="$ps firing-only"
	if [ -n "$alert_re" ]; then
		if [ "$alert_match" = 1 ]; then ps="$ps only $alert_re"; else ps="$ps ignore $alert_re"; fi
	fi
	echo "$ps"
	as=0
	alerts_now || as=$?
	if [ "$as" = 2 ]; then
		say "cannot tell whether alerts fire: $pace_err"
		echo alerts-unknown
	else
		sed 's/^/alert /' "$tmp/alerts"
	fi
}

# pace_sleep: a run with no node under way, waiting for its gates: asleep
# until they are worth judging again ($pace_wake seconds), the lease renewed
# meanwhile, never past the deadline.
pace_sleep() {
	ps_until=$(($(date +%s) + pace_wake))
	while [ "$(time_left)" -gt 0 ]; do
		ps_n=$((ps_until - $(date +%s)))
		[ "$ps_n" -gt 0 ] || return 0
		[ "$ps_n" -le 10 ] || ps_n=10
		nap "$ps_n"
		lease_renew
	done
}
