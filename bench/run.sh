#!/bin/sh
# bench/run.sh: `make bench`.  Medians of RUNS runs (wall) and peak RSS
# (/usr/bin/time -v), all measured in this one run, side by side with the
# ratios against jq and against the whole-tree path.  Needs jq and GNU time.
# BENCH_N: the list sizes (default "1000 5000"); RUNS (default 5).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=$root/bin
out=$here/out
gen=$out/gen-nodes
runs=${RUNS:-5}
sizes=${BENCH_N:-1000 5000}

for t in jq /usr/bin/time; do
	command -v "$t" >/dev/null 2>&1 || {
		echo "bench: $t is missing (Debian packages jq and time)" >&2
		exit 2
	}
done
[ -x "$gen" ] || { echo "bench: $gen missing: run make bench" >&2; exit 2; }

# The same '<node> <tag>' lines as labels2tag, for the generated nodes (whose
# OS tags keep their minor version, so no Rocky/RHEL 10 rule is needed).
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

echo "gpudrv bench: $(nproc) CPU(s), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(date -u +%Y-%m-%d), $runs runs each"
row "case" "median s" "peak MiB" "jq/this" "whole/this"

for n in $sizes; do
	"$gen" "$n" >"$out/nodes-$n.json"
	"$gen" -y "$n" >"$out/nodes-$n.yaml"
	mb=$(awk -v b="$(wc -c <"$out/nodes-$n.json")" 'BEGIN { printf "%.0f", b / 1e6 }')
	ymb=$(awk -v b="$(wc -c <"$out/nodes-$n.yaml")" 'BEGIN { printf "%.0f", b / 1e6 }')
	cat "$out/nodes-$n.json" "$out/nodes-$n.yaml" >/dev/null # warm the page cache

	# the three must print the same lines
	"$bin/labels2tag" "$out/nodes-$n.json" >"$out/l2t"
	GPUDRV_WHOLE_TREE=1 "$bin/labels2tag" "$out/nodes-$n.json" >"$out/whole"
	jq -r "$jqprog" "$out/nodes-$n.json" >"$out/jq"
	if ! cmp -s "$out/l2t" "$out/jq" || ! cmp -s "$out/l2t" "$out/whole"; then
		echo "bench: labels2tag, its whole-tree path and jq disagree on $n nodes" >&2
		exit 2
	fi

	measure jq jq -r "$jqprog" "$out/nodes-$n.json"
	jq_med=$med
	row "JSON $n nodes ($mb MB): jq -r" "$med" "$rss" "1.0x" "-"
	measure whole env GPUDRV_WHOLE_TREE=1 "$bin/labels2tag" "$out/nodes-$n.json"
	whole_med=$med
	row "JSON $n nodes: labels2tag, whole tree" "$med" "$rss" "$(ratio "$jq_med" "$med")" "1.0x"
	measure stream "$bin/labels2tag" "$out/nodes-$n.json"
	row "JSON $n nodes: labels2tag, streamed" "$med" "$rss" "$(ratio "$jq_med" "$med")" \
		"$(ratio "$whole_med" "$med")"
	measure whole-yaml env GPUDRV_WHOLE_TREE=1 "$bin/labels2tag" "$out/nodes-$n.yaml"
	whole_med=$med
	row "YAML $n nodes ($ymb MB): labels2tag, whole tree" "$med" "$rss" "-" "1.0x"
	measure stream-yaml "$bin/labels2tag" "$out/nodes-$n.yaml"
	row "YAML $n nodes: labels2tag, streamed" "$med" "$rss" "-" "$(ratio "$whole_med" "$med")"
done

# matrix-grep: 100,000 matrix rows against the tags of 5,000 nodes.
"$gen" -m 100000 >"$out/matrix.csv"
"$gen" 5000 | "$bin/labels2tag" >"$out/tags-5000"
measure matrix-grep "$bin/matrix-grep" -m "$out/matrix.csv" "$out/tags-5000"
row "matrix-grep: 100,000 rows x 5,000 nodes" "$med" "$rss" "-" "-"

# pdb-check: 50,000 pods on 5,000 nodes, 5,000 budgets.
"$gen" -p 50000,5000 5000 >"$out/pods.json"
measure pdb-check "$bin/pdb-check" gpu-node-00001 "$out/pods.json"
row "pdb-check: 50,000 pods, 5,000 budgets" "$med" "$rss" "-" "-"
"$gen" -p 100000,10000 10000 >"$out/pods2.json"
measure pdb-check2 "$bin/pdb-check" gpu-node-00001 "$out/pods2.json"
row "pdb-check: 100,000 pods, 10,000 budgets" "$med" "$rss" "-" "-"
rm -f "$out/times" "$out/tv" "$out/err" "$out/l2t" "$out/whole" "$out/jq"
