#!/bin/sh
# drv-states.sh -R: which nodes' driver pods the GPU Operator will restart
# (their DaemonSet has a newer revision), and whether the driver changes
# with it, from the driver DaemonSets, their ControllerRevisions and their
# pods as the sandbox's API server answered them (t/data/drift); text, -S
# and -o json; a list that cannot be read is exit 2.  (t/0925 changes a
# DaemonSet on the sandbox.)
. "$(dirname "$0")/lib.sh"

M=$ROOT/lab/support-matrix.csv
T0=550-5.15.0-119-generic-ubuntu22.04
T1=535-5.15.0-107-generic-ubuntu22.04
T2=550-6.8.0-45-generic-ubuntu24.04
t_fake_pods
cp "$DATA/lab-nodes.json" nodes.json
cp "$DATA/drift/ds.json" daemonsets.json
cp "$DATA/drift/cr.json" revisions.json
cp "$DATA/drift/pods.json" driver.json

t_run drv-states.sh -m "$M"
t_rc 0 "without -R"
t_out "no revision column" "lab-node-0 - schedulable $T0 ok - -" "lab-node-1 - schedulable $T1 ok - -" "lab-node-2 - schedulable $T2 ok - -"
t_is "one GET" "$(grep -c . kubectl.log)" 1
rm -f kubectl.log
t_run drv-states.sh -R -m "$M"
t_rc 0 "-R"
t_out "a revision column after the age: driver (a new image), config (the same), orphan (no DaemonSet's)" \
	"lab-node-0 - schedulable $T0 ok - driver -" "lab-node-1 - schedulable $T1 ok - config -" "lab-node-2 - schedulable $T2 ok - orphan -"
t_run cat kubectl.log
t_out "four GETs: the nodes, the DaemonSets, their revisions, their pods" \
	"--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue" \
	"--request-timeout=60s get --raw /apis/apps/v1/daemonsets?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver" \
	"--request-timeout=60s get --raw /apis/apps/v1/controllerrevisions?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver" \
	"--request-timeout=60s get --raw /api/v1/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver"
t_run drv-states.sh -R -S -m "$M"
t_rc 0 "-R -S"
t_grep "counts the nodes whose driver the operator restarts with a new image" out '^revision driver 1$'
t_grep "and with the same" out '^revision config 1$'
t_grep "and those with a pod of no DaemonSet" out '^revision orphan 1$'
t_run drv-states.sh -R -o json -m "$M"
t_rc 0 "-R -o json"
t_grep "each node's revision, as an object" out '"revision":{"state":"driver","pod":"drift-x/nvidia-driver-daemonset-cxfnn","daemonset":"drift-x/nvidia-driver-daemonset","podHash":"7db5bbb684","currentHash":"568496f46f","image":"nvcr/driver:550.90.07","newImage":"nvcr/driver:550.127.05"}'
t_grep "an orphan's DaemonSet is null" out '"revision":{"state":"orphan","pod":"drift-x/stray-driver","daemonset":null,"podHash":null,"currentHash":null,"image":"nvcr/driver:535.183.06","newImage":null}'
if command -v perl >/dev/null 2>&1; then
	perl -MJSON::PP -e 'decode_json(do { local $/; <STDIN> })' <out
	t_ok $? "the JSON parses"
fi
# A node with no driver pod: "-", null in JSON.
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' >driver.json
t_run drv-states.sh -R -m "$M"
t_rc 0 "no driver pod"
t_out "the column is -" "lab-node-0 - schedulable $T0 ok - - -" "lab-node-1 - schedulable $T1 ok - - -" "lab-node-2 - schedulable $T2 ok - - -"
t_run drv-states.sh -R -o json -m "$M"
t_grep "null in JSON" out '"revision":null'

# A list not read whole: exit 2, no node line.
cp "$DATA/drift/pods.json" driver.json
printf '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"controllerrevisions.apps is forbidden","reason":"Forbidden","code":403}\n' >revisions.json
t_run drv-states.sh -R -m "$M"
t_rc 2 "the revisions answered with a Status"
t_out "no node line"
t_grep "says which" err "^revision-drift: .*: not a whole ControllerRevisionList: a Status (403 Forbidden: "
cp "$DATA/drift/cr.json" revisions.json
STANDIN_FAULT=down t_run drv-states.sh -R -m "$M"
t_rc 2 "no API server"
t_out "no node line"
t_done
