#!/bin/sh
# End to end: the sandbox is a real control plane.  Scheduling by affinity,
# a budget refusing an eviction, drain, uncordon: done by upstream
# kube-apiserver, kube-scheduler and kube-controller-manager, kwok's fake
# kubelets, nothing mocked.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

ns() { kubectl -n gpu-drv "$@"; }

t_run kubectl version -o json
t_grep "the server is Kubernetes v1.36 (stamped)" out '"gitVersion": "v1\.36\.[0-9]*"'

t_run kubectl get nodes -o 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.taints}{"\n"}{end}'
t_out "three Ready lab nodes without taints" "lab-node-0 True " "lab-node-1 True " "lab-node-2 True "

t_run kubectl apply -f "$ROOT/lab/k8s/node3.yaml"
t_rc 0 "a 4th fake node from a manifest"
e2e_until 60 sh -c '[ "$(kubectl get node lab-node-3 -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]'
t_ok $? "lab-node-3 becomes Ready"

e2e_namespace gpu-drv
t_run ns apply -f "$ROOT/lab/k8s/trainer.yaml"
t_rc 0 "a Deployment of 4 with required pod anti-affinity"
four() {
	[ "$(ns get pods -l app=trainer -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" -eq 4 ]
}
e2e_until 90 four
t_ok $? "all four pods Running and Ready"
t_run sh -c 'kubectl -n gpu-drv get pods -l app=trainer -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | sort'
t_out "one pod on each node" lab-node-0 lab-node-1 lab-node-2 lab-node-3

t_run ns apply -f "$ROOT/lab/k8s/pdb.yaml"
settled() { # settled ALLOWED
	[ "$(ns get pdb trainer-pdb -o jsonpath='{.status.observedGeneration}={.metadata.generation} {.status.disruptionsAllowed}')" = "$(ns get pdb trainer-pdb -o jsonpath='{.metadata.generation}')=$(ns get pdb trainer-pdb -o jsonpath='{.metadata.generation}') $1" ]
}
e2e_until 60 settled 0
t_ok $? "the disruption controller computes disruptionsAllowed=0 for minAvailable 4"

t_run kubectl drain lab-node-1 --ignore-daemonsets --delete-emptydir-data --timeout=20s
t_rc 1 "drain with minAvailable 4"
t_grep "is refused by the budget" err "Cannot evict pod as it would violate the pod's disruption budget"
t_grep "and gives up at its timeout" err "global timeout reached: 20s"
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}'
t_val "the refused drain left the node cordoned" true

ns patch pdb trainer-pdb --type=merge -p '{"spec":{"minAvailable":3}}' >/dev/null
e2e_until 60 settled 1
t_ok $? "minAvailable 3: the controller recomputes disruptionsAllowed=1"
t_run kubectl drain lab-node-1 --ignore-daemonsets --delete-emptydir-data --timeout=20s
t_rc 0 "the same drain now"
t_grep "evicts the trainer pod" out "evicted"
t_grep "and says the node is drained" out "node/lab-node-1 drained"
pending() {
	[ "$(ns get pods -l app=trainer --field-selector=status.phase=Pending -o name | wc -l)" -eq 1 ]
}
e2e_until 60 pending
t_ok $? "the replacement pod is Pending: no other node may take it"

t_run kubectl uncordon lab-node-1
t_rc 0 "uncordon"
on1() {
	[ "$(ns get pods -l app=trainer --field-selector=spec.nodeName=lab-node-1,status.phase=Running -o name | wc -l)" -eq 1 ]
}
e2e_until 60 on1
t_ok $? "the replacement lands on lab-node-1 and runs"

kubectl label node lab-node-0 lab-node-1 lab-node-2 lab-node-3 --overwrite nvidia.com/cuda.driver.major=550 >/dev/null
t_run ns apply -f "$ROOT/lab/k8s/cuda13-job.yaml"
unsched() {
	[ "$(ns get pod cuda13-job -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
e2e_until 60 unsched
t_ok $? "a pod wanting driver.major Gt 560 stays Pending, Unschedulable"
t_run ns get pod cuda13-job -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}'
t_grep "with the scheduler's node-affinity message" out "^0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector"

# Nothing of ours listens beyond loopback.
pids=$(cat "$e2e_dir"/state/*.pid | tr '\n' ' ')
if command -v ss >/dev/null 2>&1; then
	ss -ltnpH >listen
	: >ours
	for p in $pids; do grep "pid=$p," listen >>ours || :; done
	t_run grep -c . ours
	t_grep "our processes listen" out '^[1-9]'
	t_run grep -v -e ' 127\.0\.0\.1:' -e ' \[::1\]:' ours
	t_out "on loopback only"
else
	t_skip "listeners on loopback only: no ss on this machine"
fi

e2e_reset_lab >/dev/null 2>&1 || :
t_done
