#!/bin/sh
# End to end: pdb-check, drv-upgrade.sh and drv-states.sh on the sandbox,
# with the lab's step 6 set up: four trainers, a budget of minAvailable 4.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

ns() { kubectl -n gpu-drv "$@"; }
e2e_facts
kubectl apply -f "$ROOT/lab/k8s/node3.yaml" >/dev/null
e2e_namespace gpu-drv
ns apply -f "$ROOT/lab/k8s/trainer.yaml" -f "$ROOT/lab/k8s/pdb.yaml" >/dev/null
running() { # running N [field-selector]: N trainer pods Running
	[ "$(ns get pods -l app=trainer --field-selector="status.phase=Running${2:+,$2}" -o name | wc -l)" -eq "$1" ]
}
settled() { # settled ALLOWED: the budget's status is current and allows ALLOWED
	g=$(ns get pdb trainer-pdb -o jsonpath='{.metadata.generation}')
	[ "$(ns get pdb trainer-pdb -o jsonpath='{.status.observedGeneration} {.status.currentHealthy} {.status.disruptionsAllowed}')" = "$g 4 $1" ]
}
e2e_until 90 running 4 && e2e_until 60 settled 0
t_ok $? "four trainers Running, trainer-pdb at minAvailable 4 settled"

# A copy of the tools with a matrix of our own, as an operator installs them.
mkdir -p home/bin home/lib/gpudrv
for f in labels2tag matrix-grep pdb-check drv-audit.sh drv-upgrade.sh drv-states.sh; do cp "$BIN/$f" home/bin/; done
cp "$BIN"/../lib/gpudrv/*.sh home/lib/gpudrv/
{ cat "$ROOT/lab/support-matrix.csv"; echo 550,6.8.0-52-generic,ubuntu24.04; } >home/support-matrix.csv
GPUDRV_MATRIX=$PWD/home/support-matrix.csv
export GPUDRV_MATRIX
U=$PWD/home/bin/drv-upgrade.sh
node1() { kubectl get node lab-node-1 -o 'jsonpath={.metadata.labels}{.metadata.annotations}{.spec}'; }

t_run sh -c 'kubectl get pdb,pods -A -o json | pdb-check lab-node-1'
t_rc 1 "pdb-check before the drain"
t_grep "names gpu-drv/trainer-pdb and the node's trainer pod" out '^gpu-drv/trainer-pdb BLOCKS gpu-drv/trainer-[a-z0-9-]* minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: '
t_grep "and says to lower minAvailable to 3" out ': lower minAvailable to 3, or add 1 ready replica elsewhere$'

# 1. No image: refused before anything is touched.
node1 >before
t_run dash "$U" -L $T_DRAIN lab-node-1 550.90.07
t_rc 1 "drv-upgrade.sh while the 550 image for lab-node-1 is not in the matrix"
t_out "prints the row to add" 550,5.15.0-107-generic,ubuntu22.04
t_grep "says which image is missing" err "lab-node-1 needs image 550-5.15.0-107-generic-ubuntu22.04, which is not in"
node1 >after
t_cmp "the node is exactly as it was: labels, annotations, spec" before after

# 2. The image, but no headroom: refused with the budget's explanation.
echo 550,5.15.0-107-generic,ubuntu22.04 >>home/support-matrix.csv
t_run "$U" -L $T_DRAIN lab-node-1 550.90.07
t_rc 1 "drv-upgrade.sh with the image but minAvailable 4"
t_grep "prints pdb-check's explanation" out '^gpu-drv/trainer-pdb BLOCKS .*: lower minAvailable to 3'
t_grep "says nothing was changed" err "the removal of its pods would be refused by what is above; nothing was changed"
node1 >after
t_cmp "the node is exactly as it was" before after

# 2b. The same, through a kubectl that answers the node's pods exit 0 with
# an empty body (a proxy, a wrapper): no pod list is no "room for the
# drain"; the budget that blocks is never drained past.
cat >blind-kubectl <<'STUB'
#!/bin/sh
for a; do case $a in /api/v1/pods\?fieldSelector=*) exit 0 ;; esac; done
exec kubectl "$@"
STUB
chmod +x blind-kubectl
KUBECTL=$PWD/blind-kubectl t_run "$U" -L $T_DRAIN lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh when the pods GET answers exit 0 and nothing"
t_grep "names the request" err "^drv-upgrade.sh: GET /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1 answered with an empty body (kubectl exit 0): nothing can be said of it$"
t_out "no line says the budgets leave room, none says OK"
node1 >after
t_cmp "the node is exactly as it was: not cordoned, not drained" before after
t_run sh -c 'kubectl get pdb,pods -A -o json | pdb-check lab-node-1'
t_rc 1 "and the budget still blocks, as the real answer says"

# 3. Headroom, but a pod that never finishes terminating: the drain times out.
ns patch pdb trainer-pdb --type=merge -p '{"spec":{"minAvailable":3}}' >/dev/null
e2e_until 60 settled 1
t_ok $? "minAvailable 3 settles at one disruption allowed"
e2e_holder lab-node-1
t_run "$U" -L $T_DRAIN -t 8 lab-node-1 550.90.07
t_rc 1 "drv-upgrade.sh whose drain times out"
t_grep "relays kubectl drain's timeout" err "error when waiting for pod \"holder-[a-z0-9-]*\" in namespace \"gpu-drv\" to terminate: context deadline exceeded"
t_grep "says the driver is unchanged and the node back in service" err "lab-node-1: driver unchanged; the node is schedulable again (uncordoned); nvidia.com/gpu-driver-upgrade-state=upgrade-failed"
t_grep "gives the command to resume" err "to resume: .*drv-upgrade.sh -L -m .* -U 'podDeletionFilter=none' -U 'drain.enable=true' -U 'drain.deleteEmptyDir=true' lab-node-1 550.90.07"
t_grep "ends with the node's state from the API" err "lab-node-1: now: unschedulable= state=upgrade-failed"
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.major}'
t_val "and the node agrees: schedulable, upgrade-failed, driver 535" /upgrade-failed/535
e2e_holder_release && e2e_until 90 running 4 && e2e_until 60 settled 1
t_ok $? "the holder gone, four trainers Running again, one disruption allowed"

# 4. The whole way.
t_run "$U" -L $T_DRAIN -t 30 lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh with the image and the headroom"
t_grep "ends with the node, its state, version and tag" out '^lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04$'
t_grep "runs the audit last" out '^audit: OK$'
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' err >states
e2e_states states.all
t_cmp "moves through the operator's states in order" states.all states
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/cuda\.driver\.major}.{.metadata.labels.nvidia\.com/cuda\.driver\.minor}.{.metadata.labels.nvidia\.com/cuda\.driver\.rev}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "the node is schedulable, labelled 550.90.07 and upgrade-done" /550.90.07/upgrade-done
e2e_until 90 running 1 spec.nodeName=lab-node-1
t_ok $? "the evicted trainer pod runs on lab-node-1 again"

t_run "$U" -L $T_DRAIN lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh again"
t_out "says it is already done" "lab-node-1 upgrade-done 550.90.07"

t_run dash home/bin/drv-states.sh
t_rc 0 "drv-states.sh"
cp out states.out
t_run cut -d ' ' -f 1-5,7 states.out
t_out "one line per GPU node: state, cordon, tag, image, nothing to wait for" \
	"lab-node-0 - schedulable 550-5.15.0-119-generic-ubuntu22.04 ok -" \
	"lab-node-1 upgrade-done schedulable 550-5.15.0-107-generic-ubuntu22.04 ok -" \
	"lab-node-2 - schedulable 550-6.8.0-45-generic-ubuntu24.04 ok -" \
	"lab-node-3 - schedulable 550-6.8.0-52-generic-ubuntu24.04 ok -"
t_grep "lab-node-1's age in upgrade-done, from the state label's last change" states.out \
	'^lab-node-1 upgrade-done schedulable [^ ]* ok [0-9]*m*[0-9]*s -$'

# A node an admin cordoned stays cordoned through an upgrade, even one that
# an earlier upgrade left upgrade-done, and goes from validation-required
# straight to upgrade-done, as the GPU Operator moves it.
kubectl cordon lab-node-1 >/dev/null
t_run "$U" -L $T_DRAIN -t 30 lab-node-1 550.127.05
t_rc 0 "drv-upgrade.sh of a node cordoned by hand"
t_grep "says it leaves the node cordoned" err "lab-node-1: left cordoned: it was cordoned by someone else before the upgrade"
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' err >states
t_cmp "the same states: validation-required, then upgrade-done" states.all states
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.minor}/{.metadata.annotations.nvidia\.com/gpu-driver-upgrade\.node-initial-state\.unschedulable}'
t_val "the node is still cordoned, upgrade-done, on the new driver, the initial-state annotation gone" true/upgrade-done/127/
kubectl uncordon lab-node-1 >/dev/null
e2e_until 90 running 4 && e2e_until 60 settled 1
t_ok $? "uncordoned by hand: four trainers again, one disruption allowed"

# The GPU Operator's skip label: the node is left alone, exit 1.
kubectl label node lab-node-1 nvidia.com/gpu-driver-upgrade.skip=true >/dev/null
node1 >before
t_run "$U" -L $T_DRAIN -t 30 lab-node-1 550.144.03
t_rc 1 "drv-upgrade.sh of a node labelled nvidia.com/gpu-driver-upgrade.skip=true"
t_out "prints nothing on stdout"
t_grep "says it leaves the node alone, and where it stands" err \
	"^drv-upgrade.sh: lab-node-1: labelled nvidia.com/gpu-driver-upgrade.skip=true: left alone, as the GPU Operator leaves it; nothing was changed; the node is schedulable, "
t_grep "and how to upgrade it" err \
	"^drv-upgrade.sh: to upgrade it, first: kubectl label node lab-node-1 nvidia.com/gpu-driver-upgrade.skip-$"
node1 >after
t_cmp "the node is exactly as it was" before after
kubectl label node lab-node-1 nvidia.com/gpu-driver-upgrade.skip- >/dev/null

# -j: the jobs it names on the node end before the drain (wait-for-jobs-required).
node1 >before
t_run "$U" -L $T_DRAIN -t 30 -j 'gpudrv-job=train!' lab-node-1 550.144.03
t_rc 2 "drv-upgrade.sh -j with a selector that is not one"
t_grep "says so before any request" err "^drv-upgrade.sh: -U \"waitForCompletion.podSelector=gpudrv-job=train!\": \"gpudrv-job=train!\": requirements are separated by commas$"
node1 >after
t_cmp "the node is exactly as it was" before after
# A job's pod (kwok ends a Job's pods at once, and drain refuses a pod no
# controller manages: a Deployment's, then); the test ends it below.
ns apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: job-a}
spec:
  replicas: 1
  selector: {matchLabels: {gpudrv-job: train, run: a}}
  template:
    metadata: {labels: {gpudrv-job: train, run: a}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      containers: [{name: c, image: busybox}]
EOF2
e2e_until 60 sh -c '[ -n "$(kubectl -n gpu-drv get pods -l run=a --field-selector=status.phase=Running -o name)" ]'
t_ok $? "a job's pod, gpudrv-job=train, runs on lab-node-1"
jobpod=$(ns get pods -l run=a -o name)
# The job ends (its pod Succeeded, as a kubelet reports it) once the script
# waits for it; the replacement its Deployment makes stays Pending on the
# cordoned node until the upgrade is done.
: >err
(
	e2e_until 60 grep -q "waiting for 1 pod(s) matching 'gpudrv-job=train'" err || exit 1
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	kubectl -n gpu-drv patch "$jobpod" --subresource=status --type=merge -p '{"status":{"phase":"Succeeded","containerStatuses":[{"name":"c","image":"busybox","ready":false,"restartCount":0,"started":false,"state":{"terminated":{"exitCode":0,"reason":"Completed","startedAt":"'"$now"'","finishedAt":"'"$now"'"}}}]}}' >/dev/null
) &
job=$!
t_run "$U" -L $T_DRAIN -t 30 -j gpudrv-job=train -J 120 lab-node-1 550.144.03
wait "$job"
t_ok $? "the job's pod was marked Succeeded while drv-upgrade.sh waited"
t_rc 0 "drv-upgrade.sh -j gpudrv-job=train -J 120, the job ending"
t_grep "names the pod it waits for" err "^drv-upgrade.sh: lab-node-1: waiting for 1 pod(s) matching 'gpudrv-job=train' to end, at most 120s (waitForCompletion.timeoutSeconds): gpu-drv/${jobpod#pod/}$"
t_grep "says when it has ended" err "^drv-upgrade.sh: lab-node-1: the pods matching 'gpudrv-job=train' have ended, after [0-9]*s$"
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' err >states
sed '1i wait-for-jobs-required' states.all >states.jobs
t_cmp "writes wait-for-jobs-required with the cordon, then drain-required" states.jobs states
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.minor}'
t_val "the node is schedulable, upgrade-done, on the new driver" /upgrade-done/144
ns delete deployment job-a --wait=true >/dev/null
e2e_until 60 sh -c '[ -z "$(kubectl -n gpu-drv get pods -l run=a -o name)" ]' && e2e_until 90 running 4 && e2e_until 60 settled 1
t_ok $? "four trainers again, one disruption allowed"

# -J passes with the job still running: on to the drain, which evicts it.
ns apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: longjob}
spec:
  replicas: 1
  selector: {matchLabels: {gpudrv-job: train}}
  template:
    metadata: {labels: {gpudrv-job: train}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      containers: [{name: c, image: busybox}]
EOF2
e2e_until 60 sh -c '[ -n "$(kubectl -n gpu-drv get pods -l gpudrv-job=train --field-selector=status.phase=Running -o name)" ]'
t_ok $? "a long job's pod runs on lab-node-1"
t_run "$U" -L $T_DRAIN -t 30 -j gpudrv-job=train -J 3 lab-node-1 550.163.01
t_rc 0 "drv-upgrade.sh -j gpudrv-job=train -J 3, the job running on"
t_grep "says the pod still runs after -J" err "^drv-upgrade.sh: lab-node-1: 1 pod(s) matching 'gpudrv-job=train' still run after [3-6]s (timeoutSeconds 3): gpu-drv/longjob-[a-z0-9-]*$"
t_grep "and goes on, as the operator does" err "^drv-upgrade.sh: lab-node-1: going on, as the GPU Operator does: the removal takes those it takes$"
t_grep "the drain evicts it" err "^    evicting pod gpu-drv/longjob-"
sed -n 's/^drv-upgrade.sh: lab-node-1: nvidia.com\/gpu-driver-upgrade-state=//p' err >states
t_cmp "passes wait-for-jobs-required" states.jobs states
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.minor}'
t_val "the node is schedulable, upgrade-done, on the new driver" /upgrade-done/163
ns delete deployment longjob --wait=true >/dev/null
e2e_until 90 running 4 && e2e_until 60 settled 1
t_ok $? "four trainers again, one disruption allowed"

# Real mode: the driver pod of a DaemonSet is restarted on the node, and
# gpu-feature-discovery (played here by the test) reports the new version.
e2e_namespace gpu-operator
kubectl -n gpu-operator apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-driver-daemonset}
spec:
  selector: {matchLabels: {app: nvidia-driver-daemonset}}
  template:
    metadata: {labels: {app: nvidia-driver-daemonset}}
    spec:
      containers: [{name: nvidia-driver-ctr, image: nvcr.io/nvidia/driver:550.90.07}]
EOF2
driver_pod() {
	kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset \
		--field-selector=spec.nodeName=lab-node-2,status.phase=Running -o name
}
e2e_until 60 sh -c '[ -n "$(kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset --field-selector=spec.nodeName=lab-node-2,status.phase=Running -o name)" ]'
t_ok $? "a driver DaemonSet pod runs on lab-node-2"
old=$(driver_pod)

t_run "$U" $T_DRAIN -g 4 -t 30 lab-node-2 550.127.05
t_rc 2 "real mode with no gpu-feature-discovery to report the new driver"
t_grep "says what the node reports after the wait" err "lab-node-2: gpu-feature-discovery reports driver '550.90.07', not 550.127.05, after [4-6]s"
t_grep "says the node is left cordoned and drained, in upgrade-failed" err \
	"lab-node-2: the node is CORDONED and its pods removed; nvidia.com/gpu-driver-upgrade-state=upgrade-failed"
t_grep "and how to return it to service" err "to return it to service as it is: kubectl uncordon lab-node-2"
t_run kubectl get node lab-node-2 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "the node agrees: cordoned, upgrade-failed" true/upgrade-failed
e2e_until 60 sh -c '[ -n "$(kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset --field-selector=spec.nodeName=lab-node-2,status.phase=Running -o name)" ]'
new=$(driver_pod)
if [ -n "$new" ] && [ "$new" != "$old" ]; then t_ok 0 "the driver pod on the node was restarted"; else
	t_ok 1 "the driver pod on the node was restarted"
	echo "before: $old, after: $new" | t_diag
fi

# The resume, with "gpu-feature-discovery" labelling the node once it validates.
(
	end=$(($(date +%s) + 60))
	until [ "$(kubectl get node lab-node-2 -o 'jsonpath={.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}')" = validation-required ]; do
		[ "$(date +%s)" -lt "$end" ] || exit 1
		sleep 0.5
	done
	kubectl label node lab-node-2 --overwrite nvidia.com/cuda.driver.major=550 \
		nvidia.com/cuda.driver.minor=127 nvidia.com/cuda.driver.rev=05 >/dev/null
) &
gfd=$!
t_run "$U" $T_DRAIN -g 60 -t 30 lab-node-2 550.127.05
wait "$gfd" || :
t_rc 0 "the resumed upgrade, gpu-feature-discovery reporting 550.127.05"
t_grep "waits for the report" err "lab-node-2: the node reports driver 550.127.05"
t_run kubectl get node lab-node-2 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "the node is schedulable again and upgrade-done: it was schedulable before the first try" /upgrade-done
kubectl delete namespace gpu-operator --wait=false >/dev/null

e2e_reset_lab >/dev/null 2>&1 || :
t_done
