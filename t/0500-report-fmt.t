#!/bin/sh
# report-fmt: the five report lines, every value computed from its inputs.
. "$(dirname "$0")/lib.sh"

M=$ROOT/lab/support-matrix.csv
echo OK >audit.ok
t_run report-fmt -a audit.ok -m "$M" lab-node-1 <"$DATA/lab-nodes.json"
t_rc 0 "the lab nodes, a clean audit, the starting matrix"
t_out "five KEY=VALUE lines" \
	NODES=3 SKEW=0 LAB_NODE_1_TAG=535-5.15.0-107-generic-ubuntu22.04 MATRIX_ROWS=3 UPGRADE_STATE=-
t_err "nothing on stderr"

sed -e 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu-driver-upgrade-state": "upgrade-done", &/' \
	"$DATA/node-1.json" >done.json
printf '%s\n' '{"kind": "List", "apiVersion": "v1", "items": [' >list.json
sed '$d' done.json >>list.json
printf '%s\n' '}, {"kind": "Node", "metadata": {"name": "cpu-node", "labels": {"kubernetes.io/os": "linux"}}}]}' >>list.json
printf '%s\n' "lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04" "lab-node-4 MISSING 550-6.8.0-52-generic-ubuntu24.04" >audit.skew
{ printf '\357\273\277'; sed 's/$/\r/' "$M"; printf '\r\n\r\n550,6.8.0-52-generic,ubuntu24.04'; } >dos.csv
t_run report-fmt -a audit.skew -m dos.csv lab-node-1 list.json
t_rc 0 "a CPU node, two MISSING lines, a hand-edited matrix"
t_out "counts GPU nodes only, MISSING lines, rows not blanks; the node's state" \
	NODES=1 SKEW=2 LAB_NODE_1_TAG=535-5.15.0-107-generic-ubuntu22.04 MATRIX_ROWS=4 UPGRADE_STATE=upgrade-done

t_run report-fmt -a audit.ok -m "$M" lab-node-2 "$DATA/lab-nodes.yaml"
t_out "YAML nodes; the key follows the node name" \
	NODES=3 SKEW=0 LAB_NODE_2_TAG=550-6.8.0-45-generic-ubuntu24.04 MATRIX_ROWS=3 UPGRADE_STATE=-

printf '%s\n' "lab-node-2 SKIP not-precompiled:nvidiadriver/noble" "lab-node-1 MISSING 550-5.15.0-107-generic-ubuntu22.04" >audit.t
t_run report-fmt -a audit.t -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 0 "drv-audit.sh -t output, a SKIP line in it"
t_grep "the SKIP line counts as no skew" out '^SKEW=1$'
printf '%s\n' "lab-node-2 SKIP not-precompiled:nvidiadriver/noble" OK >audit.tok
t_run report-fmt -a audit.tok -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 0 "SKIP lines then OK"
t_grep "no skew" out '^SKEW=0$'
sed 's/feature.node.kubernetes.io\/system-os_release.ID": "ubuntu"/feature.node.kubernetes.io\/system-os_release.ID": "rhel"/; s/feature.node.kubernetes.io\/system-os_release.VERSION_ID": "22.04"/feature.node.kubernetes.io\/system-os_release.VERSION_ID": "9.4"/' "$DATA/node-1.json" >rhel.json
GPUDRV_TAG_RULE=26.3 t_run report-fmt -a audit.ok -m "$M" lab-node-1 rhel.json
t_grep "GPUDRV_TAG_RULE=26.3: the tag as labels2tag gives it" out '^LAB_NODE_1_TAG=535-5.15.0-107-generic-rhel9.4$'
t_run report-fmt -a audit.ok -m "$M" lab-node-1 rhel.json
t_grep "today's rule by default" out '^LAB_NODE_1_TAG=535-5.15.0-107-generic-rhel9$'

t_run report-fmt -a audit.ok -m "$M" lab-node-9 "$DATA/lab-nodes.json"
t_rc 2 "a node not in the list"
t_out "prints nothing"
t_err "says so" "report-fmt: $DATA/lab-nodes.json: node lab-node-9 is not in the node list"

printf '%s\n' "lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04" "drv-audit.sh: something" >audit.bad
t_run report-fmt -a audit.bad -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "an audit line it does not know"
t_out "prints nothing"
t_err "names the line" "report-fmt: audit.bad:2: not a drv-audit.sh line"

printf '%s\n' "no-major UNKNOWN missing:nvidia.com/cuda.driver.major" >audit.unk
t_run report-fmt -a audit.unk -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "an audit with UNKNOWN nodes"
t_err "cannot give a skew count" "report-fmt: audit.unk: 1 node UNKNOWN: the skew cannot be counted"

: >audit.empty
t_run report-fmt -a audit.empty -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "an empty audit"
t_err "is not a skew of 0: the audit did not run" "report-fmt: audit.empty: empty: the audit did not run"
printf '%s\n' OK "lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04" >audit.mixed
t_run report-fmt -a audit.mixed -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "OK beside a MISSING line"
t_err "is not one audit's output" "report-fmt: audit.mixed: OK or NONE with other lines: not one drv-audit.sh output"

printf 'driver_branch,kernel\n' >bad.csv
t_run report-fmt -a audit.ok -m bad.csv lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "a malformed matrix"
t_out "prints nothing"

head -c 2000 "$DATA/lab-nodes.json" >cut.json
t_run report-fmt -a audit.ok -m "$M" lab-node-1 cut.json
t_rc 2 "a cut node list"
t_out "prints nothing"

t_run report-fmt -m "$M" lab-node-1
t_rc 2 "no -a"
t_err "prints the usage" "usage: report-fmt -a audit -m matrix node [nodes]"

# SKEW is the number of GPU nodes whose image is missing (issue 19): a node
# is one node however often a line names it, and an audit of no GPU node
# says nothing of a fleet that has some.
printf '%s\n' "lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04" "lab-node-0 MISSING 550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04" >audit.dup
t_run report-fmt -a audit.dup -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 0 "a MISSING line given twice"
t_out "counts its node once" \
	NODES=3 SKEW=2 LAB_NODE_1_TAG=535-5.15.0-107-generic-ubuntu22.04 MATRIX_ROWS=3 UPGRADE_STATE=-
t_err "nothing on stderr"
printf '%s\n' "lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04" "lab-node-2 MISSING 570-6.8.0-45-generic-ubuntu24.04" >audit.two
t_run report-fmt -a audit.two -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "two MISSING lines for one node that disagree"
t_out "prints nothing"
t_err "names the node and both lines" \
	'report-fmt: audit.two:2: node "lab-node-2" again, as MISSING "570-6.8.0-45-generic-ubuntu24.04", where line 1 said otherwise: not one drv-audit.sh output'
printf '%s\n' "lab-node-2 SKIP not-precompiled:nvidiadriver/noble" "lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04" >audit.skipmiss
t_run report-fmt -a audit.skipmiss -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "a node both SKIP and MISSING"
t_err "is a contradiction too" \
	'report-fmt: audit.skipmiss:2: node "lab-node-2" again, as MISSING "550-6.8.0-45-generic-ubuntu24.04", where line 1 said otherwise: not one drv-audit.sh output'
printf '%s\n' OK OK >audit.okok
t_run report-fmt -a audit.okok -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 0 "OK twice (the same line again)"
t_grep "is OK once" out '^SKEW=0$'

echo NONE >audit.none
t_run report-fmt -a audit.none -m "$M" lab-node-1 "$DATA/lab-nodes.json"
t_rc 2 "an audit that saw no GPU node, a node list of 3 GPU nodes"
t_out "prints nothing, no SKEW=0"
t_err "names both" \
	"report-fmt: audit.none says NONE (no GPU node) but $DATA/lab-nodes.json has 3 GPU nodes: the audit is not of this fleet; run drv-audit.sh again"
sed 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu.present": "false"/' "$DATA/node-1.json" >cpu.json
t_run report-fmt -a audit.none -m "$M" lab-node-1 cpu.json
t_rc 0 "NONE, and a node list of no GPU node"
t_out "agree: no skew" \
	NODES=0 SKEW=0 LAB_NODE_1_TAG=535-5.15.0-107-generic-ubuntu22.04 MATRIX_ROWS=3 UPGRADE_STATE=-
t_run report-fmt -a audit.ok -m "$M" lab-node-1 cpu.json
t_rc 2 "OK, and a node list of no GPU node"
t_err "names both" \
	"report-fmt: audit.ok is an audit of GPU nodes but cpu.json has none (no node labelled nvidia.com/gpu.present=true): the audit is not of this fleet; run drv-audit.sh again"

# A node list that is a watch event, an ERROR one above all, is no node list.
printf '{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}}\n' >error.json
t_run report-fmt -a audit.ok -m "$M" lab-node-1 error.json
t_rc 2 "an ERROR event for the node list"
t_out "prints nothing"
t_err "names the file and the event" \
	'report-fmt: error.json: a watch event (ERROR: "too old resource version: 1 (2)"), not a Node nor a list of Nodes'
t_done
