#!/bin/sh
# End to end: drv-audit.sh -t reads the GPU Operator's ClusterPolicy and
# NVIDIADriver objects (the sandbox's CRDs) from the real API server, -b asks
# what if, and -r audits against a real registry's tag list.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
apid=
cleanup() {
	[ -z "$apid" ] || { kill "$apid" 2>/dev/null; wait "$apid" 2>/dev/null; }
	e2e_no_operator_objects
	e2e_reset_lab >/dev/null 2>&1
}
trap 'cleanup; rm -rf "$SCRATCH"' EXIT
e2e_no_operator_objects
e2e_facts
M=$ROOT/lab/support-matrix.csv
K1=5.15.0-107-generic

t_run kubectl get crd clusterpolicies.nvidia.com gpuclusters.nvidia.com nvidiadrivers.nvidia.com -o name
t_out "the sandbox serves the GPU Operator's three CRDs" \
	customresourcedefinition.apiextensions.k8s.io/clusterpolicies.nvidia.com \
	customresourcedefinition.apiextensions.k8s.io/gpuclusters.nvidia.com \
	customresourcedefinition.apiextensions.k8s.io/nvidiadrivers.nvidia.com

t_run drv-audit.sh -t -m "$M"
t_rc 2 "-t on a cluster with neither object"
t_out "prints nothing, never OK"
t_grep "says the operator deploys no driver there" err "neither a ClusterPolicy nor a GPUCluster"

kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  operator: {defaultRuntime: containerd}
  driver: {enabled: true, usePrecompiled: true, repository: registry.example/nvidia, image: driver, version: "550"}
EOF2
t_run drv-audit.sh -t -m "$M"
t_rc 2 "-t with a ClusterPolicy that deploys precompiled 550 on nodes of two OS tags"
t_out "lab-node-1 runs 535 now: its 550 image is missing; no OK" "lab-node-1 MISSING 550-$K1-ubuntu22.04"
t_grep "the two OS tags are an error: the operator pulls one node's for all" err "more than one OS tag (ubuntu22.04, ubuntu24.04)"
kubectl label node lab-node-2 --overwrite feature.node.kubernetes.io/system-os_release.VERSION_ID=22.04 \
	feature.node.kubernetes.io/kernel-version.full=5.15.0-119-generic >/dev/null
t_run drv-audit.sh -t -m "$M"
t_rc 1 "-t with that ClusterPolicy on nodes of one OS tag"
t_out "the one missing image" "lab-node-1 MISSING 550-$K1-ubuntu22.04"
t_err "nothing on stderr"
e2e_facts

t_run kubectl apply -f - <<'EOF2'
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: bad-default}
spec: {default: true, usePrecompiled: true, version: "550", nodeSelector: {pool: a}}
EOF2
t_rc 1 "the API server refuses a default NVIDIADriver with a nodeSelector"
t_grep "with the operator's own rule" err "default NVIDIADriver must not use nodeSelector"

kubectl patch clusterpolicy cluster-policy --type=merge -p '{"spec":{"driver":{"useNvidiaDriverCRD":true}}}' >/dev/null
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: fallback}
spec: {default: true, driverType: gpu, usePrecompiled: true, image: driver, version: "550"}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: noble}
spec:
  driverType: gpu
  usePrecompiled: false
  image: driver
  version: "570.86.10"
  nodeSelector: {feature.node.kubernetes.io/system-os_release.VERSION_ID: "24.04"}
EOF2
t_run drv-audit.sh -t -m "$M"
t_rc 1 "-t once the ClusterPolicy hands over to NVIDIADriver objects"
t_out "the default one's 550 for 22.04; noble builds on the node" \
	"lab-node-1 MISSING 550-$K1-ubuntu22.04" "lab-node-2 SKIP not-precompiled:nvidiadriver/noble"
t_err "nothing on stderr"
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: nvidia.com/v1alpha1
kind: GPUCluster
metadata: {name: gpu-cluster}
spec: {}
EOF2
t_run drv-audit.sh -t -m "$M"
t_rc 2 "-t with a ClusterPolicy and a GPUCluster"
t_grep "the operator refuses both" err "the GPU Operator refuses a ClusterPolicy and a GPUCluster at once"
kubectl delete clusterpolicy cluster-policy >/dev/null
t_run drv-audit.sh -t -m "$M"
t_rc 1 "-t with a GPUCluster and the NVIDIADriver objects"
t_out "the same verdicts" \
	"lab-node-1 MISSING 550-$K1-ubuntu22.04" "lab-node-2 SKIP not-precompiled:nvidiadriver/noble"
t_run drv-states.sh -m "$M"
t_rc 0 "drv-states.sh shows what runs now"
t_run drv-states.sh -t -m "$M"
t_rc 1 "drv-states.sh -t shows what the operator will deploy"
cp out states.out
t_run cut -d ' ' -f 1-5,7 states.out
t_out "each node's target tag, or why it needs none; the missing image what lab-node-1 waits for" \
	"lab-node-0 - schedulable 550-5.15.0-119-generic-ubuntu22.04 ok -" \
	"lab-node-1 - schedulable 550-$K1-ubuntu22.04 MISSING image" \
	"lab-node-2 - schedulable - not-precompiled:nvidiadriver/noble -"

t_run drv-audit.sh -b 570.86.10 -m "$M"
t_rc 1 "-b: what if every GPU node moved to 570.86.10"
t_out "each node's image of that version is missing" \
	"lab-node-0 MISSING 570.86.10-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 MISSING 570.86.10-$K1-ubuntu22.04" \
	"lab-node-2 MISSING 570.86.10-6.8.0-45-generic-ubuntu24.04"
kubectl label node lab-node-0 nvidia.com/cuda.driver.major- >/dev/null
t_run drv-audit.sh -b 550 -m "$M"
t_rc 1 "-b on a fleet where one node has no driver label yet"
t_out "that node is audited too" "lab-node-1 MISSING 550-$K1-ubuntu22.04"
t_run drv-audit.sh -m "$M"
t_rc 2 "without -b, that node's tag is unknown"
t_grep "and said so" out "^lab-node-0 UNKNOWN missing:nvidia.com/cuda.driver.major$"
e2e_facts

# A real registry: the lab's images and 300 others, pushed over HTTP, in a
# repository of this run's own (the sandbox's registry outlives a test).
repo=gpudrv-t$$/driver
R=$e2e_registry/$repo
sed 1d "$M" | tr -d '\r' | awk -F, 'NF == 3 { print $1 "-" $2 "-" $3 }' >lab.tags
awk 'BEGIN { for (i = 1; i <= 300; i++) printf "535-5.15.0-%d-generic-ubuntu20.04\n", i }' >more.tags
t_run sh -c "cat lab.tags more.tags | sh '$ROOT/sandbox/push-tags.sh' $repo"
t_rc 0 "the lab's tags and 300 more pushed to the sandbox registry"
t_run skopeo list-tags --tls-verify=false "docker://$R"
t_rc 0 "skopeo lists them"
t_grep "all of them" out "535-5.15.0-300-generic-ubuntu20.04"
n=$(grep -c -- '-generic-' out)
t_ok "$([ "$n" -eq $(($(wc -l <lab.tags) + 300)) ] && echo 0 || echo 1)" "as many as pushed ($n)"

t_run drv-audit.sh -r "$R" -I
t_rc 0 "-r: the fleet against the registry's real tag list"
t_out "OK" OK
t_run drv-audit.sh -t -r "$R" -I -p reg.prom
t_rc 1 "-t -r: the operator's versions against the registry"
t_out "the one image the registry lacks" \
	"lab-node-1 MISSING 550-$K1-ubuntu22.04" "lab-node-2 SKIP not-precompiled:nvidiadriver/noble"
t_grep "recorded for Prometheus" reg.prom '^gpudrv_audit_missing{node="lab-node-1",tag="550-5.15.0-107-generic-ubuntu22.04"} 1$'
t_run sh "$ROOT/sandbox/push-tags.sh" "$repo" "550-$K1-ubuntu22.04"
t_run drv-audit.sh -t -r "$R" -I
t_rc 0 "once that image is pushed"
t_out "OK, the skipped node still said" "lab-node-2 SKIP not-precompiled:nvidiadriver/noble" OK

# A registry that cannot answer is never OK.
t_run drv-audit.sh -r "$e2e_registry/nvidia/nosuch" -I -p reg.prom
t_rc 2 "-r with a repository the registry does not have (404)"
t_out "prints nothing, never OK"
t_grep "with skopeo's words" err "404 (Not Found)"
t_grep "the textfile says the run failed" reg.prom '^gpudrv_audit_exit_status 2$'
t_run drv-audit.sh -r "127.0.0.1:1/nvidia/driver" -I
t_rc 2 "-r with a registry that cannot be reached"
t_grep "says it was refused" err "connection refused"
t_run drv-audit.sh -r "$R"
t_rc 2 "-r without -I on a plain-HTTP registry"
t_grep "skopeo's TLS error is said" err "server gave HTTP response to HTTPS client"

# A registry that asks for credentials (401): the same storage behind
# htpasswd (bcrypt, by perl's crypt), on base+7, started and stopped here.
A=127.0.0.1:$((${GPUDRV_SANDBOX_PORT_BASE:-26440} + 7))
printf 'gpudrv:%s\n' "$(perl -e 'print crypt("s3cret", "\$2b\$05\$gpudrvsandboxsaltsaltu")')" >htpasswd
cat >auth.yml <<EOF2
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $e2e_dir/state/registry}}
http: {addr: "$A"}
auth: {htpasswd: {realm: gpudrv, path: $PWD/htpasswd}}
EOF2
"$e2e_dir/bin/registry" serve auth.yml >auth.log 2>&1 &
apid=$!
e2e_until 30 sh -c "curl -s -o /dev/null -w '%{http_code}' http://$A/v2/ | grep -q 401"
t_run drv-audit.sh -t -r "$A/$repo" -I -p reg.prom
t_rc 2 "-r on a registry that wants credentials, given none (401)"
t_out "prints nothing, never OK"
t_grep "with skopeo's words" err "authentication required"
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$A" "$(printf gpudrv:s3cret | base64)" >auth.json
REGISTRY_AUTH_FILE=$PWD/auth.json t_run drv-audit.sh -t -r "$A/$repo" -I -p reg.prom
t_rc 0 "the same with skopeo's credentials (REGISTRY_AUTH_FILE)"
t_out "the same answer as the open registry's" "lab-node-2 SKIP not-precompiled:nvidiadriver/noble" OK
kill "$apid" 2>/dev/null
wait "$apid" 2>/dev/null
apid=

t_done
