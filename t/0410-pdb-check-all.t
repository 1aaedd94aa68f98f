#!/bin/sh
# pdb-check -a: every node's drain at once, each line prefixed by the node,
# with the DRAWS lines a rollout needs to pick the nodes it drains together.
. "$(dirname "$0")/lib.sh"

WAIT='wait for the disruption controller (is kube-controller-manager running?)'
NOCTL='NO-CONTROLLER: kubectl drain refuses a pod no controller manages (--force would delete it for good); delete it or run it under a Deployment, StatefulSet or Job'
MULTI='MULTIPLE-BUDGETS ml/serve-pdb,ml/frontend-pdb: the eviction API refuses (HTTP 500); keep one budget per pod'
TR=gpu-drv/trainer-7d9f5c6b8d
ADV='lower minAvailable to 3, or add 1 ready replica elsewhere'

# agree FILE [-s]: for every node a pod of FILE runs on, the -a lines of the
# node, its name and its DRAWS lines taken off, are what pdb-check [-s] NODE
# prints, OK taken off; and the -a lines go node by node in bytewise order.
agree() {
	f=$1
	shift
	pdb-check -a "$@" "$f" >all.out 2>all.err
	arc=$?
	grep -o -e '"nodeName": *"[^"]*"' -e 'nodeName: [^ ]*$' "$f" |
		sed 's/^[^:]*: *"\{0,1\}//; s/"$//; /^$/d' | sort -u >nodes
	bad=
	orc=0
	while read -r n; do
		pdb-check "$@" "$n" "$f" >one.out 2>/dev/null
		r=$?
		case $r in 0) ;; 1) orc=1 ;; *) bad="$bad $n(exit $r)" ;; esac
		grep -v '^OK$' one.out >one
		awk -v n="$n" '$1 == n && $2 != "DRAWS" { sub(/^[^ ]* /, ""); print }' all.out >mine
		cmp -s one mine || bad="$bad $n"
	done <nodes
	cut -d' ' -f1 all.out >order
	if [ -s nodes ] && [ -z "$bad" ] && [ "$arc" = "$orc" ] && [ ! -s all.err ] &&
		sort -c order 2>/dev/null && ! grep -vxFf nodes order >/dev/null; then
		t_ok 0 "-a${*:+ $*} $(basename "$f"): each of its $(wc -l <nodes | tr -d ' ') nodes as pdb-check${*:+ $*} NODE says it"
	else
		t_ok 1 "-a${*:+ $*} $(basename "$f"): each of its nodes as pdb-check${*:+ $*} NODE says it"
		echo "nodes that differ:$bad; -a exit $arc, per node $orc" | t_diag
		t_diag <all.err
	fi
}

# Four trainer replicas, one per node, under one budget (minAvailable 3,
# disruptionsAllowed 1): each node draws 1 of the 1 allowed.
t_run pdb-check -a "$DATA/pdb-lab-ok.json"
t_rc 0 "no node's drain is blocked"
t_out "a DRAWS line per node, in node order, on the budget they share" \
	"lab-node-0 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-1 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-2 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-3 DRAWS gpu-drv/trainer-pdb 1 1"
t_err "nothing on stderr"

t_run pdb-check -a -s "$DATA/pdb-lab-ok.json"
t_rc 0 "-a -s"
t_out "-s: each node's SKIP lines first, prefixed too; nodes 2 and 3 hold no DaemonSet pod" \
	"lab-node-0 SKIP gpu-operator/nvidia-device-plugin-daemonset-2xk4d daemonset" \
	"lab-node-0 SKIP kube-system/kube-proxy-b7m2q daemonset" \
	"lab-node-0 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-1 SKIP gpu-operator/nvidia-device-plugin-daemonset-9fz6t daemonset" \
	"lab-node-1 SKIP kube-system/kube-proxy-h4w8n daemonset" \
	"lab-node-1 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-2 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-3 DRAWS gpu-drv/trainer-pdb 1 1"
t_run pdb-check -s -a "$DATA/pdb-lab-ok.json"
t_rc 0 "-s -a: the options in either order"

# The lab's step 6: minAvailable 4, nothing allowed; every node is blocked.
t_run pdb-check -a "$DATA/pdb-lab.json"
t_rc 1 "every node's drain blocked"
t_out "DRAWS, then the BLOCKS line, for each node" \
	"lab-node-0 DRAWS gpu-drv/trainer-pdb 1 0" \
	"lab-node-0 gpu-drv/trainer-pdb BLOCKS $TR-k2x9p minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: $ADV" \
	"lab-node-1 DRAWS gpu-drv/trainer-pdb 1 0" \
	"lab-node-1 gpu-drv/trainer-pdb BLOCKS $TR-m4q7z minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: $ADV" \
	"lab-node-2 DRAWS gpu-drv/trainer-pdb 1 0" \
	"lab-node-2 gpu-drv/trainer-pdb BLOCKS $TR-r8t2w minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: $ADV" \
	"lab-node-3 DRAWS gpu-drv/trainer-pdb 1 0" \
	"lab-node-3 gpu-drv/trainer-pdb BLOCKS $TR-v6n3c minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: $ADV"
t_err "nothing on stderr"
t_run pdb-check -a "$DATA/pdb-lab.yaml"
t_rc 1 "the same cluster as YAML"
t_run sh -c 'pdb-check -a "$1" | cut -d" " -f1,2' sh "$DATA/pdb-lab.yaml"
t_out "the same lines" "lab-node-0 DRAWS" "lab-node-0 gpu-drv/trainer-pdb" "lab-node-1 DRAWS" \
	"lab-node-1 gpu-drv/trainer-pdb" "lab-node-2 DRAWS" "lab-node-2 gpu-drv/trainer-pdb" \
	"lab-node-3 DRAWS" "lab-node-3 gpu-drv/trainer-pdb"

# A DRAWS line whether or not the budget blocks: etl allows 2, its pod draws 1.
t_run sh -c 'pdb-check -a "$1" | grep " DRAWS "' sh "$DATA/pdb-percent.json"
t_out "two pods of a budget on a node draw 2; a budget with room still draws" \
	"gpu-node-7 DRAWS web/web-pdb 2 1" \
	"gpu-node-7 DRAWS api/api-pdb 2 1" \
	"gpu-node-7 DRAWS db/db-pdb 1 0" \
	"gpu-node-7 DRAWS etl/etl-pdb 1 2" \
	"gpu-node-8 DRAWS web/web-pdb 1 1" \
	"gpu-node-8 DRAWS api/api-pdb 1 1" \
	"gpu-node-8 DRAWS db/db-pdb 1 0" \
	"gpu-node-9 DRAWS web/web-pdb 1 1" \
	"gpu-node-9 DRAWS api/api-pdb 1 1" \
	"gpu-node-9 DRAWS db/db-pdb 1 0"
# An unready pod let go outright (currentHealthy >= desiredHealthy > 0) draws nothing.
t_run sh -c 'pdb-check -a "$1" | grep " DRAWS "' sh "$DATA/pdb-unready.json"
t_out "no DRAWS line for a/a-pdb, whose only pod goes outright" \
	"gpu-node-7 DRAWS c/c-pdb 1 0" \
	"gpu-node-7 DRAWS d/d-pdb 1 0"

# Two budgets select one pod on each of three nodes: HTTP 500 on each.
t_run pdb-check -a "$DATA/pdb-multi.json"
t_rc 1 "MULTIPLE-BUDGETS"
t_out "named on each node, prefixed; the pod draws on neither budget" \
	"gpu-node-7 ml/serve-5c8d7f9b6-q2w4e $MULTI" \
	"gpu-node-8 ml/serve-5c8d7f9b6-t6y8u $MULTI" \
	"gpu-node-9 ml/serve-5c8d7f9b6-i1o3p $MULTI"

# Pods that declare no controller: the DRAWS lines come before the obstacles.
sed 's/"controller": true,/"controller": false,/' "$DATA/pdb-lab-ok.json" >bare.json
t_run pdb-check -a bare.json
t_rc 1 "NO-CONTROLLER"
t_out "named on each node, in pod input order, after the node's DRAWS line" \
	"lab-node-0 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-0 gpu-operator/nvidia-device-plugin-daemonset-2xk4d $NOCTL" \
	"lab-node-0 kube-system/kube-proxy-b7m2q $NOCTL" \
	"lab-node-0 $TR-k2x9p $NOCTL" \
	"lab-node-1 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-1 gpu-operator/nvidia-device-plugin-daemonset-9fz6t $NOCTL" \
	"lab-node-1 kube-system/kube-proxy-h4w8n $NOCTL" \
	"lab-node-1 $TR-m4q7z $NOCTL" \
	"lab-node-2 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-2 $TR-r8t2w $NOCTL" \
	"lab-node-3 DRAWS gpu-drv/trainer-pdb 1 1" \
	"lab-node-3 $TR-v6n3c $NOCTL"

# A cluster written here: pods out of node order, a node with DaemonSet pods
# only, a pod on no node, a budget whose status lacks disruptionsAllowed.
# fleet POD...: kubectl get pdb,pods -A -o json of the two budgets of ml and
# pods "NAME:NODE:APP", APP ds for a kube-system DaemonSet pod, NODE "" for
# none (Pending).
fleet() {
	printf '{\n    "apiVersion": "v1",\n    "items": [\n'
	printf '        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"generation": 1, "name": "serve-pdb", "namespace": "ml"}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "serve"}}}, "status": {"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1, "expectedPods": 3, "observedGeneration": 1}},\n'
	printf '        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"generation": 1, "name": "batch-pdb", "namespace": "ml"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "batch"}}}, "status": {"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "observedGeneration": 1}}'
	for p in "$@"; do
		name=${p%%:*} rest=${p#*:}
		node=${rest%%:*} app=${rest#*:}
		if [ "$app" = ds ]; then
			ns=kube-system owner='"kind": "DaemonSet", "name": "kube-proxy"' labels='"k8s-app": "kube-proxy"'
		else
			ns=ml owner="\"kind\": \"ReplicaSet\", \"name\": \"$app-6d5c4b3a2\"" labels="\"app\": \"$app\""
		fi
		if [ -n "$node" ]; then
			spec="\"nodeName\": \"$node\"" status='"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]'
		else
			spec='"schedulerName": "default-scheduler"' status='"phase": "Pending"'
		fi
		printf ',\n        {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {%s}, "name": "%s", "namespace": "%s", "ownerReferences": [{"apiVersion": "apps/v1", %s, "controller": true}]}, "spec": {%s}, "status": {%s}}' \
			"$labels" "$name" "$ns" "$owner" "$spec" "$status"
	done
	printf '\n    ],\n    "kind": "List",\n    "metadata": {"resourceVersion": ""}\n}\n'
}
fleet serve-a:gpu-node-9:serve kube-proxy-x:gpu-node-2:ds serve-b:gpu-node-10:serve \
	waiting::serve batch-a:gpu-node-10:batch kube-proxy-y:gpu-node-9:ds >fleet.json
BATCH="ml/batch-pdb BLOCKS ml/batch-a minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=- needed=1: status incomplete (no status.disruptionsAllowed): $WAIT"
t_run pdb-check -a fleet.json
t_rc 1 "one node of three blocked"
t_out "nodes in bytewise order of their names whatever the pods' order; gpu-node-2, DaemonSet pods only, prints nothing; A is - for a status without it" \
	"gpu-node-10 DRAWS ml/serve-pdb 1 1" \
	"gpu-node-10 DRAWS ml/batch-pdb 1 -" \
	"gpu-node-10 $BATCH" \
	"gpu-node-9 DRAWS ml/serve-pdb 1 1"
t_err "no warning: not of the pod on no node, nor of any node"
t_run pdb-check -a -s fleet.json
t_rc 1 "-s"
t_out "the DaemonSet pods' nodes say SKIP" \
	"gpu-node-10 DRAWS ml/serve-pdb 1 1" \
	"gpu-node-10 DRAWS ml/batch-pdb 1 -" \
	"gpu-node-10 $BATCH" \
	"gpu-node-2 SKIP kube-system/kube-proxy-x daemonset" \
	"gpu-node-9 SKIP kube-system/kube-proxy-y daemonset" \
	"gpu-node-9 DRAWS ml/serve-pdb 1 1"
t_run pdb-check gpu-node-10 fleet.json
t_rc 1 "the blocked node alone"
t_out "says the same without the prefix and the DRAWS lines" "$BATCH"

fleet serve-a:gpu-node-9:serve kube-proxy-x:gpu-node-2:ds serve-b:gpu-node-10:serve \
	waiting::serve kube-proxy-y:gpu-node-9:ds >fleet-ok.json
t_run pdb-check -a fleet-ok.json
t_rc 0 "no node blocked"
t_out "two nodes each draw the 1 serve-pdb allows: not both at once" \
	"gpu-node-10 DRAWS ml/serve-pdb 1 1" \
	"gpu-node-9 DRAWS ml/serve-pdb 1 1"
t_err "and nothing on stderr"

fleet kube-proxy-x:gpu-node-2:ds waiting::serve >fleet-ds.json
t_run pdb-check -a fleet-ds.json
t_rc 0 "a cluster whose only node holds DaemonSet pods only"
t_out "prints nothing"
t_err "says nothing"
fleet >fleet-none.json
t_run pdb-check -a fleet-none.json
t_rc 0 "budgets and no pod"
t_out "prints nothing, no OK"
t_err "no warning"

# -a reads the whole list, as pdb-check NODE does, and agrees with it.
for f in "$DATA"/pdb-*.json "$DATA"/pdb-*.yaml fleet.json bare.json; do
	agree "$f"
	agree "$f" -s
done
# Parsed whole by the tests' own reader (t_same), the same.
t_same "-a parsed whole: the same output and status" pdb-check -a -s fleet.json

# Errors: exit 2, nothing on stdout.
sed 's/"disruptionsAllowed": 0/"disruptionsAllowed": "0"/' "$DATA/pdb-lab.json" >str.json
t_run pdb-check -a str.json
t_rc 2 "a status count that is a string"
t_out "prints nothing"
t_err "names the budget and the field" \
	'pdb-check: str.json: item 0: PodDisruptionBudget gpu-drv/trainer-pdb: status.disruptionsAllowed is "0", not an integer'
head -c 4000 "$DATA/pdb-lab.json" >cut.json
t_run pdb-check -a cut.json
t_rc 2 "JSON cut short"
t_out "prints nothing"
t_err "says it is truncated" \
	"pdb-check: cut.json: truncated JSON: input ends inside a value (4000 bytes read)"
sed 's/"name": "waiting", "namespace": "ml"/"name": "waiting"/' fleet.json >nons.json
t_run pdb-check -a nons.json
t_rc 2 "a pod on no node without metadata.namespace"
t_out "prints nothing"
t_err "is still an error" "pdb-check: nons.json: item 5 (Pod): metadata.namespace is missing"
sed 's/"nodeName": "gpu-node-2"/"nodeName": "GPU_node 2"/' fleet.json >badnode.json
t_run pdb-check -a badnode.json
t_rc 2 "a spec.nodeName that is not a node name"
t_out "prints nothing"
t_err "names the pod" \
	'pdb-check: badnode.json: item 3: Pod kube-system/kube-proxy-x: spec.nodeName "GPU_node 2" is not a valid node name'
t_run pdb-check -a </dev/null
t_rc 2 "empty input"
t_out "prints nothing"

# Usage.
t_run pdb-check -a lab-node-1 "$DATA/pdb-lab.json"
t_rc 2 "-a with a node"
t_out "prints nothing"
t_err "is a usage error" \
	"pdb-check: -a checks every node: it takes no node name" \
	"usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"
t_run pdb-check -a -s lab-node-1 "$DATA/pdb-lab.json"
t_rc 2 "-a -s with a node"
t_run pdb-check -a no-such-file
t_rc 2 "-a's one argument is the file"
t_err "names it" "pdb-check: cannot open no-such-file: No such file or directory"
t_run pdb-check -a <"$DATA/pdb-lab-ok.json"
t_rc 0 "-a reads standard input"
t_run pdb-check -a - <"$DATA/pdb-lab-ok.json"
t_rc 0 "and - for it"

# 5,000 pods of 500 budgets on 100 nodes, as gen/ writes
# kubectl get --raw of the budgets, then of the pods.
t_gen
"$GEN" -r -p 5000,500 100 >big.json
# Every budget made stale (generation 99 > observedGeneration): then
# pdb-check NODE prints a BLOCKS line for each budget the node's pods draw
# on, with its needed=N and disruptionsAllowed=A: the DRAWS lines, said the
# one-node way.
sed 's/"generation":[0-9]*,/"generation":99,/g' big.json >stale.json
t_run pdb-check -a big.json
t_rc 1 "-a over 5,000 pods, 500 budgets, 100 nodes"
t_err "nothing on stderr"
mv out big.out
t_run sh -c 'cut -d" " -f1 big.out | uniq | wc -l'
t_val "every node has a line (each holds replicas)" 100
# Every 3rd node (34 of them) against pdb-check NODE, run as it is
# ($BIN/pdb-check: under valgrind only the -a runs are, for time's sake).
bad=
bad_draws=
i=0
while [ "$i" -lt 100 ]; do
	n=$(printf 'gpu-node-%05d' "$i")
	i=$((i + 3))
	"$BIN/pdb-check" "$n" big.json | grep -v '^OK$' >one
	awk -v n="$n" '$1 == n && $2 != "DRAWS" { sub(/^[^ ]* /, ""); print }' big.out >mine
	cmp -s one mine || bad="$bad $n"
	"$BIN/pdb-check" "$n" stale.json | awk '$2 == "BLOCKS" {
		for (f = 3; f <= NF; f++) {
			if ($f ~ /^disruptionsAllowed=/) a = substr($f, 20)
			if ($f ~ /^needed=/) { n = substr($f, 8); sub(/:$/, "", n) }
		}
		print "DRAWS " $1 " " n " " a
	}' >one
	awk -v n="$n" '$1 == n && $2 == "DRAWS" { sub(/^[^ ]* /, ""); print }' big.out >mine
	cmp -s one mine || bad_draws="$bad_draws $n"
done
t_ok "$([ -z "$bad" ]; echo $?)" "34 nodes: their -a lines but DRAWS are what pdb-check NODE says"
[ -z "$bad" ] || echo "differ:$bad" | t_diag
t_ok "$([ -z "$bad_draws" ]; echo $?)" "34 nodes: their DRAWS lines are the budgets their pods draw on, with N and A"
[ -z "$bad_draws" ] || echo "differ:$bad_draws" | t_diag

# By hand, from gen's layout: 100 driver DaemonSet pods and 49 Job pods
# (Succeeded), 4,851 replicas w of 500 ReplicaSets k (the first 351 of 10
# replicas, the others of 9), replica w on node w % 100, budget k in
# team-(k/10) for app k % 10 (asr-whisper, batch-scorer, embedder,
# feature-store, llm-inference, notebook, ray-worker, reranker, trainer,
# vllm-server).  gpu-node-00042 holds w = 42, 142, ... 4842: one replica
# each of k = 4, 14, ... 344 (llm-inference of team 0 to 34), then (w - 3510)
# / 9 + 351 = 354, 365, 376, 387, 399, 410, 421, 432, 443, 454, 465, 476,
# 487, 499.  w = 1842 (97 * 18 + 96) is not Ready, and budget 184
# (maxUnavailable 1, currentHealthy 9 >= desiredHealthy 9 > 0) lets it go
# outright: team-0018 draws nothing.
{
	i=0
	while [ "$i" -le 35 ]; do
		[ "$i" = 18 ] || printf 'team-%04d/llm-inference-pdb 1\n' "$i"
		i=$((i + 1))
	done
	for b in 36/notebook 37/ray-worker 38/reranker 39/vllm-server 41/asr-whisper \
		42/batch-scorer 43/embedder 44/feature-store 45/llm-inference 46/notebook \
		47/ray-worker 48/reranker 49/vllm-server; do
		printf 'team-00%s-pdb 1\n' "$b"
	done
} >hand
awk '$1 == "gpu-node-00042" && $2 == "DRAWS" { print $3, $4 }' big.out >mine
t_cmp "gpu-node-00042 draws 1 on each budget of its replicas, as worked out by hand" hand mine
t_run sh -c 'grep "^gpu-node-00042 DRAWS" big.out | sed -n "1,2p;/team-0039/p"'
t_out "A as the budgets' status says: maxUnavailable 1 of 10, minAvailable 50% of 10, minAvailable = replicas" \
	"gpu-node-00042 DRAWS team-0000/llm-inference-pdb 1 1" \
	"gpu-node-00042 DRAWS team-0001/llm-inference-pdb 1 5" \
	"gpu-node-00042 DRAWS team-0039/vllm-server-pdb 1 0"
t_run sh -c 'grep "^gpu-node-00042 " big.out | grep -v " DRAWS " | cut -d" " -f2,3'
t_out "and it is blocked by the three that allow none" \
	"team-0016/llm-inference-pdb BLOCKS" "team-0039/vllm-server-pdb BLOCKS" "team-0049/vllm-server-pdb BLOCKS"
t_done
