#!/bin/sh
# bench/audit.sh: `make bench-audit`.  drv-audit.sh against a sandbox of its
# own holding BENCH_NODES (default 1000) realistic GPU nodes, beside the bare
# list call it has to make, `kubectl get --raw` of the same list, and the
# per-node approach (one drv-tag.sh per node).  Medians of RUNS runs (default
# 5; the per-node loop runs once), all in this one run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out
n=${BENCH_NODES:-1000}
runs=${RUNS:-5}
mkdir -p "$out"
[ -x "$out/gen" ] || { echo "bench: $out/gen missing: run make bench-audit" >&2; exit 2; }

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
bench_sandbox
sh "$root/sandbox/up.sh" >/dev/null 2>"$out/audit-up.log" || { tail "$out/audit-up.log" >&2; exit 2; }

echo "bench: creating $n GPU nodes (gen, ~25 KB each)" >&2
"$out/gen" "$n" >"$out/audit-nodes.json"
kubectl create -f "$out/audit-nodes.json" >/dev/null
"$out/gen" -m 100000 >"$out/audit-matrix.csv"
kubectl get nodes -o name | sed 's|^node/||' >"$out/audit-names"

ms() { echo $(($(date +%s%N) / 1000000)); }
# measure NAME RUNS COMMAND...: the median wall time in s, into $med
measure() {
	name=$1 k=$2
	shift 2
	: >"$out/times"
	i=0
	while [ "$i" -lt "$k" ]; do
		t0=$(ms)
		"$@" >/dev/null 2>&1 || [ $? -eq 1 ]
		echo $(($(ms) - t0)) >>"$out/times"
		i=$((i + 1))
	done
	med=$(sort -n "$out/times" | sed -n "$(((k + 1) / 2))p" | awk '{ printf "%.3f", $1 / 1000 }')
	printf '%-58s %8s\n' "$name" "$med"
}
per_node() {
	while read -r node; do drv-tag.sh "$node" || return 2; done <"$out/audit-names"
}

echo "gpudrv bench-audit: $n GPU nodes on the sandbox; $(nproc) CPU(s); $(date +%Y-%m-%d); median of $runs"
printf '%-58s %8s\n' case "median s"
measure "bare list: kubectl get nodes -l ... -o json" "$runs" \
	kubectl get nodes -l nvidia.com/gpu.present=true --chunk-size=0 -o json
bare=$med
measure "raw list: kubectl get --raw /api/v1/nodes?labelSelector=..." "$runs" \
	kubectl get --raw '/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue'
raw=$med
measure "drv-audit.sh -m <100,000-row matrix>" "$runs" drv-audit.sh -m "$out/audit-matrix.csv"
audit=$med
measure "per node: drv-tag.sh for each node (one run)" 1 per_node
loop=$med
awk -v a="$audit" -v b="$bare" -v r="$raw" -v l="$loop" 'BEGIN {
	printf "drv-audit.sh / bare list: %.2fx;  per-node loop / drv-audit.sh: %.0fx;  raw / bare: %.2fx\n", a / b, l / a, r / b }'
