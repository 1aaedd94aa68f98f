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
	"lab-node-0 - schedulable $T0 ok - -" "lab-node-1 - schedulable $T1 ok - -" "lab-node-2 - schedulable $T2 ok - -"
t_run cat kubectl.log
t_out "one call" "--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"

printf '%s\n' driver_branch,kernel,os_tag 550,5.15.0-119-generic,ubuntu22.04 >one.csv
t_run drv-states.sh -m one.csv
t_rc 1 "images missing"
t_out "they say MISSING" \
	"lab-node-0 - schedulable $T0 ok - -" "lab-node-1 - schedulable $T1 MISSING - image its driver image $T1 does not exist: its next driver pod cannot pull it; fix: build and push $T1 before the node restarts its driver" "lab-node-2 - schedulable $T2 MISSING - image its driver image $T2 does not exist: its next driver pod cannot pull it; fix: build and push $T2 before the node restarts its driver"

FAKE_OUT=$DATA/bad-nodes.json t_run drv-states.sh -m "$M"
t_rc 2 "nodes whose labels give no tag"
t_grep "each is shown UNKNOWN, with the label at fault" out '^no-major - schedulable UNKNOWN UNKNOWN - labels its labels give no tag (missing nvidia.com/cuda.driver.major); fix: see that gpu-feature-discovery runs on it$'
t_grep "the good ones still shown" out "^good-a - schedulable $T0 ok - -\$"

printf '{"kind": "NodeList", "items": []}\n' >none.json
FAKE_OUT=$PWD/none.json t_run drv-states.sh -m "$M"
t_rc 2 "no GPU node"
t_out "prints nothing"
t_err "says so" "drv-states.sh: no GPU node (nvidia.com/gpu.present=true) in the cluster; -e accepts that"
FAKE_OUT=$PWD/none.json t_run drv-states.sh -e -m "$M"
t_rc 0 "-e: no GPU node is fine"

STANDIN_FAULT=down t_run drv-states.sh -m "$M"
t_rc 2 "no API server"
t_out "prints nothing"
t_run drv-states.sh -m nosuch.csv
t_rc 2 "a missing matrix"

# -t: the tag of the driver the GPU Operator will deploy.
t_fake_ops
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json KUBECTL=$PWD/ops t_run drv-states.sh -t -m "$M"
t_rc 1 "-t: lab-node-1's 550 image is missing"
t_out "each node's target tag; the node that builds its driver says why in the image's place" \
	"lab-node-0 - schedulable $T0 ok - -" \
	"lab-node-1 - schedulable 550-5.15.0-107-generic-ubuntu22.04 MISSING - image its driver image 550-5.15.0-107-generic-ubuntu22.04 does not exist: its next driver pod cannot pull it; fix: build and push 550-5.15.0-107-generic-ubuntu22.04 before the node restarts its driver" \
	"lab-node-2 - schedulable - not-precompiled:nvidiadriver/noble - -"
t_run wc -l <ops.log
t_out "four GETs" 4
FAKE_CP=forbidden FAKE_NVD= KUBECTL=$PWD/ops t_run drv-states.sh -t -m "$M"
t_rc 2 "-t when the ClusterPolicies cannot be read"
t_out "prints nothing"
t_grep "says which list" err "^drv-states.sh: cannot list the clusterpolicies; kubectl said:$"
# Every GPU node is listed, whatever its image: none with a tag to look up
# (every node SKIP) still prints each, and a matrix named that cannot be
# read is exit 2 before any request, with the way out.
cat >cp-off.json <<'EOF'
{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "cluster-policy"},
 "spec": {"driver": {"usePrecompiled": false}}}]}
EOF
rm -f ops.log
FAKE_CP=$PWD/cp-off.json KUBECTL=$PWD/ops t_run drv-states.sh -t -m /nonexistent
t_rc 2 "-t, every node SKIP, -m naming no file"
t_out "prints nothing"
t_err "says so, and what to do" "drv-states.sh: cannot read the matrix /nonexistent (-m or GPUDRV_MATRIX names another, -r a registry)"
t_run test -e ops.log
t_rc 1 "before any request"
GPUDRV_MATRIX=/nonexistent FAKE_CP=$PWD/cp-off.json KUBECTL=$PWD/ops t_run drv-states.sh -t
t_rc 2 "GPUDRV_MATRIX naming no file"
t_err "says so" "drv-states.sh: cannot read the matrix /nonexistent (-m or GPUDRV_MATRIX names another, -r a registry)"
FAKE_CP=$PWD/cp-off.json KUBECTL=$PWD/ops t_run drv-states.sh -t -m "$M"
t_rc 0 "-t, every node SKIP, a matrix"
t_out "every node is listed, each with why it needs no image" \
	"lab-node-0 - schedulable - not-precompiled:clusterpolicy/cluster-policy - -" \
	"lab-node-1 - schedulable - not-precompiled:clusterpolicy/cluster-policy - -" \
	"lab-node-2 - schedulable - not-precompiled:clusterpolicy/cluster-policy - -"
printf '%s\n' driver_branch,kernel >broken.csv
FAKE_CP=$PWD/cp-off.json KUBECTL=$PWD/ops t_run drv-states.sh -t -m broken.csv
t_rc 2 "-t, every node SKIP, a broken matrix"
t_out "prints nothing"
t_grep "matrix-grep names the fault" err '^matrix-grep: broken.csv:1: header must be exactly driver_branch,kernel,os_tag'
# Nodes none of whose labels give a tag are listed too.
sed -e 's/"nvidia.com\/cuda.driver.major": "[0-9]*",//' "$DATA/lab-nodes.json" >nomajor.json
FAKE_OUT=$PWD/nomajor.json t_run drv-states.sh -m "$M"
t_rc 2 "no node's labels give a tag"
t_out "each is listed UNKNOWN" \
	"lab-node-0 - schedulable UNKNOWN UNKNOWN - labels its labels give no tag (missing nvidia.com/cuda.driver.major); fix: see that gpu-feature-discovery runs on it" \
	"lab-node-1 - schedulable UNKNOWN UNKNOWN - labels its labels give no tag (missing nvidia.com/cuda.driver.major); fix: see that gpu-feature-discovery runs on it" \
	"lab-node-2 - schedulable UNKNOWN UNKNOWN - labels its labels give no tag (missing nvidia.com/cuda.driver.major); fix: see that gpu-feature-discovery runs on it"

# No matrix at all (neither -m, GPUDRV_MATRIX nor the default file): the
# states and cordons still, the image column "-", said once on stderr.
if [ -e /etc/gpudrv/support-matrix.csv ] || [ -h /etc/gpudrv/support-matrix.csv ]; then
	t_skip "no matrix: this machine has /etc/gpudrv/support-matrix.csv"
	t_skip "no matrix: this machine has /etc/gpudrv/support-matrix.csv"
	t_skip "no matrix: this machine has /etc/gpudrv/support-matrix.csv"
else
	t_run drv-states.sh
	t_rc 0 "no matrix given"
	t_out "every node, its state and cordon, no image checked" \
		"lab-node-0 - schedulable $T0 - - -" "lab-node-1 - schedulable $T1 - - -" "lab-node-2 - schedulable $T2 - - -"
	t_err "says so once" "drv-states.sh: no matrix was given (-m, GPUDRV_MATRIX, or /etc/gpudrv/support-matrix.csv), nor a registry (-r): no image is checked; the image column is '-'"
fi

# -r: the registry's tags, by skopeo, as drv-audit.sh takes them.
cat >skopeo <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >>skopeo.log
case ${FAKE_SKOPEO:-ok} in
ok) printf '{"Repository": "registry.example/nvidia/driver", "Tags": ["%s", "latest"]}\n' "$FAKE_TAG" ;;
401) echo 'time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"' >&2; exit 1 ;;
esac
STUB
chmod +x skopeo
SKOPEO=$PWD/skopeo
export SKOPEO
FAKE_TAG=$T0 t_run drv-states.sh -r registry.example/nvidia/driver
t_rc 1 "-r: the registry lists one of the three images"
t_out "every node, the two others MISSING" \
	"lab-node-0 - schedulable $T0 ok - -" "lab-node-1 - schedulable $T1 MISSING - image its driver image $T1 does not exist: its next driver pod cannot pull it; fix: build and push $T1 before the node restarts its driver" "lab-node-2 - schedulable $T2 MISSING - image its driver image $T2 does not exist: its next driver pod cannot pull it; fix: build and push $T2 before the node restarts its driver"
t_err "nothing on stderr"
FAKE_TAG=$T0 t_run drv-states.sh -r docker://registry.example/nvidia/driver -I
t_run cat skopeo.log
t_out "one list-tags each; -I: no TLS verification" \
	"--command-timeout=60s list-tags docker://registry.example/nvidia/driver" \
	"--command-timeout=60s list-tags --tls-verify=false docker://registry.example/nvidia/driver"
: >kubectl.log
FAKE_SKOPEO=401 t_run drv-states.sh -r registry.example/nvidia/driver
t_rc 2 "-r when the registry refuses"
t_out "prints nothing"
t_err "says skopeo's words" \
	"drv-states.sh: cannot list the tags of registry.example/nvidia/driver; skopeo said:" \
	'    time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"'
t_run cat kubectl.log
t_out "and asked the API server nothing"
t_run drv-states.sh -r registry.example/nvidia/driver -m "$M"
t_rc 2 "-r with -m"
t_grep "is one or the other" err "^drv-states.sh: -m names a matrix, -r a registry: one or the other$"
t_run drv-states.sh -I
t_rc 2 "-I without -r"
t_run drv-states.sh -r driver
t_rc 2 "-r with a name that is no repository"

# Option values: one line, not empty.
nl='
'
t_run drv-states.sh -m "$M$nl"
t_rc 2 "-m with a newline"
t_err "names it, shown on one line" "drv-states.sh: -m takes a file name without control characters, not '$M?'"
t_run drv-states.sh -m ''
t_rc 2 "-m ''"
t_err "names it" "drv-states.sh: -m takes a file name without control characters, not ''"
t_run drv-states.sh -r "registry.example/nvidia/driver${nl}x"
t_rc 2 "-r with a newline"
t_err "names it, shown on one line" "drv-states.sh: -r takes a repository (registry/path/name), not 'registry.example/nvidia/driver?x'"
t_run drv-states.sh -x
t_rc 2 "an unknown option"
t_err "names it, then the usage" "drv-states.sh: unknown option -x" "usage: drv-states.sh [-eRt] [-m matrix | -r repository [-I]] [-S | -o text|json]"
t_done
