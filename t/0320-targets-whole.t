#!/bin/sh
# drv-audit.sh -t and drv-states.sh -t: each of the three GETs of the GPU
# Operator's objects is proven the whole list asked for.  A kubectl (or a
# proxy) that answers exit 0 with an empty body, a Status, a list of another
# kind or a body cut short is exit 2 naming the request: never every node
# SKIP, never OK, no fleet figures in the -p textfile, and no request after
# the fault.  A CRD that is not installed is an empty list of its own kind.
. "$(dirname "$0")/lib.sh"

t_fake_ops
KUBECTL=$PWD/ops
FAKE_OUT=$DATA/lab-nodes.json
GPUDRV_MATRIX=$ROOT/lab/support-matrix.csv
export KUBECTL FAKE_OUT GPUDRV_MATRIX

# The bodies, each where a list was asked for.
: >empty.json
printf '  \n\t\n' >blank.json
echo '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}' >status.json
echo '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}' >pods.json
head -c 100 "$DATA/targets/nvd.json" >cut.json
echo '{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriverList"}' >noitems.json
{ cat "$DATA/targets/nvd.json"; cat "$DATA/targets/nvd.json"; } >two.json
# what BODY RESOURCE: what the scripts say they got instead.
what() {
	case $1 in
	empty | blank) echo "an empty body" ;;
	status) echo "a Status (500 InternalError: etcdserver: request timed out)" ;;
	pods) echo "kind PodList" ;;
	other) if [ "$2" = nvidiadrivers ]; then echo "kind ClusterPolicyList"; else echo "kind NVIDIADriverList"; fi ;;
	cut) echo "a body cut short (not one whole JSON object)" ;;
	noitems) if [ "$2" = nvidiadrivers ]; then echo "kind NVIDIADriverList but no items list"; else echo "kind NVIDIADriverList"; fi ;;
	two) echo "a body that is not one JSON object" ;;
	esac
}

# The baseline: a ClusterPolicy that defers to the NVIDIADrivers, no
# GPUCluster CRD, two NVIDIADrivers: drv-audit.sh -t exits 1.
base() {
	FAKE_CP=$DATA/targets/cp-crd.json
	FAKE_GC=
	FAKE_NVD=$DATA/targets/nvd.json
	export FAKE_CP FAKE_GC FAKE_NVD
	rm -f ops.log
}
base
t_run drv-audit.sh -t -p t.prom
t_rc 1 "the baseline: -t with every list whole"
sed -i 's/^gpudrv_audit_last_success_timestamp_seconds .*/gpudrv_audit_last_success_timestamp_seconds 1700000000/' t.prom

for get in clusterpolicies:ClusterPolicyList:nvidia.com/v1 gpuclusters:GPUClusterList:nvidia.com/v1alpha1 \
	nvidiadrivers:NVIDIADriverList:nvidia.com/v1alpha1; do
	res=${get%%:*}
	kind=${get#*:}
	kind=${kind%%:*}
	path=/apis/${get##*:}/$res
	# A list of one of the other two kinds, where this one was asked for.
	case $res in
	nvidiadrivers) cp "$DATA/targets/cp-crd.json" other.json ;;
	*) cp "$DATA/targets/nvd.json" other.json ;;
	esac
	for body in empty blank status pods other cut noitems two; do
		said="GET $path answered exit 0 with $(what "$body" "$res"): not the $kind asked for, so nothing is known of the $res"
		for s in drv-audit.sh drv-states.sh; do
			base
			case $res in
			clusterpolicies) FAKE_CP=$PWD/$body.json ;;
			gpuclusters) FAKE_GC=$PWD/$body.json ;;
			*) FAKE_NVD=$PWD/$body.json ;;
			esac
			if [ "$s" = drv-audit.sh ]; then
				cp t.prom before.prom
				t_run "$s" -t -p t.prom
			else
				t_run "$s" -t
			fi
			t_rc 2 "$s -t, GET $res answers $body"
			t_out "$s, $res $body: nothing on stdout, never OK"
			if [ "$s" = drv-audit.sh ]; then
				t_err "$s, $res $body: names the request and what it got" "$s: $said" "$s: no audit was made"
				t_run grep -c -e '^gpudrv_audit_gpu_nodes' -e '^gpudrv_audit_missing' -e '^gpudrv_audit_skipped' t.prom
				t_out "$s, $res $body: the textfile has no fleet figures" 0
				t_grep "$s, $res $body: the textfile records exit 2" t.prom '^gpudrv_audit_exit_status 2$'
				t_grep "$s, $res $body: and keeps the last success" t.prom '^gpudrv_audit_last_success_timestamp_seconds 1700000000$'
			else
				t_err "$s, $res $body: names the request and what it got" "$s: $said"
			fi
			t_run sed -n '$s/.* get --raw //p' ops.log
			t_out "$s, $res $body: no request after it" "$path"
		done
	done
done

# What is whole is taken: the API server's own order (kind after items),
# and a "kind" or a brace inside an item or a string counts for nothing.
base
cat >sorted.json <<'EOF'
{"apiVersion":"nvidia.com/v1alpha1","items":[{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"all","annotations":{"note":"{\"kind\":\"Status\"} }]"}},"spec":{"default":true,"usePrecompiled":true,"version":"550"}},
 {"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"noble"},"spec":{"usePrecompiled":false,"version":"570.86.10","nodeSelector":{"feature.node.kubernetes.io/system-os_release.VERSION_ID":"24.04"}}}],
 "kind":"NVIDIADriverList","metadata":{"continue":"","resourceVersion":"7"}}
EOF
FAKE_NVD=$PWD/sorted.json t_run drv-audit.sh -t
t_rc 1 "-t: a list in the API server's order, tricky strings inside"
t_out "is read" "lab-node-1 MISSING 550-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 SKIP not-precompiled:nvidiadriver/noble"

# The CRDs that are not installed: each an empty list of its own kind, for
# the reader to check (get_targets itself, from the library).
cat >gt.sh <<'EOF'
prog=gt
usage_line=gt
lib=$1
. "$lib/runtime.sh"
. "$lib/api.sh"
gpudrv_start 60 0
get_targets "$2" || finish 2
finish 0
EOF
FAKE_CP= FAKE_NVD= t_run sh gt.sh "$BIN/../lib/gpudrv" targets.json
t_rc 0 "get_targets with none of the CRDs installed"
t_run cat targets.json
t_out "three empty lists, each typed" \
	'{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicyList","items":[]}' \
	'{"apiVersion":"nvidia.com/v1alpha1","kind":"GPUClusterList","items":[]}' \
	'{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriverList","items":[]}'
t_done
