#!/bin/sh
# drv-audit.sh: one list call, the tag logic reused, and never OK unseen.
# (t/09xx-e2e-*.t run it against the sandbox's real API server.)
. "$(dirname "$0")/lib.sh"

t_fake_kubectl
FAKE_OUT=$DATA/lab-nodes.json
export FAKE_OUT
# An installed copy, laid out as make install does.
mkdir -p home/bin home/lib/gpudrv
cp "$BIN/drv-audit.sh" "$BIN/labels2tag" "$BIN/matrix-grep" home/bin/
cp "$BIN/../lib/gpudrv/gpudrv-lib.sh" home/lib/gpudrv/
A=$PWD/home/bin/drv-audit.sh

if [ -e /etc/gpudrv/support-matrix.csv ]; then
	t_skip "the default matrix: this machine has /etc/gpudrv/support-matrix.csv"
else
	t_run "$A"
	t_rc 2 "the default matrix is /etc/gpudrv/support-matrix.csv"
	t_out "prints nothing on stdout"
	t_grep "and names it" err "cannot read the matrix /etc/gpudrv/support-matrix.csv (-m or GPUDRV_MATRIX names another)"
fi
GPUDRV_MATRIX=$ROOT/lab/support-matrix.csv
export GPUDRV_MATRIX

t_run dash "$A"
t_rc 0 "the lab nodes against the lab matrix, under dash"
t_out "prints one line OK" OK
t_err "nothing on stderr"
t_run cat kubectl.log
t_out "one list call for all GPU nodes" "--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"

printf '%s\n' driver_branch,kernel,os_tag 550,5.15.0-119-generic,ubuntu22.04 >two.csv
t_run "$A" -m two.csv
t_rc 1 "-m with a matrix that lacks two images"
t_out "names each node whose image is missing" \
	"lab-node-1 MISSING 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04"
GPUDRV_MATRIX=$PWD/two.csv t_run "$A"
t_rc 1 "GPUDRV_MATRIX names the matrix too"

FAKE_OUT=$DATA/bad-nodes.json t_run "$A"
t_rc 2 "GPU nodes whose labels are broken"
t_grep "each is named UNKNOWN on stdout" out '^no-major UNKNOWN missing:nvidia.com/cuda.driver.major$'
t_grep "with its reason on stderr" err '^labels2tag: node empty-kernel: label feature.node.kubernetes.io/kernel-version.full is present but empty'
cp out audit.out
t_run grep -c -e ' UNKNOWN ' -e ' MISSING ' -e '^OK$' audit.out
t_out "six UNKNOWN lines, no OK" 6

FAKE_KUBECTL=down t_run "$A"
t_rc 2 "no API server"
t_out "prints nothing on stdout, never OK"
t_err "says kubectl failed and no audit was made" \
	"drv-audit.sh: cannot list the GPU nodes; kubectl said:" \
	"    The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" \
	"drv-audit.sh: no audit was made"
FAKE_KUBECTL=forbidden t_run "$A"
t_rc 2 "RBAC forbids listing nodes"
t_out "prints nothing on stdout"

printf '{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}\n' >none.json
FAKE_OUT=$PWD/none.json t_run "$A"
t_rc 2 "no GPU node at all"
t_out "is NONE, not OK" NONE
FAKE_OUT=$PWD/none.json t_run "$A" -e
t_rc 0 "-e: no GPU node is acceptable"

head -c 5000 "$DATA/lab-nodes.json" >cut.json
FAKE_OUT=$PWD/cut.json t_run "$A"
t_rc 2 "kubectl output cut short"
t_out "prints nothing on stdout"
t_grep "says the list could not be read" err "no audit was made"

t_run "$A" -m nosuch.csv
t_rc 2 "a missing matrix"
t_out "prints nothing on stdout"

# Planning a kernel change reads the cluster, writes nothing.
: >kubectl.log
t_run "$A" -k 6.8.0-52-generic
t_rc 1 "-k: which images a kernel change needs"
t_out "every node's new tag not in the matrix" \
	"lab-node-0 MISSING 550-6.8.0-52-generic-ubuntu22.04" \
	"lab-node-1 MISSING 535-6.8.0-52-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-52-generic-ubuntu24.04"
t_run "$A" -k 6.8.0-52-generic -l kubernetes.io/hostname=lab-node-2
t_run cat kubectl.log
t_out "-l narrows the one list call" \
	"--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue" \
	"--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue%2Ckubernetes.io%2Fhostname%3Dlab-node-2"
t_run "$A" -l a=b
t_rc 2 "-l without -k"

# The Prometheus textfile.
t_run "$A" -m two.csv -p audit.prom
t_rc 1 "-p with missing images"
t_grep "a gauge per missing node and tag" audit.prom \
	'^gpudrv_audit_missing{node="lab-node-2",tag="550-6.8.0-45-generic-ubuntu24.04"} 1$'
t_grep "the count" audit.prom '^gpudrv_audit_missing_nodes 2$'
t_grep "the GPU nodes seen" audit.prom '^gpudrv_audit_gpu_nodes 3$'
t_grep "the exit status" audit.prom '^gpudrv_audit_exit_status 1$'
t_grep "the last success" audit.prom '^gpudrv_audit_last_success_timestamp_seconds [0-9][0-9]*$'
sed -i 's/^gpudrv_audit_last_success_timestamp_seconds .*/gpudrv_audit_last_success_timestamp_seconds 1700000000/' audit.prom
FAKE_KUBECTL=down t_run "$A" -p audit.prom
t_rc 2 "-p when the API is down"
t_grep "records exit status 2" audit.prom '^gpudrv_audit_exit_status 2$'
t_grep "keeps the time of the last success" audit.prom '^gpudrv_audit_last_success_timestamp_seconds 1700000000$'
t_run grep -c '^gpudrv_audit_missing' audit.prom
t_out "and claims no fleet figures" 0
t_run ls -a
t_grep "leaves no temporary file beside it" out '^audit.prom$'
t_run sh -c 'ls -a | grep -c prom'
t_out "only the textfile itself" 1
if command -v promtool >/dev/null 2>&1; then
	t_run promtool check metrics <audit.prom
	t_rc 0 "promtool accepts it"
else
	t_skip "promtool check metrics: no promtool on this machine"
fi

t_run "$A" -x
t_rc 2 "an unknown option"
t_err "prints the usage" "usage: drv-audit.sh [-e] [-m matrix] [-p promfile] [-k kernel [-l selector]]"
t_done
