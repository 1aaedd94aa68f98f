#!/bin/sh
# End to end: least privilege.  deploy/ on the sandbox, then each script as
# the service account of its role, impersonated and then through a
# kubeconfig made by drv-kubeconfig.sh: it works with its role, and every
# write beyond the role is refused by the API server, the node unchanged.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

D=$ROOT/deploy
KC=$BIN/drv-kubeconfig.sh
AUD=system:serviceaccount:gpudrv:auditor
UPG=system:serviceaccount:gpudrv:upgrader

# What this test creates goes again, whatever happens.
made_ns=
made_crs=
cleanup() {
	kubectl delete -f "$D" --ignore-not-found --wait=false >/dev/null 2>&1
	[ -z "$made_crs" ] || kubectl delete clusterpolicy/cluster-policy nvidiadriver/default \
		--ignore-not-found >/dev/null 2>&1
	[ -z "$made_ns" ] || kubectl delete namespace "$made_ns" --ignore-not-found --wait=false >/dev/null 2>&1
	e2e_reset_lab >/dev/null 2>&1
}
trap 'cleanup; rm -rf "$SCRATCH"' EXIT

# (t/0010-house.t checks drv-kubeconfig.sh's man page, -h and shellcheck.)
e2e_facts
t_matrix
node() { kubectl get node "$1" -o 'jsonpath={.metadata.labels}{.metadata.annotations}{.spec}'; }
# drv: the node's cordon, driver labels and upgrade state.
drv() {
	kubectl get node "$1" -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/cuda\.driver\.major}.{.metadata.labels.nvidia\.com/cuda\.driver\.minor}.{.metadata.labels.nvidia\.com/cuda\.driver\.rev}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
}

# The sandbox has the GPU Operator's two CRDs (sandbox/crds): a ClusterPolicy
# and an NVIDIADriver, so that the auditor's rule for them is exercised
# (the upgrader reads its upgradePolicy there: autoUpgrade off, as without
# it the operator would upgrade the nodes itself).
made_crs=1
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec: {driver: {usePrecompiled: true, useNvidiaDriverCRD: true, version: "550"}}
---
apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: default}
spec: {usePrecompiled: true, version: "550", upgradePolicy: {autoUpgrade: false}}
EOF2
t_ok $? "a ClusterPolicy and an NVIDIADriver"

# The workloads a drain meets: three trainers under a budget that allows one
# disruption, a DaemonSet in gpu-drv, the driver DaemonSet in gpu-operator.
e2e_namespace gpu-drv
kubectl apply -f "$ROOT/lab/k8s/trainer.yaml" -f "$ROOT/lab/k8s/pdb.yaml" >/dev/null
kubectl -n gpu-drv patch pdb trainer-pdb --type=merge -p '{"spec":{"minAvailable":2}}' >/dev/null
if ! kubectl get namespace gpu-operator >/dev/null 2>&1; then
	e2e_namespace gpu-operator
	made_ns=gpu-operator
fi
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: gpu-drv}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      containers: [{name: agent, image: busybox}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-driver-daemonset, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: nvidia-driver-daemonset}}
  template:
    metadata: {labels: {app: nvidia-driver-daemonset}}
    spec:
      containers: [{name: nvidia-driver-ctr, image: busybox}]
EOF2
running() { # running NS SELECTOR N [FIELDS]: N pods Running
	[ "$(kubectl -n "$1" get pods -l "$2" --field-selector="status.phase=Running${4:+,$4}" -o name | wc -l)" -eq "$3" ]
}
settled() { # the budget's status is current and allows one disruption
	g=$(kubectl -n gpu-drv get pdb trainer-pdb -o jsonpath='{.metadata.generation}')
	[ "$(kubectl -n gpu-drv get pdb trainer-pdb -o jsonpath='{.status.observedGeneration} {.status.currentHealthy} {.status.disruptionsAllowed}')" = "$g 3 1" ]
}
e2e_until 90 running gpu-drv app=trainer 3 && e2e_until 60 running gpu-drv app=node-agent 3 &&
	e2e_until 60 running gpu-operator app=nvidia-driver-daemonset 3 && e2e_until 60 settled
t_ok $? "three trainers, one disruption allowed, a DaemonSet pod of each kind on every node"

# deploy/, as an administrator applies it.
t_run kubectl apply -f "$D"
t_rc 0 "kubectl apply -f deploy/"
for o in namespace/gpudrv serviceaccount/auditor serviceaccount/upgrader \
	clusterrole.rbac.authorization.k8s.io/gpudrv-auditor clusterrolebinding.rbac.authorization.k8s.io/gpudrv-auditor \
	clusterrole.rbac.authorization.k8s.io/gpudrv-upgrader clusterrolebinding.rbac.authorization.k8s.io/gpudrv-upgrader \
	role.rbac.authorization.k8s.io/gpudrv-upgrader rolebinding.rbac.authorization.k8s.io/gpudrv-upgrader; do
	t_grep "deploy/ makes $o" out "^$o \(created\|configured\|unchanged\)$"
done
t_run kubectl -n gpudrv run hostnet-gate --image=nvcr.io/nvidia/cloud-native/dcgm:3.3.5-1-ubuntu22.04 --restart=Never \
	--overrides='{"apiVersion":"v1","spec":{"hostNetwork":true}}' --dry-run=server
t_rc 1 "a pod on the host's network in gpudrv"
t_grep "is refused by Pod Security baseline" err 'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'
t_run kubectl -n gpudrv get role,rolebinding gpudrv-upgrader -o name
t_out "and, in gpudrv, the upgrader's Role and RoleBinding for the rollout's lease" \
	role.rbac.authorization.k8s.io/gpudrv-upgrader rolebinding.rbac.authorization.k8s.io/gpudrv-upgrader
e2e_until 30 kubectl auth can-i patch nodes --as="$UPG"
t_ok $? "the roles are in force"

rules() {
	kubectl get clusterrole "$1" -o 'jsonpath={range .rules[*]}{.apiGroups} {.resources} {.verbs}{"\n"}{end}' | sort
}
rules gpudrv-auditor >auditor.rules
rules gpudrv-upgrader >upgrader.rules
t_run comm -23 auditor.rules upgrader.rules
t_out "the upgrader has every rule of the auditor (it runs drv-audit.sh)"
t_run sh -c 'cat auditor.rules upgrader.rules; kubectl -n gpu-operator get role gpudrv-upgrader -o "jsonpath={.rules}"; kubectl -n gpudrv get role gpudrv-upgrader -o "jsonpath={.rules}"'
if grep -q '\*' out; then t_ok 1 "no rule has a wildcard"; t_diag <out; else t_ok 0 "no rule has a wildcard"; fi

# kubectl as a service account, impersonated by the administrator's kubeconfig.
cat >kubectl-as <<'EOF2'
#!/bin/sh
exec kubectl --as="system:serviceaccount:gpudrv:$GPUDRV_AS" "$@"
EOF2
chmod +x kubectl-as
as_auditor() { env GPUDRV_AS=auditor KUBECTL="$PWD/kubectl-as" "$@"; }
as_upgrader() { env GPUDRV_AS=upgrader KUBECTL="$PWD/kubectl-as" "$@"; }
# refused WHO DESC VERB RESOURCE CMD...: CMD fails with the API server's
# refusal of VERB on RESOURCE to WHO.
refused() {
	r_who=$1 r_d=$2 r_v=$3 r_r=$4
	shift 4
	t_run "$@"
	t_rc 1 "$r_d"
	t_grep "$r_d: refused: cannot $r_v $r_r" err "forbidden: User \"$r_who\" cannot $r_v resource \"$r_r\""
}
no_forbidden() { # no_forbidden DESC: nothing in err was refused
	if grep -qi forbidden err; then t_ok 1 "$1"; t_diag <err; else t_ok 0 "$1"; fi
}
states() { sed -n "s/^drv-upgrade.sh: $1: nvidia.com\/gpu-driver-upgrade-state=//p" err >states; }
e2e_states states.all

# 1. The auditor: the three read-only scripts work.
t_run as_auditor drv-tag.sh lab-node-1
t_rc 0 "drv-tag.sh as the auditor"
t_out "prints lab-node-1's tag" 535-5.15.0-107-generic-ubuntu22.04
t_err "and nothing on stderr"
t_run as_auditor drv-audit.sh -m "$M"
t_rc 0 "drv-audit.sh as the auditor"
t_out "prints OK" OK
t_err "and nothing on stderr"
t_run as_auditor drv-states.sh -m "$M"
t_rc 0 "drv-states.sh as the auditor"
t_out "one line per GPU node" \
	"lab-node-0 - schedulable 550-5.15.0-119-generic-ubuntu22.04 ok - -" \
	"lab-node-1 - schedulable 535-5.15.0-107-generic-ubuntu22.04 ok - -" \
	"lab-node-2 - schedulable 550-6.8.0-45-generic-ubuntu24.04 ok - -"
# -R lists the driver DaemonSets, their revisions and pods: the upgrader's
# role has it, the auditor's does not.
t_run as_auditor drv-states.sh -R -m "$M"
t_rc 2 "drv-states.sh -R as the auditor"
t_grep "refused the driver DaemonSets, said" err 'cannot list the driver DaemonSets; kubectl said:'
t_grep "by RBAC" err 'cannot list resource "daemonsets" in API group "apps" at the cluster scope'
t_out "no node line"
t_run as_upgrader drv-states.sh -R -m "$M"
t_rc 0 "drv-states.sh -R as the upgrader"
t_grep "the revision column" out '^lab-node-0 - schedulable 550-5.15.0-119-generic-ubuntu22.04 ok - [a-z-]* -$'
no_forbidden "drv-states.sh -R as the upgrader: nothing refused"
if [ -n "$made_crs" ]; then
	t_run kubectl --as="$AUD" get clusterpolicies.nvidia.com,nvidiadrivers.nvidia.com -o name
	t_rc 0 "the auditor lists the GPU Operator's ClusterPolicy and NVIDIADriver objects"
	t_out "and sees them" clusterpolicy.nvidia.com/cluster-policy nvidiadriver.nvidia.com/default
	t_run kubectl --as="$AUD" get clusterpolicy cluster-policy -o 'jsonpath={.spec.driver.usePrecompiled}'
	t_rc 0 "the auditor reads the ClusterPolicy"
	t_val "its driver settings" true
	t_run as_auditor drv-audit.sh -t -m "$M"
	t_rc 0 "drv-audit.sh -t as the auditor: the NVIDIADriver's version"
	t_out "prints OK" OK
fi

# 2. The auditor is refused every write; the node and the pods stay as they are.
node lab-node-1 >before
pods() { kubectl get pods -n gpu-drv -o name; kubectl get pods -n gpu-operator -o name; }
pods >pods.before
trainer=$(kubectl -n gpu-drv get pods -l app=trainer --field-selector=spec.nodeName=lab-node-1 -o name | sed 's|^pod/||')
driver=$(kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset --field-selector=spec.nodeName=lab-node-1 -o name | sed 's|^pod/||')
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"gpu-drv"}}\n' "$trainer" >eviction.json
refused "$AUD" "the auditor labels the node" patch nodes \
	kubectl --as="$AUD" label node lab-node-1 --overwrite nvidia.com/gpu-driver-upgrade-state=upgrade-required
refused "$AUD" "the auditor annotates the node" patch nodes \
	kubectl --as="$AUD" annotate node lab-node-1 nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable=true
# kubectl cordon says the refusal but exits 0 (kubernetes/kubernetes#89008):
# the refusal and the node, not the status, are what is checked.
t_run kubectl --as="$AUD" cordon lab-node-1
t_grep "the auditor cordons the node: refused: cannot patch nodes" err \
	"forbidden: User \"$AUD\" cannot patch resource \"nodes\""
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}'
t_val "and the node is still schedulable" ""
refused "$AUD" "the auditor patches the node" patch nodes \
	kubectl --as="$AUD" patch node lab-node-1 -p '{"spec":{"unschedulable":true}}'
kubectl get node lab-node-1 -o json >node.json
refused "$AUD" "the auditor replaces the node" update nodes kubectl --as="$AUD" replace -f node.json
refused "$AUD" "the auditor deletes the node" delete nodes kubectl --as="$AUD" delete node lab-node-1
refused "$AUD" "the auditor drains the node" patch nodes kubectl --as="$AUD" drain lab-node-1 --ignore-daemonsets --timeout=10s
refused "$AUD" "the auditor evicts a trainer" create pods/eviction \
	kubectl --as="$AUD" create --raw "/api/v1/namespaces/gpu-drv/pods/$trainer/eviction" -f eviction.json
refused "$AUD" "the auditor deletes the driver pod" delete pods kubectl --as="$AUD" -n gpu-operator delete pod "$driver"
refused "$AUD" "the auditor deletes a trainer" delete pods kubectl --as="$AUD" -n gpu-drv delete pod "$trainer"
refused "$AUD" "the auditor creates a ConfigMap" create configmaps kubectl --as="$AUD" -n gpudrv create configmap x
refused "$AUD" "the auditor creates a namespace" create namespaces kubectl --as="$AUD" create namespace gpudrv-x
refused "$AUD" "the auditor binds itself to cluster-admin" create clusterrolebindings \
	kubectl --as="$AUD" create clusterrolebinding gpudrv-x --clusterrole=cluster-admin --serviceaccount=gpudrv:auditor
refused "$AUD" "the auditor asks a token of the upgrader" create serviceaccounts/token \
	kubectl --as="$AUD" -n gpudrv create token upgrader
refused "$AUD" "the auditor lists Secrets" list secrets kubectl --as="$AUD" -n gpudrv get secrets
if [ -n "$made_crs" ]; then
	refused "$AUD" "the auditor creates a ClusterPolicy" create clusterpolicies \
		kubectl --as="$AUD" create --validate=false -f - <<'EOF2'
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: gpudrv-x}
EOF2
fi
t_run as_auditor drv-upgrade.sh -L $T_DRAIN -m "$M" -t 10 lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh as the auditor"
t_grep "stops where it cannot look at the budgets" err "^drv-upgrade.sh: cannot GET /apis/policy/v1/poddisruptionbudgets; kubectl said:$"
node lab-node-1 >after
t_cmp "the node is unchanged: labels, annotations, spec" before after
pods >pods.after
t_cmp "no pod was evicted or deleted" pods.before pods.after

# 3. The upgrader: the whole upgrade of lab-node-1, 535.183.06 to 550.90.07.
t_run drv lab-node-1
t_val "lab-node-1 starts schedulable, on 535.183.06, no upgrade state" /535.183.06/
t_run as_upgrader drv-upgrade.sh -L $T_DRAIN -t 60 -m "$M" lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh -L as the upgrader"
t_out "ends with the audit and the node upgrade-done" "audit: OK" \
	"lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"
no_forbidden "no request was refused"
states lab-node-1
t_cmp "moves through the operator's states in order" states.all states
t_grep "the drain looked up both DaemonSets and skipped their pods" err \
	"Warning: ignoring DaemonSet-managed Pods: gpu-drv/node-agent-[a-z0-9]*, gpu-operator/nvidia-driver-daemonset-[a-z0-9]*"
t_grep "and evicted the trainer" err "evicting pod gpu-drv/$trainer"
t_run drv lab-node-1
t_val "lab-node-1 is schedulable, on 550.90.07, upgrade-done" /550.90.07/upgrade-done
t_run kubectl get events -n default --field-selector "involvedObject.kind=Node,involvedObject.name=lab-node-1,source=gpudrv,reason=GPUDriverUpgrade" -o name
t_ok "$([ "$(grep -c . out)" -ge 3 ]; echo $?)" "its states are Events on the node, made as the upgrader"
# Without the Role of deploy/35-upgrader-events.yaml: said once, and the
# upgrade the same (here a refusal: the skip label).
kubectl delete -f "$D/35-upgrader-events.yaml" >/dev/null
e2e_until 30 sh -c "[ \"\$(kubectl auth can-i create events -n default --as=$UPG)\" = no ]"
kubectl label node lab-node-0 --overwrite nvidia.com/gpu-driver-upgrade.skip=true >/dev/null
t_run as_upgrader drv-upgrade.sh -L -m "$M" lab-node-0 550.90.07
t_rc 1 "drv-upgrade.sh as the upgrader without its events Role: the skip label refuses"
t_grep "says it cannot record Events, with the refusal" err "^drv-upgrade.sh: warning: cannot record Events on lab-node-0 (kubectl said: Error from server (Forbidden): events is forbidden: User \"$UPG\" cannot create resource \"events\" in API group \"\" in the namespace \"default\""
kubectl label node lab-node-0 nvidia.com/gpu-driver-upgrade.skip- >/dev/null
t_run kubectl apply -f "$D/35-upgrader-events.yaml"
t_rc 0 "the events Role put back"
e2e_until 30 sh -c "[ \"\$(kubectl auth can-i create events -n default --as=$UPG)\" = yes ]"
t_ok $? "the upgrader may create events in default"
t_is "and not in another namespace" "$(kubectl auth can-i create events -n gpu-drv --as="$UPG")" no

# Without -L the driver pod is deleted: the namespaced Role.
e2e_until 90 running gpu-drv app=trainer 3 && e2e_until 60 settled
t_ok $? "the trainer is back, one disruption allowed again"
old=$(kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset --field-selector=spec.nodeName=lab-node-2 -o name)
(
	# gpu-feature-discovery, played by the test: the new driver's labels.
	end=$(($(date +%s) + 90))
	until [ "$(kubectl get node lab-node-2 -o 'jsonpath={.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}')" = validation-required ]; do
		[ "$(date +%s)" -lt "$end" ] || exit 1
		sleep 0.5
	done
	kubectl label node lab-node-2 --overwrite nvidia.com/cuda.driver.major=550 \
		nvidia.com/cuda.driver.minor=127 nvidia.com/cuda.driver.rev=05 >/dev/null
) &
gfd=$!
t_run as_upgrader drv-upgrade.sh $T_DRAIN -g 60 -t 60 -m "$M" lab-node-2 550.127.05
wait "$gfd" || :
t_rc 0 "drv-upgrade.sh as the upgrader, restarting the driver pod"
t_out "ends with the audit and the node upgrade-done" "audit: OK" \
	"lab-node-2 upgrade-done 550.127.05 550-6.8.0-45-generic-ubuntu24.04"
no_forbidden "no request was refused"
t_run drv lab-node-2
t_val "lab-node-2 is schedulable, on 550.127.05, upgrade-done" /550.127.05/upgrade-done
new=$(kubectl -n gpu-operator get pods -l app=nvidia-driver-daemonset --field-selector=spec.nodeName=lab-node-2 -o name)
if [ -n "$old" ] && [ "$new" != "$old" ]; then t_ok 0 "the driver pod on lab-node-2 was deleted and replaced"; else
	t_ok 1 "the driver pod on lab-node-2 was deleted and replaced"
	echo "before: $old, after: $new" | t_diag
fi

# drv-rollout.sh needs no more than the upgrader's rights; the auditor
# cannot even plan (it may not list budgets or pods).
t_run as_auditor drv-rollout.sh -D -L -m "$M" 550.90.07
t_rc 2 "drv-rollout.sh -D as the auditor"
t_grep "stops where it cannot read the budgets and pods" err "^drv-rollout.sh: cannot GET /apis/policy/v1/poddisruptionbudgets; kubectl said:$"
t_out "and prints no plan"
kubectl -n gpudrv delete lease gpudrv-rollout --ignore-not-found >/dev/null # (an earlier test's)
t_run as_upgrader drv-rollout.sh -L $T_DRAIN -p 1 -u 100% -t 60 -m "$M" 550.90.07
t_rc 0 "drv-rollout.sh -L as the upgrader (lab-node-2 back to 550.90.07)"
{
	echo "start 1 lab-node-2 550-6.8.0-45-generic-ubuntu24.04"
	sed 's/^/lab-node-2 /' states.all
	echo "done 3 failed 0 skipped 0 left 0"
} >rollout.expected
t_cmp "one start, its states, the summary" rollout.expected out
no_forbidden "no request was refused"
t_run drv lab-node-2
t_val "lab-node-2 is schedulable, on 550.90.07, upgrade-done" /550.90.07/upgrade-done
t_run kubectl -n gpudrv get lease gpudrv-rollout -o 'jsonpath={.spec.holderIdentity}/{.spec.leaseTransitions}'
t_val "its lock, the Lease gpudrv/gpudrv-rollout, made, then released" /0

# The rollout's lock needs each of the Role's lease rights: without one, it
# stops before it reads a node, exit 2, nothing changed.
# lease_role CREATE NAMED: the Role with the verbs CREATE on every lease and
# NAMED on gpudrv-rollout; then waits until the upgrader has exactly them.
lease_role() {
	{
		printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: gpudrv-upgrader, namespace: gpudrv}\nrules:\n'
		[ -z "$1" ] || echo "- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [$1]}"
		echo "- {apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [gpudrv-rollout], verbs: [$2]}"
	} | kubectl apply -f - >/dev/null || return 1
	for lr_v in create get update; do
		lr_want=no
		case ", $1, $2, " in *", $lr_v, "*) lr_want=yes ;; esac
		e2e_until 30 sh -c "[ \"\$(kubectl auth can-i $lr_v leases.coordination.k8s.io/gpudrv-rollout -n gpudrv --as=$UPG)\" = $lr_want ]" ||
			return 1
	done
}
nodes3() { node lab-node-0; node lab-node-1; node lab-node-2; }
for right in create get update; do
	kubectl -n gpudrv delete lease gpudrv-rollout --ignore-not-found >/dev/null
	case $right in
	create) lease_role "" "get, update" ;;
	get) lease_role create update ;;
	update) lease_role create get ;;
	esac
	t_ok $? "the upgrader's lease rights without $right"
	nodes3 >nodes.before
	t_run as_upgrader drv-rollout.sh -L $T_DRAIN -p 1 -u 100% -t 60 -m "$M" 550.127.05
	t_rc 2 "drv-rollout.sh as the upgrader without $right on the lease"
	t_grep "relays the refusal" err "forbidden: User \"$UPG\" cannot $right resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"gpudrv\""
	t_grep "names the rights it needs" err "^drv-rollout.sh: nothing was changed; the rollout's account needs get, create and update on leases in gpudrv (deploy/25-upgrader-lease.yaml; "
	t_out "prints nothing on stdout"
	nodes3 >nodes.after
	t_cmp "no node was touched (without $right)" nodes.before nodes.after
done
t_run kubectl -n gpudrv get lease gpudrv-rollout -o 'jsonpath={.spec.holderIdentity}'
t_grep "without update, the lease it made is left to expire" out '^[A-Za-z0-9.-]*_[0-9]*_[0-9a-f]*$'
kubectl -n gpudrv delete lease gpudrv-rollout >/dev/null
t_run kubectl apply -f "$D/25-upgrader-lease.yaml"
t_rc 0 "the Role put back"
lease_role create "get, update"
t_ok $? "the upgrader has its three lease rights again"
# ...and no more: no delete, no other lease.
refused "$UPG" "the upgrader deletes the rollout's lease" delete leases \
	kubectl --as="$UPG" -n gpudrv delete lease gpudrv-rollout
refused "$UPG" "the upgrader reads another lease" get leases \
	kubectl --as="$UPG" -n gpudrv get lease gpudrv-other

# The upgrader may do that much and no more.
trainer=$(kubectl -n gpu-drv get pods -l app=trainer --field-selector=status.phase=Running -o name | sed -n 's|^pod/||p' | head -n 1)
refused "$UPG" "the upgrader deletes a pod outside the driver's namespace" delete pods \
	kubectl --as="$UPG" -n gpu-drv delete pod "$trainer"
refused "$UPG" "the upgrader deletes a node" delete nodes kubectl --as="$UPG" delete node lab-node-0
refused "$UPG" "the upgrader replaces a node" update nodes kubectl --as="$UPG" replace -f node.json
refused "$UPG" "the upgrader creates a pod" create pods kubectl --as="$UPG" -n gpu-drv run x --image=busybox
refused "$UPG" "the upgrader deletes a DaemonSet" delete daemonsets \
	kubectl --as="$UPG" -n gpu-operator delete daemonset nvidia-driver-daemonset
refused "$UPG" "the upgrader deletes a budget" delete poddisruptionbudgets \
	kubectl --as="$UPG" -n gpu-drv delete pdb trainer-pdb
refused "$UPG" "the upgrader lists Secrets" list secrets kubectl --as="$UPG" -n gpudrv get secrets
refused "$UPG" "the upgrader asks a token of itself" create serviceaccounts/token \
	kubectl --as="$UPG" -n gpudrv create token upgrader
t_run kubectl -n gpu-drv get pod "$trainer" -o name
t_out "the trainer is still there" "pod/$trainer"

# 4. The same through kubeconfigs made the documented way.
t_run "$KC" -d 1h auditor auditor.kubeconfig
t_rc 0 "drv-kubeconfig.sh -d 1h auditor"
t_grep "says the file, the account and when the token expires" out \
	'^auditor.kubeconfig: system:serviceaccount:gpudrv:auditor on https://[^ ]*; token expires 20[0-9-]*T[0-9:]*Z; make the file again before then$'
t_err "and nothing on stderr"
t_run ls -l auditor.kubeconfig
t_grep "the file has mode 0600" out '^-rw------- '
set -- .auditor.kubeconfig.*
[ ! -e "$1" ]
t_ok $? "no temporary file is left beside it"
t_run env KUBECONFIG="$PWD/auditor.kubeconfig" kubectl auth whoami -o 'jsonpath={.status.userInfo.username}'
t_val "it authenticates as the auditor" "$AUD"
t_run env KUBECONFIG="$PWD/auditor.kubeconfig" drv-tag.sh lab-node-1
t_rc 0 "drv-tag.sh through the auditor's kubeconfig"
t_out "prints lab-node-1's new tag" 550-5.15.0-107-generic-ubuntu22.04
t_run env KUBECONFIG="$PWD/auditor.kubeconfig" drv-audit.sh -m "$M"
t_rc 0 "drv-audit.sh through the auditor's kubeconfig"
t_out "prints OK" OK
t_run env KUBECONFIG="$PWD/auditor.kubeconfig" drv-states.sh -m "$M"
t_rc 0 "drv-states.sh through the auditor's kubeconfig"
cp out states.out
t_run cut -d ' ' -f 1-5,7 states.out
t_out "shows both upgrades done, nothing waiting" \
	"lab-node-0 - schedulable 550-5.15.0-119-generic-ubuntu22.04 ok -" \
	"lab-node-1 upgrade-done schedulable 550-5.15.0-107-generic-ubuntu22.04 ok -" \
	"lab-node-2 upgrade-done schedulable 550-6.8.0-45-generic-ubuntu24.04 ok -"
node lab-node-1 >before
refused "$AUD" "a label through the auditor's kubeconfig" patch nodes \
	env KUBECONFIG="$PWD/auditor.kubeconfig" kubectl label node lab-node-1 --overwrite nvidia.com/gpu-driver-upgrade-state=upgrade-required
node lab-node-1 >after
t_cmp "the node is unchanged" before after

# A failure replaces nothing.
cp auditor.kubeconfig kept
t_run "$KC" nobody auditor.kubeconfig
t_rc 2 "drv-kubeconfig.sh for a service account that does not exist"
t_out "prints nothing on stdout"
t_err "says so" "drv-kubeconfig.sh: no service account gpudrv/nobody (kubectl apply -f deploy/ makes gpudrv/auditor and gpudrv/upgrader)"
t_cmp "the existing file is unchanged" kept auditor.kubeconfig
kubectl config view --raw --minify | sed -e '/certificate-authority-data:/d' \
	-e 's/^\( *\)server: /\1insecure-skip-tls-verify: true\n\1server: /' >insecure.kubeconfig
t_run env KUBECONFIG="$PWD/insecure.kubeconfig" "$KC" auditor auditor.kubeconfig
t_rc 2 "drv-kubeconfig.sh from a context that does not verify the server"
t_err "refuses to send a token so" \
	"drv-kubeconfig.sh: the current context does not verify the server's certificate (insecure-skip-tls-verify); refusing to write a kubeconfig that sends a token so"
t_cmp "the existing file is unchanged" kept auditor.kubeconfig
t_run "$KC" -S -d 1h auditor x.kubeconfig
t_rc 2 "drv-kubeconfig.sh -S -d"
t_err "says why" "drv-kubeconfig.sh: -d and -S do not go together: the token of -S never expires"
t_run "$KC" auditor
t_rc 2 "drv-kubeconfig.sh without a file"
t_err "prints the usage" "usage: drv-kubeconfig.sh [-n namespace] [-d duration | -S] service-account file"

# The upgrader with a long-lived token: lab-node-1 from 535.183.06 again.
t_run "$KC" -S upgrader upgrader.kubeconfig
t_rc 0 "drv-kubeconfig.sh -S upgrader"
t_out "says the token never expires and how to revoke it" \
	"upgrader.kubeconfig: $UPG on $(kubectl config view --minify -o 'jsonpath={.clusters[0].cluster.server}'); token never expires; revoke it with: kubectl -n gpudrv delete secret upgrader-token"
t_run kubectl -n gpudrv get secret upgrader-token -o 'jsonpath={.type} {.metadata.annotations.kubernetes\.io/service-account\.name}'
t_val "the token is a service-account-token Secret of the upgrader" "kubernetes.io/service-account-token upgrader"
cp upgrader.kubeconfig first
t_run "$KC" -S upgrader upgrader.kubeconfig
t_rc 0 "drv-kubeconfig.sh -S upgrader again"
t_cmp "reuses the Secret: the same file" first upgrader.kubeconfig
kubectl label node lab-node-1 --overwrite nvidia.com/cuda.driver.major=535 nvidia.com/cuda.driver.minor=183 \
	nvidia.com/cuda.driver.rev=06 nvidia.com/gpu-driver-upgrade-state- >/dev/null
e2e_until 90 running gpu-drv app=trainer 3 && e2e_until 60 settled
t_ok $? "lab-node-1 back on 535.183.06, one disruption allowed"
t_run env KUBECONFIG="$PWD/upgrader.kubeconfig" drv-upgrade.sh -L $T_DRAIN -t 60 -m "$M" lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh -L through the upgrader's kubeconfig"
t_out "ends with the audit and the node upgrade-done" "audit: OK" \
	"lab-node-1 upgrade-done 550.90.07 550-5.15.0-107-generic-ubuntu22.04"
no_forbidden "no request was refused"
states lab-node-1
t_cmp "moves through the operator's states in order" states.all states
t_run drv lab-node-1
t_val "lab-node-1 is schedulable, on 550.90.07, upgrade-done" /550.90.07/upgrade-done

# Deleting the Secret revokes the token (the API server caches an
# authentication for seconds).
kubectl -n gpudrv delete secret upgrader-token >/dev/null
# shellcheck disable=SC2016 # expanded by the inner sh
e2e_until 60 sh -c '! KUBECONFIG="$1" kubectl auth whoami' sh "$PWD/upgrader.kubeconfig"
t_ok $? "the Secret deleted, the token is refused"
t_run env KUBECONFIG="$PWD/upgrader.kubeconfig" drv-audit.sh -m "$M"
t_rc 2 "drv-audit.sh with the revoked token"
t_out "prints nothing on stdout, never OK"
t_grep "relays the API's refusal" err "Unauthorized"

t_done
