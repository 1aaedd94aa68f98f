# gpudrv-lib.sh: what the gpudrv scripts share (POSIX sh; sourced, never
# run), installed in $(PREFIX)/lib/gpudrv.  The script sets prog, usage_line
# and lib (this file's path: ../lib/gpudrv/gpudrv-lib.sh from the script's own
# directory) first, and may redefine abort after; here is that directory.
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
here=${lib%/../lib/gpudrv/gpudrv-lib.sh}

# The node labels and the annotation the scripts read and write, as
# common/gpudrv.h defines them for the filters (t/0010-house.t checks that
# the two agree).
L_PRESENT=nvidia.com/gpu.present
L_MAJOR=nvidia.com/cuda.driver.major
L_MINOR=nvidia.com/cuda.driver.minor
L_REV=nvidia.com/cuda.driver.rev
L_KERNEL=feature.node.kubernetes.io/kernel-version.full
L_OSID=feature.node.kubernetes.io/system-os_release.ID
L_OSVER=feature.node.kubernetes.io/system-os_release.VERSION_ID
L_STATE=nvidia.com/gpu-driver-upgrade-state
L_SKIP=nvidia.com/gpu-driver-upgrade.skip
A_INITIAL=nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable
A_CORDONED=gpudrv/cordoned

# Where the support matrix is unless -m or GPUDRV_MATRIX says otherwise.
default_matrix=/etc/gpudrv/support-matrix.csv

gpudrv_done=0     # 1 once finish was called: the exit is on purpose
gpudrv_in_exit=0  # 1 while the EXIT trap runs (it does not run twice)
gpudrv_stopping=0 # 1 once abort began: a second signal does not cut it short
gpudrv_signalled= # HUP, INT or TERM once one came: abort was a signal's
gpudrv_tmp=       # the run's temporary directory
gpudrv_child=     # the background command the shell is waiting for
gpudrv_also=      # one more to stop on the way out (drv-upgrade.sh's drain reader)
gpudrv_t0=$(date +%s)
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
		say "SIG$1 again: still finishing the clean-up (at most $((gpudrv_hard - $(date +%s))) s more)"
		return 0
	fi
	gpudrv_signalled=$1
	gpudrv_abort "interrupted by SIG$1"
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
	stopping
	gpudrv_stop_children
	abort "$1"
	# shellcheck disable=SC2317 # reached if a script's own abort returns
	finish 2
}
gpudrv_cleanup() {
	gpudrv_stop_children
	lease_release
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
	"$@" &
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

# seconds VALUE OPTION: an option's time, secs' forms, 0 allowed; else the
# usage, naming OPTION.
seconds() {
	secs "$1" 0 && return 0
	say "$2 takes seconds (300, 300s, 5m, 1h), not '$1'"
	usage
}

# --- options: one way for every script ---
# Each script reads its options so, every option with a short and a long
# form:
#
#	eval "set -- $(gpudrv_opts 'b:branch' "$@")"
#	while [ $# -gt 0 ]; do
#		case $1 in
#		--) shift; break ;;
#		-b | --branch) need_arg "$@"; branch=$2; shift ;;
#		*) other_option "$1" ;;
#		esac
#		shift
#	done
#	[ $# -eq 1 ] || usage

# gpudrv_opts VALUED ARGS...: ARGS quoted for eval, each option a word of
# its own, as getopts reads short ones: -LN is -L -N; -m550 is -m 550 and
# --matrix=FILE is --matrix FILE when VALUED, the options that take a value
# (letter:long-name, blank-separated: 'm:matrix t:drain-timeout'), has them.
# The word after such an option is its value, whatever it holds.  The
# options end at --, or before the first operand, where a -- is put: the
# words after it stay as they are.
gpudrv_opts() {
	gpudrv_valued=" $1 "
	shift
	gpudrv_rest=0  # 1 from -- or the first operand on
	gpudrv_value=0 # 1 when this word is the value of the option before
	for gpudrv_a; do
		if [ "$gpudrv_rest$gpudrv_value" != 00 ]; then
			gpudrv_value=0
			gpudrv_word "$gpudrv_a"
			continue
		fi
		case $gpudrv_a in
		--)
			gpudrv_rest=1
			gpudrv_word --
			;;
		--*=*)
			gpudrv_l=${gpudrv_a%%=*}
			case $gpudrv_valued in
			*":${gpudrv_l#--} "*) gpudrv_word "$gpudrv_l" && gpudrv_word "${gpudrv_a#*=}" ;;
			*) gpudrv_word "$gpudrv_a" ;;
			esac
			;;
		--*)
			gpudrv_word "$gpudrv_a"
			case $gpudrv_valued in *":${gpudrv_a#--} "*) gpudrv_value=1 ;; esac
			;;
		-?*)
			gpudrv_r=${gpudrv_a#-}
			while [ -n "$gpudrv_r" ]; do
				gpudrv_c=${gpudrv_r%"${gpudrv_r#?}"}
				gpudrv_r=${gpudrv_r#?}
				gpudrv_word "-$gpudrv_c"
				case $gpudrv_valued in
				*" $gpudrv_c:"*)
					if [ -n "$gpudrv_r" ]; then gpudrv_word "$gpudrv_r"; else gpudrv_value=1; fi
					break
					;;
				esac
			done
			;;
		*)
			gpudrv_rest=1
			gpudrv_word --
			gpudrv_word "$gpudrv_a"
			;;
		esac
	done
	# (An option still waiting for its value has none: need_arg says so.)
	[ "$gpudrv_rest$gpudrv_value" != 00 ] || gpudrv_word --
}
# gpudrv_word WORD: WORD quoted for the shell, then a blank (every byte
# kept: a final newline too, which shq's $(...) would drop).
gpudrv_word() {
	gpudrv_w=$1
	gpudrv_q=
	while :; do
		case $gpudrv_w in
		*\'*)
			gpudrv_q=$gpudrv_q${gpudrv_w%%\'*}\'\\\'\'
			gpudrv_w=${gpudrv_w#*\'}
			;;
		*) break ;;
		esac
	done
	printf "'%s%s' " "$gpudrv_q" "$gpudrv_w"
}

# need_arg OPTION ARGS...: the usage, saying so, unless OPTION (the option
# the loop is at: "$@") has a value after it.
need_arg() {
	[ $# -ge 2 ] && return 0
	say "$1 takes a value"
	usage
}

# other_option OPTION: an option the script's loop does not take: -h or
# --help, the usage on standard output; any other, the usage, naming it.
other_option() {
	gpudrv_b=$(printf '%s' "$1" | tr -c '[:print:]' '?' | cut -c1-60)
	case $1 in
	-h | --help) show_usage ;;
	--*=*) say "${gpudrv_b%%=*} is not an option that takes a value: $gpudrv_b" ;;
	*) say "unknown option $gpudrv_b" ;;
	esac
	usage
}

# shw WORD: WORD as a person types it for a shell: as it is when it holds
# nothing a shell reads, else quoted (shq).
shw() {
	case $1 in
	'' | *[!A-Za-z0-9_./=:%,@+-]*) shq "$1" ;;
	*) printf '%s' "$1" ;;
	esac
}

# shq STRING: STRING quoted for a shell.
shq() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# driver_version VERSION: sets major, minor and rev from a driver version
# (branch.minor.rev, 550.90.07), or exits 2 saying it is not one.
driver_version() {
	case $1 in
	*.*.*.* | *..* | .* | *.) major=bad ;;
	*.*.*) major=${1%%.*} ;;
	*) major=bad ;;
	esac
	gpudrv_r=${1#*.}
	minor=${gpudrv_r%%.*}
	rev=${gpudrv_r#*.}
	for gpudrv_p in "$major" "$minor" "$rev"; do
		case $gpudrv_p in
		'' | *[!0-9]*) die "not a driver version (branch.minor.rev, e.g. 550.90.07): '$1'" ;;
		esac
	done
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

# check_node NAME: exits 2 unless NAME can be a node name (a DNS subdomain's
# characters), before it reaches kubectl; the message shows it made safe.
check_node() {
	case $1 in
	'' | -* | *[!a-z0-9.-]*)
		die "not a node name: '$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'"
		;;
	esac
}

# writable FILE: 0 when FILE can be replaced (by a rename in its directory);
# else 1 and $why says why not.  Asked before any work, so that a run never
# does the work and then cannot record it.
writable() {
	gpudrv_d=$(dirname -- "$1")
	if [ -d "$1" ]; then
		why="it is a directory"
	elif ! [ -d "$gpudrv_d" ]; then
		why="no directory $gpudrv_d"
	elif ! gpudrv_p=$(mktemp "$gpudrv_d/.gpudrv.XXXXXX" 2>/dev/null); then
		why="cannot create a file in $gpudrv_d"
	else
		rm -f "$gpudrv_p"
		return 0
	fi
	return 1
}

# kc OUT ERR ARGS...: kubectl ARGS ($KUBECTL), its output into the file OUT,
# its errors into ERR (ERR the same as OUT: both there).  It runs under
# timeout(1), in the background, waited for: a signal stops it at once, and
# the run's deadline stops it even when kubectl itself hangs (an API server
# that never answers, a credential plugin that waits); timeout kills its
# own process group, so kubectl's children go too.  Each request is also
# bounded: --request-timeout is GPUDRV_REQUEST_TIMEOUT or what is left of
# the run, the less.  When the deadline passes, kc calls abort.
# GPUDRV_KUBECONFIG and GPUDRV_CONTEXT, when set (kubectl-gpudrv sets them
# from kubectl's --kubeconfig and --context), go first on every call, as
# --kubeconfig= and --context=; a call's own flag after them wins.
kc() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	gpudrv_bounded kubectl --request-timeout "${KUBECTL:-kubectl}" \
		${GPUDRV_KUBECONFIG:+"--kubeconfig=$GPUDRV_KUBECONFIG"} ${GPUDRV_CONTEXT:+"--context=$GPUDRV_CONTEXT"} "$@"
}
# sk OUT ERR ARGS...: skopeo ARGS ($SKOPEO) as kc runs kubectl, each request
# bounded by --command-timeout.
sk() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	gpudrv_bounded skopeo --command-timeout "${SKOPEO:-skopeo}" "$@"
}
# push OUT ERR ARGS...: curl ARGS ($CURL) as kc runs kubectl (drv-audit.sh
# -P, the Pushgateway), the whole transfer bounded by --max-time.
push() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	gpudrv_bounded curl --max-time "${CURL:-curl}" "$@"
}
# gpudrv_bounded NAME FLAG PROG ARGS...: kc's, sk's and push's way: PROG is
# the program NAME ($KUBECTL for kubectl), FLAG its own time limit
# (FLAG=Ns; curl's --max-time takes N, a word of its own); output into
# $gpudrv_o, errors into $gpudrv_e.
gpudrv_bounded() {
	gpudrv_name=$1
	gpudrv_flag=$2
	gpudrv_prog=$3
	shift 3
	gpudrv_left=$((gpudrv_end - $(date +%s)))
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
	if [ "$gpudrv_e" = "$gpudrv_o" ]; then
		timeout -k 3 "$gpudrv_wd" "$gpudrv_prog" "$gpudrv_flag" ${gpudrv_fv:+"$gpudrv_fv"} "$@" \
			>"$gpudrv_o" 2>&1 &
	else
		timeout -k 3 "$gpudrv_wd" "$gpudrv_prog" "$gpudrv_flag" ${gpudrv_fv:+"$gpudrv_fv"} "$@" \
			>"$gpudrv_o" 2>"$gpudrv_e" &
	fi
	gpudrv_child=$!
	gpudrv_st=0
	gpudrv_wait || gpudrv_st=$?
	[ "$gpudrv_st" -ne 0 ] || return 0
	[ "$(date +%s)" -ge "$gpudrv_end" ] || return "$gpudrv_st"
	gpudrv_gave_up "$gpudrv_e" "$gpudrv_name" "$@"
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
	gpudrv_abort "gave up after $(($(date +%s) - gpudrv_t0))s, the run's deadline ($gpudrv_why): no answer to '$gpudrv_p $(printf '%s' "$*" | cut -c1-72)'; $gpudrv_hint$gpudrv_said"
}

# time_left: the seconds left before the run's deadline.
time_left() {
	echo $((gpudrv_end - $(date +%s)))
}

# nap SECONDS: sleep, but never past the deadline, and stopped by a signal.
nap() {
	gpudrv_left=$((gpudrv_end - $(date +%s)))
	[ "$gpudrv_left" -le "$1" ] || gpudrv_left=$1
	[ "$gpudrv_left" -gt 0 ] || return 0
	run_bg sleep "$gpudrv_left"
}

# emit FILE STATUS: FILE on standard output, the run's last word; a write
# error (a full disk, a closed pipe) is abort.  With STATUS 2 no line says
# OK: a run that could not tell never does.
emit() {
	if [ "$2" = 2 ]; then sed '/^OK$/d' "$1"; else cat "$1"; fi 2>"$gpudrv_tmp/emit.err" && return 0
	gpudrv_abort "cannot write to standard output: $(sed -n '$s/.*: //p' "$gpudrv_tmp/emit.err")"
}

# kubectl_said WHAT FILE: says WHAT failed, then kubectl's words (FILE), indented.
kubectl_said() {
	say "$1; kubectl said:"
	sed 's/^/    /' "$2" >&2 || :
}
# said FILE: what a program wrote to FILE (a server's words, any text), as one
# line for a message: lines joined, control characters shown as '?', at most
# 300 characters.  Quoted so, it can never start a line of its own.
said() {
	tr '\n\t' '  ' <"$1" 2>/dev/null | tr -c '[:print:]' '?' | cut -c1-300
}

# get_list FILE PATH [WHAT]: GET PATH (--raw, the API server's own JSON)
# into FILE; status 2, saying why ("cannot list WHAT" with WHAT), when
# kubectl fails or answers exit 0 with no body (a proxy or a wrapper can): a
# list not read is never an empty one.  The filter that reads FILE proves
# the rest (the kind asked for, an items list, every byte, no Status, no
# watch event), and the caller names PATH if it refuses.
get_list() {
	if ! kc "$1" "$1.err" get --raw "$2"; then
		if [ -n "${3:-}" ]; then kubectl_said "cannot list $3" "$1.err"; else kubectl_said "cannot GET $2" "$1.err"; fi
		return 2
	fi
	# The first byte that is not white space, in constant memory: the body
	# is one line, and grep would hold all of it (110 MB at 30,000 pods).
	[ -n "$(tr -d '[:space:]' <"$1" | dd bs=1 count=1 2>/dev/null)" ] && return 0
	say "${3:+cannot list $3: }GET $2 answered with an empty body (kubectl exit 0): nothing can be said of it"
	return 2
}

# get_budget_pods FILE PODS: every budget, then the pods GET PODS lists,
# back to back into FILE, which pdb-check reads as one cluster (the API
# server's own JSON; kubectl get pdb,pods -A -o json takes a minute at
# 30,000 pods, bench/README.md); status 2, get_list having said why.
get_budget_pods() {
	get_list "$1" /apis/policy/v1/poddisruptionbudgets &&
		get_list "$1.pods" "$2" &&
		cat "$1.pods" >>"$1" || return 2
}

# get_draws FILE [POLICIES]: every budget and every pod on a node, read by
# pdb-check -a ($pdb_check) in one pass: each node's draws on each budget
# and what would refuse the removal of its pods (with POLICIES,
# upgrade-policy's output, the pods each node's policy removes; else its
# drain), into FILE; status 2, saying why, when the lists cannot be read
# whole or judged.
get_draws() {
	if ! get_budget_pods "$1.pp" '/api/v1/pods?fieldSelector=spec.nodeName%21%3D'; then
		say "cannot list budgets and pods"
		return 2
	fi
	gpudrv_pc=0
	"$pdb_check" -a ${2:+-y "$2"} "$1.pp" >"$1" || gpudrv_pc=$?
	rm -f "$1.pp" "$1.pp.pods" "$1.pp.err" "$1.pp.pods.err"
	[ "$gpudrv_pc" -le 1 ] && return 0
	say "pdb-check cannot judge the answers to GET /apis/policy/v1/poddisruptionbudgets and GET /api/v1/pods?fieldSelector=spec.nodeName%21%3D (exit $gpudrv_pc)"
	return 2
}

# get_pods FILE WHAT PATH: the pods GET PATH lists (a PodList, the API
# server's own JSON), read by pdb-check -p ($pdb_check): a line a pod into
# FILE, "node namespace/name phase ready restarts"; status 2, saying why
# (WHAT: which pods), when the list cannot be read whole.
get_pods() {
	get_list "$1.json" "$3" "$2" || return 2
	gpudrv_pc=0
	"$pdb_check" -p "$1.json" >"$1" || gpudrv_pc=$?
	rm -f "$1.json" "$1.json.err"
	[ "$gpudrv_pc" = 0 ] && return 0
	say "cannot list $2: pdb-check cannot read the answer to GET $3 (exit $gpudrv_pc)"
	return 2
}

# check_value OPTION VALUE WHAT: exits 2 naming VALUE, shown safe on one
# line, unless it is non-empty printable text (a selector, a namespace, a
# kernel: a newline must not vanish on its way to the API server, where
# a=b, newline, c!=d became a=bc!=d); WHAT says what OPTION takes.  The API
# server judges the rest, before anything is changed.  check_file OPTION
# VALUE: the same for a file name, which may hold anything but control
# characters.
check_value() {
	case $2 in
	'' | *[![:print:]]*) die "$1 takes $3, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-120)'" ;;
	esac
}
check_file() {
	case $2 in
	'' | *[[:cntrl:]]*) die "$1 takes a file name without control characters, not '$(printf '%s' "$2" | tr '[:cntrl:]' '?' | cut -c1-120)'" ;;
	esac
}

# source_option OPTION VALUE...: -m or -r ("$@" at the option), where the
# images that exist are listed, checked and held: -m matrix (a file name;
# matrix_given set), -r repo (a repository; image_source judges it whole).
source_option() {
	need_arg "$@"
	case $1 in
	-m | --matrix) check_file "$1" "$2" && matrix=$2 && matrix_given=1 ;;
	-r | --registry) check_value "$1" "$2" "a repository (registry/path/name)" && repo=$2 ;;
	esac
}

# upgrade_option OPTION VALUE...: one of drv-upgrade.sh's options that
# drv-rollout.sh takes too, to pass it on ("$@" at the option), its value
# checked by its kind, before any request, and held in the variable named
# for it: drain_timeout (-t, at least 1), validate_timeout (-g), budget_wait
# (-w) and wait_timeout (-J), in seconds; wait_sel (-j) and driver_sel (-s),
# label selectors; driver_ns (-n).  upgrade_options_end after the loop.
upgrade_option() {
	need_arg "$@"
	case $1 in
	-t | --drain-timeout)
		drain_timeout=$(seconds "$2" "$1") || finish 2
		[ "$drain_timeout" -gt 0 ] || { say "the drain timeout must be at least 1 second" && usage; }
		;;
	-g | --validate-timeout) validate_timeout=$(seconds "$2" "$1") || finish 2 ;;
	-w | --budget-wait) budget_wait=$(seconds "$2" "$1") || finish 2 ;;
	-J | --wait-timeout) wait_timeout=$(seconds "$2" "$1") || finish 2 ;;
	-j | --wait-for) check_value "$1" "$2" "a label selector (job=train, 'app in (a,b)')" && wait_sel=$2 ;;
	-s | --driver-selector) check_value "$1" "$2" "a label selector (app=nvidia-driver-daemonset)" && driver_sel=$2 ;;
	-n | --driver-namespace) check_value "$1" "$2" "a namespace" && driver_ns=$2 ;;
	esac
}
# policy_option OPTION VALUE...: -U FIELD=VALUE ("$@" at the option), a
# field of the upgradePolicy set by a flag, appended to $policy_u as quoted
# words for upgrade-policy (policy_check judges them all, before any
# request), and to $policy_r as a person would type them (the command that
# resumes).
policy_option() {
	need_arg "$@"
	check_value "$1" "$2" "FIELD=VALUE (drain.enable=true)"
	policy_u="$policy_u$(gpudrv_word -U)$(gpudrv_word "$2")"
	policy_r="${policy_r:-} -U $(shq "$2")"
}
# policy_flags: $policy_set, the flags that set fields of the upgradePolicy,
# as quoted words for upgrade-policy: those of the options that name one
# (-p, -u, -j, -J, -t: $max_parallel, $max_unavailable, $wait_sel,
# $wait_timeout, $drain_timeout, where set), then every -U ($policy_u),
# which wins.
policy_flags() {
	policy_set=
	[ -z "${max_parallel:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "maxParallelUpgrades=$max_parallel")"
	[ -z "${max_unavailable:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "maxUnavailable=$max_unavailable")"
	[ -z "${wait_sel:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "waitForCompletion.podSelector=$wait_sel")"
	[ -z "${wait_timeout:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "waitForCompletion.timeoutSeconds=$wait_timeout")"
	[ -z "${drain_timeout:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "podDeletion.timeoutSeconds=$drain_timeout")$(gpudrv_word -U)$(gpudrv_word "drain.timeoutSeconds=$drain_timeout")"
	policy_set=$policy_set${policy_u:-}
}
# policy_check: the flags of $policy_set (quoted words) judged by
# upgrade-policy ($upgrade_policy), on no object: the usage, saying why,
# when one is not a field or not a value it takes.
policy_check() {
	gpudrv_pc=$(
		eval "set -- $policy_set"
		printf '{"kind":"List","apiVersion":"v1","items":[]}\n' |
			"$upgrade_policy" "$@" - 2>&1 >/dev/null
	) && return 0
	say "${gpudrv_pc#upgrade-policy: }"
	usage
}
# upgrade_options_end: the usage when -J came without -j.
upgrade_options_end() {
	[ -z "$wait_timeout" ] || [ -n "$wait_sel" ] && return 0
	say "-J is how long to wait for the pods -j selects: give -j too"
	usage
}

# get_node NODE FILE: the node's JSON into FILE (one GET, no discovery), or
# exit 2 saying why not; a failed kubectl must never read as a node without
# labels.
get_node() {
	kc "$2" "$2.err" get --raw "/api/v1/nodes/$1" && return 0
	grep -q '(NotFound)' "$2.err" && die "node $1 not found in the cluster"
	kubectl_said "cannot read node $1 from the cluster" "$2.err"
	finish 2
}

# image_source: after the options, -m matrix_given, -r repo and -I insecure
# checked together (the usage when they clash); repo without docker://.
image_source() {
	if [ -n "$repo" ] && [ -n "$matrix_given" ]; then
		say "-m names a matrix, -r a registry: one or the other"
		usage
	fi
	if [ -n "$insecure" ] && [ -z "$repo" ]; then
		say "-I goes with -r"
		usage
	fi
	case $repo in docker://*) repo=${repo#docker://} ;; esac
	case $repo in
	'' | */*) ;;
	*) die "-r $repo: not a repository (registry/path/name, e.g. registry.example/nvidia/driver)" ;;
	esac
}

# registry_tags FILE: with -r, what exists is what the registry lists: every
# tag, every page (skopeo follows the registry's Link headers), into FILE,
# which matrix-grep reads as a matrix; status 2, skopeo's words said, when it
# cannot.
registry_tags() {
	sk "$1" "$1.err" list-tags ${insecure:+--tls-verify=false} "docker://$repo" && return 0
	say "cannot list the tags of $repo; skopeo said:"
	sed 's/^/    /' "$1.err" >&2 || :
	return 2
}

# get_targets FILE: the GPU Operator's ClusterPolicies, GPUClusters and
# NVIDIADrivers, back to back, into FILE (labels2tag -t reads them).  Each
# answer must be the whole list asked for, proven here, where it is known
# which request a body answers: an empty body, a Status, a list of another
# kind or a body cut short is status 2, naming the request, never "none of
# them".  A CRD that is not installed (NotFound) is an empty list, typed as
# that kind's, so that the reader can check kinds still.  Status 2, said,
# when they cannot be read.
get_targets() {
	# One JSON object, whole, whose own kind (not an item's) is the list
	# asked for, with an items list; else it prints what the body is
	# instead, and exits 1.  Strings are followed through their escapes: a
	# brace or a "kind" inside one counts for nothing.
	# shellcheck disable=SC2016 # an awk program
	gpudrv_tawk='
	function fail(w) { why = w; exit 1 }
	{
		n = length($0)
		for (i = 1; i <= n; i++) {
			c = substr($0, i, 1)
			if (str) {
				if (esc) esc = 0
				else if (c == "\\") esc = 1
				else if (c == "\"") {
					str = 0
					if (depth == 1 && key_next) {
						key = buf
						if (key in type) fail("twice")
						type[key] = "none"
					} else if (depth == 1) { type[key] = "string"; val[key] = buf }
					continue
				}
				if (depth == 1) buf = buf c
				continue
			}
			if (c == " " || c == "\t" || c == "\r") continue
			if (depth == 0 && top) fail("more")
			if (c == "\"") { if (depth == 0) fail("more"); str = 1; buf = ""; continue }
			if (c == "{" || c == "[") {
				if (depth == 0) { if (c != "{") fail("more"); key_next = 1 }
				else if (depth == 1 && !key_next) type[key] = c
				open[++depth] = c
				continue
			}
			if (c == "}" || c == "]") {
				if (depth == 0 || (open[depth] == "{") != (c == "}")) fail("more")
				if (--depth == 0) top = 1
				continue
			}
			if (depth == 0) fail("more")
			if (depth == 1) {
				if (c == ":") { key_next = 0; type[key] = "scalar"; val[key] = ""; continue }
				if (c == ",") { key_next = 1; continue }
				if (!key_next) val[key] = val[key] c
			}
		}
	}
	END {
		if (why == "" && !top) why = depth || str ? "cut" : "empty"
		if (why == "empty") { print "an empty body"; exit 1 }
		if (why == "cut") { print "a body cut short (not one whole JSON object)"; exit 1 }
		if (why == "twice") { print "an object that has the member \"" key "\" twice"; exit 1 }
		if (why != "") { print "a body that is not one JSON object"; exit 1 }
		if (type["kind"] != "string") { print "an object that has no kind"; exit 1 }
		k = val["kind"]
		if (k == "Status") {
			print "a Status (" val["code"] " " val["reason"] ": " val["message"] ")"
			exit 1
		}
		if (k != want) { print "kind " k; exit 1 }
		if (type["items"] != "[") { print "kind " k " but no items list"; exit 1 }
	}'
	: >"$1"
	for gpudrv_api in nvidia.com/v1/clusterpolicies:ClusterPolicyList \
		nvidia.com/v1alpha1/gpuclusters:GPUClusterList \
		nvidia.com/v1alpha1/nvidiadrivers:NVIDIADriverList; do
		gpudrv_tkind=${gpudrv_api#*:}
		gpudrv_api=${gpudrv_api%:*}
		if ! kc "$1.part" "$1.err" get --raw "/apis/$gpudrv_api"; then
			grep -q '(NotFound)' "$1.err" || {
				kubectl_said "cannot list the ${gpudrv_api##*/}" "$1.err"
				return 2
			}
			printf '{"apiVersion":"%s","kind":"%s","items":[]}\n' \
				"${gpudrv_api%/*}" "$gpudrv_tkind" >"$1.part"
		else
			gpudrv_st=0
			LC_ALL=C awk -v want="$gpudrv_tkind" "$gpudrv_tawk" "$1.part" >"$1.err" || gpudrv_st=$?
			if [ "$gpudrv_st" = 1 ]; then
				say "GET /apis/$gpudrv_api answered exit 0 with $(head -n 1 "$1.err" | tr -c '[:print:]\n' '?' | cut -c1-300): not the $gpudrv_tkind asked for, so nothing is known of the ${gpudrv_api##*/}"
				return 2
			elif [ "$gpudrv_st" != 0 ]; then
				say "cannot check the answer to GET /apis/$gpudrv_api (awk exit $gpudrv_st)"
				return 2
			fi
		fi
		cat "$1.part" >>"$1"
	done
	rm -f "$1.part" "$1.err"
}

# urlencode STRING: for a query parameter (RFC 3986 unreserved kept).
urlencode() {
	printf '%s' "$1" | LC_ALL=C awk '
		BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
		{ for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c ~ /[A-Za-z0-9._~-]/) printf "%s", c; else printf "%%%02X", ord[c]
		} }'
}

# --- the rollout's lock: a Lease in the cluster ---
# One rollout a cluster at a time, from whatever machine: a
# coordination.k8s.io/v1 Lease, $lease_ns/$lease_name, held as controllers'
# leader election holds theirs.  Taken only when absent (create) or free:
# released (no holder), expired (renewTime + leaseDurationSeconds past), or
# the lease of a run of this user on this machine that is dead (see
# rollout_lock); every update is a compare-and-swap (kubectl replace with the
# resourceVersion read: the API server answers 409 Conflict to the loser of
# a race).  Renewed every third of its duration while the run goes on;
# released, by a compare-and-swap too, on the way out (gpudrv_cleanup).  A
# renewal that finds another holder stops the run as abort does.
lease_ns=${GPUDRV_LEASE_NAMESPACE:-gpudrv}
lease_name=gpudrv-rollout
lease_for=60 # leaseDurationSeconds (GPUDRV_LEASE_DURATION)
lease_every=20
lease_me=    # this run's holderIdentity: host_pid_random
lease_rv=    # the resourceVersion this run last wrote: set while it holds the lease
lease_at=0   # when (this machine's clock) it was last taken or renewed
lease_next=0 # no renewal tried before then (after a failed one)
lease_acq=   # this run's acquireTime
lease_tr=0   # leaseTransitions
lease_why=   # after a failed lease_put: what kubectl said, its last line

# lease_time EPOCH: as a MicroTime: RFC 3339, UTC, microseconds (GNU date,
# which coreutils' timeout(1) comes with).
lease_time() {
	date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000000Z
}
# lease_epoch TIME: an RFC 3339 time in seconds since the epoch; nothing when
# it is not one (GNU date reads more than RFC 3339: the form is checked first).
lease_epoch() {
	printf '%s\n' "$1" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$' || return 0
	date -u -d "$1" +%s 2>/dev/null || :
}

# lease_read: the lease as the API has it, into lr_rv, lr_renew, lr_for,
# lr_acq, lr_tr and lr_holder (the holder last: it may hold any character);
# status 1 when there is none, 2 when it cannot be read (kubectl's words in
# $gpudrv_tmp/lease.err).
lease_read() {
	kc "$gpudrv_tmp/lease" "$gpudrv_tmp/lease.err" -n "$lease_ns" get leases.coordination.k8s.io "$lease_name" \
		-o 'jsonpath={.metadata.resourceVersion}{"\n"}{.spec.renewTime}{"\n"}{.spec.leaseDurationSeconds}{"\n"}{.spec.acquireTime}{"\n"}{.spec.leaseTransitions}{"\n"}{.spec.holderIdentity}' || {
		if grep -q '(NotFound)' "$gpudrv_tmp/lease.err"; then return 1; fi
		lease_why=$(grep -v '^[[:space:]]*$' "$gpudrv_tmp/lease.err" | tail -n 1 | cut -c1-300)
		return 2
	}
	lr_rv=$(sed -n 1p "$gpudrv_tmp/lease")
	lr_renew=$(sed -n 2p "$gpudrv_tmp/lease")
	lr_for=$(sed -n 3p "$gpudrv_tmp/lease")
	lr_acq=$(sed -n 4p "$gpudrv_tmp/lease")
	lr_tr=$(sed -n 5p "$gpudrv_tmp/lease")
	lr_holder=$(sed -n '6,$p' "$gpudrv_tmp/lease")
	case $lr_rv in '' | *[!0-9A-Za-z._-]*)
		lease_why="no resourceVersion in kubectl's answer"
		: >"$gpudrv_tmp/lease.err"
		say "the lease $lease_ns/$lease_name: $lease_why"
		return 2
		;;
	esac
	case $lr_for in '' | *[!0-9]*) lr_for=0 ;; esac
	case $lr_tr in '' | *[!0-9]*) lr_tr=0 ;; esac
	return 0
}
# lease_who: the holder read, made safe to print; its times, and when it expires.
lease_who() {
	lw_h=$(printf '%s' "$lr_holder" | tr -c 'A-Za-z0-9._:/@-' '?' | cut -c1-120)
	lw_r=$(lease_epoch "$lr_renew")
	[ -n "$lw_r" ] || lw_r=$(lease_epoch "$lr_acq")
	if [ -z "$lw_r" ]; then
		echo "$lw_h (no renewTime: it never expires by itself)"
		return
	fi
	lw_x=$((lw_r + lr_for))
	lw_in=$((lw_x - $(date +%s)))
	if [ "$lw_in" -ge 0 ]; then lw_in="in ${lw_in}s"; else lw_in="$((-lw_in))s ago"; fi
	echo "$lw_h (acquired ${lr_acq:-?}, renewed ${lr_renew:-?}, for ${lr_for}s: it expires at $(lease_time "$lw_x") by this machine's clock, $lw_in, unless renewed)"
}
# lease_expired: 0 when the lease read was not renewed in time.
lease_expired() {
	le_r=$(lease_epoch "$lr_renew")
	[ -n "$le_r" ] || le_r=$(lease_epoch "$lr_acq")
	[ -n "$le_r" ] && [ $((le_r + lr_for)) -lt "$(date +%s)" ]
}

# lease_put create|take|renew|release [RV]: writes the lease (take, renew
# and release: a compare-and-swap on RV); the new resourceVersion in
# $lease_rv.  Status 1 on a conflict (409, or created meanwhile), 2 else;
# kubectl's last words in $lease_why.
lease_put() {
	lp_now=$(date +%s)
	lp_t=$(lease_time "$lp_now")
	lp_rv=${2:-}
	case $1 in
	create | take) lease_acq=$lp_t ;;
	esac
	if [ "$1" = release ]; then
		lp_spec="\"leaseDurationSeconds\":1,\"acquireTime\":\"$lp_t\",\"renewTime\":\"$lp_t\",\"leaseTransitions\":$lease_tr"
	else
		lp_spec="\"holderIdentity\":\"$lease_me\",\"leaseDurationSeconds\":$lease_for,\"acquireTime\":\"$lease_acq\",\"renewTime\":\"$lp_t\",\"leaseTransitions\":$lease_tr"
	fi
	printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s","namespace":"%s",%s"labels":{"app.kubernetes.io/part-of":"gpudrv"}},"spec":{%s}}\n' \
		"$lease_name" "$lease_ns" "${lp_rv:+\"resourceVersion\":\"$lp_rv\",}" "$lp_spec" >"$gpudrv_tmp/lease.json"
	if [ "$1" = create ]; then lp_verb=create; else lp_verb=replace; fi
	if kc "$gpudrv_tmp/lease.rv" "$gpudrv_tmp/lease.err" -n "$lease_ns" "$lp_verb" -f "$gpudrv_tmp/lease.json" \
		-o 'jsonpath={.metadata.resourceVersion}'; then
		lease_rv=$(cat "$gpudrv_tmp/lease.rv")
		[ -n "$lease_rv" ] || lease_rv=unknown
		lease_at=$lp_now
		return 0
	fi
	lease_why=$(grep -v '^[[:space:]]*$' "$gpudrv_tmp/lease.err" | tail -n 1 | cut -c1-300)
	grep -q -e '(Conflict)' -e '(AlreadyExists)' "$gpudrv_tmp/lease.err" && return 1
	return 2
}

# lease_take PRIOR: takes the lease, or exits 2 saying who holds it.  PRIOR:
# the holder this user's lock file names, a run of this machine; a lease
# still held by it is taken over when that run is dead (rollout_lock holds
# the file only once nothing of that run is left).
lease_take() {
	case $lease_ns in
	'' | -* | *- | *[!a-z0-9-]*) die "GPUDRV_LEASE_NAMESPACE takes a namespace name, not '$(printf '%s' "$lease_ns" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'" ;;
	esac
	[ "${#lease_ns}" -le 63 ] || die "GPUDRV_LEASE_NAMESPACE: over 63 characters"
	if [ -n "${GPUDRV_LEASE_DURATION:-}" ]; then
		lease_for=$(secs "$GPUDRV_LEASE_DURATION") || lease_for=0
		[ "$lease_for" -ge 3 ] ||
			die "GPUDRV_LEASE_DURATION takes seconds, 3 or more (60, 60s, 2m), not '$GPUDRV_LEASE_DURATION'"
	fi
	lease_every=$((lease_for / 3))
	lt_host=$(uname -n)
	lt_host=$(printf '%s' "$lt_host" | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63)
	lt_rand=$(od -An -N4 -tx4 /dev/urandom 2>/dev/null | tr -dc '0-9a-f')
	[ -n "$lt_rand" ] || lt_rand=$(awk 'BEGIN { srand(); printf "%08x", rand() * 4294967295 }')
	lease_me=${lt_host:-host}_$$_$lt_rand
	lt_what="the lease $lease_ns/$lease_name (the rollout's lock)"
	lt_st=0
	lease_read || lt_st=$?
	if [ "$lt_st" = 2 ]; then
		[ ! -s "$gpudrv_tmp/lease.err" ] || kubectl_said "cannot read $lt_what" "$gpudrv_tmp/lease.err"
		lease_rbac
	fi
	lt_old=
	if [ "$lt_st" = 1 ]; then
		lease_tr=0
		lt_st=0
		lease_put create || lt_st=$?
		if [ "$lt_st" = 2 ] && grep -q "namespaces \"$lease_ns\" not found" "$gpudrv_tmp/lease.err"; then
			die "the namespace $lease_ns, where the rollout's lease goes, does not exist: make it (kubectl create namespace $lease_ns, or kubectl apply -f deploy/), or name another in GPUDRV_LEASE_NAMESPACE; nothing was changed"
		fi
		if [ "$lt_st" = 2 ]; then
			kubectl_said "cannot create $lt_what" "$gpudrv_tmp/lease.err"
			lease_rbac
		fi
		# Made: now the update that renews and releases it, at once, so
		# that a role without it stops the run before any node is touched.
		if [ "$lt_st" = 0 ]; then
			lt_rv=$lease_rv
			lease_rv=
			lease_put renew "$lt_rv" || {
				kubectl_said "created $lt_what, but cannot update it: it could be neither renewed nor released, and stays held until $(lease_time $((lease_at + lease_for)))" "$gpudrv_tmp/lease.err"
				lease_rbac
			}
		fi
	else
		lt_pid=${lr_holder%_*}
		lt_pid=${lt_pid##*_}
		if [ -z "$lr_holder" ]; then
			:
		elif [ -n "$1" ] && [ "$lr_holder" = "$1" ] && [ "${1%%_*}" = "$lt_host" ] &&
			! kill -0 "$lt_pid" 2>/dev/null && ! [ -d "/proc/$lt_pid" ]; then
			lt_old="a run on this machine that is dead (pid $lt_pid)"
		elif lease_expired; then
			lt_old="an expired lease: $(lease_who)"
		else
			say "another rollout holds $lt_what: $(lease_who)"
			die "nothing was changed; run again once it has ended (or its lease expired; if its run is dead, an administrator may clear it at once: kubectl -n $lease_ns delete lease $lease_name)"
		fi
		lease_tr=$((lr_tr + 1))
		lease_put take "$lr_rv" || lt_st=$?
		if [ "$lt_st" = 2 ]; then
			kubectl_said "cannot update $lt_what" "$gpudrv_tmp/lease.err"
			lease_rbac
		fi
	fi
	if [ "$lt_st" = 1 ]; then
		lease_rv=
		lt_st=0
		lease_read || lt_st=$?
		if [ "$lt_st" = 0 ]; then
			say "another rollout took $lt_what first: $(lease_who)"
		else
			say "another rollout changed $lt_what first ($lease_why)"
		fi
		die "nothing was changed; run again once it has ended (or its lease expired)"
	fi
	[ -z "$lt_old" ] || say "took over $lt_what from $lt_old"
	lease_next=0
}
# lease_rbac: the end of a refused lease request.
lease_rbac() {
	if grep -q '(Forbidden)' "$gpudrv_tmp/lease.err"; then
		die "nothing was changed; the rollout's account needs get, create and update on leases in $lease_ns (deploy/25-upgrader-lease.yaml; with another namespace, put that Role there)"
	fi
	die "nothing was changed"
}

# lease_renew: the lease renewed, if a third of its time has passed since
# the last time.  Another holder found: the run stops (gpudrv_abort), as it
# does when the lease could not be renewed for its whole duration.
lease_renew() {
	[ -n "$lease_rv" ] && [ "$gpudrv_stopping" = 0 ] || return 0
	lr_now=$(date +%s)
	[ $((lr_now - lease_at)) -ge "$lease_every" ] && [ "$lr_now" -ge "$lease_next" ] || return 0
	lr_st=0
	lease_put renew "$lease_rv" || lr_st=$?
	if [ "$lr_st" = 1 ]; then
		# Changed since this run's write: by another holder, or still ours
		# (a write whose answer was lost, a label added).
		lr_st=0
		lease_read || lr_st=$?
		if [ "$lr_st" = 0 ] && [ "$lr_holder" = "$lease_me" ]; then
			lease_rv=$lr_rv
			lease_put renew "$lease_rv" || lr_st=$?
		elif [ "$lr_st" != 2 ]; then
			lease_rv=
			if [ "$lr_st" = 0 ]; then lr_who="held by $(lease_who)"; else lr_who="deleted"; fi
			gpudrv_abort "lost the lease $lease_ns/$lease_name, the rollout's lock (last renewed $((lr_now - lease_at))s ago): it is now $lr_who; this run stops here, as on a signal, so that two rollouts never move the same nodes"
		fi
	fi
	[ "$lr_st" != 0 ] || return 0
	lease_next=$((lr_now + 5))
	if [ $((lr_now + 5 - lease_at)) -ge "$lease_for" ]; then
		lease_rv=
		gpudrv_abort "could not renew the lease $lease_ns/$lease_name, the rollout's lock, for $((lr_now - lease_at))s (kubectl said: $lease_why): it expires, and another rollout may take it; this run stops here, as on a signal"
	fi
	say "warning: could not renew the lease $lease_ns/$lease_name (kubectl said: $lease_why); trying again in 5s (it expires at $(lease_time $((lease_at + lease_for))))"
}

# lease_release: on the way out, the lease made free (no holder), if this
# run holds it; a compare-and-swap, so that a lease another run took over is
# never cleared.
lease_release() {
	[ -n "$lease_rv" ] || return 0
	lr_was=$lease_rv
	lease_rv=
	lr_st=0
	lease_put release "$lr_was" || lr_st=$?
	if [ "$lr_st" = 1 ]; then
		# Changed since this run's write: still ours (released at its new
		# version), or another's, or gone (left alone).
		lr_st=0
		lease_read || lr_st=$?
		if [ "$lr_st" = 0 ] && [ "$lr_holder" = "$lease_me" ]; then
			lease_put release "$lr_rv" || lr_st=$?
		elif [ "$lr_st" != 2 ]; then
			lr_st=0
		fi
	fi
	lease_rv=
	[ "$lr_st" != 0 ] || return 0
	say "warning: could not release the lease $lease_ns/$lease_name (kubectl said: $lease_why): it expires by itself at $(lease_time $((lease_at + lease_for)))"
}

# rollout_lock SERVER: the rollout's locks, before any node is touched: the
# Lease (lease_take), and a file in a directory only the user can write
# (GPUDRV_LOCK_DIR, default ~/.local/state/gpudrv), one per API server,
# held with flock(1) by the run and everything it starts (on fd 9), and
# naming the lease's holder.  After a run killed by SIGKILL, its
# drv-upgrade.sh runs may go on: the file is held until they end, and a
# rerun waits for them, its lease renewed meanwhile, rather than take their
# nodes a second time; it takes over the killed run's lease at once (its
# holder is the one the file names, and dead).  A directory or file that is
# a symbolic link, not the user's, or writable by group or others is
# refused: another user could hold it, or point it elsewhere.
rollout_lock() {
	command -v flock >/dev/null 2>&1 || die "flock(1) not found on PATH: install util-linux"
	if [ -n "${GPUDRV_LOCK_DIR:-}" ]; then
		rl_dir=$GPUDRV_LOCK_DIR
	else
		[ -n "${HOME:-}" ] || die "HOME is not set: name the directory of the rollout's lock in GPUDRV_LOCK_DIR (one only you can write)"
		rl_dir=$HOME/.local/state/gpudrv
	fi
	[ -e "$rl_dir" ] || [ -L "$rl_dir" ] || (umask 077 && mkdir -p -- "$rl_dir") 2>/dev/null ||
		die "cannot create the lock directory $rl_dir (GPUDRV_LOCK_DIR names another)"
	rollout_lock_own "$rl_dir" directory
	lockf=$rl_dir/gpudrv-rollout-$(id -u).$(printf '%s' "$1" | cksum | cut -d' ' -f1).lock
	if [ -e "$lockf" ] || [ -L "$lockf" ]; then rollout_lock_own "$lockf" file; fi
	# (a failed redirection of exec would end the shell: tried first)
	(umask 077 && : >>"$lockf") 2>/dev/null || die "cannot open the lock $lockf"
	exec 9>>"$lockf"
	rl_prior=$(sed -n '1{/^[A-Za-z0-9.-]*_[0-9][0-9]*_[0-9a-f][0-9a-f]*$/p;}' "$lockf")
	lease_take "$rl_prior"
	printf '%s\n' "$lease_me" >"$lockf" || die "cannot write the lock $lockf"
	flock -n 9 && return 0
	say "another drv-rollout.sh of $1 runs on this machine, or upgrades one started still do: waiting for them to end (lock $lockf)"
	until flock -n 9; do
		[ "$(time_left)" -gt 0 ] || die "the run's deadline came ($gpudrv_why) while waiting for the lock $lockf; nothing was changed"
		nap 1
		lease_renew
	done
}
# rollout_lock_own PATH WHAT: exits 2 unless PATH is a directory (WHAT
# directory) or a regular file of the user's, not a symbolic link, that
# only the user can write.
rollout_lock_own() {
	rlo=$(ls -ldn -- "$1" 2>/dev/null) || die "cannot read the lock $2 $1"
	rlo_m=${rlo%% *}
	rlo_u=$(printf '%s\n' "$rlo" | awk '{ print $3 }')
	case $2:$rlo_m in
	*:l*) rlo_why="is a symbolic link" ;;
	directory:d* | file:-*) rlo_why= ;;
	*) rlo_why="is not a $2" ;;
	esac
	[ -n "$rlo_why" ] || [ "$rlo_u" = "$(id -u)" ] || rlo_why="belongs to uid $rlo_u, not to you (uid $(id -u))"
	[ -n "$rlo_why" ] || case $rlo_m in ?????w* | ????????w*) rlo_why="can be written by group or others ($rlo_m)" ;; esac
	[ -z "$rlo_why" ] ||
		die "the lock $2 $1 $rlo_why: refusing it (another user could hold the lock, or point it elsewhere); make it yours, not a link, mode 0700 (file: 0600), or name another directory in GPUDRV_LOCK_DIR; nothing was changed"
}

# --- files (drv-audit.sh -p) ---

gpudrv_new= # put_file's new file while it is not yet renamed into place

# put_file SRC DEST MODE: DEST replaced, atomically, by a copy of SRC with
# MODE (at most 666: 644 for a file others read, 600 for a secret); after
# gpudrv_start.  The copy is a new file beside DEST (the same file system:
# the rename is atomic), .DEST.XXXXXXXXXX, created and written in one open
# that fails when anything has that name already (the shell's noclobber,
# O_EXCL): a name planted in DEST's directory, a symlink above all, is never
# opened, so nothing is ever written through one.  The copy has MODE from its
# creation on and its data on disk (fsync) before the rename makes it DEST:
# after a crash DEST is the old file or the whole new one.  The rename (mv
# -T) replaces DEST itself, a symlink or not, never what DEST points to.
# Status 0, or 1 with $why saying why not, and no file of its own left
# behind; a script that can be stopped in between (a signal) calls drop_new
# on its way out.
put_file() {
	gpudrv_pd=$(dirname -- "$2")
	gpudrv_pu=$(printf '%03o' $((0666 & ~0$3)))
	gpudrv_pe=$gpudrv_tmp/put_file.err
	gpudrv_pn=0
	while :; do
		# A name nobody can foresee; taken only if free (a clash is retried).
		gpudrv_new=$(mktemp -u "$gpudrv_pd/.${2##*/}.XXXXXXXXXX") || {
			gpudrv_new=
			why="cannot make a file name in $gpudrv_pd"
			return 1
		}
		gpudrv_ps=0
		(
			set +e -C
			umask "$gpudrv_pu"
			{ dd if="$1" conv=fsync status=none || exit 4; exit 0; } >"$gpudrv_new"
			# shellcheck disable=SC2317 # reached when the redirection fails
			exit 3
		) 2>"$gpudrv_pe" || gpudrv_ps=$?
		[ "$gpudrv_ps" = 0 ] && break
		if [ "$gpudrv_ps" = 3 ]; then
			# Not made: what has the name is not this run's to remove.
			if { [ -e "$gpudrv_new" ] || [ -h "$gpudrv_new" ]; } && [ "$gpudrv_pn" -lt 5 ]; then
				gpudrv_pn=$((gpudrv_pn + 1))
				continue
			fi
			gpudrv_new=
			why="cannot create a file in $gpudrv_pd: $(sed -n '$s/.*: //p' "$gpudrv_pe")"
			return 1
		fi
		drop_new
		why="cannot write a file in $gpudrv_pd: $(tail -n 1 "$gpudrv_pe")"
		return 1
	done
	if ! mv -f -T -- "$gpudrv_new" "$2" 2>"$gpudrv_pe"; then
		drop_new
		why="cannot rename a new file to $2: $(tail -n 1 "$gpudrv_pe")"
		return 1
	fi
	gpudrv_new=
}

# drop_new: put_file's new file removed, if one is left (a signal came
# between its creation and its rename).
drop_new() {
	[ -z "$gpudrv_new" ] || rm -f -- "$gpudrv_new"
	gpudrv_new=
}
