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
cp "$BIN"/../lib/gpudrv/*.sh home/lib/gpudrv/
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

STANDIN_FAULT=down t_run "$A"
t_rc 2 "no API server"
t_out "prints nothing on stdout, never OK"
t_err "says kubectl failed and no audit was made" \
	"drv-audit.sh: cannot list the GPU nodes; kubectl said:" \
	"    The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" \
	"drv-audit.sh: no audit was made"
STANDIN_FAULT=forbidden t_run "$A"
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
STANDIN_FAULT=down t_run "$A" -p audit.prom
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

# -b: what if every GPU node ran another driver.
t_run "$A" -b 570
t_rc 1 "-b 570: a driver the lab matrix has no image of"
t_out "every node's image of that version is missing" \
	"lab-node-0 MISSING 570-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 MISSING 570-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 MISSING 570-6.8.0-45-generic-ubuntu24.04"
t_run "$A" -b 550
t_rc 1 "-b 550: lab-node-1 runs 535 now; its 550 image is missing"
t_out "only that one" "lab-node-1 MISSING 550-5.15.0-107-generic-ubuntu22.04"
t_run "$A" -b 550 -p x.prom
t_rc 2 "-b with -p (the textfile records the fleet as it is)"
t_run test -e x.prom
t_rc 1 "no textfile written"

# -t: the version the GPU Operator will deploy, asked of the cluster.
t_fake_ops
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json KUBECTL=$PWD/ops t_run "$A" -t
t_rc 1 "-t: the NVIDIADriver objects' versions"
t_out "lab-node-1 (535 now) needs the 550 image; lab-node-2 builds its driver on the node" \
	"lab-node-1 MISSING 550-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 SKIP not-precompiled:nvidiadriver/noble"
t_run cut -d" " -f4- ops.log
t_out "four GETs: the nodes, the ClusterPolicies, the GPUClusters, the NVIDIADrivers" \
	"/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue" \
	"/apis/nvidia.com/v1/clusterpolicies" "/apis/nvidia.com/v1alpha1/gpuclusters" \
	"/apis/nvidia.com/v1alpha1/nvidiadrivers"
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json KUBECTL=$PWD/ops t_run "$A" -t -m two.csv -p t.prom
t_rc 1 "-t with -p"
t_grep "the textfile counts the nodes that need no image" t.prom '^gpudrv_audit_skipped_nodes 1$'
FAKE_CP= FAKE_NVD= KUBECTL=$PWD/ops t_run "$A" -t
t_rc 2 "-t on a cluster without the GPU Operator's CRDs"
t_out "prints nothing on stdout, never OK"
t_grep "says the operator deploys nothing there" err "neither a ClusterPolicy nor a GPUCluster"
t_grep "and that no audit was made" err "^drv-audit.sh: the node list or the GPU Operator's objects could not be read; no audit was made$"
echo '{"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUClusterList", "items": [{"metadata": {"name": "gc"}}]}' >gc.json
FAKE_GC=$PWD/gc.json FAKE_NVD=$DATA/targets/nvd.json KUBECTL=$PWD/ops t_run "$A" -t
t_rc 1 "-t with a GPUCluster and NVIDIADrivers, no ClusterPolicy"
t_out "the NVIDIADrivers decide" \
	"lab-node-1 MISSING 550-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 SKIP not-precompiled:nvidiadriver/noble"
FAKE_CP=forbidden FAKE_NVD= KUBECTL=$PWD/ops t_run "$A" -t
t_rc 2 "-t when RBAC forbids reading ClusterPolicies"
t_out "prints nothing on stdout"
t_grep "says which list it could not read" err "^drv-audit.sh: cannot list the clusterpolicies; kubectl said:$"
t_run "$A" -t -b 550
t_rc 2 "-t with -b"
t_grep "is one or the other" err "^drv-audit.sh: -b names the version; -t asks the cluster for it: one or the other$"

# -r: the registry's tag list, by skopeo.
cat >skopeo <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >>skopeo.log
case ${FAKE_SKOPEO:-ok} in
ok) printf '{"Repository": "registry.example/nvidia/driver", "Tags": ["%s", "latest"]}\n' "$FAKE_TAG" ;;
401) echo 'time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"' >&2; exit 1 ;;
hang) sleep 100 ;;
esac
STUB
chmod +x skopeo
SKOPEO=$PWD/skopeo
export SKOPEO
FAKE_TAG=550-5.15.0-119-generic-ubuntu22.04 t_run "$A" -r registry.example/nvidia/driver
t_rc 1 "-r: the registry lists one of the three images"
t_out "the other two are missing" \
	"lab-node-1 MISSING 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04"
t_run cat skopeo.log
t_out "one skopeo list-tags, bounded by the request timeout" \
	"--command-timeout=60s list-tags docker://registry.example/nvidia/driver"
rm skopeo.log
FAKE_TAG=x t_run "$A" -r docker://registry.example/nvidia/driver -I
t_run cat skopeo.log
t_out "-I: no TLS verification; a docker:// prefix taken as given" \
	"--command-timeout=60s list-tags --tls-verify=false docker://registry.example/nvidia/driver"
FAKE_SKOPEO=401 t_run "$A" -r registry.example/nvidia/driver -p r.prom
t_rc 2 "-r when the registry refuses"
t_out "prints nothing on stdout, never OK"
t_err "says skopeo's words and that no audit was made" \
	"drv-audit.sh: cannot list the tags of registry.example/nvidia/driver; skopeo said:" \
	'    time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"' \
	"drv-audit.sh: no audit was made"
t_grep "the textfile records the failure" r.prom '^gpudrv_audit_exit_status 2$'
FAKE_SKOPEO=hang GPUDRV_TIMEOUT=2 t_run "$A" -r registry.example/nvidia/driver
t_rc 2 "-r when the registry never answers"
t_grep "the run's deadline stops it and names the registry" err "no answer to 'skopeo list-tags docker://registry.example/nvidia/driver'; is the registry hanging?"
t_run "$A" -r driver
t_rc 2 "-r with a name that is no repository"
t_err "says what -r takes" "drv-audit.sh: -r driver: not a repository (registry/path/name, e.g. registry.example/nvidia/driver)"
t_run "$A" -I
t_rc 2 "-I without -r"
t_run "$A" -r registry.example/nvidia/driver -m two.csv
t_rc 2 "-r with -m"
t_grep "is one or the other" err "^drv-audit.sh: -m names a matrix, -r a registry: one or the other$"

# Each option's value is one line of printable text (a file name: no
# control character), not empty; else exit 2 naming it, before any request.
# A selector with a newline once became another selector (a=bc!=d), and an
# empty -p no textfile at all.
nl='
'
tab='	'
: >kubectl.log
: >skopeo.log
while IFS='|' read -r opt val shown what; do
	case $opt in -l) set -- -k 6.8.0-52-generic ;; *) set -- ;; esac
	case $val in
	*NL*) val="${val%%NL*}$nl${val#*NL}" ;;
	*TAB*) val="${val%%TAB*}$tab${val#*TAB}" ;;
	esac
	t_run "$A" "$@" "$opt" "$val"
	t_rc 2 "$opt '$shown'"
	t_out "$opt '$shown': nothing on stdout"
	t_err "$opt '$shown': names it, shown on one line" "drv-audit.sh: $opt takes $what, not '$shown'"
done <<'EOF'
-l|a=bNLc!=d|a=b?c!=d|a label selector
-l|||a label selector
-l|a=bTABc|a=b?c|a label selector
-k|6.8.0-52-genericNLx|6.8.0-52-generic?x|a kernel version (uname -r)
-k|||a kernel version (uname -r)
-b|570NL|570?|a driver version (570, 570.86.10)
-b|||a driver version (570, 570.86.10)
-r|registry.example/nvidia/driverNLx|registry.example/nvidia/driver?x|a repository (registry/path/name)
-r|||a repository (registry/path/name)
-m|two.csvNL|two.csv?|a file name without control characters
-m|||a file name without control characters
-p|audit.promNLx|audit.prom?x|a file name without control characters
-p|||a file name without control characters
EOF
t_run cat kubectl.log skopeo.log
t_out "neither kubectl nor skopeo was run"
GPUDRV_MATRIX="two.csv$nl" t_run "$A"
t_rc 2 "GPUDRV_MATRIX with a newline"
t_err "names it" "drv-audit.sh: GPUDRV_MATRIX takes a file name without control characters, not 'two.csv?'"

t_run "$A" -x
t_rc 2 "an unknown option"
t_err "names it, then the usage" "drv-audit.sh: unknown option -x" "usage: drv-audit.sh [-e] [-m matrix | -r repository [-I]] [-p promfile] [-P url [-c cluster]] [-b version | -t] [-k kernel [-l selector]]" \
	"       drv-audit.sh -o images|skopeo-sync [-eI] [-r repository] [-b version | -t] [-k kernel [-l selector]]"
t_done
