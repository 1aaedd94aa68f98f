#!/bin/sh
# End to end: `make lab`'s script carries the lab's eight steps (drv-lab.sh(1)) on the sandbox;
# every artifact is checked by content, then the live state.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

H=$PWD/home
GPUDRV_HOME=$H t_run "$BIN/drv-lab.sh"
t_rc 0 "drv-lab.sh runs the eight steps"
cp out lab.out
cp err lab.err
t_grep "prints a progress line per step" lab.out '^== 8\. the state machine and the report$'
O=$H/out

t_run cat "$O/tags.txt"
t_out "tags.txt: three '<node> <tag>' lines" \
	"lab-node-0 550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 550-6.8.0-45-generic-ubuntu24.04"
t_run cat "$O/audit.txt"
t_out "audit.txt: OK" OK
t_run cat "$O/skew.txt"
t_out "skew.txt: the new node's missing image" "lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04"
t_run cat "$O/skew-fixed.txt"
t_out "skew-fixed.txt: OK" OK
t_grep "cuda.txt: the scheduler's node-affinity message for cuda13-job" "$O/cuda.txt" \
	"^0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector"
t_grep "drain-blocked.txt: refused by the disruption budget" "$O/drain-blocked.txt" \
	"Cannot evict pod as it would violate the pod's disruption budget"
t_grep "drain-blocked.txt: and given up at the timeout" "$O/drain-blocked.txt" "global timeout reached: 20s"
t_grep "drain-ok.txt: the trainer pod evicted" "$O/drain-ok.txt" "^pod/trainer-[a-z0-9-]* evicted$"
t_grep "drain-ok.txt: the node drained" "$O/drain-ok.txt" "^node/lab-node-1 drained$"
t_run cat "$O/upgrade-states.txt"
t_out "upgrade-states.txt: the eight states in order" upgrade-required cordon-required \
	pod-deletion-required drain-required pod-restart-required validation-required \
	uncordon-required upgrade-done
t_run cat "$O/upgrade-report.txt"
t_out "upgrade-report.txt: from the cluster and files as they are now" NODES=4 SKEW=0 \
	LAB_NODE_1_TAG=550-5.15.0-107-generic-ubuntu22.04 MATRIX_ROWS=5 UPGRADE_STATE=upgrade-done
t_run cat "$H/support-matrix.csv"
t_out "the matrix: the header, the three rows, then the two rows added in order" \
	driver_branch,kernel,os_tag 550,5.15.0-119-generic,ubuntu22.04 \
	535,5.15.0-107-generic,ubuntu22.04 550,6.8.0-45-generic,ubuntu24.04 \
	550,6.8.0-52-generic,ubuntu24.04 550,5.15.0-107-generic,ubuntu22.04

# The live state the lab leaves.
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/cuda\.driver\.major}.{.metadata.labels.nvidia\.com/cuda\.driver\.minor}.{.metadata.labels.nvidia\.com/cuda\.driver\.rev}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "lab-node-1: schedulable, 550.90.07, upgrade-done" /550.90.07/upgrade-done
t_run sh -c 'kubectl -n gpu-drv get pods -l app=trainer -o jsonpath="{range .items[*]}{.spec.nodeName} {.status.phase}{\"\n\"}{end}" | sort'
t_out "four trainers Running, one per node" "lab-node-0 Running" "lab-node-1 Running" \
	"lab-node-2 Running" "lab-node-3 Running"
t_run kubectl -n gpu-drv get pod cuda12-job cuda13-job -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{"\n"}{end}'
t_out "cuda12-job Running on lab-node-0, cuda13-job Pending" \
	"cuda12-job lab-node-0 Running" "cuda13-job  Pending"

# The installed scripts work from any directory.
mkdir elsewhere && cd elsewhere || exit 1
t_run "$H/drv-tag.sh" lab-node-1
t_out "drv-tag.sh from another directory" 550-5.15.0-107-generic-ubuntu22.04
t_run "$H/drv-audit.sh"
t_rc 0 "drv-audit.sh from another directory, its matrix beside it"
cd .. || exit 1

# Again on the same cluster: it resets the lab and gives the same files.
mkdir first && cp "$O"/*.txt first/
GPUDRV_HOME=$H t_run "$BIN/drv-lab.sh"
t_rc 0 "a second run on the same cluster"
for f in tags audit skew skew-fixed cuda upgrade-states upgrade-report; do
	t_cmp "$f.txt is the same the second time" "first/$f.txt" "$O/$f.txt"
done

e2e_reset_lab >/dev/null 2>&1 || :
t_done
