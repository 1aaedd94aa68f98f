# runtime.sh: how a gpudrv script runs (POSIX sh; sourced first, never
# run): its messages, its exits, the signals, the deadline, the commands it
# waits for, its temporary directory.  Installed in $(PREFIX)/lib/gpudrv
# with the rest of the library (HACKING.md says which file holds what).
# The script sets prog, usage_line and lib (../lib/gpudrv from its own
# directory) first, and may redefine abort after.
#
# How a script ends: only through finish (or die, usage, show_usage).  Any other
# exit, typically set -e stopping at a failed command, is caught by the EXIT
# trap and made status 2 with a message: a stray 1 would read as "findings".
# HUP, INT and TERM call abort at once: every long command (kubectl, sleep)
# runs in the background and the shell waits for it, because a shell runs a
# trap only between commands, and wait is the one a signal interrupts.
# shellcheck shell=sh disable=SC2154,SC2034 # prog, usage_line and lib are the caller's; what it sets, the caller's too

# here: the script's own directory, where find_tool looks first; taken
# from lib alone, never from the environment (a "here" exported there
# would choose which programs run).
here=${lib%/../lib/gpudrv}

# The version of gpudrv (VERSION; make writes it here), for --version.
gpudrv_version=@VERSION@

gpudrv_hooks=     # functions run on the way out, after the children stop (lease.sh adds lease_release, files.sh drop_new)
gpudrv_done=0     # 1 once finish was called: the exit is on purpose
gpudrv_in_exit=0  # 1 while the EXIT trap runs (it does not run twice)
gpudrv_stopping=0 # 1 once abort began: a second signal does not cut it short
gpudrv_signalled= # HUP, INT or TERM once one came: abort was a signal's
gpudrv_holding=0  # 1 between gpudrv_hold and gpudrv_release
gpudrv_held=      # the signal that came meanwhile, obeyed at the release
gpudrv_tmp=       # the run's temporary directory
gpudrv_child=     # the background command the shell is waiting for
gpudrv_also=      # one more to stop on the way out (the drain's reader, a watch's kubectl)
gpudrv_bg=0       # 1: gpudrv_bounded leaves its command running (kc_bg)
# gpudrv_clock: $gpudrv_now, the run's clock in seconds: the kernel's
# uptime (/proc/uptime, read by the shell: no process), which only goes
# forward, so that a clock set back or forward meanwhile moves no
# deadline; date +%s where there is no /proc.
gpudrv_clock() {
	if [ "$gpudrv_proc" = 1 ] && read -r gpudrv_now gpudrv_x </proc/uptime; then
		gpudrv_now=${gpudrv_now%.*}
	else
		gpudrv_now=$(date +%s)
	fi
}
gpudrv_proc=0
[ ! -r /proc/uptime ] || gpudrv_proc=1
gpudrv_clock
gpudrv_t0=$gpudrv_now
gpudrv_end=$((gpudrv_t0 + 86400)) # until gpudrv_start sets the run's deadline
gpudrv_hard=$gpudrv_end

say() {
	printf '%s: %s\n' "$prog" "$*" >&2 || :
}

# finish STATUS: the way out.  Called from the EXIT trap itself, it cleans
# up first: the trap will not run again.
finish() {
	gpudrv_done=1
	[ "$gpudrv_in_exit" = 0 ] || gpudrv_cleanup
	exit "$1"
}
die() {
	say "$*"
	finish 2
}
usage() {
	printf '%s\n' "$usage_line" >&2 || :
	finish 2
}
# misuse WORDS...: WORDS said, then the usage (a misused option).
misuse() {
	say "$@"
	usage
}
show_usage() {
	printf '%s\n' "$usage_line" 2>/dev/null || die "cannot write to standard output"
	finish 0
}

# abort REASON: what a script does when it must stop early: a signal, the
# deadline, a write error, an unexpected exit.  Scripts that have something
# to put back redefine it; it must end in finish.
abort() {
	say "$1"
	finish 2
}

gpudrv_exit() {
	gpudrv_rc=$?
	set +e
	gpudrv_in_exit=1
	if [ "$gpudrv_done" != 1 ]; then
		gpudrv_abort "stopped by an unexpected error (status $gpudrv_rc; see the messages above)"
		gpudrv_rc=2
	fi
	gpudrv_cleanup
	exit "$gpudrv_rc"
}
gpudrv_signal() {
	if [ "$gpudrv_stopping" = 1 ]; then
		gpudrv_clock
		say "SIG$1 again: still finishing the clean-up (at most $((gpudrv_hard - gpudrv_now)) s more)"
		return 0
	fi
	if [ "$gpudrv_holding" = 1 ]; then
		gpudrv_held=$1
		return 0
	fi
	gpudrv_signalled=$1
	gpudrv_abort "interrupted by SIG$1"
}
# gpudrv_hold, gpudrv_release: around a few short commands that a signal
# must not cut in two (a record printed, then forgotten: cut between the
# two, the way out would print it again); a signal that comes between them
# is obeyed at the release.
gpudrv_hold() {
	gpudrv_holding=1
}
gpudrv_release() {
	gpudrv_holding=0
	[ -z "$gpudrv_held" ] || gpudrv_signal "$gpudrv_held"
}
# The script's own standard output and error, kept on fds 7 and 8 (when
# open): a trap runs between any two commands, even inside a block or a
# function whose output goes to a file (emit's, a `f >file` call), and
# what the way out says and prints must reach the caller, not that file.
# Children in the background start without them.  (One the script was
# given closed stays closed: its fd 7 or 8 is not open either.)
gpudrv_fd7=
gpudrv_fd8=
{ command exec 7>&1; } 2>/dev/null && gpudrv_fd7=1
command exec 8>&2 && gpudrv_fd8=1
# gpudrv_own_fds: standard output and error the script's own again, for good.
gpudrv_own_fds() {
	if [ -n "$gpudrv_fd7" ]; then exec 1>&7; else exec 1>&-; fi
	if [ -n "$gpudrv_fd8" ]; then exec 2>&8; else exec 2>&-; fi
}
trap gpudrv_exit EXIT
trap 'gpudrv_signal HUP' HUP
trap 'gpudrv_signal INT' INT
trap 'gpudrv_signal TERM' TERM

# stopping: from here on the script only puts things back: no set -e, the
# time kept for that usable, a signal no longer obeyed.
stopping() {
	gpudrv_stopping=1
	set +e
	gpudrv_end=$gpudrv_hard
}
gpudrv_abort() {
	[ "$gpudrv_stopping" = 0 ] || return 0
	gpudrv_own_fds
	stopping
	gpudrv_stop_children
	abort "$1"
	# shellcheck disable=SC2317 # reached if a script's own abort returns
	finish 2
}
gpudrv_cleanup() {
	gpudrv_stop_children
	for gpudrv_h in $gpudrv_hooks; do "$gpudrv_h"; done
	[ -z "$gpudrv_tmp" ] || rm -rf "$gpudrv_tmp"
	gpudrv_tmp=
}

# gpudrv_wait: waits for $gpudrv_child to end, through the traps that
# interrupt wait and return; its status.
gpudrv_wait() {
	while :; do
		gpudrv_st=0
		wait "$gpudrv_child" || gpudrv_st=$?
		# > 128 is the child killed by a signal, or wait cut short by a trap
		# while the child still runs.
		if [ "$gpudrv_st" -le 128 ] || ! kill -0 "$gpudrv_child" 2>/dev/null; then
			break
		fi
	done
	gpudrv_child=
	return "$gpudrv_st"
}
# gpudrv_stop_children: TERM to what runs in the background, then waits for
# it: timeout(1) passes TERM on to kubectl and whatever kubectl started.
gpudrv_stop_children() {
	gpudrv_p=$gpudrv_also
	gpudrv_also=
	[ -z "$gpudrv_child" ] || kill -TERM "$gpudrv_child" 2>/dev/null
	[ -z "$gpudrv_p" ] || kill -TERM "$gpudrv_p" 2>/dev/null
	# (dash would say "Terminated" of each: we know.)
	[ -z "$gpudrv_child" ] || gpudrv_wait 2>/dev/null
	if [ -n "$gpudrv_p" ]; then
		gpudrv_child=$gpudrv_p
		gpudrv_wait 2>/dev/null
	fi
	return 0
}

# run_bg CMD...: CMD in the background, waited for, so that a signal stops it
# at once; CMD's status.  Its standard input is /dev/null.
run_bg() {
	"$@" 7>&- 8>&- &
	gpudrv_child=$!
	gpudrv_wait
}
# run_to OUT ERR CMD...: run_bg with CMD's output in the file OUT, its
# errors in ERR (ERR the same as OUT: both there).  The redirections are
# CMD's alone: what the script says meanwhile (a signal's message) still
# goes to its own standard error.
run_to() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	if [ "$gpudrv_e" = "$gpudrv_o" ]; then "$@" >"$gpudrv_o" 2>&1 7>&- 8>&- & else "$@" >"$gpudrv_o" 2>"$gpudrv_e" 7>&- 8>&- & fi
	gpudrv_child=$!
	gpudrv_wait
}

# track_bg PID: a command the script started in the background beside the
# one waited for (a reader of its output), stopped on the way out; wait_bg
# waits for it to end.
track_bg() {
	gpudrv_also=$1
}
wait_bg() {
	gpudrv_child=$gpudrv_also
	gpudrv_also=
	gpudrv_wait
}

# secs VALUE [MIN]: VALUE (N, Ns, Nm or Nh) in seconds, at least MIN
# (default 1), at most seven digits; else status 1.  The one reader of a
# time for an option and for the environment alike.  Leading zeros go: sh
# arithmetic reads 010 as octal.
secs() {
	gpudrv_n=${1%[smh]}
	case $gpudrv_n in '' | *[!0-9]*) return 1 ;; esac
	while :; do
		case $gpudrv_n in 0?*) gpudrv_n=${gpudrv_n#0} ;; *) break ;; esac
	done
	[ "${#gpudrv_n}" -le 7 ] && [ "$gpudrv_n" -ge "${2:-1}" ] || return 1
	case $1 in
	*m) echo $((gpudrv_n * 60)) ;;
	*h) echo $((gpudrv_n * 3600)) ;;
	*) echo "$gpudrv_n" ;;
	esac
}


# gpudrv_start WORK KEEP: after the options.  $tmp, and the run's deadline:
# GPUDRV_TIMEOUT seconds, default WORK plus KEEP request timeouts; the last
# KEEP request timeouts of it (at most half) are kept for abort to put things
# back.  Every kubectl is bounded by it (kc).
gpudrv_start() {
	gpudrv_rt=${GPUDRV_REQUEST_TIMEOUT:-60s}
	gpudrv_rt=$(secs "$gpudrv_rt") ||
		die "GPUDRV_REQUEST_TIMEOUT takes seconds (60, 60s, 1m), not '$GPUDRV_REQUEST_TIMEOUT'"
	if [ -n "${GPUDRV_TIMEOUT:-}" ]; then
		gpudrv_total=$(secs "$GPUDRV_TIMEOUT") ||
			die "GPUDRV_TIMEOUT takes seconds (120, 120s, 2m), not '$GPUDRV_TIMEOUT'"
		gpudrv_why="GPUDRV_TIMEOUT=$GPUDRV_TIMEOUT"
	else
		gpudrv_total=$(($1 + $2 * gpudrv_rt))
		gpudrv_why="GPUDRV_TIMEOUT unset: ${gpudrv_total}s"
	fi
	gpudrv_keep=$(($2 * gpudrv_rt))
	[ "$gpudrv_keep" -le $((gpudrv_total / 2)) ] || gpudrv_keep=$((gpudrv_total / 2))
	[ "$gpudrv_keep" = 0 ] || gpudrv_why="$gpudrv_why, ${gpudrv_keep}s of it kept to put the node back"
	gpudrv_hard=$((gpudrv_t0 + gpudrv_total))
	gpudrv_end=$((gpudrv_hard - gpudrv_keep))
	# The watchdog: coreutils' timeout(1) on every Debian, RHEL and Ubuntu machine.
	command -v timeout >/dev/null 2>&1 ||
		die "timeout(1) not found on PATH: install coreutils (it bounds every kubectl call)"
	make_tmp
}
# gpudrv_deadline WORK: the run's deadline made WORK seconds of work (plus
# the time gpudrv_start kept), once the steps' own timeouts are known
# (they come from the cluster's objects, read after the start), unless
# GPUDRV_TIMEOUT set it.
gpudrv_deadline() {
	[ -z "${GPUDRV_TIMEOUT:-}" ] || return 0
	gpudrv_total=$(($1 + gpudrv_keep))
	gpudrv_why="GPUDRV_TIMEOUT unset: ${gpudrv_total}s, ${gpudrv_keep}s of it kept to put the node back"
	gpudrv_hard=$((gpudrv_t0 + gpudrv_total))
	gpudrv_end=$((gpudrv_hard - gpudrv_keep))
}
# make_tmp: $tmp, a directory of the run's own, removed on the way out.
make_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") ||
		die "cannot create a temporary directory in ${TMPDIR:-/tmp}"
	gpudrv_tmp=$tmp
}
# find_tool NAME: the gpudrv command NAME beside the script, else on PATH.
find_tool() {
	if [ -x "$here/$1" ]; then
		echo "$here/$1"
	elif command -v "$1" >/dev/null 2>&1; then
		echo "$1"
	else
		say "$1 not found beside $0 nor on PATH"
		return 2
	fi
}
# gpudrv_bounded NAME FLAG PROG ARGS...: kc's, sk's and push's way: PROG is
# the program NAME ($KUBECTL for kubectl), FLAG its own time limit
# (FLAG=Ns; curl's --max-time takes N, a word of its own); output into
# $gpudrv_o, errors into $gpudrv_e.
gpudrv_bounded() {
	gpudrv_b=$gpudrv_bg
	gpudrv_bg=0
	gpudrv_name=$1
	gpudrv_flag=$2
	gpudrv_prog=$3
	shift 3
	gpudrv_time_left
	if [ "$gpudrv_left" -le 0 ]; then
		gpudrv_gave_up "$gpudrv_e" "$gpudrv_name" "$@"
		return 124
	fi
	gpudrv_rq=$gpudrv_rt
	[ "$gpudrv_rq" -le "$gpudrv_left" ] || gpudrv_rq=$gpudrv_left
	# While putting things back, one call that hangs must not take the
	# time kept for the others.
	gpudrv_wd=$gpudrv_left
	[ "$gpudrv_stopping" = 0 ] || [ "$gpudrv_wd" -le $((gpudrv_rq + 1)) ] || gpudrv_wd=$((gpudrv_rq + 1))
	gpudrv_fv=
	case $gpudrv_flag in
	--max-time) gpudrv_fv=$gpudrv_rq ;;
	*) gpudrv_flag=$gpudrv_flag=${gpudrv_rq}s ;;
	esac
	gpudrv_st=0
	if [ "$gpudrv_b" = 1 ]; then
		# (kc_bg: left running, stopped on the way out; kc_stop waits)
		timeout -k 3 "$gpudrv_wd" "$gpudrv_prog" "$gpudrv_flag" ${gpudrv_fv:+"$gpudrv_fv"} "$@" \
			>"$gpudrv_o" 2>"$gpudrv_e" </dev/null 5>&- 7>&- 8>&- &
		track_bg "$!"
		return 0
	fi
	run_to "$gpudrv_o" "$gpudrv_e" timeout -k 3 "$gpudrv_wd" "$gpudrv_prog" "$gpudrv_flag" \
		${gpudrv_fv:+"$gpudrv_fv"} "$@" || gpudrv_st=$?
	gpudrv_judge "$gpudrv_st" "$gpudrv_e" "$gpudrv_name" "$@"
}
# gpudrv_judge STATUS ERR NAME ARGS...: the status of a bounded command
# (NAME ARGS, its errors in ERR) as its caller takes it: STATUS, or 124,
# and the run given up (gpudrv_gave_up), when it failed at the deadline.
gpudrv_judge() {
	gpudrv_js=$1
	shift
	[ "$gpudrv_js" -ne 0 ] || return 0
	gpudrv_clock
	[ "$gpudrv_now" -ge "$gpudrv_end" ] || return "$gpudrv_js"
	gpudrv_gave_up "$@"
	return 124
}
# gpudrv_gave_up ERR NAME ARGS...: the deadline passed during (or before)
# NAME ARGS; while putting things back, the caller says what failed.
gpudrv_gave_up() {
	[ "$gpudrv_stopping" = 0 ] || return 0
	gpudrv_said=
	[ "$1" = /dev/null ] || ! [ -s "$1" ] || gpudrv_said="; $2 said: $(tail -n 1 "$1")"
	gpudrv_p=$2
	shift 2
	case $gpudrv_p in
	skopeo) gpudrv_hint="is the registry hanging?" ;;
	curl) gpudrv_hint="is the Pushgateway hanging?" ;;
	*) gpudrv_hint="is the API server, or the kubeconfig's credential plugin, hanging?" ;;
	esac
	gpudrv_clock
	gpudrv_abort "gave up after $((gpudrv_now - gpudrv_t0))s, the run's deadline ($gpudrv_why): no answer to '$gpudrv_p $(printf '%s' "$*" | cut -c1-72)'; $gpudrv_hint$gpudrv_said"
}
# gpudrv_time_left: $gpudrv_left, the seconds left before the run's
# deadline; time_left prints them.
gpudrv_time_left() {
	gpudrv_clock
	gpudrv_left=$((gpudrv_end - gpudrv_now))
}
time_left() {
	gpudrv_time_left
	echo "$gpudrv_left"
}
# nap SECONDS: sleep, but never past the deadline, and stopped by a signal.
nap() {
	gpudrv_time_left
	[ "$gpudrv_left" -le "$1" ] || gpudrv_left=$1
	[ "$gpudrv_left" -gt 0 ] || return 0
	run_bg sleep "$gpudrv_left"
}
# emit FILE STATUS: FILE on standard output, the run's last word; a write
# error (a full disk, a closed pipe) is abort.  With STATUS 2 no line says
# OK: a run that could not tell never does.
emit() {
	if [ "$2" = 2 ]; then sed '/^OK$/d' "$1" 2>"$gpudrv_tmp/emit.err"; else cat "$1" 2>"$gpudrv_tmp/emit.err"; fi && return 0
	gpudrv_abort "cannot write to standard output: $(sed -n '$s/.*: //p' "$gpudrv_tmp/emit.err")"
}
# kubectl_said WHAT FILE: says WHAT failed, then kubectl's words (FILE), indented.
kubectl_said() {
	say "$1; kubectl said:"
	sed 's/^/    /' "$2" >&2 || :
}
# said FILE: what a program wrote to FILE (a server's words, any text), as one
# line for a message: lines joined, control characters shown as '?', at most
# 300 characters, no blank at the end.  Quoted so, it can never start a
# line of its own.
said() {
	tr '\n\t' '  ' <"$1" 2>/dev/null | tr -c '[:print:]' '?' | cut -c1-300 | sed 's/ *$//'
}
# awk_columns PREFIX NAMES: the words "-v PREFIX_NAME=N" for each of NAMES
# (N its place, from 1) into $awk_columns: an awk program's names for the
# columns of a record (node.sh's record, table.sh's table).
awk_columns() {
	awk_columns=
	gpudrv_i=0
	for gpudrv_f in $2; do
		gpudrv_i=$((gpudrv_i + 1))
		awk_columns="$awk_columns -v $1_$gpudrv_f=$gpudrv_i"
	done
}
