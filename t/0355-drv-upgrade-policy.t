#!/bin/sh
# drv-upgrade.sh by the cluster's upgradePolicy, on a fake API server
# (t_fake_cluster): whose policy (the ClusterPolicy's, the defaults), the
# pod deletion of the pods that hold a GPU (evictions, retried past a
# budget, the drain in its place where it fails and drain.enable says so),
# autoUpgrade refused unless -f, the cordon someone else set kept whatever
# the state, this tool's own cordon undone on a rerun, the Events, and an
# Event that cannot be written (said once, the upgrade the same).
. "$(dirname "$0")/lib.sh"

t_fake_cluster
t_matrix
S=nvidia.com/gpu-driver-upgrade-state
FAKE_PDB=$DATA/pdb-gpu-ok.json
TR=gpu-drv/trainer-7d9f5c6b8d-m4q7z
up() { drv-upgrade.sh -L -N -m "$M" "$@" lab-node-1 550.90.07; }
fresh() {
	: >fake/state
	: >fake/initial
	: >fake/ours
	: >fake/events
	echo 535.183.06 >fake/driver
	echo "${1:-}" >fake/unsched
	rm -f kubectl.log fake/clusterpolicies.json
}
calls() { grep -c -e "^--request-timeout=[0-9]*s $1" kubectl.log || :; }
states() { sed -n "s|^--request-timeout=[0-9]*s patch node lab-node-1 .*\"$S\":\"\([^\"]*\)\".*|\1|p" kubectl.log; }
# cp_policy JSON: the ClusterPolicy of the fake API, its upgradePolicy JSON.
cp_policy() {
	printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},"spec":{"driver":{"upgradePolicy":%s}}}]}\n' "$1" >fake/clusterpolicies.json
}

# 1. No ClusterPolicy: the operator's defaults; the pod that holds a GPU is
# evicted, then looked for until it is gone.
fresh
t_run up
t_rc 0 "the defaults, a pod that holds a GPU"
t_out "upgraded" "lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"
t_grep "whose policy" err "^drv-upgrade.sh: lab-node-1: upgradePolicy: the GPU Operator's defaults (no ClusterPolicy or NVIDIADriver owns the node)$"
t_grep "what goes" err "^drv-upgrade.sh: lab-node-1: the budgets leave room: the pod deletion removes the 1 pod(s) that hold a GPU$"
t_grep "evicts it" err "^    evicting pod $TR$"
t_grep "and sees it gone" err "^    1 pod(s) evicted and gone, after [0-9]*s$"
t_is "one eviction, through the eviction API" "$(calls "create --raw /api/v1/namespaces/gpu-drv/pods/trainer-7d9f5c6b8d-m4q7z/eviction -f ")" 1
t_is "no kubectl drain" "$(calls 'drain ')" 0
t_run states
t_out "the operator's states" pod-deletion-required validation-required upgrade-done
t_run cut -d' ' -f1-2 fake/events
t_out "an Event a state" "Normal GPUDriverUpgrade" "Normal GPUDriverUpgrade" "Normal GPUDriverUpgrade"

# 1b. The evicted pod still on the node when it is first looked for: it
# is watched from that list's resourceVersion until its DELETED comes.
LP=$(t_gpu_pod lab-node-1 "$TR" Running True 0)
DP=$(t_gpu_pod lab-node-1 gpu-operator/nvidia-driver-daemonset-lab1 Running True 0)
t_gpu_pods "$DP" "$LP" | sed 's/"resourceVersion":"12"/"resourceVersion":"40"/' >left.json
# ev TYPE RV POD: a watch event of the pod, at resourceVersion RV.
ev() { printf '{"type":"%s","object":%s}\n' "$1" "$(printf '%s' "$3" | sed "s/^{\"metadata\":{/{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"$2\",/")"; }
{ ev MODIFIED 44 "$DP"; ev MODIFIED 46 "$LP"; ev DELETED 47 "$LP"; } >left.events
ev MODIFIED 45 "$LP" >left.first
FAKE_LEFT=$PWD/left.json FAKE_LEFT_EVENTS=$PWD/left.events FAKE_LEFT_FIRST=$PWD/left.first
export FAKE_LEFT FAKE_LEFT_EVENTS FAKE_LEFT_FIRST
left_fresh() {
	fresh
	rm -f fake/evicted fake/gone fake/pods.watches left.calls pods.watch.calls
}
# lists: the lists of the node's pods made after the eviction.
lists() { cat left.calls 2>/dev/null || echo 0; }
left_fresh
t_run up
t_rc 0 "the evicted pod still there at the first look"
t_grep "is waited for until it is gone" err "^    1 pod(s) evicted and gone, after [0-9]*s$"
t_run cat fake/pods.watches
t_out "one watch, from the list's resourceVersion" 40
t_is "one list after the eviction" "$(lists)" 1
t_run states
t_out "the same states" pod-deletion-required validation-required upgrade-done
left_fresh
FAKE_PODS_WATCH=end t_run up
t_rc 0 "a watch that ends before the pod is gone"
t_grep "the pod seen gone" err "^    1 pod(s) evicted and gone, after [0-9]*s$"
t_is "with no list again" "$(lists)" 1
t_run cat fake/pods.watches
t_out "resumed from the last resourceVersion it gave" 40 45
left_fresh
FAKE_PODS_WATCH=410 t_run up
t_rc 0 "a resourceVersion the API finds too old (410 Expired)"
t_grep "the pod seen gone" err "^    1 pod(s) evicted and gone, after [0-9]*s$"
t_is "and says nothing of it: a 410 is the API's way" "$(grep -c 'warning' err)" 0
t_is "lists again, and watches from there" "$(lists)" 2
t_run cat fake/pods.watches
t_out "two watches" 40 40
left_fresh
FAKE_PODS_WATCH=forbidden FAKE_LEFT_LISTS=3 t_run up
t_rc 0 "a Role without watch on pods"
t_grep "is said" err "^drv-upgrade.sh: lab-node-1: warning: the API refuses to watch the node's pods: Error from server (Forbidden): .*; listing them every 2 s instead (add watch to the pods rule of the Role: deploy/20-upgrader.yaml)$"
t_is "then the pods are listed until they are gone" "$(lists)" 3
t_run cat fake/pods.watches
t_out "one watch tried" 40
left_fresh
cp_policy '{"podDeletion":{"timeoutSeconds":3}}'
FAKE_PODS_WATCH=none t_run up
t_rc 1 "an evicted pod that stays past podDeletion.timeoutSeconds"
t_grep "says which, and how long" err "^drv-upgrade.sh: lab-node-1: the pod deletion failed: evicted, but still on the node after [34]s (podDeletion.timeoutSeconds 3): $TR $"
t_run t_fake_state
t_out "the node back in service, upgrade-failed" "unschedulable= state=upgrade-failed"
# A signal while the watch waits: stopped at once, the node back in
# service, nothing of the watch (kubectl, its reader) left running.
left_fresh
rm -f kubectl.pids
FAKE_PODS_WATCH=none t_bg drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07
watching() { [ -s fake/pods.watches ]; }
t_until 20 watching
t_ok $? "the evicted pod watched"
sleep 1
kill -TERM "$t_pid"
t_wait 10
t_rc 2 "TERM while the evicted pod is watched"
t_grep "says so" err "^drv-upgrade.sh: lab-node-1: interrupted by SIGTERM$"
t_grep "and where the node stands" err "^drv-upgrade.sh: lab-node-1: driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed$"
t_none_alive "neither the watch's kubectl nor its reader is left" kubectl.pids
unset FAKE_LEFT FAKE_LEFT_EVENTS FAKE_LEFT_FIRST

# 2. A budget refuses the eviction past podDeletion.timeoutSeconds: the
# upgrade fails, the node back in service; with drain.enable, the drain.
fresh
cp_policy '{"podDeletion":{"timeoutSeconds":6}}'
FAKE_EVICT=429 t_run up
t_rc 1 "an eviction refused past podDeletion.timeoutSeconds"
t_grep "retried, as kubectl's drain helper does" err "^    error when evicting pods/\"trainer-7d9f5c6b8d-m4q7z\" -n \"gpu-drv\" (will retry after 5s): Error from server (TooManyRequests): "
t_grep "says why it failed" err "^drv-upgrade.sh: lab-node-1: the pod deletion failed: the budgets still refuse the eviction of $TR after [0-9]*s (podDeletion.timeoutSeconds 6)$"
t_run t_fake_state
t_out "the node back in service, upgrade-failed" "unschedulable= state=upgrade-failed"
t_is "gpudrv's record of its cordon went with it" "$(grep -c '"gpudrv/cordoned":null' kubectl.log)" 1
fresh
cp_policy '{"podDeletion":{"timeoutSeconds":6},"drain":{"enable":true}}'
FAKE_EVICT=429 t_run up
t_rc 0 "the same with drain.enable: the drain in its place"
t_grep "says so" err "drain.enable is true: the node is drained, as the GPU Operator does$"
t_run states
t_out "pod-deletion-required, then drain-required" pod-deletion-required drain-required validation-required upgrade-done
fresh
FAKE_EVICT=500 t_run up
t_rc 1 "an eviction two budgets refuse (HTTP 500)"
t_grep "names it" err "^drv-upgrade.sh: lab-node-1: the pod deletion failed: the eviction of $TR was refused: Error from server (InternalError): "

# 3. autoUpgrade: refused unless -f.
fresh
cp_policy '{"autoUpgrade":true}'
t_run up
t_rc 1 "autoUpgrade: true"
t_err "says the operator acts too, and what to do" \
	"drv-upgrade.sh: lab-node-1: upgradePolicy of clusterpolicy/cluster-policy" \
	"drv-upgrade.sh: lab-node-1: clusterpolicy/cluster-policy's upgradePolicy says autoUpgrade: true: the GPU Operator's upgrade controller upgrades this node itself, and two controllers must never move one node; nothing was changed" \
	"drv-upgrade.sh: set autoUpgrade: false in clusterpolicy/cluster-policy's upgradePolicy, or, if the operator's upgrade controller does not run, go on with -f"
t_is "no write" "$(calls 'patch ')" 0
t_run cut -d' ' -f1-2 fake/events
t_out "a Warning Event" "Warning GPUDriverUpgradeRefused"
t_run up -f
t_rc 0 "-f: beside the operator's controller"
t_grep "says so" err "^drv-upgrade.sh: lab-node-1: warning: autoUpgrade is true (clusterpolicy/cluster-policy), and -f goes on beside the operator's upgrade controller$"

# 4. A pod that holds a GPU and has emptyDir data: refused by name, nothing
# changed; podDeletion.deleteEmptyDir lets it go.
fresh
sed 's/"restartPolicy": "Always",/"restartPolicy": "Always", "volumes": [{"name": "s", "emptyDir": {}}],/' "$DATA/pdb-gpu-ok.json" >gpu-emptydir.json
grep -q '"emptyDir"' gpu-emptydir.json || echo "Bail out! no emptyDir in the fixture"
FAKE_PDB=$PWD/gpu-emptydir.json t_run up
t_rc 1 "a GPU pod with emptyDir data"
t_grep "names the pod and the field" out "^$TR LOCAL-STORAGE: it holds a GPU and has emptyDir data, which its deletion loses, and podDeletion.deleteEmptyDir is false: "
t_is "no write" "$(calls 'patch ')" 0
FAKE_PDB=$PWD/gpu-emptydir.json t_run up -U podDeletion.deleteEmptyDir=true
t_rc 0 "-U podDeletion.deleteEmptyDir=true"

# 5. A cordon someone else set stays, in upgrade-required too; the operator's
# record of it is written with the first write.
fresh true
echo upgrade-required >fake/state
t_run up
t_rc 0 "a node cordoned by hand in upgrade-required"
t_grep "leaves it cordoned" err "^drv-upgrade.sh: lab-node-1: left cordoned: it was cordoned by someone else before the upgrade$"
t_run t_fake_state
t_out "cordoned, upgrade-done" "unschedulable=true state=upgrade-done"
t_is "the operator's record with the first write" \
	"$(grep -c '"annotations":{"nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable":"true","gpudrv/cordoned":null}},"spec":{"unschedulable":true}}' kubectl.log)" 1
t_is "gpudrv's own record never written" "$(grep -c '"gpudrv/cordoned":"true"' kubectl.log)" 0

# 6. -R: a run stopped after the removal leaves the node cordoned with this
# tool's record of its cordon; the rerun takes it up and undoes it.
fresh
FAKE_HANG='patch node lab-node-1 *"validation-required"*' t_bg drv-upgrade.sh -R -L -N -m "$M" lab-node-1 550.90.07
t_until 15 sh -c '[ -s hung ]'
t_ok $? "-R: a hang at validation-required"
kill -TERM "$t_pid"
t_wait 20
t_rc 2 "-R: stopped by SIGTERM"
t_run t_fake_state
t_out "left cordoned, in the state it had reached" "unschedulable=true state=pod-deletion-required"
rm -f hung
: >kubectl.log
t_run up
t_rc 0 "the rerun"
t_run t_fake_state
t_out "the cordon its first run set is undone" "unschedulable= state=upgrade-done"
t_is "with its record" "$(grep -c '"gpudrv/cordoned":null}},"spec":{"unschedulable":null}}' kubectl.log)" 1

# 7. Events refused: said once, the upgrade the same.
fresh
FAKE_EVENTS=forbidden t_run up
t_rc 0 "Events refused"
cp err run.err
t_run grep -c 'cannot record Events' run.err
t_out "said once" 1
t_grep "with the API server's words" run.err '^drv-upgrade.sh: warning: cannot record Events on lab-node-1 (kubectl said: Error from server (Forbidden): events is forbidden: '
t_is "tried once" "$(calls 'create --raw /api/v1/namespaces/default/events')" 1
t_done
