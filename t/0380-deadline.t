#!/bin/sh
# One deadline for a whole run (GPUDRV_TIMEOUT), kept even when kubectl
# itself never answers: the script gives up in time, says why, exits 2, and
# leaves no kubectl (nor what kubectl started) running.  Each request is
# bounded too: --request-timeout is GPUDRV_REQUEST_TIMEOUT or what is left.
. "$(dirname "$0")/lib.sh"

t_fake_cluster
t_matrix
S=nvidia.com/gpu-driver-upgrade-state
why="is the API server, or the kubeconfig's credential plugin, hanging?"

# run SECONDS CMD...: CMD in the background, waited for at most SECONDS;
# $took: how long it ran.
run() {
	t0=$(date +%s)
	t_wait_for=$1
	shift
	t_bg "$@"
	t_wait "$t_wait_for"
	took=$(($(date +%s) - t0))
}
# within LOW HIGH DESC: $took is from LOW to HIGH seconds.
within() {
	if [ "$took" -ge "$1" ] && [ "$took" -le "$2" ]; then t_ok 0 "$3 (${took}s)"; else t_ok 1 "$3 (${took}s)"; fi
}

# The read-only scripts: a kubectl that never answers, a 3 s deadline.
for s in drv-tag.sh drv-audit.sh drv-states.sh drv-kubeconfig.sh; do
	t_fake_cluster
	case $s in
	drv-tag.sh) set -- lab-node-1 ;;
	drv-audit.sh) set -- -m "$M" -p audit.prom ;;
	drv-kubeconfig.sh) set -- auditor cron.kubeconfig ;;
	*) set -- -m "$M" ;;
	esac
	GPUDRV_TIMEOUT=3 FAKE_HANG='*' run 30 "$s" "$@"
	t_rc 2 "$s whose kubectl never answers"
	within 2 13 "$s gives up at its deadline, GPUDRV_TIMEOUT=3"
	t_out "$s prints nothing on stdout"
	call=$(sed -n 's/^--request-timeout=[0-9]*s //p' kubectl.log)
	cp err said
	sed 's/gave up after [0-9]*s,/gave up after Ns,/' said >said.n
	printf '%s\n' "$s: gave up after Ns, the run's deadline (GPUDRV_TIMEOUT=3): no answer to 'kubectl $call'; $why" >said.x
	t_cmp "$s says it gave up, when and why" said.x said.n
	t_run grep -c . said
	t_out "$s: that is all it says" 1
	t_grep "$s: the request's own timeout is what is left of the run, not 60s" kubectl.log '^--request-timeout=[123]s '
	t_none_alive "$s: neither kubectl nor its child is left running" kubectl.pids
	t_run ls -A
	if grep -q 'kubeconfig' out; then t_ok 1 "$s leaves no file of its own behind"; else
		t_ok 0 "$s leaves no file of its own behind"
	fi
	if [ "$s" = drv-audit.sh ]; then
		t_grep "drv-audit.sh -p records the failed run" audit.prom '^gpudrv_audit_exit_status 2$'
	fi
done

# The deadline is kept by a clock that only goes forward: the time of day
# set an hour forward at each look (a date(1) first on PATH says so) moves
# no deadline.
mkdir -p clock
real_date=$(command -v date)
cat >clock/date <<EOF
#!/bin/sh
[ "\$*" = +%s ] || exec $real_date "\$@"
echo x >>"$PWD/clock/n"
echo \$((\$($real_date +%s) + 3600 * \$(grep -c . "$PWD/clock/n")))
EOF
chmod +x clock/date
t_fake_cluster
t_run drv-tag.sh lab-node-1
cp out tag.want
t_fake_cluster
PATH=$PWD/clock:$PATH GPUDRV_TIMEOUT=30 t_run drv-tag.sh lab-node-1
t_rc 0 "drv-tag.sh, the time of day an hour forward at each look: GPUDRV_TIMEOUT=30 still ahead"
t_cmp "and it prints the node's tag" tag.want out
rm -rf clock tag.want

# The request timeout: GPUDRV_REQUEST_TIMEOUT, or what is left of the run.
t_fake_cluster
GPUDRV_REQUEST_TIMEOUT=5 t_run drv-tag.sh lab-node-1
t_rc 0 "drv-tag.sh with GPUDRV_REQUEST_TIMEOUT=5"
t_run cat kubectl.log
t_out "one call, bounded by it, with no discovery" "--request-timeout=5s get --raw /api/v1/nodes/lab-node-1"
: >kubectl.log
GPUDRV_REQUEST_TIMEOUT=1m t_run drv-tag.sh lab-node-1
t_run cat kubectl.log
t_out "GPUDRV_REQUEST_TIMEOUT=1m is 60 s" "--request-timeout=60s get --raw /api/v1/nodes/lab-node-1"
: >kubectl.log
GPUDRV_REQUEST_TIMEOUT=600 t_run drv-audit.sh -m "$M"
t_rc 0 "drv-audit.sh with GPUDRV_REQUEST_TIMEOUT=600"
t_grep "the default deadline, 120 s, bounds the request" kubectl.log '^--request-timeout=1[12][0-9]s get --raw '
: >kubectl.log
for v in abc 0 -1 5x 99999999; do
	GPUDRV_REQUEST_TIMEOUT=$v t_run drv-tag.sh lab-node-1
	t_rc 2 "GPUDRV_REQUEST_TIMEOUT=$v"
	t_err "is refused, saying what it takes" "drv-tag.sh: GPUDRV_REQUEST_TIMEOUT takes seconds (60, 60s, 1m), not '$v'"
	GPUDRV_TIMEOUT=$v t_run drv-states.sh -m "$M"
	t_rc 2 "GPUDRV_TIMEOUT=$v"
	t_err "is refused, saying what it takes" "drv-states.sh: GPUDRV_TIMEOUT takes seconds (120, 120s, 2m), not '$v'"
done
t_run cat kubectl.log
t_out "kubectl was not called"

# drv-upgrade.sh keeps part of the run to put the node back: with 8 s and
# requests of 1 s, 3 s are kept; the drain that never ends is stopped at 5 s.
t_fake_cluster
GPUDRV_TIMEOUT=8 GPUDRV_REQUEST_TIMEOUT=1 FAKE_HANG='drain *' run 30 drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh whose drain never ends"
within 4 18 "gives up at the deadline, less the time kept"
t_grep "says it gave up, and why" err \
	"^drv-upgrade.sh: lab-node-1: gave up after [0-9]*s, the run's deadline (GPUDRV_TIMEOUT=8, 3s of it kept to put the node back): no answer to 'kubectl drain lab-node-1 --ignore-daemonsets "
t_grep "puts the node back in service, in the time kept" err \
	"^drv-upgrade.sh: lab-node-1: driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed\$"
t_grep "ends with the node's state from the API" err "^drv-upgrade.sh: lab-node-1: now: unschedulable= state=upgrade-failed$"
t_run t_fake_state
t_out "and the node is so" "unschedulable= state=upgrade-failed"
t_none_alive "no kubectl left running" kubectl.pids

# The API server stops answering at the drain, for good: the calls that
# would put the node back hang too, and share the time kept.
t_fake_cluster
GPUDRV_TIMEOUT=8 GPUDRV_REQUEST_TIMEOUT=1 FAKE_HANG='drain *' FAKE_HANG_ALL=1 \
	run 30 drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh when the API server stops answering at the drain"
within 6 18 "ends within the whole deadline"
t_grep "says it gave up" err "^drv-upgrade.sh: lab-node-1: gave up after "
t_grep "says the node is still cordoned, and what to run" err \
	"^drv-upgrade.sh: lab-node-1: driver unchanged; the node is CORDONED: uncordon failed; run: kubectl uncordon lab-node-1; $S=drain-required\$"
t_grep "says the API did not answer, with the last known state" err \
	"^drv-upgrade.sh: lab-node-1: now: unknown: the API did not answer; last known: cordoned, $S=drain-required\$"
t_run t_fake_state
t_out "which is the node's state" "unschedulable=true state=drain-required"
t_none_alive "no kubectl left running" kubectl.pids

# A kubectl that answers, but slowly, is not given up on before the deadline.
t_fake_cluster
GPUDRV_TIMEOUT=8 t_run drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh within GPUDRV_TIMEOUT=8"
t_grep "upgrades the node" out '^lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04$'
t_grep "and the audit after it ran within what was left" kubectl.log '^--request-timeout=[1-8]s get --raw /api/v1/nodes?labelSelector='
t_done
