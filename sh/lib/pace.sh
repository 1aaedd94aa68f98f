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
# LOCAL"); status 1 when the window is closed, 2 when time-window cannot
# tell (why on its standard error, in $tmp/window.err).
window_now() {
	set -f
	pw=0
	# shellcheck disable=SC2086 # checked words (pace_check)
	pace_w=$("$time_window" $pace_words 2>"$tmp/window.err") || pw=$?
	set +f
	[ "$pw" -le 1 ] || pw=2
	return "$pw"
}

# shown URL: URL without the user and password it may hold, for messages.
shown() {
	printf '%s' "$1" | sed 's|://[^/@]*@|://|'
}

# alerts_now: the alerts that hold the rollout now into $tmp/alerts (a line
# each, alert-gate's); status 0 none, 1 some, 2 cannot tell (why in
# $pace_err, and what does not change from one try to the next in
# $pace_errkey).  One GET of /api/v1/alerts, bounded as every request is,
# its URL in a config file (it may hold a password), read by alert-gate.
alerts_now() {
	printf 'url = "%s"\n' "$(quoted "$prom_url/api/v1/alerts")" >"$tmp/prom.curlrc"
	an=0
	push "$tmp/alerts.json" "$tmp/alerts.err" -sS -g -K "$tmp/prom.curlrc" || an=$?
	if [ "$an" != 0 ]; then
		pace_err="GET $(shown "$prom_url")/api/v1/alerts failed (curl exit $an): $(tail -n 1 "$tmp/alerts.err" | cut -c1-200)"
		pace_errkey="curl $an"
		return 2
	fi
	ag=0
	"$alert_gate" ${alert_re:+-r "$alert_re"} ${alert_match#0} ${alert_firing#0} "$tmp/alerts.json" >"$tmp/alerts" 2>"$tmp/alerts.err" || ag=$?
	[ "$ag" -le 1 ] && return "$ag"
	ag_said=$(sed -n '$s/^alert-gate: //p' "$tmp/alerts.err")
	pace_err="the answer of $(shown "$prom_url")/api/v1/alerts: $(printf '%s' "$ag_said" | cut -c1-300)"
	pace_errkey="answer $ag_said"
	return 2
}

# pods_now: the nodes on which pods that -B picks run, into $tmp/podheld
# (node namespace/pod, a line each, the node's first pod); status 2 when a
# list cannot be read whole, what was said of it in $tmp/pods.said.
# kured's rule: every namespace, pods not Succeeded, Failed or Unknown;
# selectors ORed.
pods_now() {
	: >"$tmp/podheld.all"
	printf '%s' "$block_sel" >"$tmp/podsel"
	while IFS= read -r ps; do
		get_pods "$tmp/blockpods" "the pods matching $ps (-B)" \
			"/api/v1/pods?labelSelector=$(urlencode "$ps")&fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed%2Cstatus.phase%21%3DUnknown" \
			2>"$tmp/pods.said" || return 2
		cat "$tmp/blockpods" >>"$tmp/podheld.all"
	done <"$tmp/podsel"
	awk '$1 != "-" && !seen[$1]++ { print $1, $2 }' "$tmp/podheld.all" >"$tmp/podheld"
}

# pace_decide: decide (look.sh), then the gates on the nodes the plan would
# start: the window, the soak, the alerts (no node starts, the plan's START
# lines go), then the blocking pods (the plan is made again without their
# nodes, which other nodes may then take the place of).  Sets $pace_hold,
# $pace_wake and $pace_waits (what the run waits for, for the deadline's
# message).  What holds the starts is said when it begins (its key,
# $pace_key, changes), not at each look.
pace_decide() {
	: >"$tmp/podheld"
	plan_without=
	decide
	pace_hold=0
	pace_wake=5
	pace_why=
	pace_key=
	pace_closed=0
	now=$(date +%s)
	if grep -q '^START ' "$tmp/plan"; then
		ws=0
		[ -z "$window" ] || window_now || ws=$?
		if [ "$ws" = 1 ]; then
			# shellcheck disable=SC2086 # time-window's three words
			set -- $pace_w
			pace_why="the window ($window) is closed: it opens at $3"
			pace_key="window $2"
			pace_wake=$(($2 - now))
			pace_closed=1
		elif [ "$ws" = 2 ]; then
			pace_why="it cannot tell whether the window ($window) is open: $(sed -n '$s/^time-window: //p' "$tmp/window.err")"
			pace_key="window unknown"
			pace_wake=$pace_period
		elif [ -n "$pace_last" ] && [ $((pace_last + soak - now)) -gt 0 ]; then
			pace_why="the soak (-Z ${soak}s) after $pace_last_node ended runs until $(date -d "@$((pace_last + soak))" '+%Y-%m-%dT%H:%M:%S%z')"
			pace_key="soak $pace_last"
			pace_wake=$((pace_last + soak - now))
		elif [ -n "$prom_url" ]; then
			as=0
			alerts_now || as=$?
			pace_wake=$pace_period
			case $as in
			1)
				# The names once each, sorted, with their states (kured's).
				pace_why="alert(s) fire ($(awk '{ n = $0; sub(/ [^ ]+ [^ ]+$/, "", n); print n " is " $(NF - 1) }' "$tmp/alerts" |
					sort -u | head -n 5 | tr '\n' ',' | sed 's/,$//; s/,/, /g'))"
				pace_key="alerts $pace_why"
				;;
			2)
				pace_why="it cannot tell whether alerts fire: $pace_err"
				pace_key="alerts unknown $pace_errkey"
				;;
			esac
		fi
	fi
	if [ -z "$pace_why" ] && [ -n "$block_sel" ] && grep -q '^START ' "$tmp/plan"; then
		if pods_now; then
			# The nodes to start that such pods hold, each said once.
			awk 'FILENAME == ARGV[1] { h[$1] = $2; next }
				$1 == "START" && ($2 in h) { print $2, h[$2] }' "$tmp/podheld" "$tmp/plan" >"$tmp/podstart"
			if [ -s "$tmp/podstart" ]; then
				while read -r pn pp; do
					grep -qxF "$pn" "$tmp/podheld.names" 2>/dev/null ||
						say "$pn: $pp and maybe more pods that -B picks run on it: not started; judged again at each decision"
				done <"$tmp/podstart"
				# (the nodes held now: passed over by the plan, and not
				# named again at the next decision while they stay held)
				cut -d' ' -f1 "$tmp/podheld" >"$tmp/podheld.names"
				plan_without=$tmp/podheld.names
				decide
				plan_without=
			fi
		else
			pace_why="it cannot tell which nodes pods that -B picks run on"
			pace_key="pods unknown $(tail -n 1 "$tmp/pods.said")"
			pace_wake=$pace_period
		fi
	fi
	pace_waits=
	# A node held by its pods, still to upgrade, keeps the run waiting for
	# it.
	if [ -s "$tmp/podheld" ] && awk 'FILENAME == ARGV[1] { h[$1] = 1; next }
		FILENAME == ARGV[2] { if ($1 == "DONE" || $1 == "SKIP" || $1 == "FAILED") d[$2] = 1; next }
		($1 in h) && !($1 in d)' "$tmp/podheld" "$tmp/mine" "$tmp/todo" | grep -q .; then
		pace_hold=1
		pace_waits="for pods that -B picks to leave their node"
		grep -q -e '^WAIT .* budget ' -e '^BLOCKED ' "$tmp/plan" || pace_wake=$pace_period
	fi
	[ "$pace_wake" -ge 1 ] || pace_wake=1
	if [ -z "$pace_why" ]; then
		pace_said=
		return 0
	fi
	pace_hold=1
	pace_waits=$pace_why
	sed '/^START /d' "$tmp/plan" >"$tmp/plan.held" && mv "$tmp/plan.held" "$tmp/plan"
	if [ "$pace_key" != "$pace_said" ]; then
		say "no node starts: $pace_why${under:+ (the nodes under way go on)}"
		[ ! -s "$tmp/pods.said" ] || [ "${pace_key#pods unknown}" = "$pace_key" ] || sed 's/^/    /' "$tmp/pods.said" >&2
	fi
	pace_said=$pace_key
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
		ws=0
		window_now || ws=$?
		[ "$ws" -le 1 ] || { cat "$tmp/window.err" >&2 && return 2; }
		echo "window $pace_words $pace_w"
	fi
	[ "$soak" = 0 ] || echo "soak $soak"
	if [ -n "$block_sel" ]; then
		printf '%s' "$block_sel" | sed 's/^/blocking-pods /'
		pods_now || { cat "$tmp/pods.said" >&2 && return 2; }
		awk 'FILENAME == ARGV[1] { t[$1] = 1; next } ($1 in t) { print "blocking", $1, $2 }' "$tmp/todo" "$tmp/podheld"
	fi
	[ -n "$prom_url" ] || return 0
	ps="alerts $(shown "$prom_url")"
	[ "$alert_firing" = 0 ] || ps="$ps firing-only"
	if [ -n "$alert_re" ]; then
		if [ "$alert_match" != 0 ]; then ps="$ps only $alert_re"; else ps="$ps ignore $alert_re"; fi
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
# until they are worth judging again ($pace_wake seconds) or the budgets'
# waker ends (bw_arm), the lease renewed meanwhile, never within 5 seconds
# of the deadline (the caller says it came).
pace_sleep() {
	ps_w=$pace_wake
	# (0: until the waker ends, which its watch's end bounds)
	[ "$ps_w" != 0 ] || ps_w=$((bw_resync + 5))
	ps_until=$(($(date +%s) + ps_w))
	while [ "$(time_left)" -gt 5 ]; do
		ps_n=$((ps_until - $(date +%s)))
		[ "$ps_n" -gt 0 ] || return 0
		[ "$ps_n" -le 10 ] || ps_n=10
		[ -z "$bw_pid" ] || ps_n=1
		nap "$ps_n"
		lease_renew
		! bw_ended || return 0
	done
}
