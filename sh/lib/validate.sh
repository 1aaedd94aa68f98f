# validate.sh: drv-upgrade.sh's validation of the new driver: the driver
# the node reports (wait_driver), and the health gate (-V), the user's pod
# on the node's GPUs: made from its manifest before anything is read
# (gate_make), created, waited for, judged, deleted (POSIX sh; sourced by
# drv-upgrade.sh only, after runtime.sh, api.sh and state.sh).  It reads
# the caller's $tmp, $node, $version, $validate_timeout, $gate_pod,
# $gate_manifest, $gate_ns and $gate_timeout; it sets $have and $waited
# (the driver the node reports, the seconds waited for it), $gate_name and
# $gate_made (the pod, for gate_delete on the way out), $g_phase,
# $g_reason, $g_exit, $g_after, and $we_cordoned (0: a gate that failed
# leaves the node cordoned).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# wait_driver: the driver the node reports, from the answer to the last
# write, then a look every 2 seconds, until it is $version or
# $validate_timeout has passed.
wait_driver() {
	have=$r_driver
	waited=0
	while [ "$have" != "$version" ]; do
		[ "$waited" -lt "$validate_timeout" ] ||
			on_fail "gpu-feature-discovery reports driver '$have', not $version, after ${waited}s" 2
		nap 2
		waited=$((waited + 2))
		# A look that fails is not an answer: said, and tried again.
		have=
		if look; then
			have=$r_driver
		else
			say "$node: warning: cannot read the node while waiting for the driver: $(said "$tmp/err"); looking again"
		fi
	done
	say "$node: the node reports driver $version"
}

# gate_make: the health gate's manifest made into the pod gpudrv creates,
# $tmp/gate.json, before anything else is read: a manifest gate-pod
# refuses stops the run, nothing changed.
gate_make() {
	if [ -n "$gate_manifest" ] && ! "$gate_pod" -n "$gate_ns" "$node" "$gate_manifest" >"$tmp/gate.json" 2>"$tmp/err"; then
		sed 's/^/    /' "$tmp/err" >&2 || :
		die "the health gate's manifest $gate_manifest (-V) cannot be used: see above; nothing was changed"
	fi
}
# gate_delete: the health gate's pod, if there is one, deleted (not waited for).
gate_delete() {
	if [ -z "$gate_name" ] && [ "$gate_made" = 1 ]; then
		# Asked for, its name not known (the answer lost, a signal): the
		# gate's pods on this node, by their labels.
		gate_made=0
		if kc /dev/null "$tmp/err" delete pod -n "$gate_ns" -l app.kubernetes.io/part-of=gpudrv,gpudrv/gate \
			--field-selector "spec.nodeName=$node" --wait=false; then
			say "$node: the health gate's pods on the node in $gate_ns deleted"
		else
			say "$node: warning: cannot delete the health gate's pod: $(said "$tmp/err"); delete it with: kubectl -n $gate_ns delete pod -l gpudrv/gate --field-selector spec.nodeName=$node"
		fi
	fi
	[ -n "$gate_name" ] || return 0
	if kc /dev/null "$tmp/err" delete pod -n "$gate_ns" "$gate_name" --wait=false; then
		say "$node: the health gate's pod $gate_ns/$gate_name deleted"
	else
		say "$node: warning: cannot delete the health gate's pod $gate_ns/$gate_name: $(said "$tmp/err"); delete it with: kubectl -n $gate_ns delete pod $gate_name"
	fi
	gate_name=
}

# The health gate (-V): the user's check on the node's GPUs, a pod bound to
# the node through its cordon, before the node goes back into service.  It
# must succeed within the gate's timeout, else the node stays cordoned, in
# upgrade-failed, with the pod's reason and last lines quoted.  The pod is
# deleted either way.
# gate_create: the pod created; its name, phase, reason and exit read.
gate_create() {
	gate_made=1
	if ! kc "$tmp/gate.made" "$tmp/err" create --raw "/api/v1/namespaces/$gate_ns/pods" -f "$tmp/gate.json"; then
		on_fail "cannot create the health gate's pod in namespace $gate_ns: $(said "$tmp/err")" 2
	fi
	"$gate_pod" -r "$tmp/gate.made" >"$tmp/gate.st" 2>"$tmp/err" ||
		on_fail "the API's answer to the health gate's pod cannot be read: $(said "$tmp/err")" 2
	read -r gate_name g_phase g_reason g_exit <"$tmp/gate.st"
	gate_made=0
	say "$node: health gate: pod $gate_ns/$gate_name, at most ${gate_timeout}s (-G)"
}
# gate_wait: until the pod ends or the gate's timeout passes: a look every
# 2 seconds; $g_after, the seconds it took.
gate_wait() {
	g_t0=$(date +%s)
	while :; do
		case $g_phase in Succeeded | Failed) break ;; esac
		[ $(($(date +%s) - g_t0)) -lt "$gate_timeout" ] || break
		nap 2
		if kc "$tmp/gate.now" "$tmp/err" get --raw "/api/v1/namespaces/$gate_ns/pods/$gate_name" &&
			"$gate_pod" -r "$tmp/gate.now" >"$tmp/gate.st" 2>/dev/null; then
			read -r _ g_phase g_reason g_exit <"$tmp/gate.st"
		else
			say "$node: warning: cannot read the health gate's pod: $(said "$tmp/err"); looking again"
		fi
	done
	g_after=$(($(date +%s) - g_t0))
}
# gate_fail: the gate that failed (or did not end) said, with the pod's
# last lines, and the run failed with the node left cordoned.
gate_fail() {
	if [ "$g_phase" = Failed ]; then
		g_why="the health gate's pod $gate_ns/$gate_name failed after ${g_after}s: reason $g_reason, exit $g_exit"
	else
		g_why="the health gate's pod $gate_ns/$gate_name did not end within ${gate_timeout}s (-G): phase $g_phase, reason $g_reason"
	fi
	say "$node: $g_why; its last lines:"
	if [ "$(sed -n '2,$p' "$tmp/gate.st" | grep -c .)" -gt 0 ]; then
		sed -n '2,$s/^/    /p' "$tmp/gate.st" >&2 || :
	elif kc "$tmp/gate.log" "$tmp/err" logs -n "$gate_ns" "$gate_name" --all-containers --tail=20; then
		sed 's/^/    /' "$tmp/gate.log" | LC_ALL=C tr -c ' -~\n' '?' >&2 || :
	else
		say "    (no termination message, and its log cannot be read: $(said "$tmp/err"))"
	fi
	# The node stays cordoned, whoever cordoned it: its GPUs failed.
	we_cordoned=0
	on_fail "the GPU health check failed: $g_why; the node stays CORDONED" 1
}
