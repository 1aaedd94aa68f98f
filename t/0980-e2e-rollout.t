#!/bin/sh
# End to end: drv-rollout.sh on the sandbox.  22 GPU nodes, a driver
# DaemonSet, workloads and budgets (one shared by four nodes, one that
# blocks a node), one node that never validates, one cordoned by hand, one
# labelled to be skipped; gpu-feature-discovery played by a loop that
# relabels a node once its driver restarted.  A first run is SIGKILLed
# with nodes under way (with everything it started), a second stops at the
# failed node, a third (-c) completes; then every node is checked.  Then,
# on the lab's three nodes, a dry run's plan and the real rollout that
# follows it, rolling slots (one node's drain held while the others go
# through, a pair budget and maxUnavailable watched), and signals.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_gpudrv_ns || { echo "Bail out! cannot make the namespace gpudrv (the rollout's lease)"; exit 1; }

ns() { kubectl -n gpu-drv "$@"; }
NEW=550.90.07
S=nvidia.com/gpu-driver-upgrade-state
nodes=
for i in $(seq -w 1 22); do nodes="$nodes ro-$i"; done
# shellcheck disable=SC2086 # one node a word
e2e_gpu_nodes $nodes
t_ok $? "22 GPU nodes Ready"
kubectl label node ro-08 nvidia.com/gpu-driver-upgrade.skip=true >/dev/null
kubectl cordon ro-07 >/dev/null

# The driver DaemonSet (its pod on a node is what drv-upgrade.sh restarts).
kubectl delete namespace gpu-operator --ignore-not-found --wait=true --timeout=90s >/dev/null
e2e_namespace gpu-operator
kubectl -n gpu-operator apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-driver-daemonset}
spec:
  selector: {matchLabels: {app: nvidia-driver-daemonset}}
  template:
    metadata: {labels: {app: nvidia-driver-daemonset}}
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      containers: [{name: driver, image: nvidia-driver}]
EOF
# Workloads: web, one pod on each of ro-01..04 (not two on a node), whose
# budget allows one disruption: the four drain one after the other.  pinned,
# one pod on ro-05, minAvailable 1: ro-05's drain is never allowed.  fill,
# 18 pods anywhere, maxUnavailable 25%.
e2e_namespace gpu-drv
e2e_one_a_node web ro-01 ro-02 ro-03 ro-04 | ns apply -f - >/dev/null
ns apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 1
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeSelector: {kubernetes.io/hostname: ro-05}
      containers: [{name: c, image: nginx}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pinned}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: pinned}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fill}
spec:
  replicas: 18
  selector: {matchLabels: {app: fill}}
  template:
    metadata: {labels: {app: fill}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: nvidia.com/gpu.present, operator: In, values: ["true"]}
      containers: [{name: c, image: nginx}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: fill}
spec:
  maxUnavailable: 25%
  selector: {matchLabels: {app: fill}}
EOF
settled() { # every budget current, its pods all healthy
	[ "$(ns get pdb -o jsonpath='{range .items[*]}{.metadata.name}={.status.currentHealthy}/{.status.expectedPods}{" "}{end}')" = \
		"fill=18/18 pinned=1/1 web=4/4 " ]
}
e2e_until 120 settled
t_ok $? "web, pinned and fill Running and their budgets settled"
e2e_until 60 sh -c '[ "$(kubectl -n gpu-operator get pods --field-selector=status.phase=Running -o name | wc -l)" -eq 22 ]'
t_ok $? "a driver pod on each GPU node"

# gpu-feature-discovery: the new driver's labels on a node two seconds
# after it enters validation-required (the driver takes a while to load),
# if it is there still, but never on ro-20, nor while ./gfd.hold is there.
# It learns of those nodes from a watch (one kubectl, not a GET a second);
# gfd_relist ends the watch, and the next one lists them again.
mkfifo gfd.pipe
gfd() {
	while :; do
		kubectl get nodes -l "$S=validation-required" -w \
			-o jsonpath='{.metadata.name} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}{"\n"}' \
			>gfd.pipe 2>/dev/null &
		echo $! >gfd.watch
		while read -r n st; do
			[ "$st" = validation-required ] && [ "$n" != ro-20 ] && [ ! -e gfd.hold ] && [ ! -e "gfd.on.$n" ] || continue
			: >"gfd.on.$n"
			{
				sleep 2
				[ -e gfd.hold ] || kubectl label nodes -l "$S=validation-required" --field-selector "metadata.name=$n" \
					--overwrite nvidia.com/cuda.driver.major=550 nvidia.com/cuda.driver.minor=90 \
					nvidia.com/cuda.driver.rev=07 >/dev/null 2>&1
				rm -f "gfd.on.$n"
			} &
		done <gfd.pipe
		sleep 1
	done
}
gfd_relist() { kill "$(cat gfd.watch)" 2>/dev/null; }
gfd_stop() {
	kill "$gfd_pid" 2>/dev/null
	wait "$gfd_pid" 2>/dev/null
	kill "$(cat gfd.watch)" 2>/dev/null
}
gfd &
gfd_pid=$!
t_matrix
R="drv-rollout.sh $T_DRAIN -m $PWD/matrix.csv -p 4 -u 50% -t 60 -g 8 -w 15 -o $PWD/logs"

# A missing image: refused before anything is touched.
t_run drv-rollout.sh $T_DRAIN -m "$ROOT/lab/support-matrix.csv" -p 4 "$NEW"
t_rc 1 "an image missing from the matrix"
t_grep "lists each node's missing image" out "^ro-01 MISSING 550-5.15.0-107-generic-ubuntu22.04$"
t_grep "gives the matrix row to add" err "^    550,5.15.0-107-generic,ubuntu22.04$"
cp out missing
t_run grep -c ' MISSING ' missing
t_out "for each of the 21 nodes to upgrade (not ro-08, labelled skip)" 21
t_run kubectl get nodes -l "$S" -o name
t_out "no node has a state label"

# The plan.
t_run $R -D "$NEW"
t_rc 1 "the dry run (ro-05's drain is never allowed)"
cp out plan
t_grep "ro-08 is left out for its label" out "^ro-08 skipped nvidia.com/gpu-driver-upgrade.skip=true$"
t_grep "ro-05's budget is named, as pdb-check says it" out "^ro-05 gpu-drv/pinned BLOCKS gpu-drv/pinned-[a-z0-9-]* minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: "
t_grep "ro-05 is skipped" out "^ro-05 skipped budget$"
t_grep "ro-07, cordoned, starts first" out "^start 1 ro-07 550-5.15.0-107-generic-ubuntu22.04$"
t_grep "the summary" out "^plan: upgrade 20 done 0 failed 0 skipped 2 left 0$"
# web's four nodes: ro-01 first, the three others wait for its budget.
t_run sed -n 's/^wait \(ro-0[1-4]\) budget gpu-drv\/web$/\1/p' plan
t_out "ro-02..04 wait for web's budget (one disruption) while ro-01 is under way" ro-02 ro-03 ro-04
# under RUN: the most nodes under way at once, from its records (a start,
# until the node's upgrade-done or upgrade-failed).
under() {
	awk '$1 == "start" { if (++u > m) m = u } $2 == "upgrade-done" || $2 == "upgrade-failed" { u-- } END { print m + 0 }' "$1"
}
t_run kubectl get nodes -l "$S" -o name
t_out "the dry run changed nothing"

# drv-states.sh while it runs; then SIGKILL to the rollout and everything it
# started (as a crash would) once the fifth node has started.
setsid sh -c "exec $R $NEW >run1.out 2>run1.err" &
setsid_pid=$!
# (until setsid has run, the pid is in the test's own group: never killed so)
e2e_until 10 sh -c "[ \"\$(ps -o pgid= -p $setsid_pid | tr -d ' ')\" = $setsid_pid ]" ||
	{ kill -KILL "$setsid_pid"; echo "Bail out! setsid did not give the rollout a group"; exit 1; }
pgid=$setsid_pid
t_ok 0 "the first run leads a process group of its own"
e2e_until 120 grep -q '^start 5 ' run1.out
t_ok $? "the first run starts its fifth node"
# (no new driver labels from now until the kill)
: >gfd.hold
e2e_until 60 sh -c "drv-states.sh -m $PWD/matrix.csv | grep -q ' validation-required cordoned '"
t_ok $? "drv-states.sh shows a node waiting for validation"
# (one whose new driver labels gfd has not set yet, which stays so: a node
# labelled before the hold may go through before the kill)
e2e_until 120 sh -c "kubectl get nodes -l '$S=validation-required,nvidia.com/cuda.driver.major!=550' \
	-o jsonpath='{range .items[*]}{.spec.unschedulable}{\"\\n\"}{end}' | grep -qx true"
t_ok $? "a node cordoned, waiting for a driver that does not load"
kill -KILL "-$pgid"
rm -f gfd.hold
gfd_relist
wait "$setsid_pid" 2>/dev/null
sleep 1
# (zombies, dead and not yet reaped by init, are not running)
alive() { ps -eo pgid=,stat=,pid=,args= | awk -v g="$pgid" '$1 == g && $2 !~ /^Z/'; }
e2e_until 10 sh -c "! ps -eo pgid=,stat= | awk -v g=$pgid '\$1 == g && \$2 !~ /^Z/' | grep -q ."
t_run alive
t_out "nothing of the killed run is left running"
t_run sh -c "kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}{\"\\n\"}{end}' | awk '\$2 == \"true\" && \$3 ~ /-required\$/'"
[ -s out ]
t_ok $? "the kill left a node cordoned mid-upgrade (the rerun has something to resume)"
cp out killed

# The rerun takes those nodes first; it stops at ro-20, which never validates.
t_run $R "$NEW"
cp out run2.out
cp err run2.err
t_rc 1 "the second run stops at the failed node"
k=$(grep -c . killed)
while read -r n _; do
	t_run awk -v n="$n" -v k="$k" '$1 == "start" && $3 == n && $2 <= k { print "first" }' run2.out
	t_out "it resumes $n among its first $k starts" first
	grep -qx first out || {
		# (why not: what the kill left, what the rerun did, and web's pods now)
		echo "killed:"; cat killed
		echo "run2.out:"; head -n 12 run2.out
		echo "run2.err, of $n:"; grep "$n" run2.err | head -n 8
		echo "web:"; ns get pods -l app=web -o wide --no-headers; ns get pdb web --no-headers
	} 2>&1 | t_diag
done <killed
t_grep "ro-20 ends upgrade-failed" run2.out "^ro-20 upgrade-failed$"
t_grep "says where ro-20 stands" run2.err "^drv-rollout.sh: ro-20 is CORDONED and $S=upgrade-failed"
t_grep "and that the run stopped" run2.err "^drv-rollout.sh: stopped: ro-20 failed (-k 1); the nodes not started are left as they are$"
t_grep "the summary" run2.out "^done [0-9]* failed 1 skipped [0-9]* left [0-9]*$"

t_run $R "$NEW"
t_rc 1 "without -c a rerun refuses: ro-20 is upgrade-failed"
t_grep "names it" err "^drv-rollout.sh: ro-20: $S=upgrade-failed from an earlier upgrade"
t_grep "and changes nothing" err "^drv-rollout.sh: nothing was changed$"

t_run $R -c "$NEW"
cp out run3.out
t_rc 1 "with -c the third run completes (ro-05 stays blocked, ro-20 failed)"
t_grep "ro-05 skipped for its budget, after -w" err "^drv-rollout.sh: ro-05: its drain would be refused by the budget(s) below (after 15s, -w); the node is left as it is:$"
t_grep "the summary" out "^done 19 failed 1 skipped 2 left 0$"
t_grep "and says ro-07 stays cordoned" err "^drv-rollout.sh: ro-07 is cordoned, as it was before"
gfd_stop

# Node by node: driver, state, cordon.
kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels.nvidia\.com/cuda\.driver\.major}.{.metadata.labels.nvidia\.com/cuda\.driver\.minor}.{.metadata.labels.nvidia\.com/cuda\.driver\.rev} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state} {.spec.unschedulable}{"\n"}{end}' >final
for n in $nodes; do
	case $n in
	ro-05 | ro-08) want="$n 535.183.06  " ;;
	ro-07) want="$n $NEW upgrade-done true" ;;
	ro-20) want="$n 535.183.06 upgrade-failed true" ;;
	*) want="$n $NEW upgrade-done " ;;
	esac
	t_run grep "^$n " final
	t_out "$n: $(echo "$want" | cut -d' ' -f2-)" "$want"
done
t_run kubectl get node ro-07 -o jsonpath='{.metadata.annotations.nvidia\.com/gpu-driver-upgrade\.node-initial-state\.unschedulable}'
t_out "ro-07's initial-state annotation is gone"

# Against the plan: the nodes it starts are the nodes upgraded (or, ro-20,
# failed); the nodes it skipped are untouched.
awk '$1 == "start" { print $3 }' plan | sort >plan.started
awk '$3 == "upgrade-done" || $3 == "upgrade-failed" { print $1 }' final | sort >final.touched
t_cmp "the nodes the plan starts, and only those, were upgraded (or failed)" plan.started final.touched
awk '$2 == "skipped" { print $1 }' plan | sort >plan.skipped
awk 'NF == 2 { print $1 }' final | sort >final.untouched
t_cmp "the nodes the plan skipped are untouched" plan.skipped final.untouched

# The budgets were never drawn beyond what they allow: no drain of any run
# was refused by one (kubectl drain retries an eviction the API refuses, and
# says so), and no two of ro-01..04 were draining at once.
t_run grep -l "violate the pod's disruption budget" logs/*.log
t_out "no eviction refused for a budget, in any node's log"
[ ! -s out ] || for f in $(cat out) run1.out run2.out run3.out; do echo "$f:" && cat "$f"; done | t_diag
ls logs/*.log >/dev/null 2>&1
t_ok $? "(the logs are there: -o)"
cat run1.out run2.out run3.out >runs.out
t_grep "a real run too says a node waits for web's budget" runs.out "^wait ro-0[2-4] budget gpu-drv/web$"
for f in run1.out run2.out run3.out; do
	t_run awk '$1 ~ /^ro-0[1-4]$/ && $2 == "drain-required" { if (d != "") print $1 " drains while " d " does"; d = $1 }
		$1 == d && $2 != "drain-required" { d = "" }' "$f"
	t_out "$f: ro-01..04 never draining together"
	t_is "$f: never more than 4 under way" "$([ "$(under "$f")" -le 4 ] && echo yes)" yes
done

# The lab's three nodes: the dry run's plan, then the rollout follows it.
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_facts
e2e_namespace gpu-drv
sed 's/replicas: 4/replicas: 3/' "$ROOT/lab/k8s/trainer.yaml" | ns apply -f - >/dev/null
sed 's/minAvailable: 4/minAvailable: 2/' "$ROOT/lab/k8s/pdb.yaml" | ns apply -f - >/dev/null
settled2() { [ "$(ns get pdb trainer-pdb -o jsonpath='{.status.currentHealthy} {.status.disruptionsAllowed}')" = "3 1" ]; }
e2e_until 90 settled2
t_ok $? "three trainers, one a node, trainer-pdb allowing one disruption"
{ cat "$ROOT/lab/support-matrix.csv"; printf '%s\n' 570,5.15.0-119-generic,ubuntu22.04 \
	570,5.15.0-107-generic,ubuntu22.04 570,6.8.0-45-generic,ubuntu24.04; } >lab.csv
t_run drv-rollout.sh -L $T_DRAIN -D -p 3 -u 100% -m "$PWD/lab.csv" 570.86.10
t_rc 0 "the lab's plan"
t_grep "the policy first: the flags' fields, said so" out "^policy - drain.enable flag true$"
grep -v '^policy ' out >plan.out
mv plan.out out
t_out "one node after the other: the trainers' budget lets one drain at a time" \
	"start 1 lab-node-0 570-5.15.0-119-generic-ubuntu22.04" \
	"wait lab-node-1 budget gpu-drv/trainer-pdb" \
	"wait lab-node-2 budget gpu-drv/trainer-pdb" \
	"start 2 lab-node-1 570-5.15.0-107-generic-ubuntu22.04" \
	"start 3 lab-node-2 570-6.8.0-45-generic-ubuntu24.04" \
	"plan: upgrade 3 done 0 failed 0 skipped 0 left 0"
cp out labplan
t_run drv-rollout.sh -L $T_DRAIN -p 3 -u 100% -w 60 -m "$PWD/lab.csv" 570.86.10
t_rc 0 "the lab's rollout"
cp out labrun
grep '^start ' labplan >labplan.starts
grep '^start ' labrun >labrun.starts
t_cmp "it follows the plan, start by start" labplan.starts labrun.starts
grep '^lab-node-1 ' labrun | cut -d' ' -f2 >labrun.states
e2e_states expected.states
t_cmp "lab-node-1 goes through its states, one line each" expected.states labrun.states
t_grep "and the summary" labrun "^done 3 failed 0 skipped 0 left 0$"
t_run kubectl get nodes lab-node-0 lab-node-1 lab-node-2 -o jsonpath='{range .items[*]}{.metadata.labels.nvidia\.com/cuda\.driver\.major} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state} {.spec.unschedulable}{"\n"}{end}'
t_out "the three nodes: driver 570, upgrade-done, schedulable" "570 upgrade-done " "570 upgrade-done " "570 upgrade-done "

# A pod that never finishes terminating on lab-node-0 (a finalizer) holds
# its drain: the rollouts below are stopped while it waits.
printf '%s\n' 575,5.15.0-119-generic,ubuntu22.04 575,5.15.0-107-generic,ubuntu22.04 \
	575,6.8.0-45-generic,ubuntu24.04 >>lab.csv
GPUDRV_LOCK_DIR=$PWD
export GPUDRV_LOCK_DIR
RL="drv-rollout.sh -L $T_DRAIN -p 1 -u 100% -w 60 -t 300 -m $PWD/lab.csv 575.51.02"
e2e_holder lab-node-0
t_ok $? "a pod on lab-node-0 that holds its drain"
# group_of PID: waits until PID leads a process group of its own (setsid).
group_of() {
	e2e_until 10 sh -c "[ \"\$(ps -o pgid= -p $1 | tr -d ' ')\" = $1 ]"
}

# SIGTERM: the upgrade stops, not fails; lab-node-0, drain unfinished, goes
# back into service in upgrade-required, and says so; nothing is left running.
setsid sh -c "exec $RL >term.out 2>term.err" &
term=$!
group_of "$term" || { kill -KILL "$term"; echo "Bail out! setsid did not give the rollout a group"; exit 1; }
e2e_until 60 grep -q '^lab-node-0 drain-required$' term.out
t_ok $? "a rollout draining lab-node-0"
sleep 2
kill -TERM "$term"
rc=0
wait "$term" || rc=$?
t_rc 2 "SIGTERM stops the rollout"
t_grep "it says so" term.err "^drv-rollout.sh: interrupted by SIGTERM$"
pgid=$term
e2e_until 10 sh -c "! ps -eo pgid=,stat= | awk -v g=$pgid '\$1 == g && \$2 !~ /^Z/' | grep -q ."
t_run alive
t_out "nothing of it is left running"
t_grep "lab-node-0: back in service, upgrade-required, as the message says" term.err \
	"^drv-rollout.sh: lab-node-0: now: unschedulable= state=upgrade-required$"
t_run kubectl get node lab-node-0 -o 'jsonpath={.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "and so it is" " upgrade-required"
t_grep "the state is on standard output too" term.out "^lab-node-0 upgrade-required$"
t_grep "and the summary" term.out "^done 0 failed 0 skipped 0 left 3$"

# SIGKILL to the rollout alone: its drv-upgrade.sh goes on draining (and
# holds the lock); a rerun waits for it, and once the pod is let go and
# lab-node-0 done, upgrades the two others, never lab-node-0 again.
$RL >run4.out 2>run4.err &
run4=$!
e2e_until 60 grep -q '^lab-node-0 drain-required$' run4.out
t_ok $? "a rollout draining lab-node-0 again"
kill -KILL "$run4"
wait "$run4" 2>/dev/null
$RL >run5.out 2>run5.err &
run5=$!
e2e_until 30 grep -q 'waiting for them to end' run5.err
t_ok $? "the rerun waits for the upgrade the killed run left running"
t_grep "and names the lock" run5.err "^drv-rollout.sh: another drv-rollout.sh of https://127.0.0.1:[0-9]* runs on this machine, or upgrades one started still do: waiting for them to end (lock $PWD/gpudrv-rollout-[0-9]*\.[0-9]*\.lock)$"
t_run kubectl get node lab-node-0 -o 'jsonpath={.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "lab-node-0 is still draining, by the killed run's drv-upgrade.sh" "true drain-required"
e2e_holder_release
rc=0
wait "$run5" || rc=$?
t_rc 0 "the rerun completes"
grep '^start ' run5.out | cut -d' ' -f3 >run5.nodes
printf '%s\n' lab-node-1 lab-node-2 >expected.nodes
t_cmp "it upgraded the two other nodes, not lab-node-0 again" expected.nodes run5.nodes
t_run kubectl get nodes lab-node-0 lab-node-1 lab-node-2 -o jsonpath='{range .items[*]}{.metadata.labels.nvidia\.com/cuda\.driver\.major} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state} {.spec.unschedulable}{"\n"}{end}'
t_out "the three nodes: driver 575, upgrade-done, schedulable" "575 upgrade-done " "575 upgrade-done " "575 upgrade-done "

# Rolling slots: at -p 2, lab-node-0's drain held by a pod that does not
# finish terminating (a finalizer) until the others are done holds one
# slot only: lab-node-1 and lab-node-2 go through the other meanwhile, one
# after the other, for a budget they share (one pod on each,
# maxUnavailable 1).  A watch of the
# nodes sees every change of their cordons: never more than -u 2 cordoned,
# never lab-node-1 and lab-node-2 cordoned at once.
ns delete deployment trainer --ignore-not-found --wait=true >/dev/null
ns delete pdb trainer-pdb --ignore-not-found >/dev/null
e2e_one_a_node pair lab-node-1 lab-node-2 | ns apply -f - >/dev/null
settled3() { [ "$(ns get pdb pair -o jsonpath='{.status.currentHealthy} {.status.disruptionsAllowed}')" = "2 1" ]; }
e2e_until 90 settled3
t_ok $? "pair: one pod on lab-node-1, one on lab-node-2, its budget allowing one disruption"
printf '%s\n' 580,5.15.0-119-generic,ubuntu22.04 580,5.15.0-107-generic,ubuntu22.04 \
	580,6.8.0-45-generic,ubuntu24.04 >>lab.csv
e2e_holder lab-node-0
t_ok $? "a pod on lab-node-0 that holds its drain"
kubectl get nodes -w -o jsonpath='{.metadata.name}={.spec.unschedulable}{"\n"}' >watched 2>/dev/null &
watch_pid=$!
# states: each change the watch saw as the three nodes stand after it, as
# a GET of them says ("lab-node-0=true lab-node-1= lab-node-2= ").  Its
# first list is read before the rollout starts, and the three are seen
# uncordoned at the end before it is stopped.
states() {
	awk -F= '$1 ~ /^lab-node-[012]$/ { s[$1] = $2
		printf "lab-node-0=%s lab-node-1=%s lab-node-2=%s \n", s["lab-node-0"], s["lab-node-1"], s["lab-node-2"] }' watched
}
seen3() { [ "$(grep -c '^lab-node-[012]=' watched)" -ge 3 ]; }
all_back() { [ "$(states | tail -n 1)" = "lab-node-0= lab-node-1= lab-node-2= " ]; }
e2e_until 30 seen3
t_ok $? "the watch has listed the three nodes"
drv-rollout.sh -L $T_DRAIN -p 2 -u 2 -w 60 -t 300 -m "$PWD/lab.csv" 580.65.06 >roll.out 2>roll.err &
roll=$!
e2e_until 60 grep -q '^lab-node-0 drain-required$' roll.out
t_ok $? "lab-node-0's drain starts, and is held"
e2e_until 40 sh -c "grep -q '^lab-node-1 upgrade-done$' roll.out && grep -q '^lab-node-2 upgrade-done$' roll.out"
t_ok $? "lab-node-1 and lab-node-2 are done while it is held"
t_run kubectl get node lab-node-0 -o 'jsonpath={.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "lab-node-0 is still draining" "true drain-required"
e2e_holder_release
rc=0
wait "$roll" || rc=$?
t_rc 0 "once the pod is let go, lab-node-0 too, and the rollout ends"
e2e_until 30 all_back
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null
states >samples
t_grep "the summary" roll.out "^done 3 failed 0 skipped 0 left 0$"
t_run awk '$1 == "start" { print $3 }' roll.out
t_out "lab-node-0 and lab-node-1 first, lab-node-2 in lab-node-1's slot" lab-node-0 lab-node-1 lab-node-2
t_run sh -c 'for n in 0 1 2; do grep -q "^lab-node-$n=true$" watched && echo yes; done'
t_out "the watch saw each node cordoned" yes yes yes
t_run tail -n 1 samples
t_out "and the three uncordoned at the end" "lab-node-0= lab-node-1= lab-node-2= "
t_run awk '{ n = gsub(/=true/, "=true"); if (n > 2) print "over -u 2: " $0 }' samples
t_out "never more than 2 nodes cordoned (-u 2)"
t_run grep 'lab-node-1=true lab-node-2=true' samples
t_out "never lab-node-1 and lab-node-2 cordoned together (their budget allows one)"
t_run grep -c -e 'lab-node-0=true lab-node-1=true' -e 'lab-node-0=true lab-node-1=[a-z]* lab-node-2=true' samples
t_is "both slots were used at once (lab-node-0 held, another node cordoned beside it)" "$([ "$(cat out)" -gt 0 ] && echo yes)" yes

# The budgets watched: lab-node-1 and lab-node-2 alone (a label picks
# them, -l), -p 2: lab-node-2 waits for pair while lab-node-1 is under way,
# and the run watches the budgets meanwhile rather than looking every 5 s
# (every kubectl call logged).
e2e_until 90 settled3
t_ok $? "pair settled again"
kubectl label node lab-node-1 lab-node-2 gpudrv.test/pair=yes >/dev/null
printf '%s\n' 590,5.15.0-119-generic,ubuntu22.04 590,5.15.0-107-generic,ubuntu22.04 \
	590,6.8.0-45-generic,ubuntu24.04 >>lab.csv
e2e_logged_kubectl
t_run env KUBECTL="$PWD/logged-kubectl" drv-rollout.sh -L $T_DRAIN -l gpudrv.test/pair=yes -p 2 -u 2 -w 60 -t 300 \
	-m "$PWD/lab.csv" 590.10.01
t_rc 0 "pair's two nodes, one after the other"
t_grep "lab-node-2 waited for pair" out '^wait lab-node-2 budget gpu-drv/pair$'
t_grep "the summary" out '^done 2 failed 0 skipped 0 left 0$'
t_grep "the budgets watched meanwhile, from a list's resourceVersion" kubectl.calls \
	' get --raw /apis/policy/v1/poddisruptionbudgets?resourceVersion=[0-9][0-9]*&watch=1&timeoutSeconds=30$'
t_run grep -e 'warning' -e 'watch' err
t_out "nothing said of the watch"
kubectl label node lab-node-1 lab-node-2 gpudrv.test/pair- >/dev/null
ns delete deployment pair --wait=true >/dev/null
ns delete pdb pair >/dev/null

# (waited for: a later test may make the namespace again)
kubectl delete namespace gpu-operator --wait=true --timeout=90s >/dev/null
t_done
