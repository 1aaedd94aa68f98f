#!/bin/sh
# End to end: drv-states.sh on the sandbox, with GPU nodes placed in the
# states the GPU Operator's library writes, with its annotations, the
# driver and validator pods it looks at, and a budget that holds a drain:
# each node's age and what it waits for, from the API server's own
# managedFields, pods and budgets.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

cleanup() {
	kubectl delete namespace gpu-operator --ignore-not-found --wait=false >/dev/null 2>&1
	kubectl delete -f "$ROOT/deploy/10-auditor.yaml" --ignore-not-found >/dev/null 2>&1
	e2e_reset_lab >/dev/null 2>&1
}
trap 'cleanup; rm -rf "$SCRATCH"' EXIT

ns() { kubectl -n gpu-drv "$@"; }
S=nvidia.com/gpu-driver-upgrade-state
e2e_facts
# Four more GPU nodes on lab-node-1's kernel, so its image exists for all.
for n in st-valid st-restart st-failed st-jobs st-maint st-hand st-skip; do
	sed "s/@NAME@/$n/g" "$ROOT/sandbox/node.yaml.in" | kubectl apply -f - >/dev/null
	kubectl label node "$n" --overwrite nvidia.com/gpu.present=true nvidia.com/cuda.driver.major=535 \
		nvidia.com/cuda.driver.minor=183 nvidia.com/cuda.driver.rev=06 \
		feature.node.kubernetes.io/kernel-version.full=5.15.0-107-generic \
		feature.node.kubernetes.io/system-os_release.ID=ubuntu \
		feature.node.kubernetes.io/system-os_release.VERSION_ID=22.04 >/dev/null
done
M=$ROOT/lab/support-matrix.csv
# Every GPU node Ready (kwok sets the condition a moment after a node is
# made, and an earlier script may have made the lab's anew): a node not
# Ready waits for its kubelet first, whatever its state.
allready() {
	[ "$(kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')" -eq 10 ]
}
e2e_until 90 allready
t_ok $? "the ten GPU nodes are Ready"

# lab-node-1's drain is held: a workload pinned there, whose budget wants
# its one replica (with seven more GPU nodes, the lab's trainers could land
# anywhere).
e2e_namespace gpu-drv
ns apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 1
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      containers: [{name: c, image: busybox}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pinned-pdb}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: pinned}}
EOF
running() { [ "$(ns get pods -l app=pinned --field-selector=status.phase=Running,spec.nodeName=lab-node-1 -o name | wc -l)" -eq 1 ]; }
settled() { # settled ALLOWED: the budget's status is current and allows ALLOWED
	g=$(ns get pdb pinned-pdb -o jsonpath='{.metadata.generation}')
	[ "$(ns get pdb pinned-pdb -o jsonpath='{.status.observedGeneration} {.status.disruptionsAllowed}')" = "$g $1" ]
}
e2e_until 90 running && e2e_until 60 settled 0
t_ok $? "a pod pinned to lab-node-1 Running, pinned-pdb allows no disruption"

# The driver and validator pods the operator looks at: bare pods on their
# nodes (kwok makes them Running and Ready), then made not Ready as a
# crashing driver or a failing validator would be.
# An earlier script's gpu-operator may still be going.
e2e_until 120 sh -c '! kubectl get namespace gpu-operator'
e2e_namespace gpu-operator
pod() { # pod NAME NODE KEY=VALUE
	kubectl -n gpu-operator apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {${3%%=*}: ${3#*=}}}
spec: {nodeName: $2, containers: [{name: c, image: busybox}]}
EOF
}
pod drv-restart st-restart app.kubernetes.io/component=nvidia-driver
pod val-valid st-valid app=nvidia-operator-validator
pod drv-valid st-valid app.kubernetes.io/component=nvidia-driver
ready() { [ "$(kubectl -n gpu-operator get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
e2e_until 60 ready drv-restart && e2e_until 60 ready val-valid && e2e_until 60 ready drv-valid
t_ok $? "the driver and validator pods are Ready (kwok)"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
unready() { # unready POD RESTARTS
	kubectl -n gpu-operator patch pod "$1" --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"'"$now"'"},{"type":"ContainersReady","status":"False","lastTransitionTime":"'"$now"'"}],"containerStatuses":[{"name":"c","image":"busybox","imageID":"","ready":false,"restartCount":'"$2"',"started":false,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}' >/dev/null
}
unready drv-restart 7 && unready val-valid 0
e2e_until 30 sh -c '! kubectl -n gpu-operator get pod drv-restart -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}" | grep -q True'
t_ok $? "the driver pod on st-restart is not Ready, 7 restarts"

# The states, as the operator's controller writes them, with its annotations.
t0=$(date +%s)
kubectl label node lab-node-0 --overwrite "$S=upgrade-required" >/dev/null
kubectl label node lab-node-2 --overwrite "$S=upgrade-done" >/dev/null
kubectl cordon lab-node-1 >/dev/null
kubectl label node lab-node-1 --overwrite "$S=drain-required" >/dev/null
for n in st-valid st-restart st-failed st-jobs; do kubectl cordon "$n" >/dev/null; done
kubectl label node st-valid --overwrite "$S=validation-required" >/dev/null
kubectl annotate node st-valid --overwrite "nvidia.com/gpu-driver-upgrade-validation-start-time=$((t0 - 700))" >/dev/null
kubectl label node st-restart --overwrite "$S=pod-restart-required" >/dev/null
kubectl label node st-failed --overwrite "$S=upgrade-failed" >/dev/null
kubectl label node st-jobs --overwrite "$S=wait-for-jobs-required" >/dev/null
kubectl annotate node st-jobs --overwrite "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time=$((t0 - 3700))" >/dev/null
kubectl label node st-maint --overwrite "$S=node-maintenance-required" >/dev/null
kubectl cordon st-hand >/dev/null
kubectl label node st-skip --overwrite "$S=upgrade-required" nvidia.com/gpu-driver-upgrade.skip=true >/dev/null

t_run drv-states.sh -m "$M"
t_rc 0 "drv-states.sh over the placed states"
t_err "nothing on stderr"
T1=535-5.15.0-107-generic-ubuntu22.04
t_grep "drain-required: the budget that holds it, and the node's pod" out \
	"^lab-node-1 drain-required cordoned $T1 ok [0-9]*s budget its drain is refused: gpu-drv/pinned-pdb BLOCKS gpu-drv/pinned-[a-z0-9-]* minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: [^;]*; fix: as pdb-check says"
t_grep "upgrade-required: the slots under way and unavailable" out \
	"^lab-node-0 upgrade-required schedulable 550-5.15.0-119-generic-ubuntu22.04 ok [0-9]*s slot waits for an upgrade slot: 5 GPU node(s) under way, 6 unavailable "
t_grep "upgrade-done: nothing to wait for" out "^lab-node-2 upgrade-done schedulable 550-6.8.0-45-generic-ubuntu24.04 ok [0-9]*s -\$"
t_grep "validation-required: the validator not Ready, since the operator's start time, past its 600 s" out \
	"^st-valid validation-required cordoned $T1 ok 1[12]m[0-9]*s validator waits for the validator: gpu-operator/val-valid is Running, not Ready; the operator fails it 600 s after its start, past; fix: kubectl -n gpu-operator logs val-valid\$"
t_grep "pod-restart-required: the driver pod, not Ready, its restarts" out \
	"^st-restart pod-restart-required cordoned $T1 ok [0-9]*s driver-pod waits for the new driver pod: gpu-operator/drv-restart is Running, not Ready, 7 restarts; fix: kubectl -n gpu-operator logs drv-restart "
t_grep "upgrade-failed: no driver pod, and the retry" out \
	"^st-failed upgrade-failed cordoned $T1 ok [0-9]*s failed its upgrade failed; the operator moves it on once its driver pod is Ready and current (none on it); fix: .* kubectl label node st-failed nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite\$"
t_grep "wait-for-jobs-required: an hour, from the operator's start time" out \
	"^st-jobs wait-for-jobs-required cordoned $T1 ok 1h[12]m jobs waits for the pods of waitForCompletion.podSelector"
t_grep "node-maintenance-required" out "^st-maint node-maintenance-required schedulable $T1 ok [0-9]*s maintenance "
t_grep "a cordon by hand outside any upgrade, and who did it" out \
	"^st-hand - cordoned $T1 ok - cordon cordoned by kubectl, outside any upgrade; fix: kubectl uncordon st-hand when nobody needs it so\$"
t_grep "the skip label" out "^st-skip upgrade-required schedulable $T1 ok [0-9]*s skip "
cp out lines
t_run awk '{ print $1 }' lines
t_out "every GPU node, once" lab-node-0 lab-node-1 lab-node-2 st-failed st-hand st-jobs st-maint st-restart st-skip st-valid

# The label's age is the API server's: a node put in a state a while ago.
sleep 2
drv-states.sh -o json -m "$M" >states.json
t_ok $? "-o json"
t_run python3 -c '
import json, time
d = {n["node"]: n for n in json.load(open("states.json"))}
now = int(time.time())
print(len(d), d["lab-node-1"]["sinceFrom"], d["st-valid"]["sinceFrom"], d["st-jobs"]["sinceFrom"], d["st-hand"]["sinceFrom"])
print(0 < d["lab-node-1"]["seconds"] < 600, abs(d["st-valid"]["since"] - ('"$t0"' - 700)) == 0)
print(d["lab-node-1"]["cordonedBy"], d["st-hand"]["cordonedBy"], d["lab-node-2"]["cordonedBy"])
print(d["lab-node-1"]["waiting"], d["st-restart"]["waiting"], d["lab-node-2"]["waiting"])'
t_out "since from the label, the validation and the jobs start times; cordoned by kubectl" \
	"10 label validation jobs None" "True True" "kubectl kubectl None" "budget driver-pod None"

t_run drv-states.sh -S -m "$M"
t_rc 0 "-S"
cp out summary
t_run awk '{ print $1, $2, $4, $5 }' summary
t_out "a line a state: how many, the longest, what it waits for" \
	"- 1 st-hand cordon" \
	"upgrade-required 2 lab-node-0 slot" \
	"wait-for-jobs-required 1 st-jobs jobs" \
	"drain-required 1 lab-node-1 budget" \
	"node-maintenance-required 1 st-maint maintenance" \
	"pod-restart-required 1 st-restart driver-pod" \
	"validation-required 1 st-valid validator" \
	"upgrade-done 1 lab-node-2 -" \
	"upgrade-failed 1 st-failed failed"

# The headroom made: the drain no longer held, so lab-node-1 waits for its
# pods to go, not for a budget.
ns patch pdb pinned-pdb --type=merge -p '{"spec":{"minAvailable":0}}' >/dev/null
e2e_until 60 settled 1
t_run drv-states.sh -m "$M"
t_grep "with room in the budget, no budget is named" out \
	"^lab-node-1 drain-required cordoned $T1 ok [0-9]*s drain drained, no budget refusing: pods are still terminating; "

# The auditor of deploy/ may not read pods: under way, it cannot tell what
# holds a drain, and says so; never "nothing holds it".
e2e_gpudrv_ns
kubectl apply -f "$ROOT/deploy/10-auditor.yaml" >/dev/null
cat >kubectl-as <<EOF
#!/bin/sh
exec "$(command -v kubectl)" --as=system:serviceaccount:gpudrv:auditor "\$@"
EOF
chmod +x kubectl-as
KUBECTL=$PWD/kubectl-as t_run drv-states.sh -m "$M"
t_rc 2 "as the auditor, with a drain under way"
t_out "prints no line"
t_grep "says which request was refused, in the API server's words" err \
	"poddisruptionbudgets.policy is forbidden: User \"system:serviceaccount:gpudrv:auditor\" cannot list resource \"poddisruptionbudgets\""
kubectl label node lab-node-1 "$S-" >/dev/null
kubectl label node st-restart st-valid st-failed "$S=upgrade-done" --overwrite >/dev/null
KUBECTL=$PWD/kubectl-as t_run drv-states.sh -m "$M"
t_rc 0 "as the auditor, with no state that needs the pods"
cp out lines
t_run awk 'END { print NR }' lines
t_out "every GPU node listed" 10
t_done
