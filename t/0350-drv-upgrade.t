#!/bin/sh
# drv-upgrade.sh on a fake API server (t_fake_cluster): its arguments are
# checked before kubectl is called, and the states it writes follow the GPU
# Operator (t/0920 and t/0940 run it against the sandbox).
. "$(dirname "$0")/lib.sh"

t_fake_kubectl
for v in 550 550.90 550.90.07.1 .550.90.07 550..07 550.90. 550.9x.07 ''; do
	t_run drv-upgrade.sh lab-node-1 "$v"
	t_rc 2 "version '$v'"
	t_err "'$v' is refused as a driver version" \
		"drv-upgrade.sh: not a driver version (branch.minor.rev, e.g. 550.90.07): '$v'"
done
t_run drv-upgrade.sh 'lab-node-1;reboot' 550.90.07
t_rc 2 "a node argument that is not a node name"
t_err "is refused, shown safely" "drv-upgrade.sh: not a node name: 'lab-node-1?reboot'"
t_run drv-upgrade.sh -t 0 lab-node-1 550.90.07
t_rc 2 "a drain timeout of 0"
t_run drv-upgrade.sh -t 5d lab-node-1 550.90.07
t_rc 2 "a drain timeout that is not seconds"
t_grep "says what -t takes" err "drv-upgrade.sh: -t takes seconds (300, 300s, 5m, 1h), not '5d'"
t_run drv-upgrade.sh lab-node-1
t_rc 2 "no version"
t_grep "prints the usage" err "^usage: drv-upgrade.sh "
t_run cat kubectl.log
t_rc 1 "kubectl was never called"
# kubectl cordon exits 0 even when the API refuses the patch: the node is
# looked at, and the upgrade stops there, saying so.
t_fake_cluster
t_matrix
FAKE_CORDON_NOOP=1 t_run drv-upgrade.sh -L -m "$PWD/matrix.csv" lab-node-1 550.90.07
t_rc 2 "a cordon that kubectl says was done but the API refused"
t_grep "says the cordon did not take" err "^drv-upgrade.sh: lab-node-1: the cordon did not take: the API left the node schedulable$"
t_grep "and where the node stands" err "^drv-upgrade.sh: lab-node-1: now: unschedulable= state=upgrade-failed$"
t_run grep -c '^--request-timeout=[0-9]*s drain ' kubectl.log
t_out "no drain was started" 0

# The fake cluster (t_fake_cluster; t/standin.sh says what FAKE_SKIP,
# FAKE_JOBS, FAKE_PDB_AFTER and FAKE_DENY do).
t_fake_cluster
S=nvidia.com/gpu-driver-upgrade-state
M=$PWD/matrix.csv
# The lab's policy, the drain of every pod (the drain these tests follow);
# t/0355 takes the cluster's own, the pods that hold a GPU.
up() { drv-upgrade.sh -L -m "$M" -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true "$@"; }
LABU="-U 'podDeletionFilter=none' -U 'drain.enable=true' -U 'drain.deleteEmptyDir=true'"
# fresh [UNSCHED]: lab-node-1 as before any upgrade, cordoned by hand with
# UNSCHED=true.
fresh() {
	: >fake/state
	: >fake/initial
	echo 535.183.06 >fake/driver
	echo "${1:-}" >fake/unsched
	: >fake/events
	rm -f kubectl.log jobs.calls pdb.calls fake/jobs.watches
}
# states: the state labels written, in order, by a write of the node
# (a merge patch) or a label (the failure path's).
states() {
	sed -n -e "s|^--request-timeout=[0-9]*s label node lab-node-1 --overwrite $S=||p" \
		-e "s|^--request-timeout=[0-9]*s patch node lab-node-1 .*\"$S\":\"\([^\"]*\)\".*|\1|p" kubectl.log
}
# t_states DESC STATE...: the state labels written, in this order.
t_states() {
	d=$1
	shift
	states >states
	printf '%s\n' "$@" >states.expected
	t_cmp "$d" states.expected states
}
# t_is DESC GOT EXPECTED
# t_cmp_waited DESC: ./err is ./err.expected, but for how long it says it
# waited ("after Ns": a busy machine may take a second more), which must
# be from LOW to HIGH.
t_cmp_waited() {
	w=$(sed -n 's/.* after \([0-9][0-9]*\)s.*/\1/p' err)
	sed 's/ after [0-9][0-9]*s/ after Ns/' err.expected >err.expected.n
	sed 's/ after [0-9][0-9]*s/ after Ns/' err >err.n
	t_cmp "$1" err.expected.n err.n
	[ -n "$w" ] && [ "$w" -ge "$2" ] && [ "$w" -le "$3" ]
	t_ok $? "and it says it waited ${2} to ${3}s (${w:-nothing}s)"
}
# trail: the kubectl calls, without their request timeout, the body of a
# patch, or the temporary file of an Event.
trail() {
	sed 's/^--request-timeout=[0-9]*s //; s/ -p .*//; s| -f /.*/event.json| -f EVENT|' kubectl.log
}
EVENT="create --raw /api/v1/namespaces/default/events -f EVENT"
O1="get --raw /apis/nvidia.com/v1/clusterpolicies"
O2="get --raw /apis/nvidia.com/v1alpha1/gpuclusters"
O3="get --raw /apis/nvidia.com/v1alpha1/nvidiadrivers"
# calls PATTERN: how many kubectl calls match PATTERN (a basic regex).
calls() {
	grep -c -e "^--request-timeout=[0-9]*s $1" kubectl.log || :
}
# e PART...: the lines drv-upgrade.sh says of lab-node-1, for t_err.
e() {
	for l in "$@"; do printf 'drv-upgrade.sh: lab-node-1: %s\n' "$l"; done
}
set_to() { # set_to STATE...: the lines that say each state label set
	for l in "$@"; do e "$S=$l"; done
}
# The stderr of a whole upgrade to 550.90.07, from the budgets to the
# drain's end; then from the driver to validation.
POLICY="upgradePolicy: the GPU Operator's defaults (no ClusterPolicy or NVIDIADriver owns the node)"
before_drain() {
	e "$POLICY" "image 550-5.15.0-107-generic-ubuntu22.04 is in $M" "the budgets leave room for the drain (drain.enable, 1 pod(s))"
}
DRAIN="--ignore-daemonsets --pod-selector=nvidia.com/gpu-driver-upgrade-drain.skip!=true --timeout=300s --delete-emptydir-data"
drain() {
	e "kubectl drain $DRAIN"
	printf '    %s\n' "node/lab-node-1 already cordoned" "node/lab-node-1 drained"
	set_to validation-required
	e "the node reports driver 550.90.07"
}
OUT_DONE="lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"

# writes PATTERN: how many of the node's writes (merge patches) send
# PATTERN (a basic regex).
writes() {
	calls "patch node lab-node-1 --type=merge --field-manager=gpudrv -p .*$1"
}

# 1. A node schedulable before: the operator's states, the node uncordoned.
fresh
t_run up lab-node-1 550.90.07
t_rc 0 "a whole upgrade of a schedulable node"
t_out "prints the audit and the result" "audit: OK" "$OUT_DONE"
{
	before_drain
	set_to drain-required
	drain
	set_to upgrade-done
} >err.expected
t_cmp "says each step" err.expected err
t_states "passes drain-required, validation-required and upgrade-done" drain-required validation-required upgrade-done
t_is "cordons with drain-required, in one write, with gpudrv's record of its cordon (and not the operator's)" \
	"$(writes "\"$S\":\"drain-required\"},\"annotations\":{\"gpudrv/cordoned\":\"true\",\"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable\":null}},\"spec\":{\"unschedulable\":true}}")" 1
t_is "loads the driver (the lab's labels) with validation-required" \
	"$(writes '"nvidia.com/cuda.driver.major":"550","nvidia.com/cuda.driver.minor":"90","nvidia.com/cuda.driver.rev":"07"')" 1
t_is "uncordons the node it cordoned with upgrade-done, its record gone" \
	"$(writes '"annotations":{"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable":null,"gpudrv/cordoned":null}},"spec":{"unschedulable":null}}')" 1
t_run trail
t_out "the node, the operator's objects, the budgets and its pods (again after the cordon), three writes each with its Event and the drain, the audit" \
	"get --raw /api/v1/nodes/lab-node-1" "$O1" "$O2" "$O3" "get --raw /apis/policy/v1/poddisruptionbudgets" \
	"get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT" \
	"get --raw /apis/policy/v1/poddisruptionbudgets" "get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1" \
	"drain lab-node-1 $DRAIN" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT" \
	"get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"
t_run cat fake/events
t_out "an Event on the node at each state it wrote" \
	"Normal GPUDriverUpgrade $S=drain-required (driver 550.90.07, by drv-upgrade.sh on $(uname -n | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63 | sed 's/-$//'))" \
	"Normal GPUDriverUpgrade $S=validation-required (driver 550.90.07, by drv-upgrade.sh on $(uname -n | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63 | sed 's/-$//'))" \
	"Normal GPUDriverUpgrade $S=upgrade-done (driver 550.90.07, by drv-upgrade.sh on $(uname -n | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63 | sed 's/-$//'))"
t_run t_fake_state
t_out "the node: schedulable, upgrade-done" "unschedulable= state=upgrade-done"

# -N: the same, without the fleet audit at the end (drv-rollout.sh's way).
fresh
t_run up -N lab-node-1 550.90.07
t_rc 0 "-N: a whole upgrade"
t_out "-N: only the result" "$OUT_DONE"
t_is "-N: no list of the nodes (the audit's)" "$(calls 'get --raw /api/v1/nodes?')" 0
t_run t_fake_state
t_out "-N: the node: schedulable, upgrade-done" "unschedulable= state=upgrade-done"

# 2. A node cordoned before: validation-required goes straight to
# upgrade-done, as the operator moves it (the initial-state annotation), and
# the node stays cordoned.
fresh true
t_run up lab-node-1 550.90.07
t_rc 0 "a whole upgrade of a node cordoned by hand"
t_out "prints the audit and the result" "audit: OK" "$OUT_DONE"
{
	before_drain
	set_to drain-required
	drain
	e "left cordoned: it was cordoned by someone else before the upgrade"
	set_to upgrade-done
} >err.expected
t_cmp "says it leaves the node cordoned" err.expected err
t_states "passes validation-required, then upgrade-done" drain-required validation-required upgrade-done
t_is "never uncordons" "$(calls 'uncordon ')$(writes '"unschedulable":null')" 00
t_is "records the initial state with the cordon, as the operator does" \
	"$(writes '"annotations":{"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable":"true","gpudrv/cordoned":null}},"spec":{"unschedulable":true}}')" 1
t_is "and takes it off with upgrade-done" \
	"$(writes '"upgrade-done"},"annotations":{"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable":null,"gpudrv/cordoned":null}}')" 1
t_run t_fake_state
t_out "the node: still cordoned, upgrade-done" "unschedulable=true state=upgrade-done"
t_is "the initial-state annotation is gone again" "$(cat fake/initial)" ""

# 3. The operator's skip label: left alone, exit 1, nothing written.
fresh
FAKE_SKIP=true t_run up lab-node-1 550.90.07
t_rc 1 "a node labelled nvidia.com/gpu-driver-upgrade.skip=true"
t_out "prints nothing on stdout"
t_err "says it is left alone, and how to upgrade it" \
	"drv-upgrade.sh: lab-node-1: labelled nvidia.com/gpu-driver-upgrade.skip=true: left alone, as the GPU Operator leaves it; nothing was changed; the node is schedulable, nvidia.com/gpu-driver-upgrade-state=-" \
	"drv-upgrade.sh: to upgrade it, first: kubectl label node lab-node-1 nvidia.com/gpu-driver-upgrade.skip-"
t_run trail
t_out "reads the node, once, records the refusal, and nothing else" "get --raw /api/v1/nodes/lab-node-1" "$EVENT"
t_run cut -d' ' -f1-2 fake/events
t_out "a Warning Event says it was refused" "Warning GPUDriverUpgradeRefused"
t_run t_fake_state
t_out "the node is as it was" "unschedulable= state="
echo 535.183.06 >fake/driver
echo upgrade-failed >fake/state
FAKE_SKIP=true t_run up lab-node-1 550.90.07
t_rc 1 "skip=true on a node an earlier run left upgrade-failed"
t_grep "says where the node stands" err "nothing was changed; the node is schedulable, nvidia.com/gpu-driver-upgrade-state=upgrade-failed$"
t_run t_fake_state
t_out "it is left as it is too" "unschedulable= state=upgrade-failed"
fresh
FAKE_SKIP=false t_run up lab-node-1 550.90.07
t_rc 0 "skip=false: only true skips, as for the operator"
t_grep "upgraded" out "^$OUT_DONE\$"

# 4. -j: after the cordon, wait-for-jobs-required until the pods it selects
# end.  Two still run (Running, Pending; one Succeeded already), then both
# end (Succeeded, Failed: they leave the list the API filters, so its
# watch says DELETED): one look before the cordon, one after, then a watch
# from that list's resourceVersion until both have gone.
# jev TYPE RV NS/NAME: a watch event of a -j pod.
jev() {
	printf '{"type":"%s","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s","resourceVersion":"%s","labels":{"job":"train"}},"spec":{"nodeName":"lab-node-1"},"status":{"phase":"Succeeded"}}}\n' \
		"$1" "${3#*/}" "${3%/*}" "$2"
}
{ jev MODIFIED 42 gpu-drv/train-a; jev DELETED 42 gpu-drv/train-a; jev DELETED 43 ml/train-b; } >jobs-end.events
fresh
FAKE_JOBS_EVENTS=$PWD/jobs-end.events FAKE_JOBS="jobs-running.json" t_run up -j job=train -J 60 lab-node-1 550.90.07
t_rc 0 "-j job=train: the jobs end within -J 60"
t_out "prints the audit and the result" "audit: OK" "$OUT_DONE"
{
	before_drain
	set_to wait-for-jobs-required
	e "waiting for 2 pod(s) matching 'job=train' to end, at most 60s (waitForCompletion.timeoutSeconds): gpu-drv/train-a ml/train-b"
	e "the pods matching 'job=train' have ended, after 1s"
	set_to drain-required
	drain
	set_to upgrade-done
} >err.expected
t_cmp_waited "names the pods it waits for, and says when they have ended" 1 2
t_run cat fake/jobs.watches
t_out "one watch of them, from the list's resourceVersion" 41
t_states "wait-for-jobs-required is written with the cordon, then drain-required" \
	wait-for-jobs-required drain-required validation-required upgrade-done
t_is "the cordon is written with wait-for-jobs-required" "$(writes "\"$S\":\"wait-for-jobs-required\"},\"annotations\":{\"gpudrv/cordoned\":\"true\",\"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable\":null}},\"spec\":{\"unschedulable\":true}}")" 1
t_is "lists the node's pods by the selector twice" \
	"$(calls 'get --raw /api/v1/pods?labelSelector=job%3Dtrain&fieldSelector=spec.nodeName%3Dlab-node-1%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed%2Cstatus.phase%21%3DUnknown$')" 2
t_run sed -n -e "s|^--request-timeout=[0-9]*s patch node lab-node-1 .*\"$S\":\"\([^\"]*\)\".*|\1|p" \
	-e 's#^--request-timeout=[0-9]*s \(drain\|get --raw /api/v1/pods?labelSelector=\).*#\1#p' kubectl.log
L="get --raw /api/v1/pods?labelSelector="
t_out "in order: a look, the cordon with its state, a look and the watch, then the drain" \
	"$L" wait-for-jobs-required "$L" "$L" drain-required drain validation-required upgrade-done

# The pods are judged again after the wait: a pod without a controller
# that came while the jobs ran stops the removal, named, before any is
# removed.
fresh
FAKE_PDB_AFTER=$DATA/pdb-lab-bare.json FAKE_JOBS="jobs-running.json jobs-done.json" t_run up -j job=train -J 60 lab-node-1 550.90.07
t_rc 1 "-j: a pod without a controller on the node after the wait"
t_grep "names it on stdout, and the field that would let it go" out "^gpu-drv/debug-shell NO-CONTROLLER: .*drain.force is false: set it true"
t_grep "says when" err "^drv-upgrade.sh: lab-node-1: after the wait, the removal of its pods would be refused: gpu-drv/debug-shell NO-CONTROLLER: "
t_grep "the node back in service, as nothing was removed" err "^drv-upgrade.sh: lab-node-1: now: unschedulable= state=upgrade-failed$"
t_is "the budgets and pods read twice: before the cordon, after the wait" "$(cat pdb.calls)" 2
t_is "no drain was started" "$(calls 'drain ')" 0

# After the cordon the pods are judged again, as they are then (an evicted
# pod's replacement may have come before the cordon took): a budget that
# leaves no room then is waited for, a look every 5 s, before any eviction
# (none refused), and the wait counts in the drain's timeout.
fresh
FAKE_PDB=$DATA/pdb-lab-ok.json FAKE_PDB_AFTER="$DATA/pdb-lab.json $DATA/pdb-lab-ok.json" t_run up lab-node-1 550.90.07
t_rc 0 "a budget without room after the cordon, then with room"
t_grep "says what it waits for" err "^drv-upgrade.sh: lab-node-1: after the cordon, the budgets leave no room for the removal of its pods: gpu-drv/trainer-pdb BLOCKS .*; waiting for headroom$"
t_grep "and when it has room" err "^drv-upgrade.sh: lab-node-1: the budgets leave room, after [5-7]s$"
t_is "three looks: before the cordon, after it, 5 s later" "$(cat pdb.calls)" 3
t_is "then one drain, its timeout less the wait" "$(calls 'drain lab-node-1 .*--timeout=29[3-5]s ')" 1
t_states "the states of a whole upgrade" drain-required validation-required upgrade-done
# No room within the drain's timeout: the drain fails as it would have, but
# without one eviction tried; the node back in service.
fresh
FAKE_PDB=$DATA/pdb-lab-ok.json FAKE_PDB_AFTER=$DATA/pdb-lab.json t_run up -t 7 lab-node-1 550.90.07
t_rc 1 "a budget without room after the cordon, for longer than -t 7"
t_grep "names the budget on stdout" out "^gpu-drv/trainer-pdb BLOCKS "
t_grep "says why it failed" err "^drv-upgrade.sh: lab-node-1: the budgets left no room for the drain after [5-7]s (drain.timeoutSeconds 7): gpu-drv/trainer-pdb BLOCKS "
t_is "no drain" "$(calls 'drain ')" 0
t_run t_fake_state
t_out "the node back in service, upgrade-failed" "unschedulable= state=upgrade-failed"

# No pod selected: the state is passed at once.
fresh
FAKE_JOBS=jobs-none.json t_run up --wait-for 'job in (train, eval)' lab-node-1 550.90.07
t_rc 0 "--wait-for with no pod of it on the node"
t_grep "says none runs" err "^drv-upgrade.sh: lab-node-1: no pod matching 'job in (train, eval)' runs on the node$"
t_states "passes wait-for-jobs-required" wait-for-jobs-required drain-required validation-required upgrade-done
t_is "the selector is passed as one argument" \
	"$(calls 'get --raw /api/v1/pods?labelSelector=job%20in%20%28train%2C%20eval%29&fieldSelector=spec.nodeName%3Dlab-node-1%2C')" 2

# -J passes: the operator goes on to pod deletion and the drain, which
# evicts them.
fresh
t0=$(date +%s)
FAKE_JOBS=jobs-running.json t_run up -j job=train --wait-timeout 3 lab-node-1 550.90.07
took=$(($(date +%s) - t0))
t_rc 0 "-j whose pods outlast -J 3"
t_out "prints the audit and the result" "audit: OK" "$OUT_DONE"
{
	before_drain
	set_to wait-for-jobs-required
	e "waiting for 2 pod(s) matching 'job=train' to end, at most 3s (waitForCompletion.timeoutSeconds): gpu-drv/train-a ml/train-b"
	e "2 pod(s) matching 'job=train' still run after 3s (timeoutSeconds 3): gpu-drv/train-a ml/train-b"
	e "going on, as the GPU Operator does: the removal takes those it takes"
	set_to drain-required
	drain
	set_to upgrade-done
} >err.expected
t_cmp_waited "says the pods still run after -J, and that the drain evicts them" 3 4
# Not more: the run's own count of the wait (above, from the clock it
# naps by), and its requests for the pods: a look before the cordon, one
# after it, and one watch of 3 s at most, whatever else the run took on a
# loaded machine.
[ "$took" -ge 3 ]
t_ok $? "waited -J's 3 seconds (${took}s for the whole run)"
t_is "looked at the pods twice, and watched them once" \
	"$(grep -c 'labelSelector=job%3Dtrain&.*Unknown$' kubectl.log) $(grep -c 'labelSelector=job%3Dtrain&.*&resourceVersion=41&watch=1&timeoutSeconds=[123]$' kubectl.log)" "2 1"

# -J 0 (the default) waits as long as the run lasts: the deadline ends it
# through the failure path (the node uncordoned, upgrade-failed, exit 2).
fresh
t0=$(date +%s)
FAKE_JOBS=jobs-running.json GPUDRV_TIMEOUT=8 GPUDRV_REQUEST_TIMEOUT=1 t_run up -j job=train lab-node-1 550.90.07
took=$(($(date +%s) - t0))
t_rc 2 "-j with no -J, the jobs running past GPUDRV_TIMEOUT=8"
t_out "prints nothing on stdout"
{
	before_drain
	set_to wait-for-jobs-required
	e "waiting for 2 pod(s) matching 'job=train' to end, until the run's deadline (waitForCompletion.timeoutSeconds 0): gpu-drv/train-a ml/train-b"
	e "the run's deadline came (GPUDRV_TIMEOUT=8, 3s of it kept to put the node back) while 2 pod(s) matching 'job=train' still ran, after 4s: gpu-drv/train-a ml/train-b"
	e "driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed" \
		"pods already removed are rescheduled by their controllers"
	printf '%s\n' "drv-upgrade.sh: to resume: drv-upgrade.sh -L -m '$M' -w 0 -g 600 -n 'gpu-operator' -s 'app=nvidia-driver-daemonset' -j 'job=train' $LABU lab-node-1 550.90.07"
	e "now: unschedulable= state=upgrade-failed"
} >err.expected
# (from 1: on a busy machine the steps before the wait take a part of its 5s)
t_cmp_waited "says the deadline came while the jobs ran, and where the node stands" 1 6
[ "$took" -ge 4 ] && [ "$took" -le 10 ]
t_ok $? "ends at the deadline (${took}s)"
t_is "no drain was started" "$(calls 'drain ')" 0
t_run t_fake_state
t_out "the node: schedulable again, upgrade-failed" "unschedulable= state=upgrade-failed"

# A selector that is not one: refused before any request.
fresh
t_run up -j 'job=train!' lab-node-1 550.90.07
t_rc 2 "-j with a selector that is not one"
t_out "prints nothing on stdout"
t_grep "says why" err "^drv-upgrade.sh: -U \"waitForCompletion.podSelector=job=train!\": \"job=train!\": requirements are separated by commas$"
t_ok "$([ -e kubectl.log ]; echo $((1 - $?)))" "kubectl was never called"
# The options.
t_run up -j '' lab-node-1 550.90.07
t_rc 2 "-j ''"
t_err "says -j takes a selector" \
	"drv-upgrade.sh: -j takes a label selector (job=train, 'app in (a,b)'), not ''"
t_run up -J 60 lab-node-1 550.90.07
t_rc 2 "-J without -j"
t_err "says -J goes with -j, then the usage" \
	"drv-upgrade.sh: -J is how long to wait for the pods -j selects: give -j too" "$(drv-upgrade.sh -h)"
t_run up -j job=train -J 1d lab-node-1 550.90.07
t_rc 2 "-J that is not seconds"
t_grep "says what -J takes" err "^drv-upgrade.sh: -J takes seconds (300, 300s, 5m, 1h), not '1d'$"
rm -f kubectl.log
for o in -n -s; do
	t_run up "$o" '' lab-node-1 550.90.07
	t_rc 2 "$o '': refused, as drv-rollout.sh refuses it"
	t_grep "$o '': says what $o takes" err "^drv-upgrade.sh: $o takes a .*, not ''$"
done
t_run up -s "$(printf 'app=x\nother=y')" lab-node-1 550.90.07
t_rc 2 "-s with a newline"
t_grep "is shown safely" err "^drv-upgrade.sh: -s takes a label selector (app=nvidia-driver-daemonset), not 'app=x?other=y'$"
t_ok "$([ -e kubectl.log ]; echo $((1 - $?)))" "kubectl was never called for them"

# -P: a record on stdout at each change of state, as it happens; the
# result last.
fresh
t_run up -P lab-node-1 550.90.07
t_rc 0 "-P: the whole way"
t_out "-P: one record a state, then the audit and the result" \
	"lab-node-1 drain-required" "lab-node-1 validation-required" "lab-node-1 upgrade-done" "audit: OK" "$OUT_DONE"

# What a server says cannot pass for a record or a state line: a webhook
# denies validation-required with a second line like a state line.
fresh
FAKE_DENY=validation-required t_run up -P lab-node-1 550.90.07
t_rc 2 "-P: the API denies a state label"
t_out "-P: the records are what happened, upgrade-failed and where the node is last" \
	"lab-node-1 drain-required" "lab-node-1 upgrade-failed" "lab-node-1 now upgrade-failed cordoned"
t_grep "the denial is quoted on one line" err \
	'^drv-upgrade.sh: cannot set nvidia.com/gpu-driver-upgrade-state=validation-required on lab-node-1: Error from server: admission webhook "policy.example" denied the request: drv-upgrade.sh: lab-node-1: nvidia.com/gpu-driver-upgrade-state=upgrade-done *$'
t_is "no line of stderr is the forged one" "$(grep -c '^drv-upgrade.sh: lab-node-1: nvidia.com/gpu-driver-upgrade-state=upgrade-done$' err)" 0

# An empty answer is no list: the budgets "leave room" only when both lists
# were read whole (the pods GET answering exit 0 and nothing).
fresh
FAKE_PDB=$DATA/pdb-lab.json
P='GET/api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1'
echo empty | t_serve "$P.fault"
t_run up lab-node-1 550.90.07
t_rc 2 "the node's pods answered exit 0 with an empty body"
t_grep "says so, naming the request" err "^drv-upgrade.sh: GET /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1 answered with an empty body (kubectl exit 0): nothing can be said of it$"
t_grep "and that nothing was changed" err "^drv-upgrade.sh: lab-node-1: the budgets and the node's pods cannot be read; nothing was changed$"
t_is "no label, annotation, cordon or drain" "$(calls '\(label\|annotate\|cordon\|patch\|drain\) ')" 0
t_run t_fake_state
t_out "the node is as it was" "unschedulable= state="
rm "$STANDIN/$P.fault"

# -b: the budgets and the node's pods as the caller just read them
# (drv-rollout.sh's): judged as read, not asked for again before the
# cordon (after it, they are: pods came until it took).
fresh
cat "$DATA/pdb-lab-ok.json" >read.json
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' >>read.json
printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[]}\n' >objects.json
FAKE_PDB=$DATA/pdb-lab-ok.json t_run up -N -b read.json -O objects.json lab-node-1 550.90.07
t_rc 0 "-b -O: a whole upgrade"
t_out "-b: the result" "$OUT_DONE"
t_is "-b -O: the operator's objects are not read, the budgets and pods only after the cordon" "$(calls 'get --raw /api')" 3
t_run trail
t_out "-b -O -N: the node, three writes and their Events, the budgets and pods after the cordon, the drain" "get --raw /api/v1/nodes/lab-node-1" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT" \
	"get --raw /apis/policy/v1/poddisruptionbudgets" "get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1" \
	"drain lab-node-1 $DRAIN" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT" \
	"patch node lab-node-1 --type=merge --field-manager=gpudrv" "$EVENT"
fresh
cp "$DATA/pdb-lab.json" read.json
t_run up -N -b read.json lab-node-1 550.90.07
t_rc 1 "-b: budgets that block the drain"
t_grep "-b: names the budget" out "^gpu-drv/trainer-pdb BLOCKS "
t_grep "-b: and that nothing was changed" err "^drv-upgrade.sh: lab-node-1: the removal of its pods would be refused by what is above; nothing was changed$"
t_is "-b: no write" "$(calls '\(label\|patch\|drain\) ')" 0
fresh
t_run up -N -b "$PWD/no-such.json" lab-node-1 550.90.07
t_rc 2 "-b: a file that cannot be read"
t_grep "-b: names it" err "^drv-upgrade.sh: cannot read the budgets and pods of -b $PWD/no-such.json: .*; nothing was changed$"
t_is "-b: no write either" "$(calls '\(label\|patch\|drain\) ')" 0
FAKE_PDB=$DATA/pdb-lab-ok.json
t_done
