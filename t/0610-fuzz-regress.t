#!/bin/sh
# Every fuzzing seed (fuzz/seeds) and every input a fuzzer once crashed on
# (t/data/fuzz/<target>/) gets a clean answer: exit 0, 1 or 2, and no
# sanitizer report (make check-asan runs this under ASan and UBSan).
. "$(dirname "$0")/lib.sh"

# A sanitizer report can only be looked for in a sanitizer build: make
# check-asan says it made one (GPUDRV_SANITIZED=1), and that is checked.
san=0
if ldd "$BIN/labels2tag" 2>/dev/null | grep -q libasan; then san=1; fi
if [ "${GPUDRV_SANITIZED:-0}" = 1 ]; then
	t_ok "$((1 - san))" "GPUDRV_SANITIZED=1: $BIN/labels2tag is built with AddressSanitizer"
	# The shared code too, not only cmd/: json_stream (common/json.c) checks
	# its memory accesses.
	n=$(objdump -d --no-show-raw-insn "$BIN/labels2tag" | awk '/<json_stream>:/,/^$/' | grep -c __asan_report)
	t_ok "$([ "$n" -gt 0 ] && echo 0 || echo 1)" "GPUDRV_SANITIZED=1: common/ is instrumented too ($n checks in json_stream)"
fi
cp "$ROOT/lab/support-matrix.csv" matrix.csv
printf '%s\n' "lab-node-0 550-5.15.0-119-generic-ubuntu22.04" >lines.txt
for target in nodes-json nodes-yaml watch matrix lines pdb targets plan-facts plan-draws alerts; do
	for f in "$ROOT/fuzz/seeds/$target"/* "$T/data/fuzz/$target"/*; do
		[ -f "$f" ] || continue
		case $target in
		nodes-json | nodes-yaml) t_run labels2tag -s -u "$f" ;;
		watch) t_run labels2tag -w -s -u "$f" ;;
		matrix) t_run matrix-grep -D -m "$f" lines.txt ;;
		lines) t_run matrix-grep -m matrix.csv "$f" ;;
		pdb) t_run pdb-check -s lab-node-1 "$f" ;;
		targets) t_run labels2tag -u -t "$f" "$T/data/lab-nodes.json" ;;
		plan-facts) t_run rollout-plan -D -v 550.90.07 -p 2 -u 50% "$f" "$ROOT/fuzz/seeds/plan-draws/draws" ;;
		plan-draws) t_run rollout-plan -D -v 550.90.07 -p 2 -u 50% "$ROOT/fuzz/seeds/plan-facts/fleet" "$f" ;;
		alerts) t_run alert-gate -F -r 'Xid|Down' "$f" ;;
		esac
		name="$target ${f##*/}"
		if [ "$rc" -le 2 ]; then t_ok 0 "$name: a clean answer (exit $rc)"; else
			t_ok 1 "$name: a clean answer (exit $rc)"
			t_diag <err
		fi
		if [ "$san" = 0 ]; then
			t_skip "$name: no sanitizer report: not a sanitizer build (make check-asan)"
		elif grep -q -e 'Sanitizer' -e 'runtime error' err; then
			t_ok 1 "$name: no sanitizer report"
			t_diag <err
		else
			t_ok 0 "$name: no sanitizer report"
		fi
	done
done
t_done
