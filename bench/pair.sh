#!/bin/sh
# bench/pair.sh: builds of one command, timed in turns in one run.
#   sh bench/pair.sh [-n RUNS] DIR DIR... -- CMD [ARGS...]
# runs DIR/CMD ARGS for each DIR in turn, RUNS rounds (default 5), standard
# output to /dev/null, and prints each one's median wall time (ms) and its
# ratio to the first DIR's.  A run that exits 2 stops the bench (pdb-check
# exits 1 for findings).  Taking turns puts the builds under the same load
# on a shared machine, which separate runs do not.
set -eu

usage() {
	echo "usage: pair.sh [-n RUNS] DIR DIR... -- CMD [ARGS...]" >&2
	exit 2
}
runs=5
if [ "${1-}" = -n ]; then
	[ $# -ge 2 ] || usage
	runs=$2
	shift 2
fi
dirs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	dirs="$dirs $1"
	shift
done
[ $# -ge 2 ] || usage
cmd=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# once K DIR ARGS...: one timed run of DIR/CMD ARGS, its wall time in ms
# appended to $tmp/K.
once() {
	o_k=$1 o_dir=$2
	shift 2
	st=0
	t0=$(date +%s%N)
	"$o_dir/$cmd" "$@" >/dev/null 2>"$tmp/err" || st=$?
	t1=$(date +%s%N)
	[ "$st" -le 1 ] || {
		echo "pair.sh: $o_dir/$cmd exited $st:" >&2
		cat "$tmp/err" >&2
		exit 2
	}
	echo $(((t1 - t0) / 1000000)) >>"$tmp/$o_k"
}
median() { sort -n "$tmp/$1" | sed -n "$(((runs + 1) / 2))p"; }

i=0
while [ "$i" -lt "$runs" ]; do
	k=0
	for d in $dirs; do
		once "$k" "$d" "$@"
		k=$((k + 1))
	done
	i=$((i + 1))
done
echo "$cmd $*: median of $runs runs, in turns"
k=0
for d in $dirs; do
	m=$(median "$k")
	[ "$k" -gt 0 ] || first=$m
	printf '  %-40s %6s ms  %s\n' "$d" "$m" "$(awk -v a="$m" -v b="$first" 'BEGIN { printf "%.3f", a / b }')"
	k=$((k + 1))
done
