# t/lib.sh: sourced by every test script.  TAP on stdout; each script works
# in a scratch directory of its own, with bin/ first in PATH.

# Under nohup (or any parent that ignores SIGHUP) a test gets SIGHUP ignored
# on entry, which no shell can undo (POSIX), and the signal tables would
# find it unhandled: such a test starts again, once, with SIGHUP at its
# default (perl, prove's own language, can set it).
if [ -z "${T_HUP_RESET:-}" ] && perl -e 'exit(($SIG{HUP} // "") eq "IGNORE" ? 0 : 1)' 2>/dev/null; then
	T_HUP_RESET=1 exec perl -e '$SIG{HUP} = "DEFAULT"; exec @ARGV or die "exec $ARGV[0]: $!\n"' /bin/sh "$0" "$@"
fi
LC_ALL=C
TZ=UTC
export LC_ALL TZ
unset GPUDRV_MATRIX CDPATH

T=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$T")
DATA=$T/data
# GPUDRV_BIN: the commands under test (make check-asan points it at a
# sanitizer build).
BIN=${GPUDRV_BIN:-$ROOT/bin}
PATH=$BIN:$PATH
export PATH
# GPUDRV_LEAKS_ELSEWHERE (make check-asan), comma-separated: the tests
# whose every filter run valgrind checks for leaks; in those LeakSanitizer
# does not look.
case ",${GPUDRV_LEAKS_ELSEWHERE:-}," in
*",t/${0##*/},"*)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export ASAN_OPTIONS
	;;
esac
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpudrv-t.XXXXXX") || exit 1
# T_KEEP=1: the scratch directory kept, and named on stderr, for a look after.
trap 'if [ "${T_KEEP:-0}" = 1 ]; then echo "# kept: $SCRATCH" >&2; else rm -rf "$SCRATCH"; fi' EXIT
trap 'exit 130' INT TERM
cd "$SCRATCH" || exit 1

# GPUDRV_VALGRIND=1: each C filter runs under valgrind; a leak or an invalid
# access exits 99, which no test expects.
if [ "${GPUDRV_VALGRIND:-0}" = 1 ]; then
	mkdir "$SCRATCH/.vg"
	# (every C filter: the commands of bin/ but the scripts)
	for t_f in "$BIN"/*; do
		t_f=${t_f##*/}
		case $t_f in *.sh | kubectl-gpudrv) continue ;; esac
		printf '#!/bin/sh\n: >"%s"\nexec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "%s" "$@"\n' \
			"$SCRATCH/.vg/ran" "$BIN/$t_f" >"$SCRATCH/.vg/$t_f"
		chmod +x "$SCRATCH/.vg/$t_f"
	done
	PATH=$SCRATCH/.vg:$PATH
fi

t_n=0
t_failed=0

# t_run CMD...: runs CMD with its stdout in ./out, stderr in ./err, status in $rc.
t_run() {
	"$@" >out 2>err
	rc=$?
}

# t_ok STATUS DESCRIPTION: one TAP line; a non-zero STATUS fails it.
t_ok() {
	t_n=$((t_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $t_n - $2"
	else
		echo "not ok $t_n - $2"
		t_failed=$((t_failed + 1))
	fi
}

# t_skip REASON: one check that could not run here, said as a TAP SKIP.
t_skip() {
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP $1"
}

# t_builds WHAT ROOT-WHY CMD...: a test that builds the Debian package
# (make deb: dpkg-buildpackage in a copy of git ls-files) and installs or
# runs it as root goes on only where the CMDs are on PATH, it runs as root
# (ROOT-WHY says what needs it) and $ROOT is a git checkout; elsewhere one
# SKIP says why, and the test ends.
t_builds() {
	t_what=$1
	t_root_why=$2
	shift 2
	why=
	for c; do
		command -v "$c" >/dev/null 2>&1 || why="${why:+$why, }$c"
	done
	[ -z "$why" ] || why="$why not on this machine (.ci/deps test installs them)"
	[ -n "$why" ] || [ "$(id -u)" = 0 ] || why="not root: $t_root_why"
	[ -n "$why" ] || git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 ||
		why="$ROOT is not a git checkout: make deb copies git ls-files"
	[ -n "$why" ] || return 0
	t_skip "$t_what: $why"
	t_done
}

# t_deb: make deb, once for the tree as it is (its files' contents, modes
# and names; the tests that take the package wait for one another): DEBDIR
# $T_DEB in .test-cache/deb, make's exit status in $T_DEB_RC, its output in
# the file $T_DEB_LOG.  Read-only to the tests (copy what you change).  A
# failure is not kept: the next test makes the package again.
t_deb() {
	t_key=$(cd "$ROOT" && make -s tree-files |
		tar --null -T - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - |
		sha256sum | cut -c1-16)
	T_DEB=$ROOT/.test-cache/deb/$t_key
	mkdir -p "$ROOT/.test-cache/deb"
	# One maker at a time (mkdir is atomic); a dead maker's lock is stale.
	until mkdir "$T_DEB.lock" 2>/dev/null; do
		t_holder=$(cat "$T_DEB.lock/pid" 2>/dev/null || :)
		[ -z "$t_holder" ] || kill -0 "$t_holder" 2>/dev/null || rm -rf "$T_DEB.lock"
		sleep 1
	done
	echo $$ >"$T_DEB.lock/pid"
	# (a failed make deb is made again: what failed may be fixed by now)
	if [ "$(cat "$T_DEB.rc" 2>/dev/null)" != 0 ]; then
		# (the packages of trees before this one go)
		for t_f in "$ROOT"/.test-cache/deb/*; do
			case $t_f in "$T_DEB" | "$T_DEB".*) ;; *.lock) ;; *) rm -rf "$t_f" ;; esac
		done
		rm -rf "$T_DEB" "$T_DEB.log"
		make -C "$ROOT" deb DEBDIR="$T_DEB" >"$T_DEB.log" 2>&1
		echo $? >"$T_DEB.rc"
	fi
	rm -rf "$T_DEB.lock"
	T_DEB_RC=$(cat "$T_DEB.rc")
	T_DEB_LOG=$T_DEB.log
}

# t_diag: stdin as TAP comments, on stderr (as Test::More's diag), so that
# prove shows why a check failed without -v, and make check's queue
# (t/harness.pl) at the end of its run.
t_diag() {
	sed 's/^/# /' >&2
}
# t_note: stdin as TAP comments on stdout (Test::More's note): what a run
# found, shown by prove -v only.
t_note() {
	sed 's/^/# /'
}

# t_rc N DESC: the last t_run exited N.  A crash (> 128) or a command not
# found (127) never equals an expected status, so it always fails.
t_rc() {
	if [ "$rc" -eq "$1" ]; then
		t_ok 0 "$2 (exit $1)"
	else
		t_ok 1 "$2 (exit $1)"
		echo "exit status $rc, stderr:" | t_diag
		t_diag <err
	fi
}

# t_out DESC [EXPECTED...]: stdout equals the EXPECTED lines exactly.
t_out() {
	d=$1
	shift
	if [ $# -eq 0 ]; then : >expected; else printf '%s\n' "$@" >expected; fi
	if diff -u expected out >diff; then t_ok 0 "$d"; else t_ok 1 "$d"; t_diag <diff; fi
}

# t_err DESC [EXPECTED...]: stderr equals the EXPECTED lines exactly.
t_err() {
	d=$1
	shift
	if [ $# -eq 0 ]; then : >expected; else printf '%s\n' "$@" >expected; fi
	if diff -u expected err >diff; then t_ok 0 "$d"; else t_ok 1 "$d"; t_diag <diff; fi
}

# t_grep DESC FILE PATTERN: FILE has a line matching the basic regex PATTERN.
t_grep() {
	if grep -q -e "$3" "$2"; then
		t_ok 0 "$1"
	else
		t_ok 1 "$1"
		echo "no line of $2 matches: $3; $2 is:" | t_diag
		t_diag <"$2"
	fi
}

# t_is DESC ACTUAL EXPECTED: two strings are equal.
t_is() {
	if [ "$2" = "$3" ]; then t_ok 0 "$1"; else
		t_ok 1 "$1"
		printf 'expected: %s\ngot: %s\n' "$3" "$2" | t_diag
	fi
}

# t_cmp DESC EXPECTED_FILE ACTUAL_FILE
t_cmp() {
	if diff -u "$2" "$3" >diff; then t_ok 0 "$1"; else t_ok 1 "$1"; t_diag <diff; fi
}

t_done() {
	# Under valgrind, a test in which no filter ran under it ran for
	# nothing (the scripts in bin/ find the bare filters beside them): it
	# has no place in the Makefile's VG_TESTS.
	if [ "${GPUDRV_VALGRIND:-0}" = 1 ]; then
		[ -e "$SCRATCH/.vg/ran" ]
		t_ok $? "valgrind ran a filter here (else take this test out of VG_TESTS)"
	fi
	echo "1..$t_n"
	[ "$t_failed" -eq 0 ]
	exit $?
}

# t_at SECONDS-AGO: the API server's time, that long before $t_now (when
# this file was sourced).
t_now=$(date +%s)
t_at() { date -u -d "@$((t_now - $1))" +%Y-%m-%dT%H:%M:%SZ; }

# t_state_node NAME STATE SKIP UNSCHED READY AGO [ANNOTATIONS] [CORDONER]: a GPU
# node (driver 550.90.07, kernel 5.15.0-107-generic, Ubuntu 22.04) as GET --raw answers it, managedFields and all: the state label last
# changed AGO seconds ago by kubectl-label (no state: "-"), the cordon owned
# by CORDONER (default kubectl, as kubectl cordon and drain write it).
t_state_node() {
	printf '{"metadata":{"name":"%s","labels":{"nvidia.com/gpu.present":"true",' "$1"
	printf '"nvidia.com/cuda.driver.major":"550","nvidia.com/cuda.driver.minor":"90","nvidia.com/cuda.driver.rev":"07",'
	printf '"feature.node.kubernetes.io/kernel-version.full":"5.15.0-107-generic",'
	printf '"feature.node.kubernetes.io/system-os_release.ID":"ubuntu","feature.node.kubernetes.io/system-os_release.VERSION_ID":"22.04"'
	[ "$2" = - ] || printf ',"nvidia.com/gpu-driver-upgrade-state":"%s"' "$2"
	[ "$3" = - ] || printf ',"nvidia.com/gpu-driver-upgrade.skip":"%s"' "$3"
	printf '},"annotations":{%s},"managedFields":[' "${7:-}"
	printf '{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"%s","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{}}},"subresource":"status"}' "$(t_at 5)"
	[ "$2" = - ] || printf ',{"manager":"kubectl-label","operation":"Update","apiVersion":"v1","time":"%s","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:nvidia.com/gpu-driver-upgrade-state":{}}}}}' "$(t_at "$6")"
	[ "$4" != true ] || printf ',{"manager":"%s","operation":"Update","apiVersion":"v1","time":"%s","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:unschedulable":{}}}}' "${8:-kubectl}" "$(t_at 60)"
	printf ']},"spec":{"unschedulable":%s},"status":{"conditions":[{"type":"Ready","status":"%s"}]}}' "$4" "$5"
}
# t_state_nodes NODE...: the NodeList of those t_state_node outputs, one argument each.
t_state_nodes() {
	printf '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":['
	t_sep=
	for t_sn; do printf '%s%s' "$t_sep" "$t_sn"; t_sep=,; done
	printf ']}\n'
}

# t_gpu_pod NODE NS/NAME PHASE READY RESTARTS...: a pod of the GPU
# Operator's daemonsets as GET --raw answers it, a container a RESTARTS ("-"
# for a NODE, PHASE or READY not set: the field is left out).
t_gpu_pod() {
	t_gp_ns=${2%%/*}
	printf '{"metadata":{"name":"%s","generateName":"%s-","namespace":"%s",' "${2#*/}" "${2#*/}" "$t_gp_ns"
	printf '"uid":"0b7c6a52-3f0e-4a8e-9d55-%012d","labels":{"app":"%s","controller-revision-hash":"6c9b8d7f4"},' "$#" "${2#*/}"
	printf '"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"%s","uid":"5d1e","controller":true,"blockOwnerDeletion":true}]},' "${2#*/}"
	printf '"spec":{%s"containers":[{"name":"main","image":"driver:550"}]},"status":{' "$([ "$1" = - ] || printf '"nodeName":"%s",' "$1")"
	t_gp_sep=
	[ "$3" = - ] || { printf '"phase":"%s"' "$3"; t_gp_sep=,; }
	[ "$4" = - ] || { printf '%s"conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"%s"},{"type":"PodScheduled","status":"True"}]' "$t_gp_sep" "$4"; t_gp_sep=,; }
	shift 4
	if [ $# -gt 0 ]; then
		printf '%s"containerStatuses":[' "$t_gp_sep"
		t_gp_sep=
		for t_gp_r; do printf '%s{"name":"c","ready":false,"restartCount":%s,"image":"x","imageID":""}' "$t_gp_sep" "$t_gp_r"; t_gp_sep=,; done
		printf ']'
	fi
	printf '}}'
}
# t_gpu_pods POD...: the PodList of those t_gpu_pod outputs, one argument each.
t_gpu_pods() {
	printf '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":['
	t_sep=
	for t_sn; do printf '%s%s' "$t_sep" "$t_sn"; t_sep=,; done
	printf ']}\n'
}

# t_matrix: matrix.csv here, the lab's support matrix with the row for
# 550 on lab-node-1's kernel (5.15.0-107, ubuntu22.04: the stand-ins' and
# the sandbox's upgrade target), and $M its path.
t_matrix() {
	M=$PWD/matrix.csv
	{ cat "$ROOT/lab/support-matrix.csv"; echo 550,5.15.0-107-generic,ubuntu22.04; } >"$M"
}

# t_gen: builds gen/ (the tests' and benchmarks' input generator, usage in
# gen/main.c) once a script, as $GEN.
t_gen() {
	GEN=$SCRATCH/gen
	[ -x "$GEN" ] && return 0
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -o "$GEN" "$ROOT"/gen/*.c ||
		{ echo "Bail out! cannot build gen/"; exit 1; }
}
# t_whole: builds ./whole once a script, the tests' own reader of a whole
# input (t/whole.c: plain cJSON and libyaml's document API, no code of
# common/), which writes each document back as a line of compact JSON.
t_whole() {
	[ -x "$SCRATCH/whole" ] && return 0
	# shellcheck disable=SC2046 # the flags are words
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -o "$SCRATCH/whole" "$T/whole.c" \
		$(pkg-config --cflags --libs libcjson yaml-0.1 2>/dev/null || echo -I/usr/include/cjson -lcjson -lyaml) ||
		{ echo "Bail out! cannot build t/whole.c"; exit 1; }
}

# t_same DESC CMD... FILE: CMD streams FILE; given instead what ./whole
# makes of FILE (parsed whole, independently), it must print the same on
# stdout with the same exit status, and where both refuse it, the same
# message (but for the file's name and positions); where ./whole refuses
# FILE, CMD must refuse it too (exit 2, nothing on stdout; with -w, what the
# documents before the bad one give).  With $STDIN set, that file is
# CMD's standard input and FILE is not replaced.  Leaves CMD's own run in
# out, err and $rc.
t_same() {
	t_sd=$1
	shift
	t_whole
	t_sin=${STDIN:-/dev/null}
	t_wst=0
	for t_sf; do :; done
	[ -z "${STDIN:-}" ] || t_sf=$STDIN
	"$SCRATCH/whole" "$t_sf" >"$SCRATCH/w.in" 2>"$SCRATCH/w.msg" || t_wst=$?
	"$@" <"$t_sin" >out 2>err
	rc=$?
	# The same command on the whole reader's JSON: its file (the last
	# argument) or its standard input replaced.
	t_sn=$#
	t_si=0
	t_sw=0
	for t_sa; do
		t_si=$((t_si + 1))
		[ "$t_sa" != -w ] || t_sw=1
		if [ -z "${STDIN:-}" ] && [ "$t_si" = "$t_sn" ]; then
			set -- "$@" "$SCRATCH/w.in"
		else
			set -- "$@" "$t_sa"
		fi
	done
	shift "$t_sn"
	[ -z "${STDIN:-}" ] || t_sin=$SCRATCH/w.in
	: >"$SCRATCH/w.out"
	t_wrc=2
	# Refused by the whole reader: nothing to run but, with -w (documents
	# as they come), on the documents before the bad one.
	if [ "$t_wst" = 0 ] || [ "$t_sw" = 1 ]; then
		"$@" <"$t_sin" >"$SCRATCH/w.out" 2>"$SCRATCH/w.err"
		t_wrc=$?
		[ "$t_wst" = 0 ] || t_wrc=2
	fi
	# Both refused what the whole reader took: for the same reason, said in
	# the same words (the file's name and the positions in it aside), or
	# a reader that refused good input would pass unseen.
	t_sme=0
	if [ "$t_wst" = 0 ] && [ "$rc" = 2 ] && [ "$t_wrc" = 2 ]; then
		for t_sx in err "$SCRATCH/w.err"; do
			sed -e "s|$t_sf|FILE|g" -e "s|$SCRATCH/w.in|FILE|g" -e 's/:[0-9][0-9]*:[0-9][0-9]*:/:/g' \
				-e 's/:[0-9][0-9]*: /: /' -e 's/ (line [0-9]*)//' \
				-e 's/more than one [JSONYAML]* document/more than one document/' "$t_sx"
		done >"$SCRATCH/w.both"
		t_sl=$(grep -c . err)
		sed -n "1,${t_sl}p" "$SCRATCH/w.both" >"$SCRATCH/w.e1"
		sed "1,${t_sl}d" "$SCRATCH/w.both" >"$SCRATCH/w.e2"
		cmp -s "$SCRATCH/w.e1" "$SCRATCH/w.e2" || t_sme=1
	fi
	if [ "$t_wrc" = "$rc" ] && [ "$rc" -lt 3 ] && [ "$t_sme" = 0 ] && cmp -s "$SCRATCH/w.out" out; then
		t_ok 0 "$t_sd"
	else
		t_ok 1 "$t_sd"
		echo "streamed: exit $rc; on the whole reader's JSON: exit $t_wrc" | t_diag
		[ "$t_wst" = 0 ] || echo "the whole reader refused it: $(cat "$SCRATCH/w.msg")" | t_diag
		diff -u out "$SCRATCH/w.out" | head -n 20 | t_diag
		[ "$t_sme" = 0 ] || diff -u "$SCRATCH/w.e1" "$SCRATCH/w.e2" | head -n 10 | t_diag
	fi
}

# t_val DESC EXPECTED: stdout is the one value EXPECTED, final newline or not
# (kubectl -o jsonpath prints none).
t_val() {
	if [ "$(cat out)" = "$2" ]; then
		t_ok 0 "$1"
	else
		t_ok 1 "$1"
		echo "expected: $2" | t_diag
		echo "got: $(cat out)" | t_diag
	fi
}

# t_alive PID: PID is a running process (a zombie is not: nothing may reap
# it in a container whose init does not).
t_alive() {
	if [ -d /proc/self ]; then
		[ -r "/proc/$1/stat" ] || return 1
		# The state follows the command name, which is in parentheses.
		t_st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
		case $t_st in '' | Z*) return 1 ;; esac
	else
		# No /proc: a zombie counts as alive, so the check can only be stricter.
		kill -0 "$1" 2>/dev/null
	fi
}

# t_none_alive DESC FILE: no pid listed in FILE (one a line) still runs.
t_none_alive() {
	t_left=
	if [ -f "$2" ]; then
		while read -r t_p; do
			! t_alive "$t_p" || t_left="$t_left $t_p"
		done <"$2"
	fi
	if [ -z "$t_left" ]; then
		t_ok 0 "$1"
	else
		t_ok 1 "$1"
		for t_p in $t_left; do
			echo "still running: $t_p $(tr '\0' ' ' <"/proc/$t_p/cmdline" 2>/dev/null)" | t_diag
			kill -KILL "$t_p" 2>/dev/null
		done
	fi
}

# t_bg CMD...: CMD in the background, stdout in ./out, stderr in ./err, its
# pid in $t_pid; with SIGINT at its default, as from a terminal (a
# background job of a non-interactive shell ignores it, and a script cannot
# trap a signal ignored on entry).
t_bg() {
	perl -e '$SIG{INT} = "DEFAULT"; exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n"' "$@" >out 2>err &
	t_pid=$!
}

# t_wait SECONDS: waits for $t_pid, at most SECONDS (then KILLs it, and the
# status says so); its status in $rc.
t_wait() {
	t_i=0
	while t_alive "$t_pid" && [ "$t_i" -lt $(($1 * 10)) ]; do
		sleep 0.1
		t_i=$((t_i + 1))
	done
	! t_alive "$t_pid" || kill -KILL "$t_pid"
	rc=0
	wait "$t_pid" || rc=$?
}

# t_until SECONDS COMMAND...: polls COMMAND every 0.1 s; 1 after SECONDS.
t_until() {
	t_i=0
	t_max=$(($1 * 10))
	shift
	until "$@"; do
		t_i=$((t_i + 1))
		[ "$t_i" -lt "$t_max" ] || return 1
		sleep 0.1
	done
}

# T_DRAIN: the lab's upgradePolicy, for drv-upgrade.sh: every pod of the
# node drained, as kubectl drain --ignore-daemonsets --delete-emptydir-data
# drains it (no pod deletion first); the tests of the drain take it, those
# of the cluster's own policy none.
T_DRAIN="-U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true"

# The stand-in's helpers: t_standin, t_serve, and the stand-ins of a
# cluster (t/standin.sh).
. "$T/standin.sh"
