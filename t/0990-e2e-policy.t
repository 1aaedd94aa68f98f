#!/bin/sh
# End to end, the cluster's own upgradePolicy: a ClusterPolicy at the
# operator's defaults (drain off, the pods that hold a GPU deleted, emptyDir
# data kept) refuses a node whose GPU pod has emptyDir data, before the
# cordon, naming the pod and the field; without it, only the GPU pod is
# evicted; drain.enable drains; autoUpgrade is refused without -f; a cordon
# someone else set stays; the health gate's three outcomes (kwok's stage
# decides: pass, fail, hang); the Events on the node; per-owner limits
# (an NVIDIADriver with maxParallelUpgrades 2 beside one with 1); a canary
# that fails stops the rollout.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_no_operator_objects
e2e_facts
e2e_gpudrv_ns || { echo "Bail out! no namespace gpudrv"; exit 1; }
e2e_namespace gpu-drv
kubectl delete events -n default -l app.kubernetes.io/part-of=gpudrv >/dev/null 2>&1

{ cat "$ROOT/lab/support-matrix.csv"; echo 550,5.15.0-107-generic,ubuntu22.04; echo 550,5.15.0-119-generic,ubuntu22.04; } >matrix.csv
M=$PWD/matrix.csv
S=nvidia.com/gpu-driver-upgrade-state
ns() { kubectl -n gpu-drv "$@"; }
# cp_policy JSON: the ClusterPolicy, its spec.driver.upgradePolicy JSON.
cp_policy() {
	kubectl apply -f - >/dev/null <<EOF2
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  driver: {enabled: true, usePrecompiled: true, version: "550", repository: registry.example/nvidia, image: driver, upgradePolicy: $1}
EOF2
}
# The chart's rendering of the operator's defaults, autoUpgrade off.
DEFAULTS='{autoUpgrade: false, maxParallelUpgrades: 1, maxUnavailable: "25%", waitForCompletion: {timeoutSeconds: 0}, podDeletion: {force: false, timeoutSeconds: 300, deleteEmptyDir: false}, drain: {enable: false, force: false, timeoutSeconds: 300, deleteEmptyDir: false}}'
cp_policy "$DEFAULTS"
# deploy NAME GPU EMPTYDIR: a Deployment of one pod on lab-node-1, asking
# for a GPU (1) or not, with an emptyDir volume (1) or not.
deploy() {
	ns apply -f - >/dev/null <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      containers:
      - name: c
        image: busybox
$([ "$2" = 1 ] && printf '        resources: {limits: {nvidia.com/gpu: 1}}')
$([ "$3" = 1 ] && printf '        volumeMounts: [{name: s, mountPath: /s}]\n      volumes: [{name: s, emptyDir: {}}]')
EOF2
}
running() { [ "$(ns get pods -l "app=$1" --field-selector=status.phase=Running,spec.nodeName=lab-node-1 -o name | wc -l)" -eq 1 ]; }
uid_of() { ns get pods -l "app=$1" -o jsonpath='{.items[0].metadata.uid}'; }
node1() { kubectl get node lab-node-1 -o 'jsonpath={.metadata.labels}{.metadata.annotations}{.spec}'; }
state1() { kubectl get node lab-node-1 -o "jsonpath={.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}"; }
driver1() { kubectl label node lab-node-1 --overwrite nvidia.com/cuda.driver.major="$1" nvidia.com/cuda.driver.minor="$2" nvidia.com/cuda.driver.rev="$3" >/dev/null; }
deploy gpu-a 1 0
deploy cpu-b 0 0
deploy gpu-e 1 1
e2e_until 60 running gpu-a && e2e_until 60 running cpu-b && e2e_until 60 running gpu-e
t_ok $? "on lab-node-1: a GPU pod, a pod without a GPU, a GPU pod with emptyDir data"

# 1. The operator's defaults: refused before the cordon, naming the pod and
# the field that would let it go.
node1 >before
t_run drv-upgrade.sh -L -m "$M" lab-node-1 550.90.07
t_rc 1 "defaults, a GPU pod with emptyDir data"
t_grep "names the pod and podDeletion.deleteEmptyDir" out \
	"^gpu-drv/gpu-e-[a-z0-9-]* LOCAL-STORAGE: it holds a GPU and has emptyDir data, which its deletion loses, and podDeletion.deleteEmptyDir is false: set it true to let the data go, or keep it elsewhere than in emptyDir$"
t_grep "whose policy it is" err "^drv-upgrade.sh: lab-node-1: upgradePolicy of clusterpolicy/cluster-policy$"
t_grep "says nothing was changed" err "^drv-upgrade.sh: lab-node-1: the removal of its pods would be refused by what is above; nothing was changed$"
node1 >after
t_cmp "the node is exactly as it was" before after

# 2. Without that pod: only the GPU pod is evicted; the other is never.
ns delete deployment gpu-e --wait=true >/dev/null
e2e_until 60 sh -c '! kubectl -n gpu-drv get pods -l app=gpu-e -o name | grep -q .'
cpu_uid=$(uid_of cpu-b)
gpu_uid=$(uid_of gpu-a)
# The GPU pod held by a finalizer for 4 s after its eviction: the wait for
# it is one list of the node's pods and one watch from there, which sees it
# go (every kubectl call logged).
gpu_pod=pod/$(ns get pods -l app=gpu-a -o jsonpath='{.items[0].metadata.name}')
ns patch "$gpu_pod" --type=merge -p '{"metadata":{"finalizers":["gpudrv.test/hold"]}}' >/dev/null
e2e_logged_kubectl
KUBECTL=$PWD/logged-kubectl drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07 >out 2>err &
up_pid=$!
# shellcheck disable=SC2016 # expanded by the inner sh
e2e_until 60 sh -c '[ -n "$(kubectl -n gpu-drv get "$1" -o jsonpath="{.metadata.deletionTimestamp}")" ]' - "$gpu_pod"
t_ok $? "the GPU pod evicted, held by its finalizer"
sleep 4
ns patch "$gpu_pod" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
rc=0
wait "$up_pid" || rc=$?
t_rc 0 "defaults, the GPU pod and the other"
gone=$(sed -n 's/^    1 pod(s) evicted and gone, after \([0-9]*\)s$/\1/p' err)
[ -n "$gone" ] && [ "$gone" -ge 4 ]
t_ok $? "waited for the held pod until it was gone (${gone:-no}s)"
t_is "by one watch of the node's pods, from a list's resourceVersion" \
	"$(grep -c '^--request-timeout=[0-9]*s get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1&resourceVersion=[0-9][0-9]*&watch=1&timeoutSeconds=' kubectl.calls)" 1
t_is "and no look at the node's pods while it waited" \
	"$(grep -c '^--request-timeout=[0-9]*s get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1$' kubectl.calls)" 3
t_out "upgraded" "lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"
t_grep "the pod deletion, of one pod" err "^drv-upgrade.sh: lab-node-1: the budgets leave room: the pod deletion removes the 1 pod(s) that hold a GPU$"
t_grep "evicts the GPU pod" err "^    evicting pod gpu-drv/gpu-a-"
cp err run.err
t_run sed -n "s|^drv-upgrade.sh: lab-node-1: $S=||p" run.err
t_out "the operator's states" pod-deletion-required validation-required upgrade-done
t_is "the pod without a GPU was never evicted (the same pod)" "$(uid_of cpu-b)" "$cpu_uid"
[ "$(uid_of gpu-a)" != "$gpu_uid" ]
t_ok $? "the GPU pod was (a new one replaces it)"
t_is "and no kubectl drain ran" "$(grep -c 'kubectl drain' err)" 0
t_is "the node: schedulable, upgrade-done" "$(state1)" " upgrade-done"
t_run kubectl get events -n default --field-selector "involvedObject.kind=Node,involvedObject.name=lab-node-1,source=gpudrv" \
	-o 'jsonpath={range .items[*]}{.type} {.reason} {.message}{"\n"}{end}'
t_grep "the refusal is an Event on the node" out "^Warning GPUDriverUpgradeRefused the removal of its pods would be refused: gpu-drv/gpu-e-"
for st in pod-deletion-required validation-required upgrade-done; do
	t_grep "so is $st" out "^Normal GPUDriverUpgrade $S=$st (driver 550.90.07, by drv-upgrade.sh on "
done
t_run kubectl describe node lab-node-1
t_grep "kubectl describe node shows them" out "GPUDriverUpgrade .*gpudrv .*$S=upgrade-done"

# 3. drain.enable in the ClusterPolicy: where the pod deletion cannot (the
# emptyDir pod), the node is drained, the pod without a GPU too.
deploy gpu-e 1 1
e2e_until 60 running gpu-e
cp_policy '{autoUpgrade: false, drain: {enable: true, deleteEmptyDir: true, timeoutSeconds: 60}}'
driver1 535 183 06
cpu_uid=$(uid_of cpu-b)
t_run drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07
t_rc 0 "drain.enable: true, a GPU pod with emptyDir data"
t_grep "says why it drains" err "^drv-upgrade.sh: lab-node-1: the pod deletion cannot take gpu-drv/gpu-e-[a-z0-9-]* (LOCAL-STORAGE), and drain.enable is true: the node is drained, as the GPU Operator drains where its pod deletion fails$"
t_grep "drains, as the policy says" err "^drv-upgrade.sh: lab-node-1: kubectl drain --ignore-daemonsets --pod-selector=nvidia.com/gpu-driver-upgrade-drain.skip!=true --timeout=60s --delete-emptydir-data$"
[ "$(uid_of cpu-b)" != "$cpu_uid" ]
t_ok $? "the pod without a GPU was drained too"

# 4. autoUpgrade: the operator's upgrade controller would act too.
cp_policy '{autoUpgrade: true}'
driver1 535 183 06
node1 >before
t_run drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07
t_rc 1 "autoUpgrade: true"
t_grep "says two controllers must not move one node" err "two controllers must never move one node; nothing was changed$"
node1 >after
t_cmp "nothing changed" before after
t_run drv-upgrade.sh -f -L -N -m "$M" -U drain.deleteEmptyDir=true -U podDeletion.deleteEmptyDir=true lab-node-1 550.90.07
t_rc 0 "-f goes on"
t_grep "and says so" err "^drv-upgrade.sh: lab-node-1: warning: autoUpgrade is true (clusterpolicy/cluster-policy), and -f goes on beside the operator's upgrade controller$"
cp_policy "$DEFAULTS"
ns delete deployment gpu-e --wait=true >/dev/null

# 5. A cordon someone else set stays, whatever the state label says
# (upgrade-required included); the one this tool set goes with its record.
driver1 535 183 06
kubectl label node lab-node-1 --overwrite "$S=upgrade-required" >/dev/null
kubectl cordon lab-node-1 >/dev/null
t_run drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07
t_rc 0 "a node cordoned by hand in upgrade-required"
t_grep "says it leaves it cordoned" err "^drv-upgrade.sh: lab-node-1: left cordoned: it was cordoned by someone else before the upgrade$"
t_is "still cordoned, upgrade-done" "$(state1)" "true upgrade-done"
kubectl uncordon lab-node-1 >/dev/null

# 6. The health gate: pass, fail, hang.
gate() { # gate OUTCOME: a manifest kwok's stage ends with OUTCOME
	cat >"gate-$1.yaml" <<EOF2
apiVersion: v1
kind: Pod
metadata:
  name: cuda-vectoradd
  labels: {gpudrv-sandbox/gate: $1}
spec:
  containers:
  - name: vectoradd
    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
    resources: {limits: {nvidia.com/gpu: 1}}
EOF2
}
gate pass && gate fail && gate hang
gate_pods() { kubectl -n gpudrv get pods -l gpudrv/gate=lab-node-1 -o name | grep -c . || :; }
driver1 535 183 06
t_run drv-upgrade.sh -L -N -m "$M" -V gate-fail.yaml -G 60 lab-node-1 550.90.07
t_rc 1 "the gate fails"
t_grep "quotes its reason and exit" err "^drv-upgrade.sh: lab-node-1: the health gate's pod gpudrv/gpudrv-gate-lab-node-1-[a-z0-9]* failed after [0-9]*s: reason Error, exit 1; its last lines:$"
t_grep "and its last lines" err "^    CUDA error: no CUDA-capable device is detected$"
t_grep "the node stays cordoned, upgrade-failed" err "^drv-upgrade.sh: lab-node-1: now: unschedulable=true state=upgrade-failed$"
t_is "so it is" "$(state1)" "true upgrade-failed"
t_is "the gate's pod is deleted" "$(e2e_until 30 sh -c "[ \$(kubectl -n gpudrv get pods -l gpudrv/gate=lab-node-1 -o name | wc -l) = 0 ]"; echo $?)" 0
t_run kubectl get events -n default --field-selector "involvedObject.name=lab-node-1,reason=GPUDriverUpgradeFailed" -o 'jsonpath={.items[*].message}'
t_grep "the failure is an Event" out "the GPU health check failed: the health gate's pod gpudrv/gpudrv-gate-lab-node-1-"
t_run drv-upgrade.sh -L -N -m "$M" -V gate-hang.yaml -G 5 lab-node-1 550.90.07
t_rc 1 "the gate does not end within -G"
t_grep "says so" err "did not end within 5s (-G): phase Running"
t_is "still cordoned, upgrade-failed" "$(state1)" "true upgrade-failed"
# The gate's pod made, the API's answer lost: the pod is found by its
# labels on the node and deleted, not left running.
real_kubectl=$(command -v kubectl)
cat >lose-answer <<EOF2
#!/bin/sh
case "\$*" in
*"create --raw /api/v1/namespaces/gpudrv/pods -f"*) "$real_kubectl" "\$@" >/dev/null && echo '{"kind":' ;;
*) exec "$real_kubectl" "\$@" ;;
esac
EOF2
chmod +x lose-answer
t_run env KUBECTL="$PWD/lose-answer" drv-upgrade.sh -L -N -m "$M" -V gate-hang.yaml -G 60 lab-node-1 550.90.07
t_rc 2 "the answer to the gate's creation cannot be read"
t_grep "says so" err "^drv-upgrade.sh: lab-node-1: the API's answer to the health gate's pod cannot be read: "
t_grep "deletes the gate's pods on the node" err "^drv-upgrade.sh: lab-node-1: the health gate's pods on the node in gpudrv deleted$"
e2e_until 30 sh -c "[ \$(kubectl -n gpudrv get pods -l gpudrv/gate=lab-node-1 -o name | wc -l) = 0 ]"
t_ok $? "so none is left"
: >kubectl.calls
t_run env KUBECTL="$PWD/logged-kubectl" drv-upgrade.sh -L -N -m "$M" -V gate-pass.yaml -G 60 lab-node-1 550.90.07
t_rc 0 "the gate passes: the resumed upgrade ends"
t_grep "says so" err "^drv-upgrade.sh: lab-node-1: health gate passed after [0-9]*s (exit 0)$"
gate_q='get --raw /api/v1/namespaces/gpudrv/pods'
t_is "the gate's pod watched, then read once, when it had ended" \
	"$(grep -c "^--request-timeout=[0-9]*s $gate_q?fieldSelector=metadata.name%3Dgpudrv-gate-lab-node-1-[a-z0-9]*&watch=1&" kubectl.calls) $(grep -c "^--request-timeout=[0-9]*s $gate_q/gpudrv-gate-lab-node-1-[a-z0-9]*$" kubectl.calls)" "1 1"
t_is "the cordon this tool set is undone now" "$(state1)" " upgrade-done"
t_is "its record with it" "$(kubectl get node lab-node-1 -o 'jsonpath={.metadata.annotations.gpudrv/cordoned}')" ""
e2e_until 30 sh -c "[ \$(kubectl -n gpudrv get pods -l gpudrv/gate=lab-node-1 -o name | wc -l) = 0 ]"
t_ok $? "no gate pod is left"
# A record of gpudrv's cordon left behind (the node uncordoned by hand, the
# annotation kept) says nothing of someone's later cordon: it stays.
kubectl annotate node lab-node-1 --overwrite gpudrv/cordoned=true >/dev/null
kubectl cordon lab-node-1 >/dev/null
driver1 535 183 06
t_run drv-upgrade.sh -L -N -m "$M" lab-node-1 550.90.07
t_rc 0 "an upgrade of a node cordoned by kubectl, gpudrv's old record on it"
t_is "kubectl's cordon stays" "$(state1)" "true upgrade-done"
t_is "and the old record is gone" "$(kubectl get node lab-node-1 -o 'jsonpath={.metadata.annotations.gpudrv/cordoned}')" ""
kubectl uncordon lab-node-1 >/dev/null

# 7. Per-owner limits: NVIDIADrivers (useNvidiaDriverCRD), a100 owning
# three nodes with maxParallelUpgrades 2, the default one the other three
# with 1; the first decision starts two of a100's and one of the others.
for n in pol-0 pol-1 pol-2; do
	sed "s/@NAME@/$n/g" "$e2e_root/sandbox/node.yaml.in" | kubectl apply -f - >/dev/null
done
e2e_until 60 kubectl wait --for=condition=Ready node/pol-0 node/pol-1 node/pol-2 --timeout=5s
for n in lab-node-0 lab-node-1 lab-node-2 pol-0 pol-1 pol-2; do
	kubectl label node "$n" --overwrite nvidia.com/gpu.present=true nvidia.com/cuda.driver.major=535 nvidia.com/cuda.driver.minor=183 \
		nvidia.com/cuda.driver.rev=06 feature.node.kubernetes.io/kernel-version.full=5.15.0-107-generic \
		feature.node.kubernetes.io/system-os_release.ID=ubuntu feature.node.kubernetes.io/system-os_release.VERSION_ID=22.04 "$S-" >/dev/null
done
kubectl label node pol-0 pol-1 pol-2 --overwrite pool=a100 >/dev/null
kubectl delete clusterpolicies.nvidia.com --all >/dev/null
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  driver: {useNvidiaDriverCRD: true}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: a100}
spec:
  usePrecompiled: true
  version: "550"
  nodeSelector: {pool: a100}
  upgradePolicy: {autoUpgrade: false, maxParallelUpgrades: 2, maxUnavailable: 2}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: default}
spec:
  default: true
  usePrecompiled: true
  version: "550"
  upgradePolicy: {autoUpgrade: false}
EOF2
t_run drv-rollout.sh -D -L -m "$M" 550.90.07
t_rc 0 "the plan, two NVIDIADrivers"
t_grep "-D: a100's maxParallelUpgrades, from it" out "^policy nvidiadriver/a100 maxParallelUpgrades object 2$"
t_grep "-D: the default one's, the default" out "^policy nvidiadriver/default maxParallelUpgrades default 1$"
t_grep "-D: where each field comes from" out "^policy nvidiadriver/default podDeletion.deleteEmptyDir default false$"
t_run drv-rollout.sh -L -m "$M" -o "$PWD/logs" 550.90.07
t_rc 0 "the rollout, two NVIDIADrivers"
cp out rollout.out
awk '$1 != "start" { exit } { print $3 }' rollout.out | sort >first
t_run cat first
t_out "the first decision: two of a100's nodes and one of the others" lab-node-0 pol-0 pol-1
t_grep "every node done" rollout.out "^done 6 failed 0 skipped 0 left 0$"

# 8. A canary that fails stops the rollout: the others are left as they are.
kubectl delete nvidiadrivers.nvidia.com a100 >/dev/null
for n in lab-node-0 lab-node-1 lab-node-2 pol-0 pol-1 pol-2; do
	kubectl label node "$n" --overwrite nvidia.com/cuda.driver.major=535 nvidia.com/cuda.driver.minor=183 nvidia.com/cuda.driver.rev=06 "$S-" >/dev/null
done
t_run drv-rollout.sh -L -m "$M" -C 1 -V "$PWD/gate-fail.yaml" -G 60 -p 3 -u 100% 550.90.07
t_rc 1 "a canary that fails its gate"
t_grep "names the canary" err "^drv-rollout.sh: canary: lab-node-0 alone first; the other nodes only once each of them is done$"
t_grep "says it stopped" err "^drv-rollout.sh: stopped: the canary failed: lab-node-0; the other nodes are left as they are$"
t_grep "and the command that resumes" err "^drv-rollout.sh: see why (drv-states.sh, the nodes' logs), then resume, past the failed: drv-rollout.sh -c -L -m $M -C 1 -V $PWD/gate-fail.yaml -G 60 -p 3 -u 100% 550.90.07$"
t_is "one node started" "$(grep -c '^start ' out)" 1
t_is "the others untouched" "$(kubectl get nodes -l nvidia.com/cuda.driver.major=535 -o name | grep -c .)" 5
t_run drv-rollout.sh -L -m "$M" -C 1 -V "$PWD/gate-pass.yaml" -G 60 -p 3 -u 100% -c 550.90.07
t_rc 1 "with a gate that passes, past the failed canary (-c): the others"
t_grep "the canary passed" err "^drv-rollout.sh: canary passed: [a-z0-9-]* went through; the other nodes now$"
t_grep "the others done, the failed one left" out "^done 5 failed 1 skipped 0 left 0$"

kubectl delete node pol-0 pol-1 pol-2 >/dev/null
e2e_no_operator_objects
kubectl uncordon lab-node-0 >/dev/null
e2e_reset_lab >/dev/null
t_done
