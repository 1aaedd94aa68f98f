#!/bin/sh
# t/fake-cluster.sh KUBECTL-ARGS...: the API server of one node, lab-node-1,
# behind t/kubectl (t/lib.sh's t_fake_cluster says what it answers): the
# node's state is in $FAKE_DIR/fake, and a GET of the node answers its JSON
# with that state, a write changes it.
F=$FAKE_DIR
# kubectl's global options before the verb, passed over.
while :; do
	case ${1:-} in --request-timeout=* | --kubeconfig=* | --context=*) shift ;; *) break ;; esac
done
if [ -n "${FAKE_HANG:-}" ] && { ! [ -e "$F/hung" ] || [ "${FAKE_HANG_ALL:-0}" = 1 ]; }; then
	hang=0
	[ ! -e "$F/hung" ] || hang=1
	# shellcheck disable=SC2254 # a pattern
	case $* in $FAKE_HANG)
		# FAKE_HANG_NTH: the Nth call that matches, not the first
		echo x >>"$F/hang.count"
		[ "$(grep -c . "$F/hang.count")" -lt "${FAKE_HANG_NTH:-1}" ] || hang=1
		;;
	esac
	if [ "$hang" = 1 ]; then
		sleep 3600 &
		echo "$!" >>"$F/kubectl.pids"
		echo "$*" >>"$F/hung"
		wait
		exit 1
	fi
fi
n=lab-node-1
S=nvidia.com/gpu-driver-upgrade-state
I=nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable
# v NAME: the line of ./fake/NAME (none: empty) in $val, read by the
# shell itself (a GET of the node reads six).
v() {
	val=
	[ ! -s "$F/fake/$1" ] || read -r val <"$F/fake/$1"
}
# node: $FAKE_NODE with the state of ./fake in its labels, spec and
# annotations (FAKE_SKIP, when set, is the skip label).
node() {
	v driver
	d=$val r=${val#*.}
	{
		for l in major:"${d%%.*}" minor:"${r%%.*}" rev:"${r#*.}"; do
			echo "s|\"nvidia.com/cuda.driver.${l%%:*}\": \"[^\"]*\"|\"nvidia.com/cuda.driver.${l%%:*}\": \"${l#*:}\"|"
		done
		v state
		[ -z "$val" ] || echo "s|\"nvidia.com/gpu.present\": \"true\"|\"$S\": \"$val\", &|"
		v skip
		val=${FAKE_SKIP-$val}
		[ -z "$val" ] || echo "s|\"nvidia.com/gpu.present\": \"true\"|\"nvidia.com/gpu-driver-upgrade.skip\": \"$val\", &|"
		v unsched
		[ -z "$val" ] || echo "s|\"spec\": {|\"spec\": {\"unschedulable\": $val,|"
		v initial
		[ -z "$val" ] || echo "s|\"annotations\": {|\"annotations\": {\"$I\": \"$val\",|"
		v ours
		[ -z "$val" ] || echo "s|\"annotations\": {|\"annotations\": {\"gpudrv/cordoned\": \"$val\",|"
	} >"$F/fake/node.sed"
	sed -f "$F/fake/node.sed" "$FAKE_NODE"
}
# up: the new driver (./fake/restarted) taken up, as gpu-feature-discovery
# relabels the node, FAKE_DRIVER_DELAY seconds (default 0) after its pod's
# deletion.
up() {
	[ -f "$F/fake/restarted" ] || return 0
	now
	read -r at <"$F/fake/restarted.at"
	[ "$now" -ge $((at + ${FAKE_DRIVER_DELAY:-0})) ] || return 0
	mv "$F/fake/restarted" "$F/fake/driver"
}
# now: the seconds since boot in $now, read by the shell (no process).
now() {
	read -r now _ </proc/uptime
	now=${now%.*}
}
# hold SECONDS: a watch held open, by the clock drv-upgrade.sh reads.
hold() {
	now
	end=$((now + $1))
	while [ "$now" -lt "$end" ]; do
		sleep 0.2
		now
	done
}
# count NAME: the calls counted in ./NAME, this one too, in $k.
count() {
	k=0
	[ ! -f "$F/$1" ] || read -r k <"$F/$1"
	k=$((k + 1))
	echo "$k" >"$F/$1"
}
case $* in
"get --raw /api/v1/nodes/$n")
	up
	node
	;;
"get --raw /api/v1/nodes?fieldSelector=metadata.name%3D$n&watch=1&timeoutSeconds="*)
	# A watch of the node: the node as it is (ADDED), then the node again
	# (MODIFIED) whenever ./fake changes, until timeoutSeconds.  FAKE_WATCH:
	# "end", each watch ends after its first event (a server that closes
	# it early); "fail", the first watch fails; "forbidden", RBAC refuses
	# every watch.
	case ${FAKE_WATCH:-} in
	forbidden)
		echo 'Error from server (Forbidden): nodes is forbidden: User "system:serviceaccount:gpudrv:upgrader" cannot watch resource "nodes" in API group "" at the cluster scope' >&2
		exit 1
		;;
	fail)
		if ! [ -e "$F/fake/watch.failed" ]; then
			: >"$F/fake/watch.failed"
			echo 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?' >&2
			exit 1
		fi
		;;
	esac
	t=${*##*timeoutSeconds=}
	# (by the clock drv-upgrade.sh's wait reads, the seconds since boot)
	now
	end=$((now + t))
	ev=ADDED
	: >"$F/fake/watched"
	while :; do
		up
		node >"$F/fake/watch.now"
		if ! cmp -s "$F/fake/watch.now" "$F/fake/watched"; then
			printf '{"type":"%s","object":' "$ev"
			cat "$F/fake/watch.now"
			echo '}'
			mv "$F/fake/watch.now" "$F/fake/watched"
		fi
		ev=MODIFIED
		now
		[ "$now" -lt "$end" ] && [ "${FAKE_WATCH:-}" != end ] || exit 0
		sleep 0.2
	done
	;;
"get --raw /api/v1/nodes?"*) cat "$FAKE_NODES" ;;
"get --raw /api/v1/nodes/"*)
	echo "Error from server (NotFound): nodes \"${3##*/}\" not found" >&2
	exit 1
	;;
"get --raw /apis/policy/v1/poddisruptionbudgets")
	# FAKE_PDB_AFTER: the budgets and pods of the second look, the third...,
	# a file each (the last for every look after).
	if [ -n "${FAKE_PDB_AFTER:-}" ]; then
		count pdb.calls
		i=1
		for f in $FAKE_PDB_AFTER; do
			[ "$i" -lt "$k" ] || break
			FAKE_PDB=$f
			i=$((i + 1))
		done
	fi
	cat "$FAKE_PDB"
	;;
"get --raw /apis/nvidia.com/"*)
	# The GPU Operator's objects: ./fake/RESOURCE.json, else the CRD is not installed.
	[ -f "$F/fake/${3##*/}.json" ] || { echo 'Error from server (NotFound): the server could not find the requested resource' >&2; exit 1; }
	cat "$F/fake/${3##*/}.json"
	;;
"create --raw /api/v1/namespaces/default/events -f "*)
	# An Event: its type and reason into ./fake/events (FAKE_EVENTS=forbidden: RBAC refuses it).
	if [ "${FAKE_EVENTS:-}" = forbidden ]; then
		echo 'Error from server (Forbidden): events is forbidden: User "system:serviceaccount:gpudrv:upgrader" cannot create resource "events" in API group "" in the namespace "default"' >&2
		exit 1
	fi
	sed -n 's/.*"reason":"\([^"]*\)","message":"\([^"]*\)","type":"\([^"]*\)".*/\3 \1 \2/p' "$5" >>"$F/fake/events"
	echo '{"kind":"Event","apiVersion":"v1"}'
	;;
"create --raw /api/v1/namespaces/"*"/eviction -f "*)
	# FAKE_EVICT=429: a budget refuses it; 500: two budgets select the pod.
	case ${FAKE_EVICT:-} in
	429) echo "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget." >&2 && exit 1 ;;
	500) echo 'Error from server (InternalError): This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' >&2 && exit 1 ;;
	esac
	: >"$F/fake/evicted"
	echo '{"kind":"Status","apiVersion":"v1","status":"Success","code":201}'
	;;
"get --raw /api/v1/pods?fieldSelector=spec.nodeName%3D$n&resourceVersion="*"&watch=1&timeoutSeconds="*)
	# The node's pods watched from a resourceVersion (each asked for, a
	# line of ./fake/pods.watches): the events of the file FAKE_LEFT_EVENTS
	# a second after it starts, which take the pods of FAKE_LEFT away
	# (./fake/gone), then nothing until timeoutSeconds.  FAKE_PODS_WATCH:
	# "410", the first watch answers an ERROR event (Expired); "end", the
	# first gives the events of FAKE_LEFT_FIRST and ends; "forbidden", RBAC
	# refuses every one; "none", no event ever.
	t=${*##*timeoutSeconds=}
	rv=${*##*resourceVersion=}
	echo "${rv%%&*}" >>"$F/fake/pods.watches"
	count pods.watch.calls
	case ${FAKE_PODS_WATCH:-}:$k in
	forbidden:*)
		echo 'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:gpudrv:upgrader" cannot watch resource "pods" in API group "" at the cluster scope' >&2
		exit 1
		;;
	410:1)
		echo '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 40 (52)","reason":"Expired","code":410}}'
		exit 0
		;;
	end:1)
		sleep 1
		cat "$FAKE_LEFT_FIRST"
		exit 0
		;;
	none:*) ;;
	*)
		sleep 1
		cat "$FAKE_LEFT_EVENTS"
		: >"$F/fake/gone"
		;;
	esac
	hold "$t"
	;;
"get --raw /api/v1/pods?labelSelector="*"&resourceVersion="*"&watch=1&timeoutSeconds="*)
	# -j's pods watched from a resourceVersion (each asked for, a line of
	# ./fake/jobs.watches): the events of the file FAKE_JOBS_EVENTS a
	# second after it starts (unset: none), then nothing until
	# timeoutSeconds.
	rv=${*##*resourceVersion=}
	echo "${rv%%&*}" >>"$F/fake/jobs.watches"
	if [ -n "${FAKE_JOBS_EVENTS:-}" ]; then
		sleep 1
		cat "$FAKE_JOBS_EVENTS"
	fi
	hold "${*##*timeoutSeconds=}"
	;;
"get --raw /api/v1/pods?labelSelector="*"&fieldSelector=spec.nodeName%3D$n%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed%2Cstatus.phase%21%3DUnknown")
	# -j's query: FAKE_JOBS names the files in $FAKE_DATA/upgrade it
	# gets (the pods still running, as the API server filters them), one a
	# call, the last one again and again ("refused": the API refuses the
	# selector); unset: no pod.
	[ -n "${FAKE_JOBS:-}" ] || { printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n'; exit 0; }
	count jobs.calls
	# shellcheck disable=SC2086 # one file a word
	set -- $FAKE_JOBS
	[ "$k" -le $# ] || k=$#
	f=
	eval "f=\${$k}"
	if [ "$f" = refused ]; then
		echo 'Error from server (BadRequest): unable to parse requirement: values[0][job]: Invalid value: "train!": a valid label must be an empty string or consist of alphanumeric characters' >&2
		exit 1
	fi
	cat "$FAKE_DATA/upgrade/$f"
	;;
"get --raw /api/v1/pods?labelSelector="*) printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' ;; # no pod -j selects
"get --raw /api/v1/pods?fieldSelector=spec.nodeName%3D$n")
	# FAKE_LEFT: the node's pods (a PodList) once a pod was evicted, until
	# a watch has seen them go or FAKE_LEFT_LISTS lists were made after the
	# eviction (the pods then gone); else none.
	if [ -n "${FAKE_LEFT:-}" ] && [ -e "$F/fake/evicted" ] && ! [ -e "$F/fake/gone" ]; then
		count left.calls
		if [ "$k" -lt "${FAKE_LEFT_LISTS:-1000}" ]; then cat "$FAKE_LEFT" && exit 0; fi
		: >"$F/fake/gone"
	fi
	printf '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"60"},"items":[]}\n'
	;;
"label node $n --overwrite $S="*) echo "${5#*=}" >"$F/fake/state" && echo "node/$n labeled" ;;
"label node $n $S-") : >"$F/fake/state" && echo "node/$n unlabeled" ;;
"patch node $n --type=merge --field-manager=gpudrv -p "*" -o json")
	# drv-upgrade.sh's writes: the members it sends, as the API server
	# merges them; the answer is the node after the write.
	p=$7
	case $p in *"\"$S\":\"${FAKE_DENY:-none}\""*)
		# FAKE_DENY: a webhook denies a write of that state, in two
		# lines, the second like one of drv-upgrade.sh's own.
		echo 'Error from server: admission webhook "policy.example" denied the request:' >&2
		echo "drv-upgrade.sh: lab-node-1: nvidia.com/gpu-driver-upgrade-state=upgrade-done" >&2
		exit 1
		;;
	esac
	# The members it sends, a line "KEY":VALUE each (no key or value of
	# theirs holds a brace or a comma), read by the shell.
	members=$(printf '%s\n' "$p" | sed 's/[{},]/\n/g')
	major= minor= rev=
	while IFS=: read -r k val; do
		k=${k#\"} k=${k%\"}
		case $k:$val in
		"$S":\"*) val=${val#\"} && echo "${val%\"}" >"$F/fake/state" ;;
		"$S":null) : >"$F/fake/state" ;;
		# FAKE_CORDON_NOOP=1: a cordon the API answers without taking it
		unschedulable:true) [ "${FAKE_CORDON_NOOP:-0}" = 1 ] || echo true >"$F/fake/unsched" ;;
		unschedulable:null) : >"$F/fake/unsched" ;;
		"$I":\"true\") echo true >"$F/fake/initial" ;;
		"$I":null) : >"$F/fake/initial" ;;
		gpudrv/cordoned:\"true\") echo true >"$F/fake/ours" ;;
		gpudrv/cordoned:null) : >"$F/fake/ours" ;;
		nvidia.com/cuda.driver.major:* | nvidia.com/cuda.driver.minor:* | nvidia.com/cuda.driver.rev:*)
			val=${val#\"} && eval "${k##*.}=\${val%\\\"}" ;;
		esac
	done <<-EOF
		$members
	EOF
	if [ -n "$major" ] && [ "${FAKE_NO_DRIVER:-0}" != 1 ]; then
		echo "$major.$minor.$rev" >"$F/fake/driver"
	fi
	node
	;;
"uncordon $n") : >"$F/fake/unsched" && echo "node/$n uncordoned" ;;
"drain $n "*) echo "node/$n already cordoned" && echo "node/$n drained" ;;
"delete pod "*)
	# FAKE_NEW_DRIVER: the driver the node reports once its pod restarted
	# (up: from the next look at the node, or FAKE_DRIVER_DELAY s later).
	if [ -n "${FAKE_NEW_DRIVER:-}" ]; then
		now
		echo "$now" >"$F/fake/restarted.at"
		echo "$FAKE_NEW_DRIVER" >"$F/fake/restarted"
	fi
	echo 'pod "nvidia-driver-daemonset-x" deleted'
	;;
*)
	echo "fake kubectl: no answer for: $*" >&2
	exit 1
	;;
esac
