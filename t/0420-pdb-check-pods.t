#!/bin/sh
# pdb-check -p: the pods alone, a line each, as the scripts read the GPU
# Operator's driver and validator pods and the pods -j waits for.
. "$(dirname "$0")/lib.sh"

D=gpu-operator/nvidia-driver-daemonset-7xk2p
V=gpu-operator/nvidia-operator-validator-q9w4d
t_gpu_pods "$(t_gpu_pod gpu-node-1 "$D" Running False 2 1)" \
	"$(t_gpu_pod gpu-node-2 "$V" Running True 0)" \
	"$(t_gpu_pod - gpu-operator/nvidia-driver-daemonset-pending Pending -)" \
	"$(t_gpu_pod gpu-node-3 gpu-operator/nvidia-driver-daemonset-new - -)" >pods.json
t_run pdb-check -p pods.json
t_rc 0 "a PodList"
t_out "a line a pod, in input order: node, namespace/name, phase, Ready, restarts" \
	"gpu-node-1 $D Running False 3" \
	"gpu-node-2 $V Running True 0" \
	"- gpu-operator/nvidia-driver-daemonset-pending Pending - 0" \
	"gpu-node-3 gpu-operator/nvidia-driver-daemonset-new - - 0"
t_err "nothing on stderr"
t_same "parsed whole, the same" pdb-check -p pods.json
STDIN=pods.json t_same "on standard input, the same" pdb-check -p
cp out pods.out

# kubectl get pods -o yaml: a List whose kind comes last, each item's kind first.
cat >pods.yaml <<'EOF'
apiVersion: v1
items:
- kind: Pod
  metadata:
    name: nvidia-driver-daemonset-7xk2p
    namespace: gpu-operator
    labels: {app: nvidia-driver-daemonset}
  spec:
    nodeName: gpu-node-1
  status:
    phase: Running
    conditions:
    - {type: Initialized, status: "True"}
    - {type: Ready, status: "False"}
    containerStatuses:
    - {name: a, restartCount: 2}
    - {name: b, restartCount: 1}
- kind: Pod
  metadata: {name: nvidia-operator-validator-q9w4d, namespace: gpu-operator}
  spec: {nodeName: gpu-node-2}
  status:
    phase: Running
    conditions: [{type: Ready, status: "True"}]
    containerStatuses: [{name: v, restartCount: 0}]
- kind: Pod
  metadata: {name: nvidia-driver-daemonset-pending, namespace: gpu-operator}
  spec: {}
  status: {phase: Pending}
- kind: Pod
  metadata: {name: nvidia-driver-daemonset-new, namespace: gpu-operator}
  spec: {nodeName: gpu-node-3}
kind: List
metadata:
  resourceVersion: ""
EOF
t_run pdb-check -p pods.yaml
t_rc 0 "the same pods as kubectl -o yaml"
cp out yaml.out
t_run cmp pods.out yaml.out
t_rc 0 "YAML gives the same lines as JSON"
t_same "YAML parsed whole, the same" pdb-check -p pods.yaml

printf '{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}\n' >empty.json
t_run pdb-check -p empty.json
t_rc 0 "an empty List: no pod"
t_out "prints nothing"
t_err "and says nothing"

# Two GETs back to back are one list of pods.
cat pods.json pods.json >two.json
t_run sh -c 'pdb-check -p two.json | wc -l'
t_out "lists back to back: every pod of each" 8

# What is not the whole list of pods is never "no pod".
bad() { # FILE RC DESC MESSAGE
	t_run pdb-check -p "$1"
	t_rc "$2" "$3"
	t_out "$3: prints nothing"
	t_err "$3: says why" "$4"
}
: >nothing.json
bad nothing.json 2 "an empty body" "pdb-check: nothing.json: empty input: expected kubectl JSON or YAML"
t_gpu_pod gpu-node-1 "$D" Running True 0 >lone.json
bad lone.json 2 "a lone Pod, no list" "pdb-check: lone.json: not a List of Pods (kind is missing); use kubectl get pods -o json"
printf '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"b"}}\n' >pod.json
bad pod.json 2 "a Pod with its kind" "pdb-check: pod.json: not a List of Pods (kind is \"Pod\"); use kubectl get pods -o json"
bad "$DATA/pdb-lab.json" 2 "budgets and pods" \
	"pdb-check: $DATA/pdb-lab.json: item 0 is a \"PodDisruptionBudget\", not a Pod; use kubectl get pods -o json"
printf '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \\"x\\" cannot list resource \\"pods\\"","reason":"Forbidden","code":403}\n' >status.json
bad status.json 2 "a Status" \
	"pdb-check: status.json: a Kubernetes Status, not a List of Pods: \"pods is forbidden: User \\\"x\\\" cannot list resource \\\"pods\\\"\" (reason \"Forbidden\", code 403)"
head -c 700 pods.json >cut.json
t_run pdb-check -p cut.json
t_rc 2 "a list cut short"
t_out "prints nothing of the pods before the cut"
t_grep "names the file" err '^pdb-check: cut\.json:'
sed 's/"phase":"Running"/"phase":"Run ning"/' pods.json >n.json
bad n.json 2 "a phase that is not a word" \
	"pdb-check: n.json: item 0: Pod $D: status.phase \"Run ning\" is not a word of the API's (letters only)"
sed 's/"nvidia-operator-validator-q9w4d"/"a b"/' pods.json >n.json
bad n.json 2 "a name with a space" "pdb-check: n.json: item 1 (Pod): metadata.name \"a b\" is not a valid pod name"
sed 's/"namespace":"gpu-operator"/"namespace":"GPU"/' pods.json >n.json
bad n.json 2 "a namespace the API never allows" "pdb-check: n.json: item 0 (Pod): metadata.namespace \"GPU\" is not a valid namespace"
sed 's/"nodeName":"gpu-node-2"/"nodeName":"gpu node"/' pods.json >n.json
bad n.json 2 "a node name with a space" "pdb-check: n.json: item 1: Pod $V: spec.nodeName \"gpu node\" is not a valid node name"
sed 's/"nodeName":"gpu-node-2"/"nodeName":7/' pods.json >n.json
bad n.json 2 "a node name that is not a string" "pdb-check: n.json: item 1: Pod $V: spec.nodeName is a number, not a string"
sed 's/"restartCount":2/"restartCount":-2/' pods.json >n.json
bad n.json 2 "a negative restart count" \
	"pdb-check: n.json: item 0: Pod $D: status.containerStatuses[].restartCount is -2: a count is never negative"
sed 's/"restartCount":2/"restartCount":2.5/' pods.json >n.json
bad n.json 2 "a restart count that is not an integer" \
	"pdb-check: n.json: item 0: Pod $D: status.containerStatuses[].restartCount is 2.5, not a 32-bit integer"
sed 's/"namespace":"gpu-operator",//' pods.json >n.json
t_run pdb-check -p n.json
t_rc 2 "a pod without a namespace"
t_grep "names the item and the field" err '^pdb-check: n\.json: item 0 (Pod): metadata\.namespace '

# -w: a list, then a watch of what follows it, a line each as it comes,
# led by what it is and a resourceVersion (drv-upgrade.sh's wait for the
# evicted pods).
ev() { # ev TYPE RV POD-JSON: a watch event of the API server's, the pod's resourceVersion RV
	printf '{"type":"%s","object":%s}\n' "$1" "$(printf '%s' "$3" | sed "s/^{\"metadata\":{/{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"$2\",/")"
}
P1=$(t_gpu_pod gpu-node-1 team-a/trainer-0 Running True 0)
P2=$(t_gpu_pod gpu-node-1 team-a/trainer-1 Running True 0)
t_gpu_pods "$P1" "$P2" | sed 's/"uid":/"resourceVersion":"11","uid":/g' >w-list.json
{ ev MODIFIED 15 "$P1"; ev DELETED 16 "$P1"; ev ADDED 17 "$P2"; } >w-events.json
t_run pdb-check -p -w w-list.json
t_rc 0 "-w: a PodList"
t_out "each item led by ITEM and its resourceVersion, then the list's" \
	"ITEM 11 gpu-node-1 team-a/trainer-0 Running True 0" \
	"ITEM 11 gpu-node-1 team-a/trainer-1 Running True 0" \
	"LIST 12"
t_run pdb-check -p -w w-events.json
t_rc 0 "-w: watch events"
t_out "each event led by its type and the pod's resourceVersion" \
	"MODIFIED 15 gpu-node-1 team-a/trainer-0 Running True 0" \
	"DELETED 16 gpu-node-1 team-a/trainer-0 Running True 0" \
	"ADDED 17 gpu-node-1 team-a/trainer-1 Running True 0"
t_err "nothing on stderr"
: >none.json
t_run pdb-check -p -w none.json
t_rc 0 "-w: a watch that gave no event"
t_out "prints nothing"
# A watch's answer reaches the reader as it comes: each line is out before
# the next event is written (a pipe, not a file).
mkfifo ev.fifo back.fifo
{
	ev MODIFIED 15 "$P1"
	# (the line of the first event read before the second is sent)
	read -r first <back.fifo
	echo "$first" >first.line
	ev DELETED 16 "$P1"
} >ev.fifo &
timeout 20 pdb-check -p -w <ev.fifo | { read -r l; echo "$l" >back.fifo; cat; } >w.rest
wait
t_is "the first event's line is out before the second event comes" "$(cat first.line)" \
	"MODIFIED 15 gpu-node-1 team-a/trainer-0 Running True 0"
t_is "then the second's" "$(cat w.rest)" "DELETED 16 gpu-node-1 team-a/trainer-0 Running True 0"
{ ev MODIFIED 15 "$P1"; printf '%s\n' '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 12 (40)","reason":"Expired","code":410}}'; } >w-410.json
t_run pdb-check -p -w w-410.json
t_rc 2 "-w: an ERROR event (410 Expired)"
t_out "the events before it are printed" "MODIFIED 15 gpu-node-1 team-a/trainer-0 Running True 0"
t_err "the error, with its reason and code" \
	'pdb-check: w-410.json: the watch reported an error: "too old resource version: 12 (40)" (reason "Expired", code 410)'
t_run pdb-check -p w-events.json
t_rc 2 "without -w, watch events are not a list"
t_grep "says so" err '^pdb-check: w-events\.json: a watch event (MODIFIED), not a List of Pods'
sed 's/"resourceVersion":"16"/"resourceVersion":"16\&watch=1"/' w-events.json >w-badrv.json
t_run pdb-check -p -w w-badrv.json
t_rc 2 "-w: a resourceVersion a watch's query could not take"
t_err "is refused, named" \
	'pdb-check: w-badrv.json: item 0: Pod team-a/trainer-0: metadata.resourceVersion "16&watch=1" is not one a watch can start from (letters, digits and ._~- only, 64 at most)'
t_out "the events before it are printed" "MODIFIED 15 gpu-node-1 team-a/trainer-0 Running True 0"
t_run pdb-check -w w-events.json
t_rc 2 "-w without -p"
t_err "is a usage error" "pdb-check: -w reads a watch of pods or of budgets: it goes with -p or -b" \
	"usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"

t_run pdb-check -p -a pods.json
t_rc 2 "-p with -a"
t_err "is a usage error" "usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"
t_run pdb-check -p pods.json pods.json
t_rc 2 "-p with two files"
t_done
