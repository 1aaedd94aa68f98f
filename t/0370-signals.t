#!/bin/sh
# HUP, INT and TERM at every step: each script stops at once, exits 2,
# says so, and leaves no kubectl of its own running (nor what kubectl
# started); drv-upgrade.sh also says where the node stands, and the node
# (a fake API server, t_fake_cluster) agrees.
. "$(dirname "$0")/lib.sh"

t_fake_cluster
t_matrix
S=nvidia.com/gpu-driver-upgrade-state
# sleep, as the scripts run it, with its pid recorded too.
mkdir fakebin
printf '#!/bin/sh\necho "$$" >>"%s/kubectl.pids"\nexec /bin/sleep "$@"\n' "$PWD" >fakebin/sleep
chmod +x fakebin/sleep

# hung: the fake kubectl hangs now.  logged PATTERN: a call so far matches.
hung() { [ -s hung ]; }
logged() { grep -q -e "$1" kubectl.log 2>/dev/null; }

# signal SIG SECONDS: SIG to the script ($t_pid), then waits for it, at most
# SECONDS; $took: how long it took to end.
signal() {
	t0=$(date +%s)
	kill "-$1" "$t_pid"
	t_wait "$2"
	took=$(($(date +%s) - t0))
}
at_once() {
	if [ "$took" -le 3 ]; then t_ok 0 "$1 at once (${took}s)"; else t_ok 1 "$1 at once (${took}s)"; fi
}

# The read-only scripts, in their one call.
for sig in TERM INT HUP; do
	for s in drv-tag.sh drv-audit.sh drv-states.sh; do
		t_fake_cluster
		case $s in
		drv-tag.sh) set -- lab-node-1 ;;
		drv-audit.sh) set -- -m "$M" -p audit.prom ;;
		*) set -- -m "$M" ;;
		esac
		FAKE_HANG='get *' t_bg "$s" "$@"
		t_until 10 hung
		t_ok $? "$s: kubectl hangs"
		signal "$sig" 10
		t_rc 2 "$s stopped by SIG$sig while kubectl hangs"
		at_once "$s: SIG$sig is handled"
		t_err "$s says so" "$s: interrupted by SIG$sig"
		t_out "$s prints nothing on stdout"
		t_none_alive "$s: neither kubectl nor its child is left running" kubectl.pids
		if [ "$s" = drv-audit.sh ]; then
			t_grep "drv-audit.sh -p records the failed run" audit.prom '^gpudrv_audit_exit_status 2$'
		fi
	done
done

# drv-upgrade.sh, at each of its kubectl calls in turn: what the call is,
# and where the failure path must leave the node.
while IFS='|' read -r what call phase nth; do
	for sig in TERM INT HUP; do
		t_fake_cluster
		FAKE_HANG=$call FAKE_HANG_NTH=${nth:-1} PATH=$PWD/fakebin:$PATH t_bg drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
		t_until 15 hung
		t_ok $? "drv-upgrade.sh: kubectl hangs at $what"
		signal "$sig" 20
		t_rc 2 "drv-upgrade.sh stopped by SIG$sig at $what"
		at_once "SIG$sig at $what is handled"
		t_grep "says it was interrupted" err "^drv-upgrade.sh: lab-node-1: interrupted by SIG$sig\$"
		case $phase in
		none)
			where="lab-node-1: nothing was changed"
			expect="unschedulable= state="
			;;
		cordoned)
			where="lab-node-1: driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed"
			expect="unschedulable= state=upgrade-failed"
			;;
		drained)
			where="lab-node-1: the node is CORDONED and its pods removed; $S=upgrade-failed"
			expect="unschedulable=true state=upgrade-failed"
			;;
		uncordoned)
			# The write of upgrade-done and the uncordon hung: never made.
			where="lab-node-1: driver 550.90.07 validated; the uncordon was sent, not confirmed; $S=upgrade-failed"
			expect="unschedulable=true state=upgrade-failed"
			;;
		finished)
			where="lab-node-1: upgraded: driver 550.90.07, the node as it was before; $S=upgrade-done"
			expect="unschedulable= state=upgrade-done"
			;;
		esac
		t_grep "says where the node stands ($phase)" err "^drv-upgrade.sh: $where\$"
		t_grep "ends with the node's state from the API" err "^drv-upgrade.sh: lab-node-1: now: $expect\$"
		t_run t_fake_state
		t_out "and the node is so" "$expect"
		t_none_alive "no kubectl, nor its child, nor sleep is left running" kubectl.pids
	done
done <<'EOF2'
the node read|get --raw /api/v1/nodes/lab-node-1|none
the ClusterPolicies|get --raw /apis/nvidia.com/v1/clusterpolicies|none
the NVIDIADrivers|get --raw /apis/nvidia.com/v1alpha1/nvidiadrivers|none
the budgets|get --raw /apis/policy/v1/poddisruptionbudgets|none
the node's pods|get --raw /api/v1/pods[?]fieldSelector=*|none
the cordon with drain-required|patch node lab-node-1 *"drain-required"*|cordoned
the cordon's Event|create --raw /api/v1/namespaces/default/events *|cordoned
the drain|drain lab-node-1 *|cordoned
validation-required with the driver labels|patch node lab-node-1 *"validation-required"*|drained
upgrade-done with the uncordon|patch node lab-node-1 *"upgrade-done"*|uncordoned
the audit|get --raw /api/v1/nodes[?]*|finished
EOF2

# -R (drv-rollout.sh's way): a signal stops the upgrade, it does not fail
# it.  Before the drain ended the node goes back as it was, upgrade-required;
# after, it stays cordoned in the state it had reached, for a rerun.
while IFS='|' read -r what call phase nth; do
	t_fake_cluster
	FAKE_HANG=$call FAKE_HANG_NTH=${nth:-1} PATH=$PWD/fakebin:$PATH t_bg drv-upgrade.sh -R -L $T_DRAIN -m "$M" lab-node-1 550.90.07
	t_until 15 hung
	t_ok $? "drv-upgrade.sh -R: kubectl hangs at $what"
	signal TERM 20
	t_rc 2 "drv-upgrade.sh -R stopped by SIGTERM at $what"
	cp err run.err
	t_run t_fake_state
	case $phase in
	none) t_out "-R, $what: nothing was changed" "unschedulable= state=" ;;
	cordoned)
		t_out "-R, $what: schedulable again, upgrade-required" "unschedulable= state=upgrade-required"
		;;
	drained)
		t_grep "-R, $what: still cordoned, in the state it had reached" out '^unschedulable=true state=[a-z-]*-required$'
		t_grep "and says so, and how to resume" run.err "^drv-upgrade.sh: to resume: drv-upgrade.sh -R -L "
		;;
	uncordoned)
		t_out "-R, $what: still cordoned, validation-required, for a rerun" "unschedulable=true state=validation-required"
		t_grep "and says so, and how to resume" run.err "^drv-upgrade.sh: to resume: drv-upgrade.sh -R -L "
		;;
	*) t_grep "-R, $what: upgrade-done" out '^unschedulable= state=upgrade-done$' ;;
	esac
	t_none_alive "-R, $what: nothing left running" kubectl.pids
done <<'EOF2'
the node read|get --raw /api/v1/nodes/lab-node-1|none
the ClusterPolicies|get --raw /apis/nvidia.com/v1/clusterpolicies|none
the NVIDIADrivers|get --raw /apis/nvidia.com/v1alpha1/nvidiadrivers|none
the budgets|get --raw /apis/policy/v1/poddisruptionbudgets|none
the node's pods|get --raw /api/v1/pods[?]fieldSelector=*|none
the cordon with drain-required|patch node lab-node-1 *"drain-required"*|cordoned
the cordon's Event|create --raw /api/v1/namespaces/default/events *|cordoned
the drain|drain lab-node-1 *|cordoned
validation-required with the driver labels|patch node lab-node-1 *"validation-required"*|drained
upgrade-done with the uncordon|patch node lab-node-1 *"upgrade-done"*|uncordoned
the audit|get --raw /api/v1/nodes[?]*|finished
EOF2

# The cluster's own policy, the pod deletion (its pod that holds a GPU
# evicted, then waited for): a signal at either puts the node back, as at
# the drain.
while IFS='|' read -r what call nth; do
	for sig in TERM INT HUP; do
		t_fake_cluster
		FAKE_PDB=$DATA/pdb-gpu-ok.json FAKE_HANG=$call FAKE_HANG_NTH=${nth:-1} PATH=$PWD/fakebin:$PATH \
			t_bg drv-upgrade.sh -L -m "$M" lab-node-1 550.90.07
		t_until 15 hung
		t_ok $? "drv-upgrade.sh: kubectl hangs at $what"
		signal "$sig" 20
		t_rc 2 "drv-upgrade.sh stopped by SIG$sig at $what"
		at_once "SIG$sig at $what is handled"
		t_grep "says where the node stands" err "^drv-upgrade.sh: lab-node-1: driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed$"
		t_run t_fake_state
		t_out "and the node is so" "unschedulable= state=upgrade-failed"
		t_is "gpudrv's record of its cordon went with it" "$(grep -c '"gpudrv/cordoned":null' kubectl.log)" 1
		t_none_alive "no kubectl, nor its child, nor sleep is left running" kubectl.pids
	done
done <<'EOF2'
the eviction of the pod that holds a GPU|create --raw /api/v1/namespaces/gpu-drv/pods/*/eviction *
the look for the evicted pod|get --raw /api/v1/pods[?]fieldSelector=*|2
EOF2

# A node cordoned by hand: the annotation that remembers it, written with
# the cordon.  The node stays cordoned, as it was.
for sig in TERM INT HUP; do
	t_fake_cluster
	echo true >fake/unsched
	FAKE_HANG='patch node lab-node-1 *initial-state.unschedulable":"true"*' t_bg drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
	t_until 15 hung
	t_ok $? "drv-upgrade.sh: kubectl hangs at the cordon with the initial-state annotation"
	signal "$sig" 20
	t_rc 2 "drv-upgrade.sh stopped by SIG$sig at the annotation"
	t_grep "says it is left cordoned, as it was" err "^drv-upgrade.sh: lab-node-1: driver unchanged; the node is cordoned, as it was before the upgrade; $S=upgrade-failed$"
	t_run t_fake_state
	t_out "and the node is so: cordoned, upgrade-failed" "unschedulable=true state=upgrade-failed"
	t_is "with the initial-state annotation, so that a rerun leaves it cordoned" "$(cat fake/initial)" true
	t_none_alive "no kubectl left running" kubectl.pids
done

# Between calls: the waits for budget headroom (-w) and for the new driver
# (-g) sleep, and a signal cuts the sleep short.
for sig in TERM INT HUP; do
	t_fake_cluster
	FAKE_PDB=$DATA/pdb-lab.json PATH=$PWD/fakebin:$PATH t_bg drv-upgrade.sh -L $T_DRAIN -w 60 -m "$M" lab-node-1 550.90.07
	t_until 15 logged '^--request-timeout=[0-9]*s get --raw /apis/policy/v1/poddisruptionbudgets'
	t_ok $? "drv-upgrade.sh -w 60 waits for headroom"
	sleep 1
	signal "$sig" 20
	t_rc 2 "drv-upgrade.sh stopped by SIG$sig while it waits for headroom"
	at_once "SIG$sig during the wait"
	t_grep "says nothing was changed" err "^drv-upgrade.sh: lab-node-1: nothing was changed$"
	t_none_alive "no kubectl nor sleep left running" kubectl.pids

	t_fake_cluster
	FAKE_NO_DRIVER=1 PATH=$PWD/fakebin:$PATH t_bg drv-upgrade.sh -L $T_DRAIN -g 60 -m "$M" lab-node-1 550.90.07
	t_until 15 logged "\"$S\":\"validation-required\""
	t_ok $? "drv-upgrade.sh -g 60 waits for the driver to be reported"
	sleep 1
	signal "$sig" 20
	t_rc 2 "drv-upgrade.sh stopped by SIG$sig while it waits for the driver"
	at_once "SIG$sig during the validation wait"
	t_grep "says the node is cordoned and drained" err "^drv-upgrade.sh: lab-node-1: the node is CORDONED and its pods removed; $S=upgrade-failed$"
	t_run t_fake_state
	t_out "and it is" "unschedulable=true state=upgrade-failed"
	t_none_alive "no kubectl nor sleep left running" kubectl.pids
done
# A signal while a function's output goes to a file (out's emit, `f >file`):
# a trap runs inside that redirection, and what the way out says and prints
# must reach the script's own stdout and stderr all the same, not that file
# (the file, under $tmp, is gone with it).  Checked with the library alone,
# under dash.
cat >redir.sh <<'EOF2'
prog=redir usage_line=usage lib=$1
. "$lib/runtime.sh"
abort() {
	say "$1"
	echo "the way out"
	finish 2
}
gpudrv_start 60 5
napping() { nap 30; }
echo started
napping >inner.out 2>inner.err
finish 0
EOF2
for sig in TERM INT HUP; do
	rm -f inner.out inner.err
	t_bg dash redir.sh "$BIN/../lib/gpudrv"
	t_until 10 test -e inner.err
	t_ok $? "redir.sh: its function's output in a file"
	sleep 0.5
	signal "$sig" 10
	t_rc 2 "SIG$sig inside the redirection stops it"
	t_err "the message is on its stderr" "redir: interrupted by SIG$sig"
	t_out "what the way out prints, on its stdout" started "the way out"
	t_is "none of it in the function's files" "$(cat inner.out inner.err)" ""
done
t_done
