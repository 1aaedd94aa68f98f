#!/bin/sh
# The tag the GPU Operator will pull: its OS tag rule by release, a driver
# part that is a branch or a version, and the version its ClusterPolicy and
# NVIDIADriver objects name for each node (labels2tag -t; matrix-grep SKIP).
. "$(dirname "$0")/lib.sh"

# node NAME ID VERSION_ID [MAJOR] [MORE]: one Node, as kubectl prints it;
# MAJOR "-" leaves out the driver label; MORE is extra label members.
node() {
	n_major=
	[ "${4:-550}" = - ] || n_major="\"nvidia.com/cuda.driver.major\": \"${4:-550}\","
	cat <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$1", "labels": {
  $n_major ${5:-}
  "nvidia.com/gpu.present": "true",
  "feature.node.kubernetes.io/kernel-version.full": "5.14.0-427.13.1.el9_4.x86_64",
  "feature.node.kubernetes.io/system-os_release.ID": "$2",
  "feature.node.kubernetes.io/system-os_release.VERSION_ID": "$3"}}}
EOF
}
# list FILE: the nodes of ./nodes.txt ("name id version" lines) as a NodeList.
list() {
	{
		echo '{"apiVersion": "v1", "kind": "NodeList", "items": ['
		sep=
		while read -r n_name n_id n_ver; do
			printf '%s' "$sep"
			node "$n_name" "$n_id" "$n_ver"
			sep=,
		done <nodes.txt
		echo ']}'
	} >"$1"
}

# The OS tag of every family, by each rule (GPU Operator internal/state
# getOSTag at v26.7.0 and v26.3.3; controllers/object_controls.go at v25.10.1).
#     name      ID        VERSION_ID  26.7 (today)     26.3           25.10
cat >rules.txt <<'EOF'
ubuntu20  ubuntu    20.04      ubuntu20.04      ubuntu20.04     ubuntu20.04
ubuntu22  ubuntu    22.04      ubuntu22.04      ubuntu22.04     ubuntu22.04
ubuntu24  ubuntu    24.04      ubuntu24.04      ubuntu24.04     ubuntu24.04
rhel8     rhel      8.10       rhel8            rhel8.10        rhel8.10
rhel9     rhel      9.4        rhel9            rhel9.4         rhel9.4
rhel10    rhel      10.1       rhel10           rhel10          rhel10.1
rhel9bare rhel      9          rhel9            rhel9           rhel9
rocky9    rocky     9.4        rocky9           rocky9          rocky9.4
rocky8    rocky     8.10       rocky8           rocky8          rocky8.10
ol9       ol        9.4        ol9              ol9.4           ol9.4
ol8       ol        8.10       ol8              ol8.10          ol8.10
rhcos414  rhcos     4.14       rhcos4.14        rhcos4.14       rhcos4.14
rhcos416  rhcos     4.16       rhcos4.16        rhcos4.16       rhcos4.16
sles      sles      15-SP6     sles15-SP6       sles15-SP6      sles15-SP6
slmicro   sl-micro  6.1        sl-micro6.1      sl-micro6.1     sl-micro6.1
debian    debian    12         debian12         debian12        debian12
talos     talos     v1.12.6    talosv1.12.6     talosv1.12.6    talosv1.12.6
arch      archlinux rolling    archlinuxrolling archlinuxrolling archlinuxrolling
EOF
awk '{ print $1, $2, $3 }' rules.txt >nodes.txt
list fleet.json
K=5.14.0-427.13.1.el9_4.x86_64
for r in 26.7:4 v26.3:5 25.10:6; do
	awk -v c="${r#*:}" -v k="$K" '{ print $1 " 550-" k "-" $c }' rules.txt >want
	GPUDRV_TAG_RULE=${r%:*} t_run labels2tag fleet.json
	t_rc 0 "GPUDRV_TAG_RULE=${r%:*}: 18 OS families"
	t_cmp "GPUDRV_TAG_RULE=${r%:*}: each node's tag as that operator release builds it" want out
done
t_run labels2tag fleet.json
awk -v k="$K" '{ print $1 " 550-" k "-" $4 }' rules.txt >want
t_cmp "unset: today's rule (v26.7.0): rhel, rocky and ol keep the major version only" want out
GPUDRV_TAG_RULE= t_run labels2tag fleet.json
t_cmp "empty: today's rule too" want out

GPUDRV_TAG_RULE=26.5 t_run labels2tag fleet.json
t_rc 2 "a rule that names no operator release"
t_out "prints nothing"
t_err "names the variable and the rules there are" \
	'labels2tag: GPUDRV_TAG_RULE="26.5": not a tag rule (26.7, today'"'"'s; 26.3; or 25.10)'

node el rhel 9x.4 >el.json
t_run labels2tag el.json
t_rc 2 "a RHEL VERSION_ID without a numeric major version"
t_err "is refused, not cut at a guess" \
	'labels2tag: node el: label feature.node.kubernetes.io/system-os_release.VERSION_ID value "9x.4" has no numeric major version'
GPUDRV_TAG_RULE=25.10 t_run labels2tag el.json
t_rc 0 "the 25.10 rule takes that VERSION_ID whole"
t_out "as the operator then did" "550-$K-rhel9x.4"

# The driver part: a branch or a version, as spec.version may be written.
node v rhel 9.4 >v.json
for b in 535.104.05 570.86.10 470.57.02 550; do
	t_run labels2tag -b "$b" v.json
	t_out "-b $b: the tag begins with it as written" "$b-$K-rhel9"
done
for b in 535.104. .550 535..104 r550 550-1 '550 '; do
	t_run labels2tag -b "$b" v.json
	t_rc 2 "-b '$b' is neither a branch nor a version"
done
t_err "said as such" "labels2tag: -b \"550 \": is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)"
node new ubuntu 22.04 - >new.json
t_run labels2tag new.json
t_rc 2 "a node that has no driver yet, without -b"
t_err "names the label gpu-feature-discovery has not set" \
	"labels2tag: node new: label nvidia.com/cuda.driver.major is missing (gpu-feature-discovery sets it: is it running there?)"
t_run labels2tag -b 570 new.json
t_rc 0 "with -b, a node with no driver label still gets its tag"
t_out "the tag of the version named" "570-$K-ubuntu22.04"

# -t: the version the operator will deploy, from its objects.
{
	echo '{"apiVersion": "v1", "kind": "NodeList", "items": ['
	node ubu ubuntu 22.04 535
	echo ,
	node ubu24 ubuntu 24.04 535 '"pool": "h100",'
	echo ,
	node old rhel 9.4 470 '"pool": "legacy",'
	echo ,
	node fresh rhel 9.4 - '"pool": "h100",'
	echo ,
	node nodrv rhel 9.4 535 '"nvidia.com/gpu.deploy.driver": "false",'
	echo ']}'
} >mixed.json
cat >policy.json <<'EOF'
{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [
 {"metadata": {"name": "cluster-policy"},
  "spec": {"driver": {"enabled": true, "usePrecompiled": true, "repository": "registry.example/nvidia",
   "image": "driver", "version": "550"}}}]}
EOF
{
	echo '{"apiVersion": "v1", "kind": "NodeList", "items": ['
	node old rhel 9.4 470
	echo ,
	node fresh rhel 9.6 -
	echo ,
	node nodrv rhel 9.4 535 '"nvidia.com/gpu.deploy.driver": "false",'
	echo ,
	node nops rhel 9.4 535 '"nvidia.com/gpu.deploy.operands": "false",'
	echo ']}'
} >el9.json
t_run labels2tag -t policy.json el9.json
t_rc 0 "-t with a ClusterPolicy that deploys precompiled 550"
t_out "its version for every node, whatever runs now; gpu.deploy.driver or .operands false needs none" \
	"old 550-$K-rhel9" "fresh 550-$K-rhel9" \
	"nodrv SKIP driver-disabled:nvidia.com/gpu.deploy.driver" \
	"nops SKIP driver-disabled:nvidia.com/gpu.deploy.operands"
t_err "nothing on stderr"
t_run labels2tag -t policy.json -s -w el9.json
t_grep "-t goes with -s and -w" out "^old 550-$K-rhel9 - schedulable$"
t_grep "-s: a SKIP line goes on with the state and cordon" out \
	"^nodrv SKIP driver-disabled:nvidia.com/gpu.deploy.driver - schedulable$"
t_run labels2tag -t policy.json mixed.json
t_rc 2 "-t with a ClusterPolicy over nodes of several OS tags"
t_err "is an error: the operator pulls one node's OS tag for all (getGPUNodeOSInfo)" \
	"labels2tag: the GPU nodes have more than one OS tag (ubuntu22.04, ubuntu24.04): under a ClusterPolicy the GPU Operator pulls the OS tag of one GPU node for all of them, so the others' images are not the ones listed here; NVIDIADriver objects give each node its own"

sed 's/"usePrecompiled": true/"usePrecompiled": false/' policy.json >dkms.json
t_run labels2tag -t dkms.json "$DATA/lab-nodes.json"
t_rc 0 "a ClusterPolicy that builds the driver on the node"
t_out "no node needs a precompiled image: said, not flagged" \
	"lab-node-0 SKIP not-precompiled:clusterpolicy/cluster-policy" \
	"lab-node-1 SKIP not-precompiled:clusterpolicy/cluster-policy" \
	"lab-node-2 SKIP not-precompiled:clusterpolicy/cluster-policy"
sed 's/"enabled": true/"enabled": false/' policy.json >off.json
t_run labels2tag -t off.json "$DATA/node-1.json"
t_out "driver.enabled false: the operator deploys none" "lab-node-1 SKIP driver-disabled:clusterpolicy/cluster-policy"
sed 's/"repository": "registry.example\/nvidia",//; s/"image": "driver", "version": "550"/"image": "registry.example\/nvidia\/driver:535.104.05"/' policy.json >img.json
t_run labels2tag -t img.json "$DATA/node-1.json"
t_out "no repository nor version: the tag of driver.image, as the operator appends to it" \
	"lab-node-1 535.104.05-5.15.0-107-generic-ubuntu22.04"

# NVIDIADriver objects, once the ClusterPolicy hands over to them.
cat >drivers.json <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
  "spec": {"driver": {"useNvidiaDriverCRD": true, "usePrecompiled": true, "version": "535"}}}]}
{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriverList", "items": [
 {"metadata": {"name": "fallback"}, "spec": {"default": true, "driverType": "gpu",
   "usePrecompiled": true, "image": "driver", "version": "570"}},
 {"metadata": {"name": "h100"}, "spec": {"driverType": "gpu", "usePrecompiled": true,
   "image": "driver", "version": "570.86.10", "nodeSelector": {"pool": "h100"}}},
 {"metadata": {"name": "legacy"}, "spec": {"driverType": "gpu", "usePrecompiled": false,
   "image": "driver", "version": "470.57.02", "nodeSelector": {"pool": "legacy"}}},
 {"metadata": {"name": "going", "deletionTimestamp": "2026-11-30T10:00:00Z"},
  "spec": {"usePrecompiled": true, "image": "driver", "version": "580"}}]}
EOF
t_run labels2tag -u -t drivers.json mixed.json
t_rc 0 "-t with NVIDIADriver objects (two lists back to back, as two GETs give them)"
t_out "each node gets its owner's version: selected, else the default; one being deleted owns none" \
	"ubu 570-$K-ubuntu22.04" "ubu24 570.86.10-$K-ubuntu24.04" \
	"old SKIP not-precompiled:nvidiadriver/legacy" "fresh 570.86.10-$K-rhel9" \
	"nodrv SKIP driver-disabled:nvidia.com/gpu.deploy.driver"
t_err "NVIDIADriver objects give each node its OS tag: no warning"

sed 's/"default": true, /"nodeSelector": {"pool": "a100"}, /' drivers.json >nodefault.json
t_run labels2tag -t nodefault.json "$DATA/node-1.json"
t_out "no owner and no default NVIDIADriver: no driver is deployed there" \
	"lab-node-1 SKIP no-owner:nvidiadriver"
sed 's/"default": true, //' drivers.json >noselector.json
t_run labels2tag -t noselector.json "$DATA/node-1.json"
t_out "a non-default NVIDIADriver without a nodeSelector selects every GPU node" \
	"lab-node-1 570-5.15.0-107-generic-ubuntu22.04"
sed 's/"nodeSelector": {"pool": "legacy"}/"nodeSelector": {"nvidia.com\/gpu.present": "true"}/' drivers.json >overlap.json
t_run labels2tag -u -t overlap.json mixed.json
t_rc 2 "two NVIDIADrivers select one node"
t_grep "the node is UNKNOWN: the operator assigns it none" out '^ubu24 UNKNOWN conflict:nvidiadriver$'
t_grep "both are named, and what it means for the fleet" err "^labels2tag: node ubu24: nvidiadriver/h100 and nvidiadriver/legacy both select it: while they do, the GPU Operator assigns no node to any NVIDIADriver (no node's driver changes)$"
t_grep "the other nodes still get their tags" out "^ubu nvidiadriver\|^ubu SKIP not-precompiled:nvidiadriver/legacy$"
t_run labels2tag -s -u -t overlap.json mixed.json
t_grep "-s -u: UNKNOWN in the tag's place, then state and cordon" out '^ubu24 UNKNOWN - schedulable$'

sed 's/"useNvidiaDriverCRD": true/"useNvidiaDriverCRD": false/' drivers.json >unused.json
t_run labels2tag -t unused.json "$DATA/node-1.json"
t_rc 0 "NVIDIADriver objects a ClusterPolicy does not hand over to"
t_out "the ClusterPolicy decides" "lab-node-1 535-5.15.0-107-generic-ubuntu22.04"
t_err "and the unused objects are said" \
	"labels2tag: unused.json: 3 NVIDIADriver objects are not used: clusterpolicy/cluster-policy does not set spec.driver.useNvidiaDriverCRD"

# What -t cannot tell is an error, never a guess.
echo '{"apiVersion": "v1", "kind": "List", "items": []}' >none.json
t_run labels2tag -t none.json "$DATA/lab-nodes.json"
t_rc 2 "a cluster with neither a ClusterPolicy nor a GPUCluster"
t_out "prints nothing"
t_err "says so" "labels2tag: none.json: neither a ClusterPolicy nor a GPUCluster: the GPU Operator labels no node and deploys no driver (-b names the version to check)"
sed -n '/NVIDIADriverList/,$p' drivers.json >only.json
t_run labels2tag -t only.json "$DATA/lab-nodes.json"
t_rc 2 "NVIDIADriver objects alone"
t_err "say the same: nothing labels the nodes" "labels2tag: only.json: neither a ClusterPolicy nor a GPUCluster: the GPU Operator labels no node and deploys no driver (-b names the version to check)"
{ echo '{"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster", "metadata": {"name": "gpu-cluster"}, "spec": {}}'; cat only.json; } >gc.json
t_run labels2tag -u -t gc.json mixed.json
t_rc 0 "a GPUCluster and NVIDIADriver objects"
t_out "the NVIDIADriver objects decide, as when a ClusterPolicy hands over" \
	"ubu 570-$K-ubuntu22.04" "ubu24 570.86.10-$K-ubuntu24.04" \
	"old SKIP not-precompiled:nvidiadriver/legacy" "fresh 570.86.10-$K-rhel9" \
	"nodrv SKIP driver-disabled:nvidia.com/gpu.deploy.driver"
{ cat policy.json; cat gc.json; } >both.json
t_run labels2tag -t both.json "$DATA/lab-nodes.json"
t_rc 2 "a ClusterPolicy and a GPUCluster"
t_err "the operator refuses both at once" "labels2tag: both.json: both clusterpolicy/cluster-policy and gpucluster/gpu-cluster: the GPU Operator refuses a ClusterPolicy and a GPUCluster at once"
sed -e 's/{"name": "cluster-policy"}/{"name": "b-newer", "creationTimestamp": "2026-11-30T10:00:00Z"}/' \
	-e 's/"version": "550"/"version": "not-a-version"/' policy.json >newer.json
sed -e 's/{"name": "cluster-policy"}/{"name": "c-older", "creationTimestamp": "2026-01-02T10:00:00Z"}/' policy.json >older.json
sed -e 's/{"name": "cluster-policy"}/{"name": "a-newer", "creationTimestamp": "2026-11-30T10:00:00Z"}/' \
	-e 's/"version": "550"/"version": "580"/' policy.json >newer2.json
cat newer.json older.json newer2.json >two.json
t_run labels2tag -t two.json el9.json
t_rc 0 "three ClusterPolicies"
t_out "the oldest is the one in force (active_config.go); the others are not read" \
	"old 550-$K-rhel9" "fresh 550-$K-rhel9" \
	"nodrv SKIP driver-disabled:nvidia.com/gpu.deploy.driver" \
	"nops SKIP driver-disabled:nvidia.com/gpu.deploy.operands"
t_err "and the others are named" "labels2tag: two.json: 3 ClusterPolicies (clusterpolicy/b-newer, clusterpolicy/c-older, clusterpolicy/a-newer): the GPU Operator uses the oldest, clusterpolicy/c-older"
sed 's/c-older", "creationTimestamp": "2026-01-02T10:00:00Z"/c-older", "creationTimestamp": "2026-11-30T10:00:00Z"/' older.json >same.json
cat newer2.json same.json >tie.json
t_run labels2tag -t tie.json "$DATA/node-1.json"
t_out "created in the same second: the first name wins" "lab-node-1 580-5.15.0-107-generic-ubuntu22.04"
sed 's/"version": "550"/"version": "550-beta"/' policy.json >badver.json
t_run labels2tag -t badver.json "$DATA/lab-nodes.json"
t_rc 2 "a ClusterPolicy version that is not one"
t_err "names the object and the value" \
	"labels2tag: clusterpolicy/cluster-policy: version \"550-beta\" is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)"
sed 's/, "version": "550"//' policy.json >nover.json
t_run labels2tag -t nover.json "$DATA/lab-nodes.json"
t_rc 2 "precompiled with no version"
t_err "says the operator could not name an image either" \
	"labels2tag: clusterpolicy/cluster-policy: usePrecompiled is true but there is no version (the operator cannot name an image either)"
sed 's/"enabled": true/"enabled": "yes"/' policy.json >str.json
t_run labels2tag -t str.json "$DATA/lab-nodes.json"
t_rc 2 "a boolean field that is a string"
t_err "names the object and the field" "labels2tag: clusterpolicy/cluster-policy: enabled is a string, not a boolean"
sed 's/"nodeSelector": {"pool": "h100"}/"nodeSelector": {"pool": 100}/' drivers.json >sel.json
t_run labels2tag -t sel.json "$DATA/lab-nodes.json"
t_rc 2 "a nodeSelector value that is not a string"
t_err "names it" 'labels2tag: nvidiadriver/h100: spec.nodeSelector "pool" is a number, not a string'
echo '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}}' >notarget.json
t_run labels2tag -t notarget.json "$DATA/lab-nodes.json"
t_rc 2 "a targets file that holds a Node"
t_grep "is told what it holds" err 'labels2tag: notarget.json.*Node'
t_run labels2tag -t policy.json -b 550 "$DATA/lab-nodes.json"
t_rc 2 "-t and -b together"
t_grep "is a usage error" err '^usage: labels2tag'
t_run labels2tag -t - - <"$DATA/lab-nodes.json"
t_rc 2 "-t - with the nodes on standard input too"
t_err "says both cannot be" "labels2tag: -t -: the nodes and the targets cannot both be standard input"
t_run labels2tag -t drivers.json <"$DATA/lab-nodes.yaml"
t_rc 0 "-t with the nodes as YAML on standard input"
t_out "their owners' versions" "lab-node-0 570-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 570-5.15.0-107-generic-ubuntu22.04" "lab-node-2 570-6.8.0-45-generic-ubuntu24.04"

cat >image.json <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cp"},
  "spec": {"driver": {"useNvidiaDriverCRD": true}}},
 {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "tagged", "deletionTimestamp": null},
  "spec": {"default": true, "driverType": "vgpu", "usePrecompiled": true, "image": "registry.example/nvidia/driver:550.90.07"}}]}
EOF
t_run labels2tag -t image.json "$DATA/node-1.json"
t_rc 0 "an NVIDIADriver with no repository and no version, its image tagged"
t_out "the image's tag is the driver part (ImagePath); a null deletionTimestamp is no deletion; driverType does not matter" \
	"lab-node-1 550.90.07-5.15.0-107-generic-ubuntu22.04"

# matrix-grep passes SKIP lines on: said, never MISSING, never counted.
printf '%s\n' "a SKIP not-precompiled:nvidiadriver/legacy" "b 550-5.15.0-119-generic-ubuntu22.04" >skip.txt
t_run matrix-grep -m "$ROOT/lab/support-matrix.csv" skip.txt
t_rc 0 "a SKIP line and a tag that exists"
t_out "the SKIP line, then OK" "a SKIP not-precompiled:nvidiadriver/legacy" OK
printf '%s\n' "a SKIP whatever:x" >badskip.txt
t_run matrix-grep -m "$ROOT/lab/support-matrix.csv" badskip.txt
t_rc 2 "a SKIP line with an unknown reason"
t_err "is not a line matrix-grep reads" "matrix-grep: badskip.txt:1: not a '<node> <tag>' line: \"a SKIP whatever:x\""


# -t reads lists, never watch events (issue 19): an ERROR where the
# NVIDIADrivers were asked for, or a BOOKMARK, is exit 2, not "no driver
# object" (every node SKIP, then OK).
{ cat policy.json; printf '{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}}\n'; } >errev.json
t_run labels2tag -t errev.json "$DATA/lab-nodes.json"
t_rc 2 "-t: a ClusterPolicy list, then a watch ERROR event"
t_out "prints nothing"
t_err "names the file, the event and the server's message" \
	'labels2tag: errev.json: a watch event (ERROR: "too old resource version: 1 (2)"), not a ClusterPolicy, an NVIDIADriver nor a list of them'
{ cat policy.json; printf '{"type": "BOOKMARK", "object": {"kind": "NVIDIADriver", "metadata": {"resourceVersion": "7"}}}\n'; } >bmkev.json
t_run labels2tag -t bmkev.json "$DATA/lab-nodes.json"
t_rc 2 "-t: a BOOKMARK event"
t_out "prints nothing either"
t_err "is named" 'labels2tag: bmkev.json: a watch event (BOOKMARK), not a ClusterPolicy, an NVIDIADriver nor a list of them'
t_done
