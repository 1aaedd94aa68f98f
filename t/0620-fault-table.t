#!/bin/sh
# The fault table (t/fault-table.sh says how it is made and judged), part
# one: the read-only scripts, drv-tag.sh, drv-audit.sh and drv-states.sh.
. "$(dirname "$0")/lib.sh"
. "$T/fault-table.sh"

table drv-tag.sh cluster none drv-tag.sh lab-node-1
table drv-audit.sh cluster none drv-audit.sh -m "$M"
table drv-states.sh cluster none drv-states.sh -m "$M"
# Nodes whose states need the budgets and pods, and the driver and
# validator pods: each of those four GETs faulted too.
states() {
	t_fake_pods
	t_state_nodes "$(t_state_node lab-node-1 drain-required - true True 60)" \
		"$(t_state_node lab-node-2 pod-restart-required - true True 60)" >nodes.json
	t_gpu_pods "$(t_gpu_pod lab-node-2 gpu-operator/driver-x Running False 3)" >driver.json
}
table "drv-states.sh, a drain and a driver under way" states none drv-states.sh -m "$M"
ops() {
	t_fake_ops
	KUBECTL=$PWD/ops
	FAKE_OUT=$DATA/lab-nodes.json FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json
	export KUBECTL FAKE_OUT FAKE_CP FAKE_NVD
}
# -R: the driver DaemonSets, their revisions and pods (the sandbox's).
revs() {
	t_fake_pods
	cp "$DATA/lab-nodes.json" nodes.json
	cp "$DATA/drift/ds.json" daemonsets.json
	cp "$DATA/drift/cr.json" revisions.json
	cp "$DATA/drift/pods.json" driver.json
}
table "drv-states.sh -R" revs none drv-states.sh -R -m "$M"
table "drv-audit.sh -t" ops none drv-audit.sh -t -m "$M"
table "drv-states.sh -t" ops none drv-states.sh -t -m "$M"

t_done
