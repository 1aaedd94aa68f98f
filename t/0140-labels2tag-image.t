#!/bin/sh
# labels2tag -i: each node's image reference, repository:tag, its repository
# -R's or the one the GPU Operator's objects name for the node (-t), checked
# by the reference grammar and written with its registry; a node whose image
# cannot be named is an error, never a reference made up.
. "$(dirname "$0")/lib.sh"

L=$DATA/lab-nodes.json
K0=550-5.15.0-119-generic-ubuntu22.04
K1=535-5.15.0-107-generic-ubuntu22.04
K2=550-6.8.0-45-generic-ubuntu24.04

t_run labels2tag -i -R registry.example/nvidia/driver "$L"
t_rc 0 "-i -R: the lab nodes"
t_out "one '<node> <repository>:<tag>' line a node, in input order" \
	"lab-node-0 registry.example/nvidia/driver:$K0" \
	"lab-node-1 registry.example/nvidia/driver:$K1" \
	"lab-node-2 registry.example/nvidia/driver:$K2"
t_err "nothing on stderr"
t_run labels2tag -i -R registry.example/nvidia/driver "$DATA/lab-nodes.yaml"
t_out "the same from YAML" \
	"lab-node-0 registry.example/nvidia/driver:$K0" \
	"lab-node-1 registry.example/nvidia/driver:$K1" \
	"lab-node-2 registry.example/nvidia/driver:$K2"
t_same "the same parsed whole" labels2tag -i -R registry.example/nvidia/driver "$L"
t_run labels2tag -i -N -b 570.86.10 -k 6.8.0-52-generic -R registry.example/nvidia/driver "$L"
t_out "-N, -b and -k as for tags" \
	"registry.example/nvidia/driver:570.86.10-6.8.0-52-generic-ubuntu22.04" \
	"registry.example/nvidia/driver:570.86.10-6.8.0-52-generic-ubuntu22.04" \
	"registry.example/nvidia/driver:570.86.10-6.8.0-52-generic-ubuntu24.04"
t_run labels2tag -i -R registry.example/nvidia/driver "$DATA/node-1.json"
t_out "one Node: its reference alone" "registry.example/nvidia/driver:$K1"

# Any registry the grammar takes, written as given.
while read -r given; do
	t_run labels2tag -i -R "$given" "$DATA/node-1.json"
	t_rc 0 "-R $given"
	t_out "-R $given, as given" "$given:$K1"
done <<'EOF'
registry.example:5000/nvidia/driver
127.0.0.1:5000/nvidia/driver
localhost/driver
Registry.Example/nvidia/driver
REGISTRY/driver
registry.example/nvidia/a.b_c__d---e/driver
EOF

# What is no repository is said, before any input is read.
while IFS='|' read -r given why; do
	t_run labels2tag -i -R "$given" "$DATA/node-1.json"
	t_rc 2 "-R '$given'"
	t_out "-R '$given': nothing on stdout"
	t_err "-R '$given': says why" "labels2tag: -R \"$given\": not a repository: it $why"
done <<'EOF'
registry.example/nvidia/driver:550|holds a tag: a repository is registry/path/name, without a tag or digest
registry.example/nvidia/driver@sha256:0123|holds a digest: a repository is registry/path/name, without a tag or digest
registry.example/NVIDIA/driver|is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')
registry.example/nvidia//driver|is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')
registry.example/nvidia/driver/|is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')
registry.example/-driver|is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')
registry.example/a___b|is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')
registry.example:x/driver|does not begin with a registry host name[:port]
registry.example:/driver|does not begin with a registry host name[:port]
-registry.example/driver|does not begin with a registry host name[:port]
registry..example/driver|does not begin with a registry host name[:port]
[::1]:5000/driver|names its registry by an IPv6 address, which gpudrv does not take: use a host name
nvidia/driver|names no registry (registry.example/nvidia/driver, not nvidia/driver): the registry an image comes from is never implied
driver|names no registry (registry.example/nvidia/driver, not nvidia/driver): the registry an image comes from is never implied
EOF
long=$(awk 'BEGIN { for (i = 0; i < 250; i++) printf "a" }')
t_run labels2tag -i -R "registry.example/$long" "$DATA/node-1.json"
t_rc 2 "a repository over 255 characters"
t_grep "says so" err "is longer than 255 characters"
t_run labels2tag -i -R "registry.example/$(echo "$long" | cut -c1-238)" "$DATA/node-1.json"
t_rc 0 "one of 255"
t_grep "is taken" out "^registry.example/a*:$K1\$"

t_run labels2tag -R registry.example/nvidia/driver "$L"
t_rc 2 "-R without -i"
t_err "says it goes with -i" "labels2tag: -R names the repository of -i's references: it goes with -i"
t_run labels2tag -i "$L"
t_rc 2 "-i with no repository"
t_err "says where one comes from" "labels2tag: -i needs a repository: -t (the one the GPU Operator's objects name) or -R"
for o in -c -s -F; do
	t_run labels2tag -i "$o" -R registry.example/nvidia/driver "$L"
	t_rc 2 "-i with $o"
	t_out "-i with $o: nothing on stdout"
	t_grep "-i with $o: the usage" err "^       labels2tag -i \[-nNuw\]"
done

# Broken nodes are named, with -u as UNKNOWN lines; the others are listed.
t_run labels2tag -i -u -R registry.example/nvidia/driver "$DATA/bad-nodes.json"
t_rc 2 "-i -u: nodes whose labels give no tag"
t_grep "each UNKNOWN, as for tags" out '^no-major UNKNOWN missing:nvidia.com/cuda.driver.major$'
t_grep "with its reason on stderr" err '^labels2tag: node no-major: label nvidia.com/cuda.driver.major is missing'

# -t: the repository the GPU Operator's objects name.
# policy NAME DRIVER: a ClusterPolicyList of one, whose spec.driver is DRIVER.
policy() {
	printf '{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "%s"}, "spec": {"driver": %s}}]}\n' "$1" "$2"
}
# A list of one node (one OS tag: a ClusterPolicy names one image for all).
awk 'BEGIN { print "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [" }
	{ print } END { print "]}" }' "$DATA/node-1.json" >one.json

policy cp '{"usePrecompiled": true, "repository": "registry.example/nvidia", "image": "driver", "version": "550"}' >cp.json
t_run labels2tag -i -t cp.json one.json
t_rc 0 "-t: a ClusterPolicy with repository, image and version"
t_out "repository/image:version-kernel-os" "lab-node-1 registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04"
policy cp '{"usePrecompiled": true, "image": "registry.example/nvidia/driver:550"}' >cp.json
t_run labels2tag -i -t cp.json one.json
t_rc 0 "-t: a ClusterPolicy whose image holds the version (no repository, no version)"
t_out "the image's repository, its tag the version" "lab-node-1 registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04"
policy cp '{"usePrecompiled": true, "image": "registry.example:5000/nvidia/driver:550.90.07"}' >cp.json
t_run labels2tag -i -t cp.json one.json
t_out "a registry with a port in the image" "lab-node-1 registry.example:5000/nvidia/driver:550.90.07-5.15.0-107-generic-ubuntu22.04"
t_run labels2tag -i -t cp.json -R registry.example/mirror/driver one.json
t_rc 0 "-t -R: the operator's version, -R's repository"
t_out "-R wins" "lab-node-1 registry.example/mirror/driver:550.90.07-5.15.0-107-generic-ubuntu22.04"
t_run labels2tag -t cp.json one.json
t_out "without -i, the tag as before" "lab-node-1 550.90.07-5.15.0-107-generic-ubuntu22.04"

# The operator names no image: a version without a repository (or image).
for d in '{"usePrecompiled": true, "image": "driver", "version": "550"}' \
	'{"usePrecompiled": true, "repository": "registry.example/nvidia", "version": "550"}'; do
	policy cp "$d" >cp.json
	t_run labels2tag -i -u -t cp.json one.json
	t_rc 2 "-i -t: $d"
	t_out "UNKNOWN, the source object named" "lab-node-1 UNKNOWN no-image:clusterpolicy/cp"
	t_err "says why, and what names one" \
		"labels2tag: node lab-node-1: clusterpolicy/cp names no repository of its image (repository, image and version, or image with its tag): the GPU Operator cannot name the image either; -R names one"
	t_run labels2tag -i -u -t cp.json -R registry.example/nvidia/driver one.json
	t_rc 0 "-R names it"
	t_out "the reference" "lab-node-1 registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04"
	t_run labels2tag -u -t cp.json one.json
	t_rc 0 "the audit's tag needs no repository"
done
policy cp '{"usePrecompiled": true, "repository": "registry.example/NVIDIA", "image": "driver", "version": "550"}' >cp.json
t_run labels2tag -i -u -t cp.json one.json
t_rc 2 "-i -t: a ClusterPolicy repository that is none"
t_out "UNKNOWN" "lab-node-1 UNKNOWN no-image:clusterpolicy/cp"
t_err "the object's value, and why" \
	"labels2tag: node lab-node-1: the repository \"registry.example/NVIDIA/driver\" of clusterpolicy/cp is not a repository path (lowercase letters and digits, joined by '.', '_', '__' or '-', components separated by '/')"
t_run labels2tag -i -t cp.json one.json
t_rc 2 "without -u"
t_out "the node is left out of stdout"

# NVIDIADriver objects: each node's owner names its repository.
cat >nvd.json <<'EOF'
{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": [{"metadata": {"name": "cp"},
 "spec": {"driver": {"useNvidiaDriverCRD": true}}}]}
{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriverList", "items": [
 {"metadata": {"name": "jammy"}, "spec": {"usePrecompiled": true, "repository": "registry.example/nvidia", "image": "driver",
  "version": "550", "nodeSelector": {"feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04"}}},
 {"metadata": {"name": "noble"}, "spec": {"usePrecompiled": true, "image": "registry.example/gpu/driver:570",
  "nodeSelector": {"feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04"}}}]}
EOF
t_run labels2tag -i -t nvd.json "$L"
t_rc 0 "-i -t: two NVIDIADrivers, two repositories"
t_out "each node its owner's" \
	"lab-node-0 registry.example/nvidia/driver:550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 registry.example/nvidia/driver:550-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 registry.example/gpu/driver:570-6.8.0-45-generic-ubuntu24.04"
sed 's/"usePrecompiled": true, "image": "registry/"usePrecompiled": false, "image": "registry/' nvd.json >nvd2.json
t_run labels2tag -i -u -t nvd2.json "$L"
t_rc 0 "a node that needs no precompiled image"
t_grep "is SKIP, as for tags" out "^lab-node-2 SKIP not-precompiled:nvidiadriver/noble$"
sed 's/"repository": "registry.example\/nvidia", //' nvd.json >nvd3.json
t_run labels2tag -i -u -t nvd3.json "$L"
t_rc 2 "one NVIDIADriver names no repository"
t_out "only its nodes are UNKNOWN" \
	"lab-node-0 UNKNOWN no-image:nvidiadriver/jammy" \
	"lab-node-1 UNKNOWN no-image:nvidiadriver/jammy" \
	"lab-node-2 registry.example/gpu/driver:570-6.8.0-45-generic-ubuntu24.04"
cp err jammy.err
t_run grep -c "nvidiadriver/jammy names no repository" jammy.err
t_val "each named on stderr" 2

# A ClusterPolicy over two OS tags names the images of one: an error still.
policy cp '{"usePrecompiled": true, "repository": "registry.example/nvidia", "image": "driver", "version": "550"}' >cp.json
t_run labels2tag -i -t cp.json "$L"
t_rc 2 "-i -t: a ClusterPolicy over nodes of two OS tags"
t_grep "said as for tags" err "more than one OS tag"

# Watch events: each line its event.
printf '{"type": "ADDED", "object": %s}\n' "$(tr -d '\n' <"$DATA/node-1.json")" >ev.json
t_run labels2tag -w -i -R registry.example/nvidia/driver ev.json
t_rc 0 "-w -i"
t_out "the event, the node, its reference" "ADDED lab-node-1 registry.example/nvidia/driver:$K1"
t_done
