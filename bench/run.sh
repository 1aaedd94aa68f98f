#!/bin/sh
# bench/run.sh: `make bench`.  Medians of RUNS runs (wall) and peak RSS
# (/usr/bin/time -v), all measured in this one run, side by side with the
# ratios against jq and against a whole-tree parse (the tests' own reader,
# t/whole.c, piped into the command).  Needs jq and GNU time.
# BENCH_N: the node list sizes (default "1000 5000"); BENCH_PDB: the
# pdb-check inputs, PODS,BUDGETS,NODES each (default "10000,1000,1000
# 100000,10000,10000"; YAML too up to 10,000 pods); BENCH_CASES: which of
# labels2tag, matrix-grep, pdb-check (default all three); RUNS (default 5).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=$root/bin
out=$here/out
gen=$out/gen
whole=$out/whole-tree
runs=${RUNS:-5}
sizes=${BENCH_N:-1000 5000}
pdb_sizes=${BENCH_PDB:-10000,1000,1000 100000,10000,10000}
cases=${BENCH_CASES:-labels2tag matrix-grep pdb-check}
want() { case " $cases " in *" $1 "*) return 0 ;; esac; return 1; }

for t in jq /usr/bin/time; do
	command -v "$t" >/dev/null 2>&1 || {
		echo "bench: $t is missing (Debian packages jq and time)" >&2
		exit 2
	}
done
for t in "$gen" "$whole"; do
	[ -x "$t" ] || { echo "bench: $t missing: run make bench" >&2; exit 2; }
done
# For sh -c: "$0" FILE | "$2" ["$3"], a whole-tree parse piped into a command.
# shellcheck disable=SC2016 # expanded by that sh
pipe2='"$0" "$1" | "$2"' pipe3='"$0" "$1" | "$2" "$3"'
# wholly CMD FILE ARGS...: FILE parsed whole by t/whole.c, then CMD ARGS on it.
wholly() {
	w_cmd=$1 w_file=$2
	shift 2
	"$whole" "$w_file" | "$w_cmd" "$@"
}

# The same '<node> <tag>' lines as labels2tag, for the generated nodes,
# under the GPU Operator's older OS tag rule (GPUDRV_TAG_RULE=26.3: the
# minor version kept, rhel9.4), which a jq line can follow; today's rule
# (rhel9) needs a table jq has no business holding.  What is measured is
# the reading, the same under either rule.
GPUDRV_TAG_RULE=26.3
export GPUDRV_TAG_RULE
# shellcheck disable=SC2016 # jq's $l, not the shell's
jqprog='.items[] | .metadata.name + " " + (.metadata.labels as $l |
	$l["nvidia.com/cuda.driver.major"] + "-" +
	$l["feature.node.kubernetes.io/kernel-version.full"] + "-" +
	$l["feature.node.kubernetes.io/system-os_release.ID"] +
	$l["feature.node.kubernetes.io/system-os_release.VERSION_ID"])'

# measure NAME CMD...: sets med (s) and rss (MiB, the highest of the runs).
measure() {
	name=$1
	shift
	: >"$out/times"
	rss_kb=0
	i=0
	while [ "$i" -lt "$runs" ]; do
		t0=$(date +%s%N)
		/usr/bin/time -v -o "$out/tv" "$@" >/dev/null 2>"$out/err" || {
			st=$?
			# pdb-check and matrix-grep exit 1 for findings
			if [ "$st" -ne 1 ] || ! grep -q 'Exit status: 1' "$out/tv"; then
				echo "bench: $name failed (exit $st):" >&2
				cat "$out/err" "$out/tv" >&2
				exit 2
			fi
		}
		t1=$(date +%s%N)
		# wall time in ms (time -v rounds to 10 ms)
		echo $(((t1 - t0) / 1000000)) >>"$out/times"
		kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$out/tv")
		[ "$kb" -gt "$rss_kb" ] && rss_kb=$kb
		i=$((i + 1))
	done
	med=$(sort -n "$out/times" | sed -n "$(((runs + 1) / 2))p" |
		awk '{ printf "%.3f", $1 / 1000 }')
	rss=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
}

row() { # NAME MEDIAN RSS VS_JQ VS_WHOLE
	printf '%-44s %9s %10s %9s %9s\n' "$1" "$2" "$3" "$4" "$5"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

echo "gpudrv bench: $(nproc) CPU(s), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(date -u +%Y-%m-%d), $runs runs each; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if want labels2tag || want matrix-grep; then
	row "case" "median s" "peak MiB" "jq/this" "whole/this"
fi

want labels2tag || sizes=
for n in $sizes; do
	"$gen" "$n" >"$out/nodes-$n.json"
	"$gen" -y "$n" >"$out/nodes-$n.yaml"
	mb=$(awk -v b="$(wc -c <"$out/nodes-$n.json")" 'BEGIN { printf "%.0f", b / 1e6 }')
	ymb=$(awk -v b="$(wc -c <"$out/nodes-$n.yaml")" 'BEGIN { printf "%.0f", b / 1e6 }')
	cat "$out/nodes-$n.json" "$out/nodes-$n.yaml" >/dev/null # warm the page cache

	# the three must print the same lines
	"$bin/labels2tag" "$out/nodes-$n.json" >"$out/l2t"
	wholly "$bin/labels2tag" "$out/nodes-$n.json" >"$out/whole"
	jq -r "$jqprog" "$out/nodes-$n.json" >"$out/jq"
	if ! cmp -s "$out/l2t" "$out/jq" || ! cmp -s "$out/l2t" "$out/whole"; then
		echo "bench: labels2tag, the whole-tree reader and jq disagree on $n nodes" >&2
		exit 2
	fi

	measure jq jq -r "$jqprog" "$out/nodes-$n.json"
	jq_med=$med
	row "JSON $n nodes ($mb MB): jq -r" "$med" "$rss" "1.0x" "-"
	measure whole sh -c "$pipe2" "$whole" "$out/nodes-$n.json" "$bin/labels2tag"
	whole_med=$med
	row "JSON $n nodes: whole tree | labels2tag" "$med" "$rss" "$(ratio "$jq_med" "$med")" "1.0x"
	measure stream "$bin/labels2tag" "$out/nodes-$n.json"
	row "JSON $n nodes: labels2tag, streamed" "$med" "$rss" "$(ratio "$jq_med" "$med")" \
		"$(ratio "$whole_med" "$med")"
	measure whole-yaml sh -c "$pipe2" "$whole" "$out/nodes-$n.yaml" "$bin/labels2tag"
	whole_med=$med
	row "YAML $n nodes ($ymb MB): whole tree | labels2tag" "$med" "$rss" "-" "1.0x"
	measure stream-yaml "$bin/labels2tag" "$out/nodes-$n.yaml"
	row "YAML $n nodes: labels2tag, streamed" "$med" "$rss" "-" "$(ratio "$whole_med" "$med")"
done

# matrix-grep: 100,000 matrix rows against the tags of 5,000 nodes.
if want matrix-grep; then
	"$gen" -m 100000 >"$out/matrix.csv"
	"$gen" 5000 | "$bin/labels2tag" >"$out/tags-5000"
	measure matrix-grep "$bin/matrix-grep" -m "$out/matrix.csv" "$out/tags-5000"
	row "matrix-grep: 100,000 rows x 5,000 nodes" "$med" "$rss" "-" "-"
fi

# pdb-check: `kubectl get pdb,pods -A -o json` of a GPU cluster (gen
# -p), streamed and parsed whole first, beside jq reading the same file.  The node asked
# about: gpu-node-00001 (~9 pods, one its DaemonSet's).
prow() { # NAME MEDIAN RSS VS_JQ VS_WHOLE
	printf '%-66s %9s %10s %8s %10s\n' "$1" "$2" "$3" "$4" "$5"
}
mb() { awk -v b="$(wc -c <"$1")" 'BEGIN { printf "%.0f", b / 1e6 }'; }
th() { # 100000 -> 100,000
	echo "$1" | awk '{ n = $1; s = ""
		while (length(n) > 3) { s = "," substr(n, length(n) - 2) s; n = substr(n, 1, length(n) - 3) }
		print n s }'
}
# same FILE NODE...: pdb-check -s streamed and on the whole-tree reader's
# JSON say the same (stdout, exit status) of FILE for each NODE.
same() {
	f=$1
	shift
	for s_node in "$@"; do
		src=0 wrc=0
		"$bin/pdb-check" -s "$s_node" "$f" >"$out/s.out" 2>"$out/s.err" || src=$?
		wholly "$bin/pdb-check" "$f" -s "$s_node" >"$out/w.out" 2>"$out/w.err" || wrc=$?
		if [ "$src" -gt 1 ] || [ "$src" != "$wrc" ] || ! cmp -s "$out/s.out" "$out/w.out"; then
			echo "bench: pdb-check streamed (exit $src) and whole (exit $wrc) disagree on $s_node in $f:" >&2
			diff "$out/w.out" "$out/s.out" >&2 || :
			exit 2
		fi
		verdict="$verdict $s_node: $(if [ "$src" = 0 ]; then echo OK; else
			echo "exit $src, $(grep -c . "$out/s.out") lines"; fi),"
	done
}
if want pdb-check; then
	echo
	prow "pdb-check gpu-node-00001" "median s" "peak MiB" "jq/this" "whole/this"
	node=gpu-node-00001
	for spec in $pdb_sizes; do
		np=${spec%%,*}
		rest=${spec#*,}
		nb=${rest%%,*}
		nn=${rest#*,}
		what="$(th "$np") pods, $(th "$nb") budgets"
		f=$out/pdb-$np.json
		"$gen" -p "$np,$nb" "$nn" >"$f"
		cat "$f" >/dev/null # warm the page cache
		verdict=
		same "$f" "$node" gpu-node-00002 gpu-node-00003
		echo "  (streamed = whole tree, pdb-check -s, on$verdict ${np} pods: $(($(wc -c <"$f") / np)) bytes of the file a pod)"
		measure jq jq -c '.items|length' "$f"
		jq_med=$med
		prow "JSON $what ($(mb "$f") MB): jq -c '.items|length'" "$med" "$rss" "1.0x" "-"
		measure whole sh -c "$pipe3" "$whole" "$f" "$bin/pdb-check" "$node"
		whole_med=$med
		prow "JSON $what: whole tree | pdb-check" "$med" "$rss" "$(ratio "$jq_med" "$med")" "1.0x"
		measure stream "$bin/pdb-check" "$node" "$f"
		prow "JSON $what: pdb-check, streamed" "$med" "$rss" "$(ratio "$jq_med" "$med")" \
			"$(ratio "$whole_med" "$med")"
		[ "$np" -le 10000 ] || { rm -f "$f"; continue; }
		y=$out/pdb-$np.yaml
		"$gen" -y -p "$np,$nb" "$nn" >"$y"
		cat "$y" >/dev/null
		verdict=
		same "$y" "$node" gpu-node-00002 gpu-node-00003
		echo "  (YAML: streamed = whole tree on$verdict $(($(wc -c <"$y") / np)) bytes a pod)"
		measure whole-yaml sh -c "$pipe3" "$whole" "$y" "$bin/pdb-check" "$node"
		whole_med=$med
		prow "YAML $what ($(mb "$y") MB): whole tree | pdb-check" "$med" "$rss" "-" "1.0x"
		measure stream-yaml "$bin/pdb-check" "$node" "$y"
		prow "YAML $what: pdb-check, streamed" "$med" "$rss" "-" "$(ratio "$whole_med" "$med")"
	done
	# Memory with the pods alone grown: the largest size's pods, the first's budgets.
	last=${pdb_sizes##* }
	first=${pdb_sizes%% *}
	np=${last%%,*}
	nn=${last##*,}
	nb=${first#*,}
	nb=${nb%%,*}
	if [ "$first" != "$last" ]; then
		f=$out/pdb-$np-$nb.json
		"$gen" -p "$np,$nb" "$nn" >"$f"
		cat "$f" >/dev/null
		verdict=
		same "$f" "$node"
		measure stream "$bin/pdb-check" "$node" "$f"
		prow "JSON $(th "$np") pods, $(th "$nb") budgets ($(mb "$f") MB): pdb-check, streamed" \
			"$med" "$rss" "-" "-"
		rm -f "$f"
	fi
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
rm -f "$out/times" "$out/tv" "$out/err" "$out/l2t" "$out/whole" "$out/jq" "$out/s.out" \
	"$out/s.err" "$out/w.out" "$out/w.err"
