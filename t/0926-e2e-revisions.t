#!/bin/sh
# End to end: drv-states.sh -R on the sandbox: the GPU Operator's driver
# DaemonSet (OnDelete, as the operator makes it) on the lab's three nodes,
# changed without moving the driver (an environment variable, a label of
# its pod template) and with (its image), its pods deleted one at a time as
# the operator would: each node's column follows the API server's own
# ControllerRevisions.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
trap 'kubectl delete namespace gpu-operator --ignore-not-found --wait=false >/dev/null 2>&1; e2e_reset_lab >/dev/null 2>&1; rm -rf "$SCRATCH"' EXIT
e2e_facts
M=$ROOT/lab/support-matrix.csv
kubectl delete namespace gpu-operator --ignore-not-found --wait=true --timeout=90s >/dev/null
e2e_namespace gpu-operator
op() { kubectl -n gpu-operator "$@"; }
op apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-driver-daemonset
  labels: {app: nvidia-driver-daemonset, app.kubernetes.io/component: nvidia-driver}
spec:
  selector: {matchLabels: {app: nvidia-driver-daemonset}}
  updateStrategy: {type: OnDelete}
  template:
    metadata: {labels: {app: nvidia-driver-daemonset, app.kubernetes.io/component: nvidia-driver}}
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      initContainers: [{name: k8s-driver-manager, image: "driver-manager:v0.6.10"}]
      containers: [{name: nvidia-driver-ctr, image: "driver:550.90.07"}]
EOF2
# pods_at N: N driver pods Running, none terminating.
pods_at() {
	[ "$(op get pods -l app=nvidia-driver-daemonset -o jsonpath='{range .items[*]}{.status.phase}{.metadata.deletionTimestamp}{"\n"}{end}' | grep -c '^Running$')" -eq "$1" ] &&
		[ "$(op get pods -l app=nvidia-driver-daemonset -o name | grep -c .)" -eq "$1" ]
}
e2e_until 60 pods_at 3
t_ok $? "a driver pod Running on each of the three nodes"
# revisions N: the DaemonSet has N ControllerRevisions.
revisions() { [ "$(op get controllerrevisions -o name | grep -c .)" -eq "$1" ]; }
# column: each node and its revision column.
column() { drv-states.sh -R -m "$M" | awk '{ print $1, $7 }'; }
restart() { # restart NODE: its driver pod deleted, a new one Running
	op delete pod -l app=nvidia-driver-daemonset --field-selector "spec.nodeName=$1" --wait=true --timeout=60s >/dev/null
	e2e_until 60 pods_at 3
}

t_run drv-states.sh -R -m "$M"
t_rc 0 "drv-states.sh -R"
t_run column
t_out "every driver pod at the newest revision" "lab-node-0 current" "lab-node-1 current" "lab-node-2 current"
t_run drv-states.sh -R -S -m "$M"
t_run grep -c '^revision ' out
t_out "-S: no node to restart" 0

# 1. An environment variable: a new revision, the same image.
op set env ds/nvidia-driver-daemonset -c nvidia-driver-ctr DRIVER_TYPE=passthrough >/dev/null
e2e_until 30 revisions 2
t_ok $? "a second revision"
t_run column
t_out "every node: config (restarted, the driver the same)" "lab-node-0 config" "lab-node-1 config" "lab-node-2 config"
t_run drv-states.sh -R -S -m "$M"
t_grep "-S counts them" out '^revision config 3$'
restart lab-node-0
t_run column
t_out "lab-node-0's pod made anew: current; the others not" "lab-node-0 current" "lab-node-1 config" "lab-node-2 config"

# 2. The image: a new driver.
op set image ds/nvidia-driver-daemonset nvidia-driver-ctr=driver:550.127.05 >/dev/null
e2e_until 30 revisions 3
t_ok $? "a third revision"
t_run column
t_out "every node: driver" "lab-node-0 driver" "lab-node-1 driver" "lab-node-2 driver"
t_run drv-states.sh -R -o json -m "$M"
hash=$(op get controllerrevisions -o jsonpath='{range .items[?(@.revision==3)]}{.metadata.labels.controller-revision-hash}{end}')
t_grep "-o json: the images and the newest hash, as the API server has it" out \
	"\"node\":\"lab-node-0\".*\"revision\":{\"state\":\"driver\",\"pod\":\"gpu-operator/nvidia-driver-daemonset-[a-z0-9]*\",\"daemonset\":\"gpu-operator/nvidia-driver-daemonset\",\"podHash\":\"[a-z0-9]*\",\"currentHash\":\"$hash\",\"image\":\"driver:550.90.07\",\"newImage\":\"driver:550.127.05\"}"
restart lab-node-1
t_run column
t_out "lab-node-1 on the new driver: current" "lab-node-0 driver" "lab-node-1 current" "lab-node-2 driver"

# 3. A label of the pod template: config where the driver is already the
# new one, driver where it is not.
op patch ds/nvidia-driver-daemonset --type=merge -p '{"spec":{"template":{"metadata":{"labels":{"team":"gpu"}}}}}' >/dev/null
e2e_until 30 revisions 4
t_ok $? "a fourth revision"
t_run column
t_out "config on lab-node-1, driver on the others" "lab-node-0 driver" "lab-node-1 config" "lab-node-2 driver"
t_run drv-states.sh -R -S -m "$M"
t_grep "-S: two with a new driver" out '^revision driver 2$'
t_grep "-S: one for the label alone" out '^revision config 1$'
t_done
