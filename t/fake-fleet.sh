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
# pdbs_rv: the budgets' resourceVersion in $rv: the sum of pdbs.json (0 when
# there is none).
pdbs_rv() {
	rv=0
	[ ! -f "$D/pdbs.json" ] || rv=$(cksum <"$D/pdbs.json") rv=${rv%% *}
}
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
*" get --raw /apis/policy/v1/poddisruptionbudgets")
	# The budgets, their list's resourceVersion the sum of pdbs.json
	# (pdbs_rv): a watch from it sees each change made since.
	pdbs_rv
	list pdbs.json PodDisruptionBudgetList | sed "1s/\"metadata\":{}/\"metadata\":{\"resourceVersion\":\"$rv\"}/"
	;;
*" get --raw /apis/policy/v1/poddisruptionbudgets?resourceVersion="*"&watch=1&timeoutSeconds="*)
	# The budgets watched from a resourceVersion (each asked for, a line of
	# ./pdbs.watches): while pdbs.json differs from the one of that
	# resourceVersion, a MODIFIED event of each of its budgets, until
	# timeoutSeconds.  FAKE_PDB_WATCH: "forbidden", RBAC refuses every
	# watch; "410", the first watch answers an ERROR event (Expired).
	a=$*
	from=${a##*resourceVersion=}
	from=${from%%&*}
	echo "$from" >>"$D/pdbs.watches"
	case ${FAKE_PDB_WATCH:-} in
	forbidden)
		echo 'Error from server (Forbidden): poddisruptionbudgets.policy is forbidden: User "system:serviceaccount:gpudrv:upgrader" cannot watch resource "poddisruptionbudgets" in API group "policy" at the cluster scope' >&2
		exit 1
		;;
	410)
		if ! [ -e "$D/pdbs.expired" ]; then
			: >"$D/pdbs.expired"
			echo '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: '"$from"' (99)","reason":"Expired","code":410}}'
			exit 0
		fi
		;;
	esac
	read -r up _ </proc/uptime
	end=$((${up%.*} + ${a##*timeoutSeconds=}))
	while :; do
		pdbs_rv
		if [ "$rv" != "$from" ] && [ -f "$D/pdbs.json" ]; then
			RV=$rv perl -MJSON::PP -0777 -ne '
				my $j = JSON::PP->new->canonical;
				for my $b (@{ $j->decode($_)->{items} }) {
					$b->{kind} = "PodDisruptionBudget";
					$b->{apiVersion} = "policy/v1";
					$b->{metadata}{resourceVersion} = $ENV{RV};
					print $j->encode({ type => "MODIFIED", object => $b }), "\n";
				}' "$D/pdbs.json"
			from=$rv
		fi
		read -r up _ </proc/uptime
		[ "${up%.*}" -lt "$end" ] || exit 0
		sleep 0.2
	done
	;;
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
