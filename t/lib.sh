# t/lib.sh: sourced by every test script.  TAP on stdout; each script works
# in a scratch directory of its own, with bin/ first in PATH.
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
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpudrv-t.XXXXXX") || exit 1
trap 'rm -rf "$SCRATCH"' EXIT
trap 'exit 130' INT TERM
cd "$SCRATCH" || exit 1

# GPUDRV_VALGRIND=1: each C filter runs under valgrind; a leak or an invalid
# access exits 99, which no test expects.
if [ "${GPUDRV_VALGRIND:-0}" = 1 ]; then
	mkdir "$SCRATCH/.vg"
	for t_f in labels2tag matrix-grep pdb-check report-fmt; do
		printf '#!/bin/sh\nexec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "%s" "$@"\n' \
			"$BIN/$t_f" >"$SCRATCH/.vg/$t_f"
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

t_diag() {
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

# t_cmp DESC EXPECTED_FILE ACTUAL_FILE
t_cmp() {
	if diff -u "$2" "$3" >diff; then t_ok 0 "$1"; else t_ok 1 "$1"; t_diag <diff; fi
}

t_done() {
	echo "1..$t_n"
	[ "$t_failed" -eq 0 ]
	exit $?
}

# t_fake_kubectl: ./kubectl, a stand-in for unit tests of the scripts (the
# end-to-end tests use the real one against the sandbox).  It logs its
# arguments to ./kubectl.log and, by $FAKE_KUBECTL: "ok" prints $FAKE_OUT,
# "down" fails as kubectl does with no API server, "notfound" as for a
# missing node, "forbidden" as RBAC does.
t_fake_kubectl() {
	cat >kubectl <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >>kubectl.log
case ${FAKE_KUBECTL:-ok} in
ok) cat "$FAKE_OUT" ;;
down)
	echo 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?' >&2
	exit 1
	;;
notfound)
	echo "Error from server (NotFound): nodes \"$3\" not found" >&2
	exit 1
	;;
forbidden)
	echo 'Error from server (Forbidden): nodes is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "nodes" in API group "" at the cluster scope' >&2
	exit 1
	;;
esac
STUB
	chmod +x kubectl
	KUBECTL=$PWD/kubectl
	export KUBECTL
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
