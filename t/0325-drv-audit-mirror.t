#!/bin/sh
# drv-audit.sh -o: the images the GPU nodes need, for an air-gapped mirror:
# every reference once, sorted, nothing else on stdout (-o images), or the
# file skopeo sync --src yaml reads (-o skopeo-sync).  The repository is the
# GPU Operator's objects' (-t) or -r's, never guessed; the list is whole or
# not printed at all (exit 2), be it a list the API did not give whole or a
# node whose image cannot be named.  5,000 generated nodes too.
# (t/0975-e2e-mirror.t mirrors a registry with it, with skopeo.)
. "$(dirname "$0")/lib.sh"

t_fake_ops
KUBECTL=$PWD/ops
FAKE_OUT=$DATA/lab-nodes.json
export KUBECTL FAKE_OUT
R=registry.example/nvidia/driver
K0=550-5.15.0-119-generic-ubuntu22.04
K1=535-5.15.0-107-generic-ubuntu22.04
K2=550-6.8.0-45-generic-ubuntu24.04

t_run dash "$BIN/drv-audit.sh" -o images -r "$R"
t_rc 0 "-o images -r, under dash"
t_out "one full reference a line, sorted, nothing else" "$R:$K1" "$R:$K0" "$R:$K2"
t_err "nothing on stderr"
t_run cut -d' ' -f4- ops.log
t_out "one request: the GPU nodes (no matrix, no registry read)" \
	"/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"
t_run drv-audit.sh -o images -r "docker://$R"
t_out "a docker:// prefix taken as for the audit" "$R:$K1" "$R:$K0" "$R:$K2"
t_run drv-audit.sh -o images -r registry.example:5000/nvidia/driver
t_out "a registry with a port" "registry.example:5000/nvidia/driver:$K1" \
	"registry.example:5000/nvidia/driver:$K0" "registry.example:5000/nvidia/driver:$K2"
t_run drv-audit.sh -o images -b 570 -r "$R"
t_rc 0 "-o images -b 570"
t_out "what a move to 570 needs, each image once" \
	"$R:570-5.15.0-107-generic-ubuntu22.04" "$R:570-5.15.0-119-generic-ubuntu22.04" "$R:570-6.8.0-45-generic-ubuntu24.04"
t_run drv-audit.sh -o images -b 570 -k 6.8.0-52-generic -r "$R"
t_out "-k: the three nodes on one kernel need two images" \
	"$R:570-6.8.0-52-generic-ubuntu22.04" "$R:570-6.8.0-52-generic-ubuntu24.04"
: >ops.log
t_run drv-audit.sh -o images -k 6.8.0-52-generic -l kubernetes.io/hostname=lab-node-2 -r "$R"
t_rc 0 "-k -l"
t_run cut -d' ' -f4- ops.log
t_out "-l narrows the one list call" \
	"/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue%2Ckubernetes.io%2Fhostname%3Dlab-node-2"

# skopeo sync --src yaml: registry: images: {path: [tags]}.
t_run drv-audit.sh -o skopeo-sync -r "$R"
t_rc 0 "-o skopeo-sync -r"
t_out "skopeo sync's YAML: the registry, its images, each path's tags" \
	'"registry.example":' '  images:' '    "nvidia/driver":' \
	"      - \"$K1\"" "      - \"$K0\"" "      - \"$K2\""
t_run drv-audit.sh -o skopeo-sync -I -r "$R"
t_rc 0 "-o skopeo-sync -I"
t_out "-I: tls-verify: false for the registry" \
	'"registry.example":' '  tls-verify: false' '  images:' '    "nvidia/driver":' \
	"      - \"$K1\"" "      - \"$K0\"" "      - \"$K2\""
cp out sync.yaml
# shellcheck disable=SC2016 # a Python program
t_run python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1])), sort_keys=True))' sync.yaml
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
	t_out "a YAML parser reads what skopeo reads" \
		"{\"registry.example\": {\"images\": {\"nvidia/driver\": [\"$K1\", \"$K0\", \"$K2\"]}, \"tls-verify\": false}}"
else
	t_skip "python3 yaml: not on this machine (t/0975 has skopeo read it)"
fi

# -t: the repository the GPU Operator's objects name, node by node.
cat >cp-jammy.json <<'EOF'
{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "cp"},
 "spec": {"driver": {"useNvidiaDriverCRD": true}}}]}
EOF
cat >nvd.json <<'EOF'
{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriverList", "items": [
 {"metadata": {"name": "jammy"}, "spec": {"default": true, "usePrecompiled": true,
  "repository": "registry.example/nvidia", "image": "driver", "version": "550"}},
 {"metadata": {"name": "noble"}, "spec": {"usePrecompiled": true, "image": "registry.example:5000/gpu/driver:570.86.10",
  "nodeSelector": {"feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04"}}}]}
EOF
FAKE_CP=$PWD/cp-jammy.json FAKE_NVD=$PWD/nvd.json t_run drv-audit.sh -o images -t
t_rc 0 "-o images -t: two NVIDIADrivers, two registries"
t_out "each node's image where its owner says" \
	"registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04" \
	"registry.example/nvidia/driver:550-5.15.0-119-generic-ubuntu22.04" \
	"registry.example:5000/gpu/driver:570.86.10-6.8.0-45-generic-ubuntu24.04"
t_run cut -d' ' -f4- ops.log
t_grep "the operator's objects read" out "^/apis/nvidia.com/v1alpha1/nvidiadrivers$"
FAKE_CP=$PWD/cp-jammy.json FAKE_NVD=$PWD/nvd.json t_run drv-audit.sh -o skopeo-sync -t -I
t_rc 0 "-o skopeo-sync -t -I (no -r)"
t_out "one entry a registry, registries and paths sorted" \
	'"registry.example":' '  tls-verify: false' '  images:' '    "nvidia/driver":' \
	'      - "550-5.15.0-107-generic-ubuntu22.04"' '      - "550-5.15.0-119-generic-ubuntu22.04"' \
	'"registry.example:5000":' '  tls-verify: false' '  images:' '    "gpu/driver":' \
	'      - "570.86.10-6.8.0-45-generic-ubuntu24.04"'
FAKE_CP=$PWD/cp-jammy.json FAKE_NVD=$PWD/nvd.json t_run drv-audit.sh -o images -t -r "$R"
t_rc 0 "-o images -t -r: the operator's versions, the images in -r"
t_out "-r names every image's repository" \
	"$R:550-5.15.0-107-generic-ubuntu22.04" "$R:550-5.15.0-119-generic-ubuntu22.04" \
	"$R:570.86.10-6.8.0-45-generic-ubuntu24.04"

# A node that needs no precompiled image is said, and not listed.
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json t_run drv-audit.sh -o images -t -r "$R"
t_rc 0 "-o -t: a node whose driver is built on the node"
t_out "the others' images" "$R:550-5.15.0-107-generic-ubuntu22.04" "$R:550-5.15.0-119-generic-ubuntu22.04"
t_err "that node said on stderr" \
	"drv-audit.sh: lab-node-2 needs no precompiled image (not-precompiled:nvidiadriver/noble): not listed"

# A node whose image cannot be named: no list at all.
FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json t_run drv-audit.sh -o images -t
t_rc 2 "-o -t: an NVIDIADriver that names no repository"
t_out "no list, not the rest of one"
t_err "each node named with the object, then why there is no list" \
	"labels2tag: node lab-node-0: nvidiadriver/all names no repository of its image (repository, image and version, or image with its tag): the GPU Operator cannot name the image either; -R names one" \
	"labels2tag: node lab-node-1: nvidiadriver/all names no repository of its image (repository, image and version, or image with its tag): the GPU Operator cannot name the image either; -R names one" \
	"drv-audit.sh: 2 GPU nodes have no image reference (named above): no list was printed, since one without their images would pass for the whole fleet's"
FAKE_OUT=$DATA/bad-nodes.json t_run drv-audit.sh -o skopeo-sync -r "$R"
t_rc 2 "-o: GPU nodes whose labels give no tag"
t_out "no list, not even an empty one"
t_grep "each node named with its label" err '^labels2tag: node no-major: label nvidia.com/cuda.driver.major is missing'
t_grep "and why there is no list" err "^drv-audit.sh: 6 GPU nodes have no image reference (named above): no list was printed"
# One bad node among good ones.
sed 's/"feature.node.kubernetes.io\/kernel-version.full": "6.8.0-45-generic"/"feature.node.kubernetes.io\/kernel-version.full": ""/' \
	"$DATA/lab-nodes.json" >one-bad.json
FAKE_OUT=$PWD/one-bad.json t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: one node of three has an empty kernel label"
t_out "nothing on stdout: the two good images are not a list of the fleet's"
t_err "the node, its label, and why" \
	"labels2tag: node lab-node-2: label feature.node.kubernetes.io/kernel-version.full is present but empty (node-feature-discovery sets it: is it running there?)" \
	"drv-audit.sh: 1 GPU node has no image reference (named above): no list was printed, since one without their images would pass for the whole fleet's"
FAKE_OUT=$PWD/one-bad.json t_run drv-audit.sh -o images -r "$R" -k 6.8.0-52-generic
t_rc 0 "with -k, that node's kernel label is not read"
t_out "the list" "$R:535-6.8.0-52-generic-ubuntu22.04" "$R:550-6.8.0-52-generic-ubuntu22.04" "$R:550-6.8.0-52-generic-ubuntu24.04"
# A ClusterPolicy over two OS tags: the operator pulls one node's for all.
printf '%s\n' '{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "cp"},' \
	' "spec": {"driver": {"usePrecompiled": true, "repository": "registry.example/nvidia", "image": "driver", "version": "550"}}}]}' >cp.json
FAKE_CP=$PWD/cp.json FAKE_NVD= t_run drv-audit.sh -o images -t
t_rc 2 "-o -t: a ClusterPolicy over nodes of two OS tags"
t_out "no list"
t_grep "labels2tag says why" err "more than one OS tag (ubuntu22.04, ubuntu24.04)"
t_grep "and there is no list" err "^drv-audit.sh: the images of the GPU nodes cannot all be named (see above): no list was printed$"
sed 's/"24.04"/"22.04"/; s/"6.8.0-45-generic"/"5.15.0-119-generic"/' "$DATA/lab-nodes.json" >jammy.json
FAKE_OUT=$PWD/jammy.json FAKE_CP=$PWD/cp.json FAKE_NVD= t_run drv-audit.sh -o images -t
t_rc 0 "-o -t: that ClusterPolicy over nodes of one OS tag"
t_out "its repository, image and version" \
	"registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04" "registry.example/nvidia/driver:550-5.15.0-119-generic-ubuntu22.04"

# Lists the API did not give whole: exit 2, nothing on stdout.
t_fake_kubectl
STANDIN_FAULT=down t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: no API server"
t_out "nothing on stdout"
t_err "kubectl's words, and no list" \
	"drv-audit.sh: cannot list the GPU nodes; kubectl said:" \
	"    The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" \
	"drv-audit.sh: no list was printed"
STANDIN_FAULT=forbidden t_run drv-audit.sh -o skopeo-sync -r "$R"
t_rc 2 "-o: RBAC forbids the list"
t_out "nothing on stdout"
head -c 5000 "$DATA/lab-nodes.json" >cut.json
FAKE_OUT=$PWD/cut.json t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: the node list cut short"
t_out "nothing on stdout, not the nodes before the cut"
t_grep "says the list could not be read" err "^drv-audit.sh: the node list could not be read; no list was printed$"
echo '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}' >status.json
FAKE_OUT=$PWD/status.json t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: a Status where the nodes were asked for"
t_out "nothing on stdout"
t_grep "named as a Status" err "Status"
printf '{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[]}\n' >none.json
FAKE_OUT=$PWD/none.json t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: no GPU node at all"
t_out "nothing on stdout"
t_err "says so" "drv-audit.sh: no GPU node (labelled nvidia.com/gpu.present=true): nothing to list (-e accepts that)"
FAKE_OUT=$PWD/none.json t_run drv-audit.sh -o images -e -r "$R"
t_rc 0 "-o images -e: no GPU node is accepted"
t_out "an empty list"
FAKE_OUT=$PWD/none.json t_run drv-audit.sh -o skopeo-sync -e -r "$R"
t_rc 0 "-o skopeo-sync -e"
t_out "an empty mapping, which skopeo syncs as nothing" "{}"
t_run sh -c 'drv-audit.sh -o images -r "$1" >/dev/full' sh "$R"
t_rc 2 "-o >/dev/full"
t_err "says it cannot write its output" "drv-audit.sh: cannot write to standard output: No space left on device"
# The GPU Operator's objects not read whole (t/0320 has every fault in each GET).
t_fake_ops
KUBECTL=$PWD/ops
: >empty.json
FAKE_CP=$PWD/cp-jammy.json FAKE_NVD=$PWD/empty.json t_run drv-audit.sh -o images -t
t_rc 2 "-o -t: the NVIDIADrivers' GET answers an empty body"
t_out "nothing on stdout"
t_err "names the request, and no list" \
	"drv-audit.sh: GET /apis/nvidia.com/v1alpha1/nvidiadrivers answered exit 0 with an empty body: not the NVIDIADriverList asked for, so nothing is known of the nvidiadrivers" \
	"drv-audit.sh: no list was printed"
FAKE_CP=forbidden t_run drv-audit.sh -o images -t
t_rc 2 "-o -t: RBAC forbids the ClusterPolicies"
t_out "nothing on stdout"
t_grep "says which list" err "^drv-audit.sh: cannot list the clusterpolicies; kubectl said:$"
FAKE_CP= FAKE_NVD= t_run drv-audit.sh -o images -t
t_rc 2 "-o -t: no GPU Operator CRDs"
t_out "nothing on stdout"
t_grep "the operator deploys nothing" err "neither a ClusterPolicy nor a GPUCluster"
t_grep "and no list" err "^drv-audit.sh: the node list or the GPU Operator's objects could not be read; no list was printed$"

# The deadline: an API server that never answers.
cat >hang <<'EOF'
#!/bin/sh
echo "$$" >>hang.pids
sleep 60 &
echo "$!" >>hang.pids
wait
EOF
chmod +x hang
KUBECTL=$PWD/hang GPUDRV_TIMEOUT=2 t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o: kubectl hangs past GPUDRV_TIMEOUT"
t_out "nothing on stdout"
t_grep "gives up, saying so" err "gave up after [0-9]*s, the run's deadline (GPUDRV_TIMEOUT=2)"
t_none_alive "kubectl stopped, and what it started" hang.pids

# Usage: what -o goes with; each refused before any request.
: >ops.log
while IFS='|' read -r args said; do
	# shellcheck disable=SC2086 # the arguments, split on purpose
	t_run drv-audit.sh $args
	t_rc 2 "$args"
	t_out "$args: nothing on stdout"
	t_grep "$args: says why" err "$said"
done <<'EOF'
-o images|^drv-audit.sh: -o must name each image's repository: -t (the one the GPU Operator's objects name) or -r repository$
-o images -b 570|^drv-audit.sh: -o must name each image's repository
-o yaml -r registry.example/nvidia/driver|^drv-audit.sh: -o takes images (one reference a line) or skopeo-sync (skopeo sync --src yaml's file), not 'yaml'$
-o images -r registry.example/nvidia/driver -m x.csv|^drv-audit.sh: -o lists the images the GPU nodes need: it reads no matrix (-m) and records no audit (-p, -P)$
-o images -r registry.example/nvidia/driver -p x.prom|records no audit
-o images -r registry.example/nvidia/driver -P http://127.0.0.1:1|records no audit
-o images -I -r registry.example/nvidia/driver|^drv-audit.sh: -I with -o goes with skopeo-sync (its tls-verify: false); for -o images, give skopeo its own --src-tls-verify=false$
-o images -t -b 570|one or the other
-o images -r driver|^drv-audit.sh: -r driver: not a repository (registry/path/name, e.g. registry.example/nvidia/driver)$
-o images -r registry.example/nvidia/driver:550|^labels2tag: -R "registry.example/nvidia/driver:550": not a repository: it holds a tag
-o images -r registry.example/NVIDIA/driver|^drv-audit.sh: -r registry.example/NVIDIA/driver: not a repository the images can be listed in; nothing was asked of the cluster$
-o images -r nvidia/driver|^labels2tag: -R "nvidia/driver": not a repository: it names no registry
EOF
t_run cat ops.log
t_out "kubectl was never run"
t_run drv-audit.sh -o images -r "$R" -x
t_rc 2 "an unknown option"
t_err "names it, then the usage, both forms" \
	"drv-audit.sh: unknown option -x" \
	"usage: drv-audit.sh [-e] [-m matrix | -r repository [-I]] [-p promfile] [-P url [-c cluster]] [-b version | -t] [-k kernel [-l selector]]" \
	"       drv-audit.sh -o images|skopeo-sync [-eI] [-r repository] [-b version | -t] [-k kernel [-l selector]]"
t_run drv-audit.sh -o 'images
x' -r "$R"
t_rc 2 "-o with a newline"
t_err "names it, shown on one line" "drv-audit.sh: -o takes images or skopeo-sync, not 'images?x'"

# 5,000 generated nodes (gen/, as GET --raw answers them):
# node i runs branch 535, 550, 570 (i mod 3) on the kernel and OS i mod 5
# names: 15 images.  The expected lists come from that layout, not from
# the tools under test.
t_gen
N=5000
"$GEN" -r "$N" >big.json
"$GEN" -r -B 7 "$N" >big-b7.json
# expect N BRANCH KERNEL: the sorted references of gen's first N nodes.
expect() {
	awk -v n="$1" -v b="$2" -v k="$3" -v r="$R" 'BEGIN {
		split("535 550 570", maj, " ")
		split("5.15.0-119-generic 5.15.0-107-generic 6.8.0-45-generic 6.8.0-49-generic 5.14.0-427.13.1.el9_4.x86_64", ker, " ")
		split("ubuntu22.04 ubuntu22.04 ubuntu24.04 ubuntu24.04 rhel9", os, " ")
		for (i = 0; i < n; i++)
			print r ":" (b != "" ? b : maj[i % 3 + 1]) "-" (k != "" ? k : ker[i % 5 + 1]) "-" os[i % 5 + 1]
	}' | LC_ALL=C sort -u
}
t_fake_kubectl
FAKE_OUT=$PWD/big.json
export FAKE_OUT
expect "$N" >want
t_run drv-audit.sh -o images -r "$R"
t_rc 0 "-o images, $N nodes"
t_cmp "the 15 images of the layout, each once" want out
t_run wc -l <want
t_val "(15)" 15
expect "$N" 570.86.10 >want
t_run drv-audit.sh -o images -b 570.86.10 -r "$R"
t_cmp "-b 570.86.10, $N nodes: 5 images" want out
expect "$N" "" 6.8.0-52-generic >want
t_run drv-audit.sh -o images -k 6.8.0-52-generic -r "$R"
t_cmp "-k 6.8.0-52-generic, $N nodes: 9 images" want out
t_run drv-audit.sh -o skopeo-sync -r "$R"
t_rc 0 "-o skopeo-sync, $N nodes"
t_run sh -c 'drv-audit.sh -o skopeo-sync -r "$1" | grep -c "^      - "' sh "$R"
t_val "15 tags" 15
t_run sh -c 'drv-audit.sh -o skopeo-sync -r "$1" | sed -n 1,3p' sh "$R"
t_out "under one registry and one path" '"registry.example":' '  images:' '    "nvidia/driver":'
# -t over the same nodes: RHEL's its own NVIDIADriver and registry.
cat >big-cp.json <<'EOF'
{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "cp"},
 "spec": {"driver": {"useNvidiaDriverCRD": true}}}]}
EOF
cat >big-nvd.json <<'EOF'
{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriverList", "items": [
 {"metadata": {"name": "all"}, "spec": {"default": true, "usePrecompiled": true,
  "repository": "registry.example/nvidia", "image": "driver", "version": "550"}},
 {"metadata": {"name": "el"}, "spec": {"usePrecompiled": true, "image": "registry.example/el/driver:570.86.10",
  "nodeSelector": {"feature.node.kubernetes.io/system-os_release.ID": "rhel"}}}]}
EOF
t_fake_ops
KUBECTL=$PWD/ops FAKE_CP=$PWD/big-cp.json FAKE_NVD=$PWD/big-nvd.json t_run drv-audit.sh -o images -t
t_rc 0 "-o images -t, $N nodes"
t_out "the default's four Ubuntu images, the el one's RHEL image" \
	"registry.example/el/driver:570.86.10-5.14.0-427.13.1.el9_4.x86_64-rhel9" \
	"$R:550-5.15.0-107-generic-ubuntu22.04" "$R:550-5.15.0-119-generic-ubuntu22.04" \
	"$R:550-6.8.0-45-generic-ubuntu24.04" "$R:550-6.8.0-49-generic-ubuntu24.04"
# Every 7th node without its driver label: no list without -b or -t.
t_fake_kubectl
FAKE_OUT=$PWD/big-b7.json t_run drv-audit.sh -o images -r "$R"
t_rc 2 "-o images, $N nodes, every 7th without its driver label"
t_out "no list"
t_grep "names how many" err "^drv-audit.sh: $((N / 7)) GPU nodes have no image reference (named above): no list was printed"
cp err b7.err
t_run grep -c "^labels2tag: node .*: label nvidia.com/cuda.driver.major is missing" b7.err
t_val "and each of them" $((N / 7))
expect "$N" 570 >want
FAKE_OUT=$PWD/big-b7.json t_run drv-audit.sh -o images -b 570 -r "$R"
t_rc 0 "-b 570: those nodes need the 570 images as the others do"
t_cmp "the 5 images" want out
t_done
