#!/bin/sh
# End to end: an air-gapped mirror.  drv-audit.sh -o lists the images the
# GPU nodes need, from the GPU Operator's objects on the real API server;
# skopeo (Debian's) mirrors exactly those, from the sandbox registry to a
# second one that wants credentials (htpasswd, storage of its own), once
# with skopeo sync --src yaml and the -o skopeo-sync file, once with skopeo
# copy and the -o images list; then drv-audit.sh audits the mirror: OK.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
mpid=
cleanup() {
	[ -z "$mpid" ] || { kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null; }
	e2e_no_operator_objects
	e2e_reset_lab >/dev/null 2>&1
}
trap 'cleanup; rm -rf "$SCRATCH"' EXIT
e2e_no_operator_objects
e2e_facts
K0=5.15.0-119-generic
K1=5.15.0-107-generic
K2=6.8.0-45-generic

# The source: the sandbox registry, in a repository of this run's own (the
# registry outlives a test), as the operator's objects name it.
S=$e2e_registry
src=gpudrv-m$$
kubectl apply -f - >/dev/null <<EOF
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  operator: {defaultRuntime: containerd}
  driver: {enabled: true, usePrecompiled: true, useNvidiaDriverCRD: true}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: jammy}
spec: {default: true, driverType: gpu, usePrecompiled: true, repository: "$S/$src", image: driver, version: "550"}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: noble}
spec:
  driverType: gpu
  usePrecompiled: true
  repository: "$S/$src"
  image: driver-noble
  version: "570.86.10"
  nodeSelector: {feature.node.kubernetes.io/system-os_release.VERSION_ID: "24.04"}
EOF

t_run drv-audit.sh -t -o images
t_rc 0 "-o images -t: the images the operator's objects name, from the real API server"
t_out "each once, sorted, with its registry" \
	"$S/$src/driver-noble:570.86.10-$K2-ubuntu24.04" \
	"$S/$src/driver:550-$K1-ubuntu22.04" \
	"$S/$src/driver:550-$K0-ubuntu22.04"
t_err "nothing on stderr"
cp out images.txt
t_run drv-audit.sh -t -o skopeo-sync -I
t_rc 0 "-o skopeo-sync -t -I"
t_out "the same images, as skopeo sync --src yaml reads them" \
	"\"$S\":" '  tls-verify: false' '  images:' \
	"    \"$src/driver\":" "      - \"550-$K1-ubuntu22.04\"" "      - \"550-$K0-ubuntu22.04\"" \
	"    \"$src/driver-noble\":" "      - \"570.86.10-$K2-ubuntu24.04\""
cp out sync.yaml

# The source has those images, and others the fleet does not need.
t_run sh "$ROOT/sandbox/push-tags.sh" "$src/driver" "550-$K1-ubuntu22.04" "550-$K0-ubuntu22.04" \
	"535-$K1-ubuntu22.04" "550-5.15.0-1-generic-ubuntu20.04"
t_rc 0 "the source gets the fleet's two images of driver and two more"
t_run sh "$ROOT/sandbox/push-tags.sh" "$src/driver-noble" "570.86.10-$K2-ubuntu24.04" "570.86.10-6.8.0-1-generic-ubuntu24.04"
t_rc 0 "and the fleet's one image of driver-noble and one more"

# The mirror: its own storage, htpasswd (bcrypt, by perl's crypt), on base+2
# (free in the sandbox's block; t/0970's registry of the sandbox's storage
# is base+7).
M=127.0.0.1:$((${GPUDRV_SANDBOX_PORT_BASE:-26440} + 2))
printf 'gpudrv:%s\n' "$(perl -e 'print crypt("m1rror", "\$2b\$05\$gpudrvmirrorsaltsaltsalt")')" >htpasswd
mkdir mirror
cat >mirror.yml <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $PWD/mirror}}
http: {addr: "$M"}
auth: {htpasswd: {realm: gpudrv-mirror, path: $PWD/htpasswd}}
EOF
"$e2e_dir/bin/registry" serve mirror.yml >mirror.log 2>&1 &
mpid=$!
e2e_until 30 sh -c "curl -s -o /dev/null -w '%{http_code}' http://$M/v2/ | grep -q 401" ||
	{ t_diag <mirror.log; echo "Bail out! the mirror registry did not start on $M"; exit 1; }
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$M" "$(printf gpudrv:m1rror | base64)" >auth.json
REGISTRY_AUTH_FILE=$PWD/auth.json
export REGISTRY_AUTH_FILE

# Before the mirror has them, its audit is not OK.
t_run drv-audit.sh -t -r "$M/$src/driver" -I
t_rc 2 "the mirror audited before it has the repository"
t_out "prints nothing, never OK"
t_grep "skopeo's words: no such repository" err "404 (Not Found)"

# skopeo sync --src yaml, the -o skopeo-sync file, into the mirror under $src.
t_run skopeo sync --src yaml --dest docker --dest-tls-verify=false --retry-times 2 sync.yaml "$M/$src"
t_rc 0 "skopeo sync --src yaml reads the file and copies"
t_grep "three images, from the two repositories" err "Synced 3 images from 2 sources"
for r in driver driver-noble; do
	skopeo list-tags --tls-verify=false "docker://$M/$src/$r" >tags.json 2>tags.err ||
		{ t_diag <tags.err; }
	t_run sh -c 'tr -d " \n" <tags.json | sed "s/.*\"Tags\":\[//; s/\].*//" | tr , "\n" | tr -d "\"" | LC_ALL=C sort'
	case $r in
	driver) t_out "the mirror's $r: the fleet's tags, not the others" "550-$K1-ubuntu22.04" "550-$K0-ubuntu22.04" ;;
	*) t_out "the mirror's $r: the fleet's tag only" "570.86.10-$K2-ubuntu24.04" ;;
	esac
done

# The audit of the mirror: the operator's versions against what it lists.
t_run drv-audit.sh -t -r "$M/$src/driver" -I
t_rc 1 "one repository per audit: -t -r the mirror's driver"
t_out "the noble node's image is in driver-noble, not there" \
	"lab-node-2 MISSING 570.86.10-$K2-ubuntu24.04"
t_run drv-audit.sh -r "$M/$src/driver" -I -b 550 -k "$K1"
t_rc 1 "-b 550 -k: lab-node-2's 24.04 image of that kernel is not mirrored"
t_out "only that one" "lab-node-2 MISSING 550-$K1-ubuntu24.04"

# The audit the mirror must pass: the nodes the one repository serves.
kubectl patch nvidiadriver noble --type=merge -p "{\"spec\":{\"image\":\"driver\"}}" >/dev/null
t_run drv-audit.sh -t -o images
t_out "-o images once both objects name one repository" \
	"$S/$src/driver:550-$K1-ubuntu22.04" "$S/$src/driver:550-$K0-ubuntu22.04" \
	"$S/$src/driver:570.86.10-$K2-ubuntu24.04"
cp out images.txt
sh "$ROOT/sandbox/push-tags.sh" "$src/driver" "570.86.10-$K2-ubuntu24.04" 2>/dev/null
t_run drv-audit.sh -t -r "$M/$src/driver" -I
t_rc 1 "the mirror lacks the image the objects now name there"
t_out "named" "lab-node-2 MISSING 570.86.10-$K2-ubuntu24.04"

# skopeo copy, one reference a line of -o images, into another repository.
cp=gpudrv-c$$
: >copy.err
copied=0
while IFS= read -r ref; do
	skopeo copy --src-tls-verify=false --dest-tls-verify=false "docker://$ref" \
		"docker://$M/$cp/driver:${ref##*:}" >/dev/null 2>>copy.err && copied=$((copied + 1))
done <images.txt
t_is "skopeo copy takes each line of -o images as it is" "$copied" 3
[ "$copied" = 3 ] || t_diag <copy.err
t_run drv-audit.sh -t -r "$M/$cp/driver" -I
t_rc 0 "the mirror audited: OK"
t_out "OK" OK
t_err "nothing on stderr"
t_run drv-audit.sh -t -r "$M/$cp/driver" -I -p mirror.prom
t_rc 0 "with the textfile"
t_grep "it records the clean audit" mirror.prom '^gpudrv_audit_exit_status 0$'

# And sync again, the objects now naming one repository: the sync file
# adds the one image the first sync did not copy.
t_run drv-audit.sh -t -o skopeo-sync -I
cp out sync.yaml
t_run skopeo sync --src yaml --dest docker --dest-tls-verify=false sync.yaml "$M/$src"
t_rc 0 "skopeo sync again"
t_run drv-audit.sh -t -r "$M/$src/driver" -I
t_rc 0 "the synced mirror audited: OK"
t_out "OK" OK

# What-if kernels: a move of the 24.04 nodes to a new kernel, planned.
K3=6.8.0-52-generic
sel=feature.node.kubernetes.io/system-os_release.VERSION_ID=24.04
t_run drv-audit.sh -t -o skopeo-sync -I -k "$K3" -l "$sel"
t_rc 0 "-o skopeo-sync -k -l: the images a kernel change of the 24.04 nodes needs"
t_out "one image" "\"$S\":" '  tls-verify: false' '  images:' "    \"$src/driver\":" "      - \"570.86.10-$K3-ubuntu24.04\""
cp out next.yaml
t_run drv-audit.sh -t -r "$M/$cp/driver" -I -k "$K3" -l "$sel"
t_rc 1 "the mirror lacks it"
t_out "named" "lab-node-2 MISSING 570.86.10-$K3-ubuntu24.04"
sh "$ROOT/sandbox/push-tags.sh" "$src/driver" "570.86.10-$K3-ubuntu24.04" 2>/dev/null
t_run skopeo sync --src yaml --dest docker --dest-tls-verify=false next.yaml "$M/$cp"
t_rc 0 "synced into the copy's repository"
t_run drv-audit.sh -t -r "$M/$cp/driver" -I -k "$K3" -l "$sel"
t_rc 0 "the mirror has what the kernel change needs: OK"
t_out "OK" OK

# The mirror's credentials are needed: without them skopeo is refused.
t_run env -u REGISTRY_AUTH_FILE HOME="$PWD" XDG_RUNTIME_DIR="$PWD" \
	skopeo sync --src yaml --dest docker --dest-tls-verify=false sync.yaml "$M/$src"
t_rc 1 "skopeo sync into the mirror without credentials"
t_grep "is refused" err "authentication required\|unauthorized"

# A node whose labels give no tag: no list, through the real API too.
kubectl label node lab-node-1 feature.node.kubernetes.io/kernel-version.full- >/dev/null
t_run drv-audit.sh -t -o images
t_rc 2 "-o -t with a node without its kernel label"
t_out "no list, not the other two images"
t_grep "the node and the label named" err "^labels2tag: node lab-node-1: label feature.node.kubernetes.io/kernel-version.full is missing"
t_grep "and why there is no list" err "^drv-audit.sh: 1 GPU node has no image reference (named above): no list was printed"
e2e_facts
# An object that names no repository: no list either.
kubectl patch nvidiadriver jammy --type=json -p '[{"op":"remove","path":"/spec/repository"}]' >/dev/null
t_run drv-audit.sh -t -o images
t_rc 2 "-o -t with an NVIDIADriver that names a version but no repository"
t_out "no list"
t_grep "the object named" err "nvidiadriver/jammy names no repository of its image"
t_run drv-audit.sh -t -o images -r "$M/$cp/driver"
t_rc 0 "-r names the repository instead"
t_out "the images there" "$M/$cp/driver:550-$K1-ubuntu22.04" "$M/$cp/driver:550-$K0-ubuntu22.04" \
	"$M/$cp/driver:570.86.10-$K2-ubuntu24.04"

kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
mpid=
t_done
