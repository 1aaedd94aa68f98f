#!/bin/sh
# bench/rollout.sh: `make bench-rollout`.  drv-rollout.sh -L on a sandbox of
# its own (.sandbox-bench, ports from 30440, started fresh, stopped at the
# end) holding ROLLOUT_NODES (default 200) kwok GPU nodes (gen -k: the
# GPU Operator's and NFD's labels, mixed kernels and OS) and, placed by the
# scheduler, ROLLOUT_DEPLOYMENTS (10) Deployments of 2 x nodes / 10 replicas,
# each with a budget of maxUnavailable 25%.  For each P in ROLLOUT_P (default
# "1 4 16"): the nodes are put back (old driver, no state, schedulable, the
# budgets settled), then
#   gpudrv: drv-rollout.sh -L -p P -u 100%, every kubectl call it makes
#           (its own and drv-upgrade.sh's, through $KUBECTL) timed;
#   bare:   what a person would type for each node, P nodes at a time
#           (xargs -P): the state label, cordon, drain, the driver labels,
#           uncordon, the state label: the same API work without the
#           image check, the budgets, the validation and the audit.
# Prints the wall times, the kubectl calls a node, the time in kubectl, and
# gpudrv's overhead a node: (gpudrv - bare) x P / nodes, the node-time each
# node costs beyond the bare calls.  The run's files: bench/out/rollout-*.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out
gen=$out/gen
nn=${ROLLOUT_NODES:-200}
nd=${ROLLOUT_DEPLOYMENTS:-10}
ps_list=${ROLLOUT_P:-1 4 16}
old=535.183.06
new=570.86.10
mkdir -p "$out"
[ -x "$gen" ] || { echo "bench: $gen missing: run make bench-rollout" >&2; exit 2; }

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
bench_sandbox
f=$out/rollout

ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v a="$1" 'BEGIN { printf "%.1f", a / 1000 }'; }
say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 2; }
until_ok() {
	u_end=$(($(date +%s) + $1))
	u_what="$2 after $1 s"
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$u_end" ] || die "no $u_what"
		sleep 2
	done
}

echo "gpudrv bench-rollout: $nn GPU nodes, $nd Deployments of $((2 * nn / nd)) replicas with budgets, on the sandbox (fresh); $(nproc) CPU(s); $(date -u +%Y-%m-%dT%H:%MZ); load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
sh "$root/sandbox/down.sh" >/dev/null 2>&1 || :
sh "$root/sandbox/up.sh" >/dev/null 2>"$f-up.log" || { tail "$f-up.log" >&2; exit 2; }

# The nodes (kwok makes them Ready), and a matrix with every tag they need.
"$gen" -k "$nn" >"$f-nodes.json"
kubectl create -f "$f-nodes.json" >/dev/null
ready() { [ "$(kubectl get nodes --no-headers | awk '$2 == "Ready"' | grep -c .)" -ge "$nn" ]; }
until_ok 600 "$nn Ready nodes" ready
kubectl get --raw '/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue' |
	labels2tag -c -n -b "${new%%.*}" | awk '{ print $2 }' | sort -u >"$f-rows"
{ echo driver_branch,kernel,os_tag; cat "$f-rows"; } >"$f-matrix.csv"

# The workloads.
kubectl create namespace bench >/dev/null
kubectl create namespace gpudrv >/dev/null # drv-rollout.sh's lease
until_ok 60 "default service account" kubectl -n bench get serviceaccount default
reps=$((2 * nn / nd))
i=0
while [ "$i" -lt "$nd" ]; do
	cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: w$i, namespace: bench}
spec:
  replicas: $reps
  selector: {matchLabels: {app: w$i}}
  template:
    metadata: {labels: {app: w$i}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: w$i, namespace: bench}
spec:
  maxUnavailable: 25%
  selector: {matchLabels: {app: w$i}}
---
EOF
	i=$((i + 1))
done | kubectl apply -f - >/dev/null
settled() {
	kubectl -n bench get pdb -o jsonpath='{range .items[*]}{.status.currentHealthy}/{.status.expectedPods}{"\n"}{end}' >"$f-pdb"
	[ "$(awk -F/ -v r="$reps" '$1 == r && $2 == r' "$f-pdb" | grep -c .)" -eq "$nd" ]
}
until_ok 600 "$nd settled budgets" settled

# reset: every node back to the old driver, no state, schedulable; the
# budgets settled again.
reset() {
	kubectl label nodes -l nvidia.com/gpu.present=true --overwrite nvidia.com/cuda.driver.major="${old%%.*}" \
		nvidia.com/cuda.driver.minor=183 nvidia.com/cuda.driver.rev=06 nvidia.com/gpu-driver-upgrade-state- >/dev/null
	kubectl uncordon -l nvidia.com/gpu.present=true >/dev/null
	until_ok 600 "settled budgets after the reset" settled
}

# The kubectl gpudrv runs: each call's wall time in ms, appended to $KLOG.
cat >"$f-kubectl" <<'EOF'
#!/bin/sh
t0=$(date +%s%N)
rc=0
kubectl "$@" || rc=$?
echo "$(( ($(date +%s%N) - t0) / 1000000 )) $1 $2" >>"$KLOG"
exit "$rc"
EOF
chmod +x "$f-kubectl"

# One node by hand: the bare calls.
cat >"$f-bare.sh" <<'EOF'
n=$1
kubectl label node "$n" --overwrite nvidia.com/gpu-driver-upgrade-state=upgrade-required >/dev/null &&
	kubectl cordon "$n" >/dev/null &&
	kubectl drain "$n" --ignore-daemonsets --delete-emptydir-data --timeout=300s >/dev/null 2>&1 &&
	kubectl label node "$n" --overwrite nvidia.com/cuda.driver.major=570 nvidia.com/cuda.driver.minor=86 \
		nvidia.com/cuda.driver.rev=10 >/dev/null &&
	kubectl uncordon "$n" >/dev/null &&
	kubectl label node "$n" --overwrite nvidia.com/gpu-driver-upgrade-state=upgrade-done >/dev/null
EOF
kubectl get nodes -l nvidia.com/gpu.present=true -o name | sed 's|^node/||' >"$f-names"

printf '%-4s %9s %9s %6s %11s %14s %13s\n' P gpudrv-s bare-s ratio calls/node kubectl-s/node overhead-s/node
for p in $ps_list; do
	reset
	KLOG=$f-klog-$p
	: >"$KLOG"
	export KLOG
	t0=$(ms)
	rc=0
	KUBECTL=$f-kubectl drv-rollout.sh -L -p "$p" -u 100% -w 300 -m "$f-matrix.csv" "$new" \
		>"$f-run-$p.out" 2>"$f-run-$p.err" || rc=$?
	tg=$(($(ms) - t0))
	[ "$rc" = 0 ] || { tail "$f-run-$p.err" >&2; die "drv-rollout.sh -p $p exited $rc"; }
	done_n=$(grep -c ' upgrade-done$' "$f-run-$p.out") || :
	[ "$done_n" -eq "$nn" ] || die "drv-rollout.sh -p $p: $done_n nodes upgrade-done, not $nn"

	reset
	t0=$(ms)
	xargs -P "$p" -n 1 sh "$f-bare.sh" <"$f-names" || die "the bare calls failed (P=$p)"
	tb=$(($(ms) - t0))

	calls=$(grep -c . "$KLOG")
	kms=$(awk '{ s += $1 } END { print s + 0 }' "$KLOG")
	awk -v p="$p" -v tg="$tg" -v tb="$tb" -v n="$nn" -v c="$calls" -v k="$kms" 'BEGIN {
		printf "%-4s %9.1f %9.1f %6.2f %11.1f %14.2f %13.2f\n", p, tg / 1000, tb / 1000, tg / tb,
			c / n, k / n / 1000, (tg - tb) * p / n / 1000 }'
done
echo "calls/node and kubectl-s/node: gpudrv's kubectl calls (drv-rollout.sh's and drv-upgrade.sh's, the audit's included) and their summed time, a node; the bare run makes 6 calls a node"
