#!/bin/sh
# End to end: drv-rollout.sh's lock, the Lease gpudrv/gpudrv-rollout, on the
# sandbox's API server: a lease another run holds makes the rollout exit 2
# touching no node; an expired one is taken over, held while the run goes
# on, released after it; kubectl replace with a stale resourceVersion is
# refused (409), the compare-and-swap the lock relies on; a missing
# namespace is named, with the command that makes it.  t/0465 has the rest
# (signals, renewals, the lock file) against a stand-in; t/0960 the RBAC;
# t/0980 a killed run's lease taken over by its rerun.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_gpudrv_ns || { echo "Bail out! cannot make the namespace gpudrv"; exit 1; }
trap 'e2e_holder_release >/dev/null 2>&1; kubectl -n gpudrv delete lease gpudrv-rollout --ignore-not-found >/dev/null 2>&1; e2e_reset_lab >/dev/null 2>&1; rm -rf "$SCRATCH"' EXIT
e2e_facts
t_matrix
GPUDRV_LOCK_DIR=$PWD
export GPUDRV_LOCK_DIR
unset GPUDRV_LEASE_NAMESPACE GPUDRV_LEASE_DURATION
HOST=$(uname -n)
HOST=$(printf '%s' "$HOST" | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63)
L="the lease gpudrv/gpudrv-rollout (the rollout's lock)"
rollout() { drv-rollout.sh -L $T_DRAIN -p 1 -u 100% -t 60 -m "$M" 550.90.07; }

lease() { # lease JSONPATH: a field of the lease
	kubectl -n gpudrv get lease gpudrv-rollout -o "jsonpath=$1"
}
# plant HOLDER RENEWTIME [DURATION]: the lease, held by HOLDER, last renewed
# then, for DURATION seconds (default 60).
plant() {
	kubectl -n gpudrv delete lease gpudrv-rollout --ignore-not-found >/dev/null &&
		kubectl create -f - >/dev/null <<EOF2
{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
 "metadata": {"name": "gpudrv-rollout", "namespace": "gpudrv"},
 "spec": {"holderIdentity": "$1", "leaseDurationSeconds": ${3:-60}, "acquireTime": "$2",
  "renewTime": "$2", "leaseTransitions": 5}}
EOF2
}
nodes() {
	kubectl get nodes lab-node-0 lab-node-1 lab-node-2 \
		-o 'jsonpath={range .items[*]}{.metadata.labels}{.metadata.annotations}{.spec}{"\n"}{end}'
}

# 1. Held by another run: exit 2 at once, the holder named, no node touched.
plant other-host_4242_cafe "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
t_ok $? "a lease held by another run, renewed now"
lease '{.metadata.resourceVersion} {.spec.holderIdentity} {.spec.renewTime}' >lease.before
nodes >nodes.before
t_run rollout
t_rc 2 "drv-rollout.sh while another holds the lease"
t_grep "names the holder and when it expires" err \
	"^drv-rollout.sh: another rollout holds $L: other-host_4242_cafe (acquired [0-9T:.Z-]*, renewed [0-9T:.Z-]*, for 60s: it expires at [0-9T:.Z-]* by this machine's clock, in [0-9]*s, unless renewed)$"
t_grep "says nothing was changed" err "^drv-rollout.sh: nothing was changed; run again once it has ended"
t_out "prints nothing on stdout"
nodes >nodes.after
t_cmp "no node was touched: labels, annotations, spec" nodes.before nodes.after
lease '{.metadata.resourceVersion} {.spec.holderIdentity} {.spec.renewTime}' >lease.after
t_cmp "the lease is unchanged, resourceVersion and all" lease.before lease.after

# 2. The compare-and-swap: a replace with a resourceVersion no longer the
# lease's is refused with 409 Conflict, as drv-rollout.sh expects.
rv=$(lease '{.metadata.resourceVersion}')
cas() { # cas HOLDER: a replace with the version read above
	printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"gpudrv-rollout","namespace":"gpudrv","resourceVersion":"%s"},"spec":{"holderIdentity":"%s","leaseDurationSeconds":60}}\n' \
		"$rv" "$1" >cas.json
	kubectl -n gpudrv replace -f cas.json -o 'jsonpath={.metadata.resourceVersion}'
}
t_run cas first_1_aa
t_rc 0 "one of two racing replaces of version $rv wins"
t_run cas second_2_bb
t_rc 1 "the other loses"
t_grep "with 409 Conflict" err '^Error from server (Conflict): error when replacing "cas.json": Operation cannot be fulfilled on leases.coordination.k8s.io "gpudrv-rollout": the object has been modified'
t_run lease '{.spec.holderIdentity}'
t_val "the winner holds it" first_1_aa

# 3. Expired: taken over, held while the run goes on, released after it.
# A pod that never finishes terminating holds the drain of lab-node-1 (the
# one node not at 550.90.07), so that the run is seen holding the lease
# while it goes on, however fast the rest of it is (a run that upgrades
# one free node can end between two looks).
e2e_namespace gpu-drv && e2e_holder lab-node-1
t_ok $? "a pod on lab-node-1 that holds its drain"
# (for 3 s: it is watched that long, unchanged, before it is taken)
plant other-host_4242_cafe 2020-01-01T00:00:00.000000Z 3
rollout >run.out 2>run.err &
run=$!
e2e_until 60 grep -q '^lab-node-1 drain-required$' run.out
t_ok $? "the run is draining lab-node-1"
t_run lease '{.spec.holderIdentity}'
t_grep "while it runs, the run holds the lease (${HOST}_pid_random)" out "^${HOST}_[0-9]*_[0-9a-f]*$"
held=$(lease '{.spec.leaseDurationSeconds} {.spec.leaseTransitions}')
e2e_holder_release
t_ok $? "the pod let go"
rc=0 # (read by t_rc)
# shellcheck disable=SC2034
wait "$run" || rc=$?
cp run.err err
t_rc 0 "drv-rollout.sh with an expired lease"
t_is "for 60 s, a transition more" "$held" "60 6"
t_grep "says whose expired lease it took over" err "^drv-rollout.sh: took over $L from an expired lease: other-host_4242_cafe (acquired 2020-01-01T00:00:00.000000Z, "
t_grep "and upgrades lab-node-1" run.out "^lab-node-1 upgrade-done$"
t_grep "the summary" run.out "^done 3 failed 0 skipped 0 left 0$"
t_run lease '{.spec.holderIdentity}/{.spec.leaseDurationSeconds}'
t_val "after the run the lease is released: no holder, 1 s" /1
t_run rollout
t_rc 0 "a rerun takes the released lease"
t_err "without a word about it"
t_run lease '{.spec.holderIdentity}'
t_val "and releases it again" ""

# 4. No namespace: named, with the command that makes it; nothing changed.
nodes >nodes.before
GPUDRV_LEASE_NAMESPACE=gpudrv-none t_run rollout
t_rc 2 "GPUDRV_LEASE_NAMESPACE names no namespace"
t_err "says so, with the command that makes it" \
	"drv-rollout.sh: the namespace gpudrv-none, where the rollout's lease goes, does not exist: make it (kubectl create namespace gpudrv-none, or kubectl apply -f deploy/), or name another in GPUDRV_LEASE_NAMESPACE; nothing was changed"
nodes >nodes.after
t_cmp "no node was touched" nodes.before nodes.after
t_done
