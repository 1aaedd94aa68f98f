# table.sh: drv-rollout.sh's one table of the nodes it has acted on, and
# the drv-upgrade.sh runs it keeps under way: start, await, progress,
# ended, stop_running (POSIX sh; sourced by drv-rollout.sh only, after
# runtime.sh, node.sh and report.sh).  It reads the caller's $tmp, $logdir,
# $tick, $version, $matrix, $tmp/draws and the options passed on to
# drv-upgrade.sh; it sets $under, $under_pids, $ended and $failed_now.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# $tmp/table: a line a node, its fields in the order of $table_fields, "."
# for none (never a label value, nor drv-upgrade.sh's "-": a state
# removed).  Its one writer is table_apply; a row moves last when its node
# starts, so the table is in the order the nodes started.
#   node     the node's name
#   pid      its drv-upgrade.sh, until a node list has shown its end
#   state    the last upgrade state its run said (drv-upgrade.sh -P)
#   wait     the budget it was last said to wait for ("wait NODE budget B")
#   since    when the plan first found its drain blocked, while it is
#   refused  1: its drv-upgrade.sh refused once (judged again; twice: skipped)
#   seen     the lines of its run's standard output read so far
#   rc       its run's exit status, once it ended
#   gone     1: this run is done with it (started, skipped), rollout-plan -g
#   held     the budgets it drew on when it started (comma-separated)
table_fields="node pid state wait since refused seen rc gone held"
awk_columns t "$table_fields"
gpudrv_tv=$awk_columns

# table_awk ARGS...: awk ARGS (LC_ALL=C), its program given each field's
# number as t_NAME ($t_pid is the pid).
table_awk() {
	# shellcheck disable=SC2086 # the -v words
	LC_ALL=C awk $gpudrv_tv "$@"
}

# table_apply: the changes on standard input, a line each, "NODE
# FIELD=VALUE...", into the table (a node not yet in it is added, its other
# fields "."; a change of pid moves its row last); an unknown field is the
# program error it is (exit 2).
table_apply() {
	table_awk -v fields="$table_fields" '
	BEGIN { nf = split(fields, F, " "); for (i = 1; i <= nf; i++) col[F[i]] = i }
	FILENAME == "-" {
		if (!($1 in touched)) { touched[$1] = 1; order[++n] = $1 }
		for (i = 2; i <= NF; i++) {
			e = index($i, "=")
			c = e > 1 ? col[substr($i, 1, e - 1)] : 0
			if (c < 2) { print "table_apply: no field " $i >"/dev/stderr"; bad = 1; exit 2 }
			v[$1, c] = e == length($i) ? "." : substr($i, e + 1)
			if (c == t_pid) moved[$1] = 1
		}
		next
	}
	{
		k = $t_node
		if (k in touched) { for (i = 2; i <= nf; i++) if ((k, i) in v) $i = v[k, i]; done[k] = 1 }
		if (k in moved) row[k] = $0; else print
	}
	END {
		if (bad) exit 2
		for (j = 1; j <= n; j++) {
			k = order[j]
			if (k in row) { print row[k]; continue }
			if (k in done) continue
			r = k
			for (i = 2; i <= nf; i++) r = r " " ((k, i) in v ? v[k, i] : ".")
			print r
		}
	}' - "$tmp/table" >"$tmp/table.new" && mv "$tmp/table.new" "$tmp/table"
}
# table_set NODE FIELD=VALUE...: one node's change.
table_set() {
	printf '%s\n' "$*" | table_apply
}
# table_read NODE: NODE's row into tr_node, tr_pid, ... (tr_ and each name
# of $table_fields, in its order: t/0010-house.t checks it), "." each when
# it has none.
table_read() {
	table_awk -v n="$1" '$t_node == n { print; exit }' "$tmp/table" >"$tmp/row"
	tr_node=. tr_pid=. tr_state=. tr_wait=. tr_since=. tr_refused=. tr_seen=. tr_rc=. tr_gone=. tr_held=.
	[ ! -s "$tmp/row" ] || read -r tr_node tr_pid tr_state tr_wait tr_since tr_refused tr_seen tr_rc tr_gone tr_held _ <"$tmp/row"
}
# table_under: the nodes under way (a run started, its end not yet seen),
# in the order they started, into $under, and "node=pid" words into
# $under_pids.
table_under() {
	under_pids=$(table_awk '$t_pid != "." && $t_rc == "." { printf " %s=%s", $t_node, $t_pid }' "$tmp/table")
	under=$(table_awk '$t_pid != "." && $t_rc == "." { printf " %s", $t_node }' "$tmp/table")
}
# table_plan: what rollout-plan reads of the table (rollout-plan(1)): the
# nodes under way ($tmp/running, -r), those this run is done with
# ($tmp/gone, -g), and the budgets each drew on when it started
# ($tmp/held, -k).
table_plan() {
	table_awk -v r="$tmp/running" -v g="$tmp/gone" -v h="$tmp/held" '
		BEGIN { printf "" >r; printf "" >g; printf "" >h }
		$t_pid != "." && $t_rc == "." { print $t_node >r }
		$t_gone == 1 { print $t_node >g }
		$t_held != "." { k = split($t_held, b, ","); for (i = 1; i <= k; i++) print $t_node, b[i] >h }' "$tmp/table"
}

# start NODE: its drv-upgrade.sh, -R so that a signal leaves a state to
# resume from; its words in its log; its state changes as they come.
start() {
	node=$1
	n_started=$((n_started + 1))
	out "start $n_started $1 $(awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/tags")"
	held=$(awk -v n="$1" '$1 == n && $2 == "DRAWS" { printf "%s%s", s, $3; s = "," }' "$tmp/draws")
	# A link where the node's log goes (-o: the user's own directory) is
	# replaced by the log, never written through.
	for f in "$logdir/$1.out" "$logdir/$1.log"; do [ ! -h "$f" ] || rm -f -- "$f"; done
	# Each has its own deadline (its timeouts); the rollout's is enforced
	# here, by stopping the nodes under way (-R: resumable).  (Its records:
	# this run's alone; -o: its log goes on from an earlier run's.)
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
	) >"$logdir/$1.out" 2>>"$logdir/$1.log" </dev/null 7>&- 8>&- &
	# Known to a signal's handler (stop_running) at once: a trap runs once
	# the command under way ends, and table_set's awk may be that command.
	under="$under $1"
	under_pids="$under_pids $1=$!"
	table_set "$1" pid=$! state=. wait=. seen=0 rc=. gone=1 "held=$held"
	table_under
}

# await SECONDS: until a node under way ends (its name into $ended, its
# exit status into the table), or the budgets' waker ends (look.sh's
# bw_ended), or SECONDS have passed (0: no limit); its state changes as
# they come.
await() {
	ended=
	t0=$(date +%s)
	while [ -n "$under" ]; do
		run_bg sleep "$tick"
		[ "$(time_left)" -gt 0 ] ||
			gpudrv_abort "the run's deadline came ($gpudrv_why) with$under under way"
		lease_renew
		progress
		: >"$tmp/ended"
		for np in $under_pids; do
			p=${np#*=}
			! kill -0 "$p" 2>/dev/null || continue
			st=0
			wait "$p" || st=$?
			echo "${np%%=*} rc=$st" >>"$tmp/ended"
			ended="$ended ${np%%=*}"
		done
		[ -z "$ended" ] || break
		! bw_ended || break
		[ "$1" = 0 ] || [ $(($(date +%s) - t0)) -lt "$1" ] || break
	done
	progress
	# The ended nodes are no longer under way.
	[ -z "$ended" ] || { table_apply <"$tmp/ended" && table_under; }
}

# progress: the state changes the drv-upgrade.sh runs under way recorded
# since the last look, one "node state" line each: their "node state"
# records (drv-upgrade.sh -P) on their standard output, which nothing else
# writes (what kubectl says goes to their standard error); only whole lines
# are read (wc -l counts them), each run's last state into the table.  A
# signal is held until they are printed and counted seen: the way out
# would print them again.
progress() {
	gpudrv_hold
	set --
	pn=
	for bn in $under; do
		[ ! -f "$logdir/$bn.out" ] || { set -- "$@" "$logdir/$bn.out" && pn="$pn $bn"; }
	done
	if [ $# -gt 0 ]; then
		wc -l "$@" >"$tmp/whole"
		rm -f "$tmp/seen"
		GPUDRV_LOGDIR=$logdir table_awk -v names="$pn" -v upd="$tmp/seen" '
			BEGIN { k = split(names, N, " ") }
			FILENAME == ARGV[1] { seen[$t_node] = $t_seen + 0; next }
			FNR > k { next }
			{
				n = N[FNR]
				w = $1 + 0
				if (w <= seen[n]) next
				f = ENVIRON["GPUDRV_LOGDIR"] "/" n ".out"
				last = ""
				for (i = 1; i <= w && (getline l <f) > 0; i++)
					if (i > seen[n] && split(l, x, " ") == 2 && x[1] == n) { last = x[2]; print n, last }
				close(f)
				printf "%s seen=%d%s\n", n, w, last == "" ? "" : " state=" last >upd
			}' "$tmp/table" "$tmp/whole" >>"$tmp/stdout"
		[ ! -f "$tmp/seen" ] || table_apply <"$tmp/seen"
	fi
	[ ! -s "$tmp/stdout" ] || last_progress=$(date +%s)
	emit "$tmp/stdout" 0
	: >"$tmp/stdout"
	gpudrv_release
	metrics_write
}

# ended FRESH: how each node that ended did, from the node list just read
# (FRESH 1: then its end is seen, and its row no longer under way) or, the
# API silent, from what its run said last; the failures in $failed_now.
ended() {
	failed_now=
	for bn in $ended; do
		table_read "$bn"
		if [ "$1" = 1 ]; then
			now=$(record_awk -v n="$bn" '$f_node == n { print $f_state }' "$tmp/facts")
			# The state a failure path wrote without a record: said here.
			last=$tr_state
			[ "$last" != . ] || last=-
			[ "${now:--}" = "$last" ] || out "$bn ${now:--}"
			table_set "$bn" pid=.
		fi
		[ "$tr_rc" != 0 ] || continue
		# Refused: drv-upgrade.sh stopped before it recorded a state (its own
		# look at the budgets, the image, the skip label).  Judged again at
		# the next decision, on what is then; refused twice, skipped.
		if [ "$tr_rc" = 1 ] && [ "$tr_state" = . ] && [ "$tr_refused" = . ]; then
			say "$bn: drv-upgrade.sh refused (exit 1); nothing was changed; judged again; its last words:"
			table_set "$bn" refused=1 gone=. held=.
			ev=
		elif [ "$tr_rc" = 1 ] && [ "$tr_state" = . ]; then
			say "$bn: drv-upgrade.sh refused (exit 1) again; nothing was changed; skipped; its last words:"
			n_skipped=$((n_skipped + 1))
			ev=skipped
		else
			say "$bn: the upgrade failed (drv-upgrade.sh exit $tr_rc); its last words:"
			failed_now="$failed_now $bn"
			ev=failed
		fi
		grep -v '^    ' "$logdir/$bn.log" | tail -n 6 | sed 's/^/    /' >&2 || :
		# A failure, or a second refusal, told to the webhook (-N).
		if [ -n "$ev" ]; then
			es=${tr_state#.}
			[ "$1" = 0 ] || es=$now
			notify "$ev" "$bn: $ev ($L_STATE=${es:--}): $(grep -v -e '^    ' -e "^[^ ]*: $bn: now: " "$logdir/$bn.log" | tail -n 1 | cut -c1-300)" "$bn"
		fi
	done
}

# stop_running: TERM to every drv-upgrade.sh under way; each puts its node
# where a rerun takes it up (-R) and says so; then their last states, as
# they said them.
stop_running() {
	[ -n "$under" ] || return 0
	stopping
	for np in $under_pids; do kill -TERM "${np#*=}" 2>/dev/null || :; done
	for np in $under_pids; do
		gpudrv_child=${np#*=}
		gpudrv_wait 2>/dev/null || :
	done
	progress
	for bn in $under; do
		l=$(now_of "$bn")
		[ -n "$l" ] || continue
		say "$bn: now: $l"
		st=${l##*state=}
		case $l in *"state="*) ;; *) continue ;; esac
		table_read "$bn"
		[ "$st" = "${tr_state#.}" ] || out "$bn ${st:--}"
	done
	under=
	under_pids=
}
