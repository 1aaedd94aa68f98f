#!/bin/sh
# drv-lab.sh against a stand-in cluster (t/0930 runs it on the sandbox): a
# kubectl that fails ends the lab with exit 2 and the step's name, never
# with set -e's 1 nor a step that goes on; so does an output it cannot
# write, and a signal, which leaves no kubectl running.
. "$(dirname "$0")/lib.sh"
unset KUBECTL

# fakebin/kubectl, the one drv-lab.sh finds on PATH: the stand-in
# (t/kubectl), answering nothing (exit 0, no body) but for the faults a
# test puts in ./api (fault KEY FAULT; a hang says so in ./api/hung); every
# call a line of ./lab.log, its pid one of ./kubectl.pids.
t_standin
t_serve _any </dev/null
STANDIN_LOG=$PWD/lab.log
STANDIN_PIDS=$PWD/kubectl.pids
export STANDIN_LOG STANDIN_PIDS
mkdir fakebin
printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/kubectl" >fakebin/kubectl
chmod +x fakebin/kubectl
# fault KEY FAULT: the stand-in answers the request KEY with FAULT, and
# only that request (none: every fault cleared).
fault() {
	find "$STANDIN" -name '*.fault' -exec rm -f {} +
	[ $# = 0 ] || { mkdir -p "$(dirname "$STANDIN/$1")" && echo "$2" >"$STANDIN/$1.fault"; }
}
PATH=$PWD/fakebin:$PATH
: >kubeconfig
LAB_KUBECONFIG=$PWD/kubeconfig
H=$PWD/home
GPUDRV_HOME=$H
# The lab's manifests from the checkout, whichever build is under test.
GPUDRV_SRC=$ROOT
export PATH LAB_KUBECONFIG GPUDRV_HOME GPUDRV_SRC
L=$BIN/drv-lab.sh
cluster="== cluster: $PWD/kubeconfig"
install="== install: the tools into $H/bin, the lab's matrix and manifests into $H"

fault delete/namespace/gpu-drv down
t_run "$L"
t_rc 2 "a kubectl that fails while the lab resets"
t_out "the steps so far on stdout" "$cluster" "$install"
t_err "kubectl's words, then the step and the call" \
	"The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" \
	"drv-lab.sh: reset: kubectl delete namespace gpu-drv --ignore-not-found --wait=true --timeout=120s failed (exit 1)"

fault create/namespace/gpu-drv forbidden
t_run "$L"
t_rc 2 "a kubectl that fails at step 1"
t_grep "names step 1 and the call" err "^drv-lab.sh: 1. facts: kubectl create namespace gpu-drv failed (exit 1)$"
fault label/node/lab-node-1 forbidden
t_run "$L"
t_rc 2 "a label refused at step 1"
t_grep "names step 1 and the call" err "^drv-lab.sh: 1. facts: kubectl label node lab-node-1 --overwrite nvidia.com/gpu.present=true .* failed (exit 1)$"

# The stand-in answers nothing: drv-tag.sh cannot read a tag.
fault
t_run "$L"
t_rc 2 "drv-tag.sh fails at step 2"
t_grep "names step 2, and the node" err "^drv-lab.sh: 2. tags: drv-tag.sh lab-node-0 failed (exit 2)$"
t_grep "the step began" out "^== 2. tags: "
t_run test -e "$H/out/tags.txt"
t_rc 1 "and no tags.txt claims tags"

fault get/node/lab-node-2 notfound
t_run "$L"
t_rc 2 "LAB_KUBECONFIG's cluster without lab-node-2"
t_out "prints nothing"
t_err "says so" "drv-lab.sh: cluster: LAB_KUBECONFIG's cluster has no node lab-node-2 (the lab creates no base nodes in a cluster it did not start)"
fault

t_run sh -c '"$0" >/dev/full' "$L"
t_rc 2 "drv-lab.sh >/dev/full"
t_err "says it cannot write its progress, and where" "drv-lab.sh: cluster: cannot write to standard output"
t_run sh -c '"$0" -h >/dev/full' "$L"
t_rc 2 "drv-lab.sh -h >/dev/full"

: >afile
GPUDRV_HOME=$PWD/afile/home t_run "$L"
t_rc 2 "GPUDRV_HOME under a file"
t_out "the cluster step only" "$cluster" "== install: the tools into $PWD/afile/home/bin, the lab's matrix and manifests into $PWD/afile/home"
t_err "says it cannot create the lab there" \
	"drv-lab.sh: install: cannot create the lab's directories in $PWD/afile/home (Not a directory); GPUDRV_HOME names another place"
LAB_TIMEOUT=2x t_run "$L"
t_rc 2 "LAB_TIMEOUT=2x"
t_err "is refused" "drv-lab.sh: LAB_TIMEOUT takes seconds (120, 120s, 2m), not '2x'"
t_run "$L" extra
t_rc 2 "an argument"
t_err "prints the usage" "usage: drv-lab.sh"

# stopped SIG STEP WHERE: drv-lab.sh, its kubectl hung WHERE, stopped by
# SIG: at once, saying so with the step's name, no kubectl left running.
stopped() {
	rm -f "$STANDIN/hung" kubectl.pids
	t_bg "$L"
	t_until 20 test -e "$STANDIN/hung"
	t_ok $? "kubectl hangs $3"
	t0=$(date +%s)
	kill "-$1" "$t_pid"
	t_wait 10
	took=$(($(date +%s) - t0))
	t_rc 2 "drv-lab.sh stopped by SIG$1 ($3)"
	if [ "$took" -le 3 ]; then t_ok 0 "at once (${took}s)"; else t_ok 1 "at once (${took}s)"; fi
	t_err "says so, naming the step" "drv-lab.sh: $2: interrupted by SIG$1"
	t_none_alive "no kubectl left running" kubectl.pids
}
fault create/namespace/gpu-drv hang
for sig in TERM INT HUP; do stopped "$sig" "1. facts" "at step 1"; done
# A look too (kubectl in a condition, not a change): before, the signal
# waited for kubectl, and its child stayed.
fault get/node/lab-node-0 hang
stopped TERM cluster "looking at lab-node-0"
t_done
