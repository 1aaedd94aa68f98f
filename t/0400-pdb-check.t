#!/bin/sh
# pdb-check: which budgets a drain of a node would hit, by the eviction API's rules.
. "$(dirname "$0")/lib.sh"

WAIT='wait for the disruption controller (is kube-controller-manager running?)'
TR=gpu-drv/trainer-7d9f5c6b8d-m4q7z

# The lab's step 6 (drv-lab.sh(1)): trainer has 4 replicas, one per node, and minAvailable 4.
t_run pdb-check lab-node-1 "$DATA/pdb-lab.json"
t_rc 1 "the LAB budget blocks draining lab-node-1"
t_out "names the budget, the pod, the numbers and both ways out" \
	"gpu-drv/trainer-pdb BLOCKS $TR minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: lower minAvailable to 3, or add 1 ready replica elsewhere"
t_err "nothing on stderr"

t_run pdb-check lab-node-1 "$DATA/pdb-lab.yaml"
t_rc 1 "the same cluster as kubectl -o yaml"
t_out "YAML gives the same line as JSON" \
	"gpu-drv/trainer-pdb BLOCKS $TR minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: lower minAvailable to 3, or add 1 ready replica elsewhere"

t_run pdb-check lab-node-1 <"$DATA/pdb-lab.json"
t_rc 1 "the List on stdin"

t_run pdb-check lab-node-1 "$DATA/pdb-lab-ok.json"
t_rc 0 "minAvailable 3, recomputed: disruptionsAllowed 1"
t_out "exactly OK" "OK"
t_err "and nothing on stderr"

t_run pdb-check -s lab-node-1 "$DATA/pdb-lab-ok.json"
t_rc 0 "-s on a node that drains"
t_out "-s lists the DaemonSet pods drain leaves, then OK" \
	"SKIP gpu-operator/nvidia-device-plugin-daemonset-9fz6t daemonset" \
	"SKIP kube-system/kube-proxy-h4w8n daemonset" \
	"OK"

t_run pdb-check lab-node-0 "$DATA/pdb-lab-ok.json"
t_rc 0 "another node of the same cluster"
t_out "is OK too" "OK"

# Status not yet recomputed after the patch, or never computed at all.
t_run pdb-check lab-node-1 "$DATA/pdb-stale.json"
t_rc 1 "minAvailable lowered to 3 but observedGeneration 1 < generation 2"
t_out "a stale status blocks, whatever its numbers say" \
	"gpu-drv/trainer-pdb BLOCKS $TR minAvailable=3 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: status not yet recomputed (observedGeneration 1 < generation 2): $WAIT"

t_run pdb-check lab-node-1 "$DATA/pdb-new.json"
t_rc 1 "a budget the disruption controller never processed"
t_out "is never OK, and says why" \
	"gpu-drv/trainer-pdb BLOCKS $TR minAvailable=3 currentHealthy=0 desiredHealthy=0 disruptionsAllowed=0 needed=1: status never computed (no status.observedGeneration): $WAIT"

# Several budgets select one pod: HTTP 500, drain stops at once.
t_run pdb-check gpu-node-7 "$DATA/pdb-multi.json"
t_rc 1 "two budgets select one pod, both with room to spare"
t_out "the pod and its budgets, in input order" \
	"ml/serve-5c8d7f9b6-q2w4e MULTIPLE-BUDGETS ml/serve-pdb,ml/frontend-pdb: the eviction API refuses (HTTP 500); keep one budget per pod"
t_run pdb-check gpu-node-8 "$DATA/pdb-multi.json"
t_rc 1 "on every node that holds such a pod"

# matchExpressions: one operator per namespace, each budget allowing nothing.
t_run pdb-check gpu-node-7 "$DATA/pdb-exprs.json"
t_rc 1 "matchExpressions"
t_out "In needs the key; NotIn and DoesNotExist take pods without it; matchLabels and expressions AND" \
	"op-in/budget BLOCKS op-in/h100-6f7b9c8d5-x1z2a maxUnavailable=0 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: raise maxUnavailable to 1" \
	"op-notin/budget BLOCKS op-notin/h100-6f7b9c8d5-x1z2a,op-notin/none-6f7b9c8d5-x1z2a maxUnavailable=0 currentHealthy=2 desiredHealthy=2 disruptionsAllowed=0 needed=2: raise maxUnavailable to 2" \
	"op-exists/budget BLOCKS op-exists/h100-6f7b9c8d5-x1z2a,op-exists/t4-6f7b9c8d5-x1z2a maxUnavailable=0 currentHealthy=2 desiredHealthy=2 disruptionsAllowed=0 needed=2: raise maxUnavailable to 2" \
	"op-dne/budget BLOCKS op-dne/none-6f7b9c8d5-x1z2a maxUnavailable=0 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: raise maxUnavailable to 1" \
	"op-and/budget BLOCKS op-and/plain-6f7b9c8d5-x1z2a maxUnavailable=0 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: raise maxUnavailable to 1"

# selector {} takes the whole namespace and no other; no selector takes nothing.
t_run pdb-check gpu-node-7 "$DATA/pdb-empty.json"
t_rc 1 "an empty selector and an absent one"
t_out "{} selects both pods of its namespace; the absent selector blocks nothing" \
	"batch/all-pdb BLOCKS batch/loader-7c6d5e4f3-a1b2c,batch/writer-8d7e6f5a4-d3e4f minAvailable=2 currentHealthy=2 desiredHealthy=2 disruptionsAllowed=0 needed=2: lower minAvailable to 0, or add 2 ready replicas elsewhere"

# Integers and percentages, two pods of one budget on the node.
t_run pdb-check gpu-node-7 "$DATA/pdb-percent.json"
t_rc 1 "maxUnavailable 1 and 25%, minAvailable 67%"
t_out "needed 2 > allowed 1; percentages as written, rounded up as the controller does" \
	"web/web-pdb BLOCKS web/web-59d8c7b6a-a8s7d,web/web-59d8c7b6a-f6g5h maxUnavailable=1 currentHealthy=4 desiredHealthy=3 disruptionsAllowed=1 needed=2: raise maxUnavailable to 2" \
	"api/api-pdb BLOCKS api/api-68e9d8c7b-v9b8n,api/api-68e9d8c7b-m7q6w maxUnavailable=25% currentHealthy=4 desiredHealthy=3 disruptionsAllowed=1 needed=2: raise maxUnavailable to 26%, or add 1 ready replica elsewhere" \
	"db/db-pdb BLOCKS db/db-0 minAvailable=67% currentHealthy=3 desiredHealthy=3 disruptionsAllowed=0 needed=1: lower minAvailable to 66%, or add 1 ready replica elsewhere"
t_run pdb-check gpu-node-8 "$DATA/pdb-percent.json"
t_rc 1 "one pod of each budget on another node"
t_out "fits every budget with room; only db (allowing 0) blocks" \
	"db/db-pdb BLOCKS db/db-1 minAvailable=67% currentHealthy=3 desiredHealthy=3 disruptionsAllowed=0 needed=1: lower minAvailable to 66%, or add 1 ready replica elsewhere"

# Pods that are not Ready.
t_run pdb-check gpu-node-7 "$DATA/pdb-unready.json"
t_rc 1 "unready pods under IfHealthyBudget and AlwaysAllow"
t_out "free when healthy >= desired or AlwaysAllow; a Ready pod under AlwaysAllow still counts" \
	"c/c-pdb BLOCKS c/c-7b6a5f4e3-u5n6r minAvailable=3 currentHealthy=1 desiredHealthy=3 disruptionsAllowed=0 needed=1: lower minAvailable to 1, or add 2 ready replicas elsewhere, or set unhealthyPodEvictionPolicy: AlwaysAllow (1 of the pods is not Ready)" \
	"d/d-pdb BLOCKS d/d-8c7b6a5f4-r7d8y minAvailable=2 currentHealthy=2 desiredHealthy=2 disruptionsAllowed=0 needed=1: lower minAvailable to 1, or add 1 ready replica elsewhere"

# desiredHealthy 0 frees no unready pod (the rule needs desiredHealthy > 0).
sed 's/"desiredHealthy": 2,/"desiredHealthy": 0,/' "$DATA/pdb-unready.json" >zero.json
t_run pdb-check gpu-node-7 zero.json
t_rc 1 "an unready pod whose budget wants 0 healthy and allows 0"
t_grep "is not freed" out '^a/a-pdb BLOCKS a/a-5f4e3d2c1-u1n2r minAvailable=2 currentHealthy=2 desiredHealthy=0 disruptionsAllowed=0 needed=1: '

# Pods the drain leaves alone or deletes without a budget check.
t_run pdb-check gpu-node-7 "$DATA/pdb-skip.json"
t_rc 0 "DaemonSet, mirror, finished, terminating and Pending pods under budgets that allow nothing"
t_out "do not block" "OK"
t_run pdb-check -s gpu-node-7 "$DATA/pdb-skip.json"
t_out "-s lists each with its reason, in input order, before OK" \
	"SKIP kube-system/kube-proxy-c4v5b daemonset" \
	"SKIP kube-system/etcd-gpu-node-7 mirror" \
	"SKIP jobs/convert-28937160-7xq2m succeeded" \
	"SKIP jobs/convert-28937100-b3n8v failed" \
	"SKIP jobs/convert-28937220-p5k1j terminating" \
	"SKIP jobs/convert-28937280-w9e4r pending" \
	"OK"
t_run pdb-check -s lab-node-1 "$DATA/pdb-lab.json"
t_out "-s lines come before the budget lines" \
	"SKIP gpu-operator/nvidia-device-plugin-daemonset-9fz6t daemonset" \
	"SKIP kube-system/kube-proxy-h4w8n daemonset" \
	"gpu-drv/trainer-pdb BLOCKS $TR minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: lower minAvailable to 3, or add 1 ready replica elsewhere"

# A pod no controller manages: drain without --force refuses it.
sed 's/"controller": true,/"controller": false,/' "$DATA/pdb-lab-ok.json" >bare.json
t_run pdb-check lab-node-1 bare.json
t_rc 1 "pods that declare no controller"
t_grep "are named" out "^$TR NO-CONTROLLER: kubectl drain refuses a pod no controller manages"
t_grep "a DaemonSet pod without its controller mark is one too" out \
	"^kube-system/kube-proxy-h4w8n NO-CONTROLLER: "

t_run pdb-check lab-node-9 "$DATA/pdb-lab.json"
t_rc 0 "a node no pod runs on"
t_out "is OK" "OK"
t_err "with a warning about the name" \
	"pdb-check: $DATA/pdb-lab.json: no pod runs on node lab-node-9 (is the node name right?)"

# Input errors: exit 2, what and where.
printf '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"}}]}\n' >svc.json
t_run pdb-check lab-node-1 svc.json
t_rc 2 "a List holding a Service"
t_out "prints nothing"
t_err "names the item and its kind" \
	'pdb-check: svc.json: item 0 is a "Service", not a PodDisruptionBudget or Pod; use kubectl get pdb,pods -A -o json'

printf '{"apiVersion": "v1", "kind": "NodeList", "items": []}\n' >nodelist.json
t_run pdb-check lab-node-1 nodelist.json
t_rc 2 "a NodeList"
t_err "names its kind" \
	'pdb-check: nodelist.json: not a List of PodDisruptionBudgets and Pods (kind is "NodeList"); use kubectl get pdb,pods -A -o json'

t_run pdb-check lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "a List of Nodes"
t_err "names the first item that is not a budget or a pod" \
	"pdb-check: $DATA/lab-nodes.json: item 0 is a \"Node\", not a PodDisruptionBudget or Pod; use kubectl get pdb,pods -A -o json"

sed 's/"name": "trainer-7d9f5c6b8d-r8t2w"/"nombre": "x"/' "$DATA/pdb-lab.json" >noname.json
t_run pdb-check lab-node-1 noname.json
t_rc 2 "a pod without metadata.name, even on another node"
t_err "names the item" "pdb-check: noname.json: item 7 (Pod): metadata.name is missing"

sed 's/"disruptionsAllowed": 0/"disruptionsAllowed": "0"/' "$DATA/pdb-lab.json" >str.json
t_run pdb-check lab-node-1 str.json
t_rc 2 "a status count that is a string"
t_out "prints nothing"
t_err "names the budget and the field" \
	'pdb-check: str.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: status.disruptionsAllowed is "0", not an integer'

sed 's/"minAvailable": 4,/"minAvailable": 4.5,/' "$DATA/pdb-lab.json" >frac.json
t_run pdb-check lab-node-1 frac.json
t_rc 2 "a fractional minAvailable"
t_err "says so" \
	'pdb-check: frac.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: spec.minAvailable is 4.5, not a 32-bit integer'

sed 's/"minAvailable": 4,/"minAvailable": "4",/' "$DATA/pdb-lab.json" >four.json
t_run pdb-check lab-node-1 four.json
t_rc 2 "minAvailable a string that is not a percentage"
t_err "says what is wanted" \
	'pdb-check: four.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: spec.minAvailable "4" is neither an integer nor a percentage like "50%"'

sed 's/"operator": "In"/"operator": "Gt"/' "$DATA/pdb-multi.json" >gt.json
t_run pdb-check gpu-node-7 gt.json
t_rc 2 "a selector operator a LabelSelector does not have"
t_err "names the budget and the expression" \
	'pdb-check: gt.json: item 1: PodDisruptionBudget ml/frontend-pdb: spec.selector.matchExpressions[0]: operator "Gt" is not In, NotIn, Exists or DoesNotExist'

sed 's/"operator": "DoesNotExist"/"operator": "DoesNotExist", "values": ["x"]/' \
	"$DATA/pdb-exprs.json" >dnev.json
t_run pdb-check gpu-node-7 dnev.json
t_rc 2 "DoesNotExist with values"
t_err "is refused as the API would" \
	'pdb-check: dnev.json: item 3: PodDisruptionBudget op-dne/budget: spec.selector.matchExpressions[0]: operator DoesNotExist takes no values'

head -c 4000 "$DATA/pdb-lab.json" >cut.json
t_run pdb-check lab-node-1 cut.json
t_rc 2 "JSON cut short"
t_out "prints nothing, never OK"
t_err "says it is truncated" \
	"pdb-check: cut.json: truncated JSON: input ends inside a value (4000 bytes read)"

printf 'apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a\n' >bad.yaml
t_run pdb-check lab-node-1 bad.yaml
t_rc 2 "malformed YAML"
t_grep "names the file and says YAML" err '^pdb-check: bad.yaml.*: .*YAML'

t_run pdb-check lab-node-1 </dev/null
t_rc 2 "empty input (a failed kubectl)"
t_out "is never OK"

# Usage.
t_run pdb-check
t_rc 2 "no node"
t_err "prints the usage line" "usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"
t_run pdb-check a b c
t_rc 2 "too many arguments"
t_run pdb-check -x lab-node-1
t_rc 2 "an unknown option"
t_grep "prints the usage line" err '^usage: pdb-check \[-s\] \[-y policies\] node \[file\] | -a \[-s\] \[-y policies\] \[file\] | -p \[-w\] \[file\] | -b \[-w\] \[file\]$'
t_run pdb-check -h
t_rc 0 "-h"
t_out "-h prints the usage on stdout" "usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"
t_run pdb-check Lab_Node "$DATA/pdb-lab.json"
t_rc 2 "a node name that is not a DNS name"
t_err "is refused" 'pdb-check: node "Lab_Node" is not a valid node name'
t_run pdb-check lab-node-1 no-such-file
t_rc 2 "a missing file"
t_err "names it" "pdb-check: cannot open no-such-file: No such file or directory"

if [ -w /dev/full ]; then
	t_run sh -c 'pdb-check lab-node-1 "$1" >/dev/full' sh "$DATA/pdb-lab-ok.json"
	t_rc 2 "a full disk"
	t_grep "is a write error, not silence" err 'pdb-check: write error on stdout'
fi

# Unready pods of a budget that wants none healthy (desiredHealthy 0) are not
# evicted outright: each eviction needs a disruption allowed, but gives it
# back (the pod was never counted healthy), so however many there are they
# need one between them, not one each.  (t/0950 found it on the API server:
# kubectl drain passed where pdb-check said BLOCKS.)
# ulist SPEC H D A E POD...: a List with one budget in namespace u selecting
# app=u, and pods "NAME:READY" on gpu-node-7.
ulist() {
	spec=$1 h=$2 d=$3 a=$4 e=$5
	shift 5
	printf '{"kind": "List", "items": [{"kind": "PodDisruptionBudget", "metadata": {"name": "u-pdb", "namespace": "u", "generation": 1}, "spec": {%s, "selector": {"matchLabels": {"app": "u"}}}, "status": {"observedGeneration": 1, "currentHealthy": %s, "desiredHealthy": %s, "disruptionsAllowed": %s, "expectedPods": %s}}' \
		"$spec" "$h" "$d" "$a" "$e"
	for p in "$@"; do
		printf ', {"kind": "Pod", "metadata": {"name": "%s", "namespace": "u", "labels": {"app": "u"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "u-6d5c4b3a2", "controller": true}]}, "spec": {"nodeName": "gpu-node-7"}, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "%s"}]}}' \
			"${p%%:*}" "${p#*:}"
	done
	printf ']}\n'
}
ulist '"minAvailable": 0' 1 0 1 3 u-1:False u-2:False >u.json
t_run pdb-check gpu-node-7 u.json
t_rc 0 "two unready pods, minAvailable 0, one disruption allowed"
t_out "pass: one allowed is enough for any number of them" OK
ulist '"maxUnavailable": "100%"' 0 0 0 2 u-1:False u-2:False >u.json
t_run pdb-check gpu-node-7 u.json
t_rc 1 "two unready pods, maxUnavailable 100%, none allowed (no pod healthy)"
t_out "block: they need one" \
	"u/u-pdb BLOCKS u/u-1,u/u-2 maxUnavailable=100% currentHealthy=0 desiredHealthy=0 disruptionsAllowed=0 needed=1: add 1 ready replica elsewhere, or set unhealthyPodEvictionPolicy: AlwaysAllow (2 of the pods are not Ready)"
ulist '"minAvailable": 0' 2 0 2 4 u-1:True u-2:True u-3:False >u.json
t_run pdb-check gpu-node-7 u.json
t_rc 1 "two Ready pods and an unready one, two disruptions allowed"
t_out "block: the Ready ones use both up, the unready one needs one more" \
	"u/u-pdb BLOCKS u/u-1,u/u-2,u/u-3 minAvailable=0 currentHealthy=2 desiredHealthy=0 disruptionsAllowed=2 needed=3: add 1 ready replica elsewhere, or set unhealthyPodEvictionPolicy: AlwaysAllow (1 of the pods is not Ready)"
# A lower minAvailable is advised only if it lets the pods go: at 0 the
# unready pod is no longer evicted outright.
ulist '"minAvailable": 2' 2 2 0 3 u-1:True u-2:True u-3:False >u.json
t_run pdb-check gpu-node-7 u.json
t_rc 1 "two Ready pods and an unready one, minAvailable 2, none allowed"
t_out "no minAvailable is advised: none would do" \
	"u/u-pdb BLOCKS u/u-1,u/u-2 minAvailable=2 currentHealthy=2 desiredHealthy=2 disruptionsAllowed=0 needed=2: add 2 ready replicas elsewhere"
ulist '"minAvailable": 2' 3 2 1 4 u-1:True u-2:False >u.json
t_run pdb-check gpu-node-7 u.json
t_rc 0 "a Ready pod and an unready one, minAvailable 2, one allowed"
t_out "pass: the unready pod goes outright (3 >= 2 > 0)" OK
# A budget the disruption controller cannot count (a selector that takes a
# DaemonSet's pods: it has no scale subresource): waiting will not help.
ulist '"maxUnavailable": 1' 0 0 0 0 u-1:True | sed 's/"status": {"observedGeneration": 1, "currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}/"status": {"conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed", "message": "daemonsets.apps does not implement the scale subresource"}], "currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}/' >sync.json
t_run pdb-check gpu-node-7 sync.json
t_rc 1 "a budget whose status the disruption controller cannot compute"
t_out "says so, with the controller's words, not 'wait'" \
	'u/u-pdb BLOCKS u/u-1 maxUnavailable=1 currentHealthy=0 desiredHealthy=0 disruptionsAllowed=0 needed=1: the disruption controller cannot count its pods (condition DisruptionAllowed, reason SyncFailed: "daemonsets.apps does not implement the scale subresource"); fix what it says, waiting will not help'
# kubectl get --raw of the budgets, then of the node's pods (drv-upgrade.sh's
# step 2): two lists back to back, their items without kind, one cluster.
PDBL='{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"u-pdb","namespace":"u","generation":1},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"u"}}},"status":{"observedGeneration":1,"currentHealthy":1,"desiredHealthy":1,"disruptionsAllowed":0,"expectedPods":1}}]}'
PODL='{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"u-1","namespace":"u","labels":{"app":"u"},"ownerReferences":[{"kind":"ReplicaSet","name":"u-6d5c4b3a2","controller":true}]},"spec":{"nodeName":"gpu-node-7"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}]}'
printf '%s%s' "$PDBL" "$PODL" >raw.json
t_run pdb-check gpu-node-7 raw.json
t_rc 1 "a budget list and a pod list back to back, as get --raw gives them"
t_out "are one cluster: the budget blocks the pod" \
	"u/u-pdb BLOCKS u/u-1 minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: lower minAvailable to 0, or add 1 ready replica elsewhere"
printf '%s\n%s\n' "$PODL" "$PDBL" >raw.json
t_run pdb-check gpu-node-7 raw.json
t_rc 1 "the pods first, then the budgets"
t_out "the same" \
	"u/u-pdb BLOCKS u/u-1 minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: lower minAvailable to 0, or add 1 ready replica elsewhere"
printf '{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}}\n' >ev.json
t_run pdb-check gpu-node-7 ev.json
t_rc 2 "a watch event"
t_err "is not a list" "pdb-check: ev.json: a watch event (ADDED), not a List of PodDisruptionBudgets and Pods; use kubectl get pdb,pods -A -o json"

# Never blind (issue 19): the verdict needs both lists, proven whole.  A GET
# that answers exit 0 with an empty body leaves its list out, and a watch
# event where a list was asked for (an ERROR, a BOOKMARK) is no list at all:
# each is exit 2, never OK, never BLOCKS, whatever else was read.
ERR='{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}}'
BMK='{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345"}}}'
OKPDBL=$(printf '%s' "$PDBL" | sed 's/"disruptionsAllowed":0/"disruptionsAllowed":1/; s/"currentHealthy":1/"currentHealthy":2/; s/"expectedPods":1/"expectedPods":2/')
printf '%s' "$PDBL" >budgets-only.json
for a in gpu-node-7 -a; do
	t_run pdb-check $a budgets-only.json
	t_rc 2 "pdb-check $a: the budgets, and an empty answer for the pods"
	t_out "pdb-check $a: prints nothing, never OK"
	t_err "pdb-check $a: says the pods were not read" \
		"pdb-check: no PodList in budgets-only.json: the pods were not read; nothing can be said of the drain"
done
printf '%s' "$PODL" >pods-only.json
t_run pdb-check gpu-node-7 pods-only.json
t_rc 2 "the pods, and an empty answer for the budgets"
t_out "prints nothing, never OK nor a verdict"
t_err "says the budgets were not read" \
	"pdb-check: no PodDisruptionBudgetList in pods-only.json: the budgets were not read; nothing can be said of the drain"
printf '%s\n%s\n' "$OKPDBL" "$PODL" >room.json
t_run pdb-check gpu-node-7 room.json
t_rc 0 "both lists, a budget with room"
t_out "OK" "OK"
printf '%s\n%s\n' "$OKPDBL" "$ERR" >err-ev.json
t_run pdb-check gpu-node-7 err-ev.json
t_rc 2 "the budgets, then a watch ERROR event where the pods were asked for"
t_out "prints nothing, not OK"
t_err "names the file, the event and what the server said" \
	'pdb-check: err-ev.json: a watch event (ERROR: "too old resource version: 1 (2)"), not a List of PodDisruptionBudgets and Pods; use kubectl get pdb,pods -A -o json'
printf '%s\n%s\n%s\n' "$OKPDBL" "$BMK" "$PODL" >bmk-ev.json
for a in gpu-node-7 -a; do
	t_run pdb-check $a bmk-ev.json
	t_rc 2 "pdb-check $a: a BOOKMARK event between the lists"
	t_out "pdb-check $a: prints nothing"
	t_err "pdb-check $a: is no list either" \
		"pdb-check: bmk-ev.json: a watch event (BOOKMARK), not a List of PodDisruptionBudgets and Pods; use kubectl get pdb,pods -A -o json"
done
printf '%s\n%s\n' "$ERR" "$PODL" >err-first.json
t_run pdb-check -a <err-first.json
t_rc 2 "-a: an ERROR event where the budgets were asked for, on standard input"
t_err "is named" \
	'pdb-check: <stdin>: a watch event (ERROR: "too old resource version: 1 (2)"), not a List of PodDisruptionBudgets and Pods; use kubectl get pdb,pods -A -o json'
printf 'kind: PodDisruptionBudgetList\napiVersion: policy/v1\nitems: []\n' >budgets-only.yaml
t_run pdb-check gpu-node-7 budgets-only.yaml
t_rc 2 "YAML: a budget list alone"
t_err "is refused the same way" \
	"pdb-check: no PodList in budgets-only.yaml: the pods were not read; nothing can be said of the drain"

# Kubernetes int32 fields are JSON integers: written with a fraction or an
# exponent, a number is not one, whatever its value; and the API server
# never has a negative count.  Each is exit 2 naming the budget, the field
# and the value, in JSON and in YAML, and as the tests' whole-tree reader
# parses them (t_same).
bad_count() { # FIELD FROM TO DESC
	sed "s/\"$1\": $2,/\"$1\": $3,/" "$DATA/pdb-lab.json" >n.json
	t_run pdb-check lab-node-1 n.json
	t_rc 2 "$4 (JSON)"
	t_out "$4: prints nothing (JSON)"
	t_err "$4: names the budget, the field and the value (JSON)" "$5"
	t_same "$4: parsed whole, the same (JSON)" pdb-check lab-node-1 n.json
	sed "s/ $1: $2\$/ $1: $3/" "$DATA/pdb-lab.yaml" >n.yaml
	t_run pdb-check lab-node-1 n.yaml
	t_rc 2 "$4 (YAML)"
	t_err "$4: the same message (YAML)" "$(printf '%s' "$5" | sed 's/n\.json/n.yaml/')"
	t_same "$4: parsed whole, the same (YAML)" pdb-check lab-node-1 n.yaml
}
W='pdb-check: n.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: status'
bad_count disruptionsAllowed 0 1.0 "disruptionsAllowed 1.0" "$W.disruptionsAllowed is 1.0, not a 32-bit integer"
bad_count disruptionsAllowed 0 1e0 "disruptionsAllowed 1e0" "$W.disruptionsAllowed is 1e0, not a 32-bit integer"
bad_count disruptionsAllowed 0 -1 "a negative disruptionsAllowed" "$W.disruptionsAllowed is -1: a count is never negative"
bad_count currentHealthy 4 -4 "a negative currentHealthy" "$W.currentHealthy is -4: a count is never negative"
bad_count desiredHealthy 4 -1 "a negative desiredHealthy" "$W.desiredHealthy is -1: a count is never negative"
bad_count expectedPods 4 -4 "a negative expectedPods" "$W.expectedPods is -4: a count is never negative"
bad_count currentHealthy 4 4.0 "currentHealthy 4.0" "$W.currentHealthy is 4.0, not a 32-bit integer"
sed 's/"minAvailable": 4,/"minAvailable": 4E0,/' "$DATA/pdb-lab.json" >n.json
t_run pdb-check lab-node-1 n.json
t_rc 2 "minAvailable 4E0"
t_err "is no integer either" \
	'pdb-check: n.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: spec.minAvailable is 4E0, not a 32-bit integer'
sed 's/ minAvailable: 4$/ minAvailable: 0x4/' "$DATA/pdb-lab.yaml" >n.yaml
t_run pdb-check lab-node-1 n.yaml
t_rc 1 "YAML: minAvailable 0x4, an integer as go-yaml reads one"
t_grep "reads as 4" out " minAvailable=4 "
t_done
