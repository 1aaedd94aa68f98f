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
# write, then as the API tells each change of the node (node_watch), until
# it is $version or $validate_timeout has passed.  A watch that fails is
# said, and started again 2 s later; one the API refuses (Forbidden: a Role
# without watch on nodes) is said, and the node is looked at every 2 s.
wait_driver() {
	have=$r_driver
	gpudrv_clock
	wd_t0=$gpudrv_now
	waited=0
	wd_poll=0
	wd_failed="cannot read the node while waiting for the driver"
	while [ "$have" != "$version" ]; do
		[ "$waited" -lt "$validate_timeout" ] ||
			on_fail "gpu-feature-discovery reports driver '$have', not $version, after ${waited}s" 2
		wd_rc=0
		gpudrv_clock
		wd_i=$gpudrv_now
		if [ "$wd_poll" = 1 ]; then
			nap 2
			# A look that fails is not an answer: said, and tried again.
			have=
			if look; then have=$r_driver; else
				say "$node: warning: $wd_failed: $(said "$tmp/err"); looking again"
			fi
		else
			node_watch $((validate_timeout - waited)) || wd_rc=$?
			watch_after "$wd_rc" "$wd_i" "the node" "looking at it every 2 s" nodes "$wd_failed" || wd_poll=1
		fi
		gpudrv_clock
		waited=$((gpudrv_now - wd_t0))
	done
	say "$node: the node reports driver $version"
}
# node_watch SECONDS: the node watched, at most SECONDS (watch_until): one
# request, whose answer is the node as it is, then each change of it as it
# comes (no resourceVersion asked: nothing between two watches is missed,
# and none is ever too old, 410), each read by labels2tag -w -F; the watch
# stopped at the first that reports $version.  $have, the driver last
# reported.  Status 0: $version; 1: the watch ended without it; 2: it
# failed, $tmp/err says why.
node_watch() {
	nw_rc=0
	watch_until "/api/v1/nodes?fieldSelector=metadata.name%3D$node&watch=1" "$1" nw_filter nw_line || nw_rc=$?
	nw_have=$(sed -n '$p' "$tmp/watch.rec")
	[ -z "$nw_have" ] || have=$nw_have
	return "$nw_rc"
}
nw_filter() {
	"$labels2tag" -w -F -b "$major"
}
# nw_line LINE: labels2tag's line of an event: the driver it reports, and
# status 0 when that is $version (in a subshell: the record in a file).
nw_line() {
	printf '%s\n' "${1#* }" >"$tmp/watch.last"
	record_read "$tmp/watch.last"
	echo "$r_driver"
	[ "${1%% *}" != DELETED ] && [ "$r_driver" = "$version" ]
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
# gate_wait: until the pod ends or the gate's timeout passes, as the API
# tells it: the pod watched (watch_until, no resourceVersion asked: its
# first event is the pod as it is), then, once its phase is Succeeded or
# Failed, read once whole (gate-pod -r: its reason, exit and last words),
# as it is once the timeout passes.
# A watch that ends is started again, one that fails is said, neither at
# once (2 s apart at least); one the API refuses (Forbidden) is said, and
# the pod is then read every 2 s.  $g_after, the seconds it took.
gate_wait() {
	gpudrv_clock
	g_t0=$gpudrv_now
	gw_poll=0
	while :; do
		case $g_phase in Succeeded | Failed) break ;; esac
		gpudrv_clock
		gw_s=$((gate_timeout - (gpudrv_now - g_t0)))
		[ "$gw_s" -gt 0 ] || break
		gw_rc=0
		if [ "$gw_poll" = 0 ]; then
			gw_i=$gpudrv_now
			watch_until "/api/v1/namespaces/$gate_ns/pods?fieldSelector=metadata.name%3D$gate_name&watch=1" \
				"$gw_s" pods_events gate_line || gw_rc=$?
			watch_after "$gw_rc" "$gw_i" "the health gate's pod" "reading it every 2 s" pods \
				"cannot watch the health gate's pod" || gw_poll=1
			# (read whole only once it has ended)
			[ "$gw_rc" = 0 ] || continue
		else
			nap 2
		fi
		gate_read
	done
	gpudrv_clock
	g_after=$((gpudrv_now - g_t0))
	# Not ended: how it stands, for the message.
	case $g_phase in Succeeded | Failed) ;; *) [ "$gw_poll" = 1 ] || gate_read ;; esac
}
# gate_read: the gate's pod, one GET, read by gate-pod -r: its phase,
# reason and exit, and its last words in $tmp/gate.st.
gate_read() {
	if kc "$tmp/gate.now" "$tmp/err" get --raw "/api/v1/namespaces/$gate_ns/pods/$gate_name" &&
		"$gate_pod" -r "$tmp/gate.now" >"$tmp/gate.st" 2>/dev/null; then
		read -r _ g_phase g_reason g_exit <"$tmp/gate.st"
	else
		say "$node: warning: cannot read the health gate's pod: $(said "$tmp/err"); looking again"
	fi
}
# gate_line LINE: gate_wait's watch, read by pdb-check -p -w: status 0
# once the pod has ended.
gate_line() {
	# (pdb-check's words: an event, a resourceVersion, a node, a pod, a phase)
	# shellcheck disable=SC2086 # split into its words; none is a pattern
	set -- $1
	[ $# -ge 5 ] && [ "$1" != DELETED ] || return 1
	case $5 in Succeeded | Failed) return 0 ;; *) return 1 ;; esac
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
