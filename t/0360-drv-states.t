#!/bin/sh
# drv-states.sh: one line per GPU node from one call; never a silent pass.
# (t/0920 runs it against the sandbox.)
. "$(dirname "$0")/lib.sh"

t_fake_kubectl
FAKE_OUT=$DATA/lab-nodes.json
export FAKE_OUT
M=$ROOT/lab/support-matrix.csv
T0=550-5.15.0-119-generic-ubuntu22.04
T1=535-5.15.0-107-generic-ubuntu22.04
T2=550-6.8.0-45-generic-ubuntu24.04

t_run dash "$BIN/drv-states.sh" -m "$M"
t_rc 0 "the lab nodes, every image built, under dash"
t_out "node, state, cordon, tag, image" \
	"lab-node-0 - schedulable $T0 ok" "lab-node-1 - schedulable $T1 ok" "lab-node-2 - schedulable $T2 ok"
t_run cat kubectl.log
t_out "one call" "--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"

printf '%s\n' driver_branch,kernel,os_tag 550,5.15.0-119-generic,ubuntu22.04 >one.csv
t_run drv-states.sh -m one.csv
t_rc 1 "images missing"
t_out "they say MISSING" \
	"lab-node-0 - schedulable $T0 ok" "lab-node-1 - schedulable $T1 MISSING" "lab-node-2 - schedulable $T2 MISSING"

FAKE_OUT=$DATA/bad-nodes.json t_run drv-states.sh -m "$M"
t_rc 2 "nodes whose labels give no tag"
t_grep "each is shown UNKNOWN" out '^no-major - schedulable UNKNOWN UNKNOWN$'
t_grep "the good ones still shown" out "^good-a - schedulable $T0 ok\$"

printf '{"kind": "NodeList", "items": []}\n' >none.json
FAKE_OUT=$PWD/none.json t_run drv-states.sh -m "$M"
t_rc 2 "no GPU node"
t_out "prints nothing"
t_err "says so" "drv-states.sh: no GPU node (nvidia.com/gpu.present=true) in the cluster; -e accepts that"
FAKE_OUT=$PWD/none.json t_run drv-states.sh -e -m "$M"
t_rc 0 "-e: no GPU node is fine"

FAKE_KUBECTL=down t_run drv-states.sh -m "$M"
t_rc 2 "no API server"
t_out "prints nothing"
t_run drv-states.sh -m nosuch.csv
t_rc 2 "a missing matrix"

# -t: the tag of the driver the GPU Operator will deploy.
t_fake_ops
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json KUBECTL=$PWD/ops t_run drv-states.sh -t -m "$M"
t_rc 1 "-t: lab-node-1's 550 image is missing"
t_out "each node's target tag; the node that builds its driver says why in the image's place" \
	"lab-node-0 - schedulable $T0 ok" \
	"lab-node-1 - schedulable 550-5.15.0-107-generic-ubuntu22.04 MISSING" \
	"lab-node-2 - schedulable - not-precompiled:nvidiadriver/noble"
t_run wc -l <ops.log
t_out "four GETs" 4
FAKE_CP=forbidden FAKE_NVD= KUBECTL=$PWD/ops t_run drv-states.sh -t -m "$M"
t_rc 2 "-t when the ClusterPolicies cannot be read"
t_out "prints nothing"
t_grep "says which list" err "^drv-states.sh: cannot list the clusterpolicies; kubectl said:$"
t_done
