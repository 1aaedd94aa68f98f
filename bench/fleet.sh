#!/bin/sh
# bench/fleet.sh: `make bench-fleet`.  The drain path against a real API
# server: a sandbox of its own (.sandbox-bench, ports from 30440, started
# fresh, stopped at the end) holding FLEET_NODES (default 1000) kwok GPU
# nodes, FLEET_PODS (30000) pods and FLEET_PDBS (3000) budgets, all from
# gen -p (see its -C): one driver DaemonSet pod per node, Succeeded Job
# pods, and the replicas of one ReplicaSet per budget, every 97th of them made
# not Ready.  Pods are created with spec.nodeName set (no scheduler), kwok
# makes them Running and Ready, the disruption controller computes every
# budget's status.  Then, medians of RUNS (default 5) rounds, each case once
# a round, all in this one run:
#   pdb-check NODE with its list call, in three forms, against
#   kubectl drain NODE --dry-run=server and the bare list calls;
#   drv-states.sh;
# and one drv-upgrade.sh -L of another node, refused by a budget, then let
# through.  Prints how long each setup step took.  FLEET_PARALLEL: kubectl
# creates at a time (4); BENCH_PORT_BASE: the sandbox's ports (30440).  The
# run's files stay in bench/out/fleet-*.
#
# The ReplicaSet and DaemonSet controllers would add pods of their own while
# the bench creates them (at their client's 20 requests/s, 30,000 pods take
# 25 minutes), so a ValidatingAdmissionPolicy refuses pod creation to those
# two controllers' service accounts until every pod is there; it is deleted
# before anything is measured.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out
gen=$out/gen
nn=${FLEET_NODES:-1000}
np=${FLEET_PODS:-30000}
nb=${FLEET_PDBS:-3000}
runs=${RUNS:-5}
par=${FLEET_PARALLEL:-4} # kubectl create at a time
batch=1000               # objects a kubectl create
version=570.86.10        # what drv-upgrade.sh installs
mkdir -p "$out"
[ -x "$gen" ] || { echo "bench: $gen missing: run make bench-fleet" >&2; exit 2; }
for t in jq curl; do
	command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is missing" >&2; exit 2; }
done

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
bench_sandbox
f=$out/fleet # the run's files: $f-*

ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 2; }
step_t0=0
step() { step_t0=$(ms); step_what=$1; }
done_() { echo "setup: $step_what: $(secs "$step_t0" "$(ms)") s (load $(load))"; }
# until_ok SECONDS WHAT COMMAND...: retry every 2 s until COMMAND succeeds.
until_ok() {
	u_end=$(($(date +%s) + $1))
	u_what="$2 after $1 s"
	shift 2
	until "$@"; do
		[ "$(date +%s)" -lt "$u_end" ] || die "no $u_what"
		sleep 2
	done
}
# batches FILE NAME: FILE's objects (one a line) as Lists of $batch, $f-NAME-*.json.
batches() {
	rm -f "$f-$2"-*.json
	awk -v p="$f-$2" -v n="$batch" '
		(NR - 1) % n == 0 {
			if (o != "") { print "]}" >o; close(o) }
			o = sprintf("%s-%05d.json", p, (NR - 1) / n)
			printf "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n%s", $0 >o
			next
		}
		{ printf ",\n%s", $0 >o }
		END { if (o != "") print "]}" >o }' "$1"
}
# create NAME: kubectl create -f each of NAME's batches, $par at a time.
create() {
	: >"$f-create.err"
	c_i=0
	for c_b in "$f-$1"-*.json; do
		[ -f "$c_b" ] || continue
		kubectl create -f "$c_b" >/dev/null 2>>"$f-create.err" &
		c_i=$((c_i + 1))
		[ $((c_i % par)) -ne 0 ] || wait
	done
	wait
	[ ! -s "$f-create.err" ] || { head -n 5 "$f-create.err" >&2; die "kubectl create failed ($1)"; }
}
# npods: how many pods there are (limit=1: remainingItemCount, not the whole list).
npods() {
	kubectl get --raw '/api/v1/pods?limit=1' |
		awk '{ n = 0; if (match($0, /"remainingItemCount":[0-9]+/)) n = substr($0, RSTART + 21, RLENGTH - 21)
			print n + ($0 ~ /"items":\[\{/) }'
}
# none PATH: a list with a selector has no item (limit=1).
none() { kubectl get --raw "$1&limit=1" | grep -q '"items":\[\]'; }
# nodes_notready: NodeNotReady events so far (kwok starved of CPU misses its
# lease renewals; the node lifecycle controller then marks the node's pods not Ready).
nodes_notready() { kubectl get events -A --field-selector reason=NodeNotReady --no-headers 2>/dev/null | grep -c . || :; }

echo "gpudrv bench-fleet: $nn GPU nodes, $np pods, $nb budgets on the sandbox (fresh); $(nproc) CPU(s); $(date -u +%Y-%m-%dT%H:%MZ); load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
sh "$root/sandbox/down.sh" >/dev/null 2>&1 || :
step "sandbox up (sandbox/up.sh)"
sh "$root/sandbox/up.sh" >/dev/null 2>"$f-up.log" || { tail "$f-up.log" >&2; exit 2; }
done_
t_setup=$(ms)

# 1. The nodes, for kwok (no conditions: it makes them Ready).
"$gen" -k "$nn" >"$f-nodes.json"
step "$nn nodes created (one kubectl create -f, ~$(($(wc -c <"$f-nodes.json") / nn / 1000)) KB each)"
kubectl create -f "$f-nodes.json" >/dev/null
done_
step "the $nn nodes Ready (kwok)"
# (the server's table, not the nodes: a few KB)
ready_nodes() { [ "$(kubectl get nodes --no-headers | awk '$2 == "Ready"' | grep -c .)" -ge "$nn" ]; }
until_ok 600 "$nn Ready nodes" ready_nodes
done_

# 2. Namespaces, then the policy that keeps the two controllers out.
"$gen" -C owners -p "$np,$nb" "$nn" >"$f-owners.jsonl"
grep '"kind":"Namespace"' "$f-owners.jsonl" >"$f-ns.jsonl"
grep -v '"kind":"Namespace"' "$f-owners.jsonl" >"$f-own.jsonl"
nns=$(grep -c . "$f-ns.jsonl")
step "$nns namespaces, their default service accounts"
batches "$f-ns.jsonl" ns
create ns
sas() { [ "$(kubectl get sa -A --field-selector metadata.name=default -o name | grep -c .)" -ge $((nns + 1)) ]; }
until_ok 600 "default service account in each namespace" sas
done_

step "ValidatingAdmissionPolicy: no pods by the ReplicaSet and DaemonSet controllers"
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: gpudrv-bench-fleet
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
  validations:
  - expression: "!(request.userInfo.username in ['system:serviceaccount:kube-system:replicaset-controller', 'system:serviceaccount:kube-system:daemon-set-controller'])"
    message: "bench/fleet.sh creates these pods itself"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: gpudrv-bench-fleet
spec:
  policyName: gpudrv-bench-fleet
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        gpudrv-bench: "1"
EOF
probe='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe","namespace":"gpu-operator"},"spec":{"containers":[{"name":"c","image":"x"}]}}'
refused() {
	for r_sa in replicaset-controller daemon-set-controller; do
		echo "$probe" | kubectl create --dry-run=server -f - \
			--as="system:serviceaccount:kube-system:$r_sa" 2>&1 | grep -q 'creates these pods itself' || return 1
	done
}
until_ok 60 "refusal by the admission policy" refused
done_

# 3. The owners: the DaemonSet, the ReplicaSets (replicas as generated), the
#    Jobs (whose pods the Job controller makes, to kwok's nodes).
step "owners: DaemonSet, $nb ReplicaSets, $(grep -c '"kind":"Job"' "$f-own.jsonl") Jobs (batches of $batch, $par at a time)"
batches "$f-own.jsonl" own
create own
done_
kubectl get rs,ds -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.metadata.uid}{"\n"}{end}' >"$f-uids"

# 4. The pods, owned by them.
"$gen" -C pods -U "$f-uids" -p "$np,$nb" "$nn" >"$f-pods.jsonl"
npc=$(grep -c . "$f-pods.jsonl")
step "$npc pods created (batches of $batch, $par at a time; ~$(($(wc -c <"$f-pods.jsonl") / npc)) bytes each as sent)"
batches "$f-pods.jsonl" pods
create pods
done_
step "all $np pods Running or Succeeded (kwok; the Job controller's too)"
settled() {
	[ "$(npods)" -ge "$np" ] && none '/api/v1/pods?fieldSelector=status.phase!%3DRunning,status.phase!%3DSucceeded'
}
until_ok 1800 "$np pods Running or Succeeded" settled
done_
# Every owner has its pods: the policy can go.
kubectl delete validatingadmissionpolicybinding,validatingadmissionpolicy gpudrv-bench-fleet >/dev/null

# patch_status FILE PATCH: PATCH on the status of each pod of FILE ("namespace
# name" lines), $par at a time; kubectl's errors in $f-create.err.
patch_status() {
	: >"$f-create.err"
	p_i=0
	while read -r p_ns p_pod; do
		kubectl patch pod -n "$p_ns" "$p_pod" --subresource=status --type=strategic -p "$2" \
			>/dev/null 2>>"$f-create.err" &
		p_i=$((p_i + 1))
		[ $((p_i % par)) -ne 0 ] || wait
	done <"$1"
	wait
}

step "$("$gen" -C unready -p "$np,$nb" "$nn" | grep -c .) pods made not Ready (status Ready=False, $par at a time)"
"$gen" -C unready -p "$np,$nb" "$nn" >"$f-unready"
patch='{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady"},{"type":"ContainersReady","status":"False","reason":"ContainersNotReady"}]}}'
patch_status "$f-unready" "$patch"
[ ! -s "$f-create.err" ] || { head -n 5 "$f-create.err" >&2; die "kubectl patch failed"; }
done_

# 5. The budgets, and their status from the disruption controller.
"$gen" -C budgets -p "$np,$nb" "$nn" >"$f-pdbs.jsonl"
step "$nb budgets created"
batches "$f-pdbs.jsonl" pdbs
create pdbs
done_
step "every budget's status computed (observedGeneration = generation)"
computed() {
	kubectl get pdb -A -o jsonpath='{range .items[*]}{.metadata.generation} {.status.observedGeneration}{"\n"}{end}' >"$f-gens"
	[ "$(grep -c . "$f-gens")" -ge "$nb" ] && ! awk '$1 != $2 { bad = 1 } END { exit !bad }' "$f-gens"
}
until_ok 1800 "status on every budget" computed
done_

# 6. The cluster as planned: every budget's status as gen computes it
#    (as the disruption controller does).  Where a node went NotReady for a
#    while, the node lifecycle controller set its pods' Ready to False, and
#    kwok (whose pod-ready stage only looks at Pending pods) leaves them so:
#    they are made Ready again, as the kubelet would.
jsonp='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.status.expectedPods} {.status.currentHealthy} {.status.desiredHealthy} {.status.disruptionsAllowed}{"\n"}{end}'
"$gen" -r -p "$np,$nb" "$nn" | sed -n 1p | jq -r '.items[] | .metadata.namespace + "/" +
	.metadata.name + " " + ([.status.expectedPods, .status.currentHealthy, .status.desiredHealthy,
	.status.disruptionsAllowed] | map(tostring) | join(" "))' | sort >"$f-pdb-gen"
sort "$f-unready" >"$f-unready.sorted"
ready_patch='{"status":{"conditions":[{"type":"Ready","status":"True","reason":null,"message":null}]}}'
as_planned() {
	kubectl get pdb -A -o "jsonpath=$jsonp" | sort >"$f-pdb-live"
	a_diff=$(comm -3 "$f-pdb-live" "$f-pdb-gen" | grep -c . || :)
	[ "$a_diff" -ne 0 ] || return 0
	# the disruption controller (20 requests/s) has a while to catch up
	[ $(($(date +%s) - a_last)) -ge 240 ] || return 1
	a_last=$(date +%s)
	# the pods not Ready that were meant to be
	kubectl get --raw /api/v1/pods | jq -r '.items[] | select(.status.phase == "Running") |
		select(any(.status.conditions[]?; .type == "Ready" and .status != "True")) |
		.metadata.namespace + " " + .metadata.name' | sort | comm -23 - "$f-unready.sorted" >"$f-fix"
	say "$a_diff budgets not yet as planned; $(grep -c . "$f-fix" || :) pods to make Ready again"
	patch_status "$f-fix" "$ready_patch"
	return 1
}
a_last=0
as_planned_slowly() { as_planned || { sleep 8 && return 1; }; }
step "every budget's status as gen computes it ($(nodes_notready) NodeNotReady events so far)"
until_ok 1800 "every budget as planned" as_planned_slowly
done_
echo "setup: in all $(secs "$t_setup" "$(ms)") s; NodeNotReady events during it: $(nodes_notready)"

# The cluster as pdb-check sees it, one snapshot; the nodes it says OK of.
merge='{apiVersion: "v1", kind: "List", items: ((.[0].items | map(.kind = "PodDisruptionBudget")) + (.[1].items | map(.kind = "Pod")))}'
{ kubectl get --raw /apis/policy/v1/poddisruptionbudgets; kubectl get --raw /api/v1/pods; } |
	jq -c -s "$merge" >"$f-snap.json"
i=0 node='' unode='' blocked=0
while [ "$i" -lt "$nn" ] && { [ -z "$node" ] || [ -z "$unode" ]; }; do
	n=$(printf 'gpu-node-%05d' "$i")
	if pdb-check "$n" "$f-snap.json" >/dev/null 2>&1; then
		if [ -z "$node" ]; then
			node=$n
		# drv-upgrade.sh's node: the matrix holds branch 570 for its kernel, and it runs another
		elif [ $((i % 5 % 2)) -eq 0 ] && [ $((i % 3)) -ne 2 ]; then
			unode=$n
		fi
	else
		blocked=$((blocked + 1))
	fi
	i=$((i + 1))
done
if [ -z "$node" ] || [ -z "$unode" ]; then die "no node that pdb-check says OK of"; fi
onnode=$(jq -r --arg n "$node" '[.items[] | select(.kind == "Pod" and .spec.nodeName == $n)] | length' "$f-snap.json")
echo "node measured: $node ($onnode pods; pdb-check says OK; $blocked of the $i nodes tried before had a budget in the way)"

# The forms of the check, all checked to say the same first.
kubectl get pdb,pods -A -o json >"$f-json.json"
pdb-check -s "$node" "$f-json.json" >"$f-v1" || :
pdb-check -s "$node" "$f-snap.json" >"$f-v2" || :
{ kubectl get --raw /apis/policy/v1/poddisruptionbudgets
	kubectl get --raw "/api/v1/pods?fieldSelector=spec.nodeName%3D$node"; } |
	pdb-check -s "$node" >"$f-v3" || :
if ! cmp -s "$f-v1" "$f-v2" || ! cmp -s "$f-v1" "$f-v3"; then
	die "the three forms of pdb-check disagree ($f-v1, -v2, -v3)"
fi
rm -f "$f-json.json"

c_json() { kubectl get pdb,pods -A -o json | pdb-check "$node"; }
c_json_only() { kubectl get pdb,pods -A -o json; }
# pdb-check reads the two lists back to back as one cluster.
c_raw() {
	{ kubectl get --raw /apis/policy/v1/poddisruptionbudgets; kubectl get --raw /api/v1/pods; } |
		pdb-check "$node"
}
# What drv-upgrade.sh asks: every budget, and the node's pods.
c_sel() {
	{ kubectl get --raw /apis/policy/v1/poddisruptionbudgets
		kubectl get --raw "/api/v1/pods?fieldSelector=spec.nodeName%3D$node"; } |
		pdb-check "$node"
}
c_check() { pdb-check "$node" "$f-snap.json"; }
c_pods() { kubectl get --raw /api/v1/pods; }
c_pdbs() { kubectl get --raw /apis/policy/v1/poddisruptionbudgets; }
c_both() { kubectl get --raw /apis/policy/v1/poddisruptionbudgets && kubectl get --raw /api/v1/pods; }
c_drain() {
	kubectl drain "$node" --dry-run=server --ignore-daemonsets --delete-emptydir-data --timeout=120s
}
"$gen" -m 100000 >"$f-matrix.csv"
c_states() { drv-states.sh -m "$f-matrix.csv"; }
cases="c_json c_json_only c_raw c_sel c_check c_pods c_pdbs c_both c_drain c_states"

# Round-robin: each case once a round, so that all see the same load.
flaps0=$(nodes_notready)
for c in $cases; do : >"$f-t.$c"; done
: >"$f-loads"
r=0
while [ "$r" -lt "$runs" ]; do
	load >>"$f-loads"
	for c in $cases; do
		t0=$(ms)
		"$c" >/dev/null 2>"$f-err" || {
			st=$?
			# pdb-check's findings (exit 1) are a result; a drain that did not finish is not
			if [ "$st" -ne 1 ] || [ "$c" = c_drain ]; then
				tail -n 5 "$f-err" >&2
				die "$c failed (exit $st)"
			fi
		}
		echo $(($(ms) - t0)) >>"$f-t.$c"
	done
	r=$((r + 1))
done
med() { sort -n "$f-t.$1" | sed -n "$(((runs + 1) / 2))p" | awk '{ printf "%.3f", $1 / 1000 }'; }
row() { printf '%-72s %8s\n' "$1" "$2"; }
echo
echo "median of $runs rounds (load average 1 min over the rounds: $(sort -n "$f-loads" | sed -n '1p;$p' | paste -sd- -); NodeNotReady events during them: $(($(nodes_notready) - flaps0)))"
row "case" "median s"
row "bare list: kubectl get --raw /api/v1/pods" "$(med c_pods)"
row "bare list: kubectl get --raw /apis/policy/v1/poddisruptionbudgets" "$(med c_pdbs)"
row "bare lists, both" "$(med c_both)"
row "kubectl get pdb,pods -A -o json (alone)" "$(med c_json_only)"
row "kubectl get pdb,pods -A -o json | pdb-check NODE" "$(med c_json)"
row "both --raw lists, back to back | pdb-check NODE" "$(med c_raw)"
row "--raw budgets + NODE's pods (fieldSelector) | pdb-check NODE (drv-upgrade.sh)" "$(med c_sel)"
row "pdb-check NODE <the --raw lists as one List, a file of $(($(wc -c <"$f-snap.json") / 1000000)) MB>" "$(med c_check)"
row "kubectl drain NODE --dry-run=server --ignore-daemonsets --delete-emptydir-data" "$(med c_drain)"
row "drv-states.sh -m <100,000-row matrix>" "$(med c_states)"
awk -v j="$(med c_json)" -v r="$(med c_raw)" -v s="$(med c_sel)" -v b="$(med c_both)" \
	-v d="$(med c_drain)" 'BEGIN {
	printf "ratios to the bare lists: -o json | pdb-check %.2fx, --raw | pdb-check %.2fx, fieldSelector form %.2fx\n", j / b, r / b, s / b
	printf "ratios to kubectl drain --dry-run=server: %.2fx, %.2fx, %.2fx\n", j / d, r / d, s / d }'

# drv-upgrade.sh -L of another node: refused by a budget, then let through.
upod=$(jq -r --arg n "$unode" '[.items[] | select(.kind == "Pod" and .spec.nodeName == $n and
	.metadata.ownerReferences[0].kind == "ReplicaSet")][0] |
	.metadata.namespace + " " + .metadata.labels["app.kubernetes.io/instance"]' "$f-snap.json")
uns=${upod% *}
upb=${upod#* }-pdb
kubectl get pdb -n "$uns" "$upb" -o json | jq -c '.spec' >"$f-spec"
# budget_is NS NAME MIN MAX: its status is current and MIN <= disruptionsAllowed <= MAX
budget_is() {
	kubectl get pdb -n "$1" "$2" -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.disruptionsAllowed}' |
		awk -v lo="$3" -v hi="$4" '$1 == $2 && $3 >= lo && $3 <= hi { ok = 1 } END { exit !ok }'
}
kubectl patch pdb -n "$uns" "$upb" --type=merge -p '{"spec":{"maxUnavailable":null,"minAvailable":"100%"}}' >/dev/null
until_ok 300 "disruptionsAllowed 0 on $uns/$upb" budget_is "$uns" "$upb" 0 0
nodestate() {
	kubectl get node "$unode" -o jsonpath='{.spec.unschedulable} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state} {.metadata.labels.nvidia\.com/cuda\.driver\.major}.{.metadata.labels.nvidia\.com/cuda\.driver\.minor}.{.metadata.labels.nvidia\.com/cuda\.driver\.rev}'
}
before=$(nodestate)
echo
echo "drv-upgrade.sh -L -m <matrix> $unode $version (load $(load)); $uns/$upb set to minAvailable 100%:"
t0=$(ms)
st=0
drv-upgrade.sh -L -m "$f-matrix.csv" "$unode" "$version" >"$f-up1.out" 2>"$f-up1.err" || st=$?
t1=$(ms)
after=$(nodestate)
echo "  refused: exit $st in $(secs "$t0" "$t1") s; node before '$before', after '$after'$(
	[ "$before" = "$after" ] && echo ' (unchanged)' || echo ' (CHANGED)')"
sed 's/^/    /' "$f-up1.out" | cut -c1-160
kubectl patch pdb -n "$uns" "$upb" --type=json \
	-p "[{\"op\":\"replace\",\"path\":\"/spec\",\"value\":$(cat "$f-spec")}]" >/dev/null
until_ok 300 "disruptionsAllowed >= 1 on $uns/$upb" budget_is "$uns" "$upb" 1 1000000
echo "  $uns/$upb back to $(cat "$f-spec") (load $(load)):"
t0=$(ms)
st=0
drv-upgrade.sh -L -m "$f-matrix.csv" "$unode" "$version" >"$f-up2.out" 2>"$f-up2.err" || st=$?
t1=$(ms)
echo "  let through: exit $st in $(secs "$t0" "$t1") s; node now '$(nodestate)'; $(grep -c '^    evicting pod' "$f-up2.err" || :) pods evicted"
tail -n 1 "$f-up2.out" | sed 's/^/    /'
[ "$st" -eq 0 ] || { tail -n 20 "$f-up2.err" >&2; }
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
