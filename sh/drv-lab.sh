#!/bin/sh
# drv-lab.sh: the driver-upgrade lab (drv-lab.sh(1)) end to end on a real control
# plane: facts, tags, audit, a new node, CUDA affinity, a budget that blocks
# a drain, the ordered upgrade, the report.  Run by `make lab`.
set -eu

prog=drv-lab.sh
usage_line="usage: $prog"
case ${1:-} in
-h | --help) echo "$usage_line"; exit 0 ;;
'') ;;
*) echo "$usage_line" >&2; exit 2 ;;
esac

case $0 in
*/*) here=$(cd "${0%/*}" && pwd) ;;
*) here=$(pwd) ;;
esac
src=${GPUDRV_SRC:-$(dirname "$here")}
[ -d "$src/lab/k8s" ] || { echo "$prog: no lab/ under $src (set GPUDRV_SRC to the gpudrv checkout)" >&2; exit 2; }
home=${GPUDRV_HOME:-$HOME/gpudrv}
out=$home/out
wait_s=${LAB_TIMEOUT:-120}

step() { echo "== $*"; }
say() { echo "$prog: $*" >&2; }
die() {
	say "$*"
	exit 2
}

# wait_until DESCRIPTION COMMAND...: polls the condition, at most $wait_s s.
wait_until() {
	what=$1
	shift
	end=$(($(date +%s) + wait_s))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || die "timed out after ${wait_s}s waiting for $what"
		sleep 1
	done
}
jp() { # jp KIND/NAME JSONPATH: one field, fresh
	kubectl get "$1" -o "jsonpath=$2" 2>/dev/null
}
is() { # is EXPECTED KIND/NAME JSONPATH
	[ "$(kubectl get "$2" -o "jsonpath=$3" 2>/dev/null)" = "$1" ]
}
ns() { kubectl -n gpu-drv "$@"; }
is_pod() { # is_pod EXPECTED POD JSONPATH, in gpu-drv
	[ "$(ns get pod "$2" -o "jsonpath=$3" 2>/dev/null)" = "$1" ]
}

# The cluster: the sandbox with lab-node-0..2, or LAB_KUBECONFIG's.
if [ -n "${LAB_KUBECONFIG:-}" ]; then
	KUBECONFIG=$LAB_KUBECONFIG
	export KUBECONFIG
	for n in lab-node-0 lab-node-1 lab-node-2; do
		kubectl get node "$n" >/dev/null 2>&1 ||
			die "LAB_KUBECONFIG's cluster has no node $n (the lab creates no base nodes in a cluster it did not start)"
	done
	step "cluster: $LAB_KUBECONFIG"
else
	sandbox=${GPUDRV_SANDBOX_DIR:-$src/.sandbox}
	step "cluster: the sandbox (sandbox/up.sh --lab; log in $sandbox/logs/up.log)"
	mkdir -p "$sandbox/logs"
	if ! sh "$src/sandbox/up.sh" --lab >/dev/null 2>"$sandbox/logs/up.log"; then
		tail -n 20 "$sandbox/logs/up.log" >&2
		die "the sandbox did not start"
	fi
	KUBECONFIG=$sandbox/kubeconfig
	PATH=$(dirname "$KUBECONFIG")/bin:$PATH
	export KUBECONFIG PATH
fi

step "install: the tools into $home/bin, the lab's matrix and manifests into $home"
mkdir -p "$home/bin" "$home/lib/gpudrv" "$home/k8s" "$out"
# put FROM TO: a copy, then a rename, so a running tool is never half written.
put() { cp "$1" "$2.new" && mv -f "$2.new" "$2"; }
for t in labels2tag matrix-grep pdb-check report-fmt drv-tag.sh drv-audit.sh drv-upgrade.sh drv-states.sh; do
	put "$here/$t" "$home/bin/$t"
done
put "$src/lib/gpudrv/gpudrv-lib.sh" "$home/lib/gpudrv/gpudrv-lib.sh"
# The lab's own commands, $GPUDRV_HOME/drv-*.sh: the installed ones, with the
# lab's matrix as their default instead of /etc/gpudrv's.
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
for t in drv-tag.sh drv-audit.sh drv-upgrade.sh drv-states.sh; do
	# shellcheck disable=SC2016 # expanded when the wrapper runs
	printf '#!/bin/sh\n# %s of the gpudrv lab: the installed one, with the lab matrix.\n: "${GPUDRV_MATRIX:=%s}"\nexport GPUDRV_MATRIX\nexec %s "$@"\n' \
		"$t" "$(shq "$home/support-matrix.csv")" "$(shq "$home/bin/$t")" >"$home/$t.new"
	chmod +x "$home/$t.new"
	mv -f "$home/$t.new" "$home/$t"
done
cp "$src/lab/k8s/"*.yaml "$home/k8s/"
put "$src/lab/support-matrix.csv" "$home/support-matrix.csv"
rm -f "$out"/*.txt
matrix=$home/support-matrix.csv
PATH=$home/bin:$PATH
export PATH

# A rerun starts from the lab's first state: no namespace, no lab-node-3,
# lab-node-0..2 schedulable and without upgrade state.
kubectl delete namespace gpu-drv --ignore-not-found --wait=true --timeout="${wait_s}s" >/dev/null
kubectl delete node lab-node-3 --ignore-not-found >/dev/null
for n in lab-node-0 lab-node-1 lab-node-2; do
	kubectl uncordon "$n" >/dev/null
	kubectl label node "$n" nvidia.com/gpu-driver-upgrade-state- >/dev/null
	kubectl annotate node "$n" nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable- >/dev/null
done

# add_row NODE [labels2tag options]: the matrix row NODE needs, appended
# atomically (a copy, then a rename).  The row is built by labels2tag from
# the node's labels, the same way the tag is.
add_row() {
	n=$1
	shift
	row=$(kubectl get node "$n" -o json | labels2tag -N -c "$@") || die "no row for $n"
	cp "$matrix" "$matrix.new"
	[ -z "$(tail -c 1 "$matrix.new")" ] || echo >>"$matrix.new"
	echo "$row" >>"$matrix.new"
	mv -f "$matrix.new" "$matrix"
	echo "   support-matrix.csv += $row"
}

step "1. facts: namespace gpu-drv; driver, kernel and OS labels on lab-node-0..2"
kubectl create namespace gpu-drv >/dev/null
wait_until "the default service account in gpu-drv" kubectl -n gpu-drv get serviceaccount default
facts() { # facts NODE MAJOR MINOR REV KERNEL OS-ID VERSION-ID
	kubectl label node "$1" --overwrite nvidia.com/gpu.present=true \
		nvidia.com/cuda.driver.major="$2" nvidia.com/cuda.driver.minor="$3" \
		nvidia.com/cuda.driver.rev="$4" feature.node.kubernetes.io/kernel-version.full="$5" \
		feature.node.kubernetes.io/system-os_release.ID="$6" \
		feature.node.kubernetes.io/system-os_release.VERSION_ID="$7" >/dev/null
}
facts lab-node-0 550 90 07 5.15.0-119-generic ubuntu 22.04
facts lab-node-1 535 183 06 5.15.0-107-generic ubuntu 22.04
facts lab-node-2 550 90 07 6.8.0-45-generic ubuntu 24.04

step "2. tags: drv-tag.sh for each node -> out/tags.txt"
for n in lab-node-0 lab-node-1 lab-node-2; do
	echo "$n $("$home/drv-tag.sh" "$n")"
done >"$out/tags.txt"
sed 's/^/   /' "$out/tags.txt"

step "3. audit against support-matrix.csv -> out/audit.txt"
rc=0
"$home/drv-audit.sh" >"$out/audit.txt" || rc=$?
[ "$rc" -eq 0 ] || die "the audit of the first three nodes says $(cat "$out/audit.txt") (exit $rc), not OK"
echo "   $(cat "$out/audit.txt")"

step "4. a new node, lab-node-3, on kernel 6.8.0-52: the image comes first"
kubectl apply -f "$home/k8s/node3.yaml" >/dev/null
wait_until "lab-node-3 Ready" is True node/lab-node-3 '{.status.conditions[?(@.type=="Ready")].status}'
rc=0
"$home/drv-audit.sh" >"$out/skew.txt" || rc=$?
[ "$rc" -eq 1 ] || die "the audit with lab-node-3 exited $rc, not 1 (MISSING)"
echo "   $(cat "$out/skew.txt")"
add_row lab-node-3
"$home/drv-audit.sh" >"$out/skew-fixed.txt" || die "the audit after adding lab-node-3's row is not OK"
echo "   $(cat "$out/skew-fixed.txt")"

step "5. CUDA is only forward compatible: node affinity on the driver labels"
kubectl apply -f "$home/k8s/cuda12-job.yaml" -f "$home/k8s/cuda13-job.yaml" >/dev/null
wait_until "cuda12-job Running" is_pod Running cuda12-job '{.status.phase}'
[ "$(ns get pod cuda12-job -o jsonpath='{.spec.nodeName}')" = lab-node-0 ] ||
	die "cuda12-job runs on $(ns get pod cuda12-job -o jsonpath='{.spec.nodeName}'), not lab-node-0"
unsched() { [ "$(ns get pod cuda13-job -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
wait_until "cuda13-job's PodScheduled=False/Unschedulable" unsched
ns get pod cuda13-job -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' >"$out/cuda.txt"
echo >>"$out/cuda.txt"
echo "   cuda12-job Running on lab-node-0; cuda13-job Pending: $(cat "$out/cuda.txt")"

step "6. the budget, not the driver, stops the upgrade"
kubectl apply -f "$home/k8s/trainer.yaml" -f "$home/k8s/pdb.yaml" >/dev/null
four_running() { [ "$(ns get pods -l app=trainer --field-selector=status.phase=Running -o name | wc -l)" -eq 4 ]; }
wait_until "four trainer pods Running" four_running
pdb_settled() { # pdb_settled ALLOWED: status recomputed for the current spec
	[ "$(ns get pdb trainer-pdb -o jsonpath='{.status.observedGeneration}/{.metadata.generation} {.status.currentHealthy} {.status.disruptionsAllowed}')" = \
		"$(ns get pdb trainer-pdb -o jsonpath='{.metadata.generation}/{.metadata.generation}') 4 $1" ]
}
wait_until "trainer-pdb status: 4 healthy, 0 disruptions allowed" pdb_settled 0
kubectl get pdb,pods -A -o json >"$out/pdb-pods.json" || die "cannot list budgets and pods"
rc=0
pdb-check lab-node-1 "$out/pdb-pods.json" >"$out/pdb-check.txt" || rc=$?
rm -f "$out/pdb-pods.json"
[ "$rc" -eq 1 ] || die "pdb-check says the drain would pass (exit $rc): $(cat "$out/pdb-check.txt")"
sed 's/^/   pdb-check: /' "$out/pdb-check.txt"
rc=0
kubectl drain lab-node-1 --ignore-daemonsets --delete-emptydir-data --timeout=20s \
	>"$out/drain-blocked.txt" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || die "the drain with minAvailable 4 passed; it must be refused"
grep -q "disruption budget" "$out/drain-blocked.txt" ||
	die "the drain failed, but not by the disruption budget: $(tail -n 3 "$out/drain-blocked.txt")"
echo "   refused by the budget (exit $rc): $(grep -m 1 'disruption budget' "$out/drain-blocked.txt")"
# drain cordons first: say so, and undo it, so step 7 starts from a node in service.
echo "   the refused drain left lab-node-1 cordoned; uncordoning it"
kubectl uncordon lab-node-1 >/dev/null

step "7. image first, then headroom, then the whole way (drv-upgrade.sh)"
add_row lab-node-1 -b 550
ns patch pdb trainer-pdb --type=merge -p '{"spec":{"minAvailable":3}}' >/dev/null
wait_until "trainer-pdb status: 1 disruption allowed" pdb_settled 1
rc=0
"$home/drv-upgrade.sh" -L -t 20 -d "$out/drain-ok.txt" lab-node-1 550.90.07 \
	>"$out/upgrade.out" 2>"$out/upgrade.log" || rc=$?
sed 's/^drv-upgrade.sh: /   /' "$out/upgrade.log"
[ "$rc" -eq 0 ] || die "drv-upgrade.sh exited $rc"
wait_until "four trainer pods Running again" four_running
"$home/drv-audit.sh" >/dev/null || die "the audit after the upgrade is not OK"
echo "   audit: OK"

step "8. the state machine and the report"
# The states drv-upgrade.sh moved lab-node-1 through, in their order.
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' "$out/upgrade.log" \
	>"$out/upgrade-states.txt"
[ "$(jp node/lab-node-1 '{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}')" = upgrade-done ] ||
	kubectl label node lab-node-1 --overwrite nvidia.com/gpu-driver-upgrade-state=upgrade-done >/dev/null
audit=$(mktemp "${TMPDIR:-/tmp}/drv-lab.XXXXXX")
rc=0
"$home/drv-audit.sh" >"$audit" || rc=$?
[ "$rc" -le 1 ] || { rm -f "$audit"; die "the audit for the report could not tell (exit 2)"; }
kubectl get nodes -o json | report-fmt -a "$audit" -m "$matrix" lab-node-1 >"$out/upgrade-report.txt" ||
	{ rm -f "$audit"; die "report-fmt failed"; }
rm -f "$audit"
sed 's/^/   /' "$out/upgrade-report.txt"
echo "done: $out; the cluster stays up (KUBECONFIG=$KUBECONFIG); make sandbox-down stops it"
