#!/bin/sh
# t/fake-fleet.sh KUBECTL-ARGS...: the API server of drv-rollout.sh's
# fleet behind t/kubectl, answering from the files in $FLEET_DIR
# (t/lib.sh's t_fake_fleet says which).
D=$FLEET_DIR
if [ -e "$D/down" ]; then
	echo 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?' >&2
	exit 1
fi
list() { if [ -f "$D/$1" ]; then cat "$D/$1"; else echo "{\"kind\":\"$2\",\"apiVersion\":\"v1\",\"items\":[]}"; fi; }
# nodes [SEL]: the NodeList of ./facts (only the nodes SEL names).
nodes() {
	awk -F '\t' -v sel="${1:-}" '
	BEGIN {
		if (sel != "") while ((getline l <sel) > 0) want[l] = 1
		printf "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":["
	}
	sel != "" && !($1 in want) { next }
	{
		printf "%s{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.present\":\"true\"", sep, $1
		if (split($2, v, ".") == 3 && v[1] != "")
			printf ",\"nvidia.com/cuda.driver.major\":\"%s\",\"nvidia.com/cuda.driver.minor\":\"%s\",\"nvidia.com/cuda.driver.rev\":\"%s\"", v[1], v[2], v[3]
		if ($3 != "") printf ",\"nvidia.com/gpu-driver-upgrade-state\":\"%s\"", $3
		if ($4 != "") printf ",\"nvidia.com/gpu-driver-upgrade.skip\":\"%s\"", $4
		if ($7 != "-") printf ",\"feature.node.kubernetes.io/kernel-version.full\":\"%s\"", $7 == "" ? "5.15.0-107-generic" : $7
		printf ",\"feature.node.kubernetes.io/system-os_release.ID\":\"ubuntu\",\"feature.node.kubernetes.io/system-os_release.VERSION_ID\":\"22.04\"}}"
		if ($5 == "true") printf ",\"spec\":{\"unschedulable\":true}"
		if ($6 != "") printf ",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}", $6
		printf "}"
		sep = ","
	}
	END { print "]}" }' "$D/facts"
}
case $* in
*" config view "*) echo https://127.0.0.1:6443 ;;
*" get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue") nodes ;;
*" get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue%2C"*) nodes "$D/sel" ;;
*" get --raw /apis/policy/v1/poddisruptionbudgets") list pdbs.json PodDisruptionBudgetList ;;
*" get --raw /apis/nvidia.com/"*)
	a=$*
	f=$D/${a##*/}.json
	[ -f "$f" ] || { echo 'Error from server (NotFound): the server could not find the requested resource' >&2; exit 1; }
	cat "$f"
	;;
*" get --raw /api/v1/pods?fieldSelector=spec.nodeName%21%3D") list pods.json PodList ;;
*" get --raw /api/v1/pods?fieldSelector=spec.nodeName%3D"*)
	# The pods on one node: the lines of pods.json (an item a line) that
	# name it as their node.
	a=$*
	n=${a##*%3D}
	# (t/fake-upgrade.sh's race: the eviction lands as its pods are read:
	# its pod of web to n3, web allowing none, before the answer)
	if [ -e "$D/evict-on-read.$n" ]; then
		rm -f "$D/evict-on-read.$n"
		sed "s/\"nodeName\":\"$n\"/\"nodeName\":\"n3\"/" "$D/pods.json" >"$D/pods.new" && mv "$D/pods.new" "$D/pods.json"
		sed 's/"disruptionsAllowed":1/"disruptionsAllowed":0/' "$D/pdbs.json" >"$D/pdbs.new" && mv "$D/pdbs.new" "$D/pdbs.json"
		: >"$D/evicted.$n"
	fi
	printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":['
	[ ! -f "$D/pods.json" ] || awk -v n="\"nodeName\":\"$n\"" 'index($0, n) { sub(/^,/, ""); printf "%s%s", sep, $0; sep = "," }' "$D/pods.json"
	echo ']}'
	;;
*" get --raw /api/v1/pods?labelSelector="*)
	# The pods a selector picks (drv-rollout.sh -B): blockpods.json,
	# whatever the selector; fails while blockpods.fail exists.
	[ ! -e "$D/blockpods.fail" ] || { echo 'Error from server (InternalError): etcdserver: request timed out' >&2; exit 1; }
	list blockpods.json PodList
	;;
*" leases.coordination.k8s.io "* | *" create -f "* | *" replace -f "*) exec sh "$FAKE_LEASE" "$D" "$@" ;;
*) echo "fake kubectl: unexpected: $*" >&2; exit 3 ;;
esac
