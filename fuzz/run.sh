#!/bin/sh
# fuzz/run.sh [TARGET...]: AFL++ against every parser, through the real
# commands (exit 0, 1 or 2 is a clean answer; a crash, a sanitizer report or
# a hang is a finding).  Each target runs $FUZZ_SECONDS (default 600).
# Findings are left in fuzz/out/<target>/default/{crashes,hangs}; keep each
# crasher as a regression input in t/data/fuzz/<target>/ once fixed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${FUZZ_OUT:-$here/out}
seconds=${FUZZ_SECONDS:-600}
command -v afl-fuzz >/dev/null 2>&1 || {
	echo "fuzz: afl-fuzz not found: apt-get install -y afl++" >&2
	exit 2
}

# An instrumented build with AddressSanitizer and UBSan, apart from bin/.
build=$out/build
rm -rf "$build" && mkdir -p "$build"
cp -R "$root/Makefile" "$root/VERSION" "$root/cmd" "$root/common" "$root/sh" "$root/.ci" "$build/"
# The checkout's own objects must not stand in for instrumented ones: copied
# after their sources, they would look up to date, and the shared code would
# run without coverage feedback or sanitizers.
rm -f "$build"/common/*.o "$build"/common/*.a
AFL_USE_ASAN=1 AFL_USE_UBSAN=1 make -s -C "$build" all CC=afl-clang-fast \
	CFLAGS='-O1 -g -fno-omit-frame-pointer' >"$out/build.log" 2>&1 || {
	tail -n 20 "$out/build.log" >&2
	exit 2
}
B=$build/bin

# Fixed companions for the targets that read two inputs.
fixed=$out/fixed
mkdir -p "$fixed"
cp "$root/lab/support-matrix.csv" "$fixed/matrix.csv"
cp "$root/t/data/lab-nodes.json" "$fixed/nodes.json"
printf '%s\n' "lab-node-0 550-5.15.0-119-generic-ubuntu22.04" "lab-node-3 550-6.8.0-52-generic-ubuntu24.04" >"$fixed/lines.txt"
cp "$here/seeds/plan-facts/fleet" "$fixed/facts"
cp "$here/seeds/plan-draws/draws" "$fixed/draws"

# seeds TARGET FIXTURE...: the target's small seeds plus test fixtures.
seeds() {
	d=$out/seeds/$1
	shift
	rm -rf "$d" && mkdir -p "$d"
	cp "$here/seeds/$(basename "$d")"/* "$d/"
	for f in "$@"; do
		[ ! -f "$f" ] || [ "$(wc -c <"$f")" -gt 65536 ] || cp "$f" "$d/"
	done
	echo "$d"
}

run() { # run TARGET SEEDS COMMAND...
	t=$1 s=$2
	shift 2
	echo "fuzz: $t for ${seconds}s: $*" >&2
	AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
		AFL_NO_AFFINITY=1 ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:symbolize=0 \
		UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1 \
		afl-fuzz -V "$seconds" -m none -t 2000 -i "$s" -o "$out/$t" -- "$@" \
		>"$out/$t.log" 2>&1 || {
		tail -n 20 "$out/$t.log" >&2
		return 1
	}
}

targets=${*:-nodes-json nodes-yaml watch matrix lines pdb rows targets plan-facts plan-draws alerts}
found=0
for t in $targets; do
	case $t in
	nodes-json) run "$t" "$(seeds "$t" "$root"/t/data/*nodes*.json "$root"/t/data/node-1.json)" "$B/labels2tag" -s -u @@ ;;
	nodes-yaml) run "$t" "$(seeds "$t" "$root"/t/data/*.yaml)" "$B/labels2tag" -u @@ ;;
	watch) run "$t" "$(seeds "$t")" "$B/labels2tag" -w -s -u @@ ;;
	matrix) run "$t" "$(seeds "$t")" "$B/matrix-grep" -D -m @@ "$fixed/lines.txt" ;;
	lines) run "$t" "$(seeds "$t")" "$B/matrix-grep" -m "$fixed/matrix.csv" @@ ;;
	pdb) run "$t" "$(seeds "$t" "$root"/t/data/pdb-*.json "$root"/t/data/pdb-lab.yaml)" "$B/pdb-check" -s lab-node-1 @@ ;;
	rows) run "$t" "$(seeds "$t")" "$B/pdb-check" -b -w @@ ;;
	targets) run "$t" "$(seeds "$t")" "$B/labels2tag" -u -t @@ "$fixed/nodes.json" ;;
	plan-facts) run "$t" "$(seeds "$t")" "$B/rollout-plan" -D -v 550.90.07 -p 2 -u 50% @@ "$fixed/draws" ;;
	plan-draws) run "$t" "$(seeds "$t")" "$B/rollout-plan" -D -v 550.90.07 -p 2 -u 50% "$fixed/facts" @@ ;;
	alerts) run "$t" "$(seeds "$t")" "$B/alert-gate" -F -r 'Xid|Down' @@ ;;
	*) echo "fuzz: unknown target $t (nodes-json nodes-yaml watch matrix lines pdb rows targets plan-facts plan-draws alerts)" >&2; exit 2 ;;
	esac
	n=$(find "$out/$t/default/crashes" "$out/$t/default/hangs" -type f ! -name README.txt 2>/dev/null | wc -l)
	execs=$(sed -n 's/^execs_done *: //p' "$out/$t/default/fuzzer_stats" 2>/dev/null || echo '?')
	paths=$(sed -n 's/^corpus_count *: //p' "$out/$t/default/fuzzer_stats" 2>/dev/null || echo '?')
	echo "fuzz: $t: $execs executions, $paths inputs in the corpus, $n crashes or hangs"
	[ "$n" -eq 0 ] || found=1
done
[ "$found" -eq 0 ] || { echo "fuzz: findings in $out/*/default/{crashes,hangs}" >&2; exit 1; }
