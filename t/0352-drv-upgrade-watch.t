#!/bin/sh
# drv-upgrade.sh's wait for the new driver (validation-required): the node
# watched, not looked at every 2 s (sh/lib/validate.sh): a watch ended by
# the server is started again, one that fails is said and started again,
# one RBAC refuses falls back to the looks, and the timeout (-g) still
# holds, with nothing left running.
. "$(dirname "$0")/lib.sh"

t_fake_cluster
t_matrix
S=nvidia.com/gpu-driver-upgrade-state
WATCH='get --raw /api/v1/nodes?fieldSelector=metadata.name%3Dlab-node-1&watch=1&timeoutSeconds='
# calls PATTERN: how many kubectl calls match PATTERN (a basic regex).
calls() { grep -c -e "^--request-timeout=[0-9]*s $1" kubectl.log || :; }
# looks_after_restart: the GETs of the node after the driver pod's delete.
looks_after_restart() {
	sed -n '/ delete pod /,$p' kubectl.log | grep -c ' get --raw /api/v1/nodes/lab-node-1$' || :
}
OUT_DONE="lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"
REPORTS="drv-upgrade.sh: lab-node-1: the node reports driver 550.90.07"
# up: drv-upgrade.sh as the GPU Operator runs an upgrade: the driver pod
# deleted, the new driver reported FAKE_DRIVER_DELAY seconds later.
up() { drv-upgrade.sh -m "$M" "$@" lab-node-1 550.90.07; }
FAKE_NEW_DRIVER=550.90.07
export FAKE_NEW_DRIVER

# 1. The driver reported 2 s after its pod's deletion: one watch, whose
# first event (ADDED) is the old driver, and whose next (MODIFIED) the
# new; no look at the node meanwhile.
t_fake_cluster
FAKE_DRIVER_DELAY=2 t_run up
t_rc 0 "the new driver reported 2 s after its pod's deletion"
t_out "the audit and the node upgrade-done" "audit: OK" "$OUT_DONE"
t_grep "says the node reports it" err "^$REPORTS\$"
t_is "one watch of the node" "$(calls "$WATCH")" 1
t_is "and no look at the node after the driver pod's delete" "$(looks_after_restart)" 0
t_grep "the watch asks no resourceVersion, and ends within the request timeout (45 s of 60)" kubectl.log \
	"^--request-timeout=60s ${WATCH}45\$"
if grep -q 'warning' err; then t_ok 1 "no warning"; t_diag <err; else t_ok 0 "no warning"; fi
t_none_alive "nothing of the watch is left running" kubectl.pids

# 2. A server that ends each watch after its first event: the watch is
# started again, from the node as it is, until the driver shows.
t_fake_cluster
FAKE_DRIVER_DELAY=3 FAKE_WATCH=end t_run up
t_rc 0 "watches the server ends at once"
t_out "the node upgrade-done all the same" "audit: OK" "$OUT_DONE"
n=$(calls "$WATCH")
[ "$n" -ge 2 ] && [ "$n" -le 4 ]
t_ok $? "started again, at most every 2 s ($n watches in 3 s)"
t_is "never a look instead" "$(looks_after_restart)" 0
if grep -q 'warning' err; then t_ok 1 "a watch the server ended is no failure: no warning"; t_diag <err; else
	t_ok 0 "a watch the server ended is no failure: no warning"
fi

# 3. A watch that fails: said, and the node watched again.
t_fake_cluster
FAKE_WATCH=fail t_run up
t_rc 0 "a watch that fails"
t_out "the node upgrade-done all the same" "audit: OK" "$OUT_DONE"
t_grep "says it cannot read the node, with kubectl's words, and looks again" err \
	"^drv-upgrade.sh: lab-node-1: warning: cannot read the node while waiting for the driver: The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?; looking again\$"
t_is "two watches" "$(calls "$WATCH")" 2

# 4. A Role without watch on nodes: said once, with the rule to add, and
# the node looked at every 2 s instead.
t_fake_cluster
FAKE_WATCH=forbidden FAKE_DRIVER_DELAY=3 t_run up
t_rc 0 "a watch RBAC refuses"
t_out "the node upgrade-done all the same" "audit: OK" "$OUT_DONE"
t_grep "says the API refuses the watch, and what to add to the Role" err \
	"^drv-upgrade.sh: lab-node-1: warning: the API refuses to watch the node: Error from server (Forbidden): nodes is forbidden: .* cannot watch resource \"nodes\" .*; looking at it every 2 s instead (add watch to the nodes rule of the Role: deploy/20-upgrader.yaml)\$"
t_is "once" "$(grep -c 'refuses to watch' err)" 1
t_is "one watch asked" "$(calls "$WATCH")" 1
n=$(looks_after_restart)
[ "$n" -ge 1 ]
t_ok $? "then looks at the node ($n)"
t_grep "and says the node reports the driver" err "^$REPORTS\$"

# 5. No new driver within -g: the wait ends when -g says, the node left
# cordoned in upgrade-failed, nothing of the watch left running.
t_fake_cluster
unset FAKE_NEW_DRIVER
t_run up -g 3
t_rc 2 "no new driver within -g 3"
t_grep "says what the node reports, and after how long" err \
	"^drv-upgrade.sh: lab-node-1: gpu-feature-discovery reports driver '535.183.06', not 550.90.07, after [34]s\$"
t_run t_fake_state
t_out "the node cordoned, upgrade-failed" "unschedulable=true state=upgrade-failed"
t_none_alive "nothing of the watch is left running" kubectl.pids

# 6. A signal during the watch: the run stops at once, and neither kubectl
# nor the reader (labels2tag, in a copy of the tools whose labels2tag
# records its pid) is left running.
mkdir -p tools/bin tools/lib/gpudrv
cp "$BIN"/drv-upgrade.sh "$BIN"/drv-audit.sh "$BIN"/pdb-check "$BIN"/matrix-grep "$BIN"/upgrade-policy "$BIN"/gate-pod tools/bin/
cp "$BIN"/../lib/gpudrv/*.sh tools/lib/gpudrv/
printf '#!/bin/sh
echo "$$" >>"%s/kubectl.pids"
exec "%s/labels2tag" "$@"
' "$PWD" "$BIN" >tools/bin/labels2tag
chmod +x tools/bin/labels2tag
for sig in TERM INT HUP; do
	t_fake_cluster
	t_bg tools/bin/drv-upgrade.sh -m "$M" -g 60 lab-node-1 550.90.07
	t_until 15 grep -qs "$WATCH" kubectl.log
	t_ok $? "SIG$sig: the node is watched"
	sleep 1
	t0=$(date +%s)
	kill "-$sig" "$t_pid"
	t_wait 20
	t_rc 2 "SIG$sig during the watch"
	took=$(($(date +%s) - t0))
	[ "$took" -le 3 ]
	t_ok $? "SIG$sig: at once (${took}s)"
	t_grep "SIG$sig: says the node is cordoned" err "^drv-upgrade.sh: lab-node-1: the node is CORDONED and its pods removed; $S=upgrade-failed\$"
	t_none_alive "SIG$sig: neither kubectl nor labels2tag is left running" kubectl.pids
done
t_done
