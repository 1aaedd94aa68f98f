#!/bin/sh
# drv-rollout.sh: its arguments, checked before kubectl is called, and its
# plan (-D) on a fake API server that answers by request, in JSON: the GPU
# nodes, the budgets and the pods.
# t/0980 runs real rollouts on the sandbox.
. "$(dirname "$0")/lib.sh"

S=nvidia.com/gpu-driver-upgrade-state
NEW=550.90.07
TAG=550-5.15.0-107-generic-ubuntu22.04
t_matrix

t_fake_fleet
# budget NAME ALLOWED: a budget of app=NAME in ns team, its status current.
# pod NAME NODE APP: a ReplicaSet's pod, Running and Ready (an item a line).
budgets() {
	printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{},"items":[' >pdbs.json
	sep=
	while [ $# -ge 2 ]; do
		printf '%s{"metadata":{"name":"%s","namespace":"team","generation":1},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"%s"}}},"status":{"observedGeneration":1,"currentHealthy":4,"desiredHealthy":%d,"disruptionsAllowed":%d,"expectedPods":4}}' \
			"$sep" "$1" "$1" $((4 - $2)) "$2" >>pdbs.json
		sep=,
		shift 2
	done
	echo ']}' >>pdbs.json
}
pods() {
	printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[' >pods.json
	sep=
	while [ $# -ge 3 ]; do
		printf '\n%s{"metadata":{"name":"%s","namespace":"team","labels":{"app":"%s"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%s-rs","uid":"u","controller":true}]},"spec":{"nodeName":"%s"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' \
			"$sep" "$1" "$3" "$3" "$2" >>pods.json
		sep=,
		shift 3
	done
	printf '\n]}\n' >>pods.json
}

# Arguments: each refused before kubectl is called.
while IFS='|' read -r args msg; do
	rm -f kubectl.log
	# shellcheck disable=SC2086 # the arguments, a word each
	t_run drv-rollout.sh $args
	t_rc 2 "drv-rollout.sh $args"
	[ -z "$msg" ] || t_grep "says: $msg" err "^drv-rollout.sh: $msg$"
	t_grep "and gives the usage" err "^usage: drv-rollout.sh "
	t_ok "$([ -e kubectl.log ] && echo 1 || echo 0)" "kubectl is never called ($args)"
done <<'EOF'
|
550.90.07 550.90.08|
-p x 550.90.07|-p takes a number of nodes (0: no limit), not "x"
-u x 550.90.07|-u takes a number of nodes or a percentage up to 100% (25%), not "x"
-u 101% 550.90.07|-u takes a number of nodes or a percentage up to 100% (25%), not "101%"
-u % 550.90.07|-u takes a number of nodes or a percentage up to 100% (25%), not "%"
-m m -r reg/x/y 550.90.07|-m names a matrix, -r a registry: one or the other
-I 550.90.07|-I goes with -r
-J 10 550.90.07|-J is how long to wait for the pods -j selects: give -j too
-t 0 550.90.07|the drain timeout must be at least 1 second
-U drain.enable=yes 550.90.07|-U "drain.enable=yes": takes true or false
-U maxParallel=2 550.90.07|-U "maxParallel=2": names no field of the upgradePolicy (upgrade-policy(1) lists them)
-C 0 550.90.07|-C takes a number of nodes, 1 or more, not '0'
-C 2 -S pool=a 550.90.07|-C takes the first nodes as the canary, -S those a selector picks: one or the other
-k x 550.90.07|-k takes a number of failures, 1 or more, not 'x'
-G 60 550.90.07|-G and -e are the health gate's: give -V too
-x 550.90.07|
EOF
t_run drv-rollout.sh 550.90
t_err "a version that is not one" "drv-rollout.sh: not a driver version (branch.minor.rev, e.g. 550.90.07): '550.90'"
t_run drv-rollout.sh -h
t_rc 0 "-h"
t_grep "-h prints the usage on stdout" out "^usage: drv-rollout.sh \[-cDfL\] "

# t_plan ARGS...: drv-rollout.sh ARGS with the lab's policy (every pod
# drained: the budgets these plans are about hold no GPU pod), its output
# the plan without the policy lines before it (checked once, below).
t_plan() {
	# shellcheck disable=SC2086 # T_DRAIN is words
	t_run drv-rollout.sh $T_DRAIN "$@"
	grep -v '^policy ' out >out.plan
	mv out.plan out
}

# The API down: exit 2, nothing on stdout.
t_fleet n1:535.183.06:::: && budgets && pods
: >down
t_plan -D -m "$M" "$NEW"
rm down
t_rc 2 "the API server down"
t_grep "says so, with kubectl's words" err "^drv-rollout.sh: cannot list the clusterpolicies; kubectl said:$"
t_grep "and that it cannot read the operator's objects" err "^drv-rollout.sh: the GPU Operator's objects, where its upgradePolicy is, cannot be read; nothing was changed$"
t_out "and prints nothing"

# Four nodes, two of which draw on one budget that allows one disruption,
# one whose drain its budget never allows.
t_fleet n1:535.183.06::::True n2:535.183.06::::True n3:535.183.06::::True n4:535.183.06::::True
budgets shared 1 pinned 0 free 3
pods a1 n1 shared a2 n2 shared p3 n3 pinned f4 n4 free f1 n1 free
t_plan -D -p 2 -u 100% -m "$M" "$NEW"
t_rc 1 "the plan (n3 is blocked)"
t_out "n1 and n2 never under way together; n3 skipped with pdb-check's words" \
	"start 1 n1 $TAG" \
	"wait n2 budget team/shared" \
	"n3 team/pinned BLOCKS team/p3 maxUnavailable=1 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: add 1 ready replica elsewhere" \
	"n3 skipped budget" \
	"start 2 n4 $TAG" \
	"start 3 n2 $TAG" \
	"plan: upgrade 3 done 0 failed 0 skipped 1 left 0"
t_run grep -c ' get --raw /api/v1/pods' kubectl.log
t_out "the dry run reads the pods once" 1

# -p 0: no limit but the budgets.
t_plan -D -p 0 -u 100% -m "$M" "$NEW"
t_out "-p 0: n1 and n4 together, n2 after" \
	"start 1 n1 $TAG" \
	"wait n2 budget team/shared" \
	"n3 team/pinned BLOCKS team/p3 maxUnavailable=1 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: add 1 ready replica elsewhere" \
	"n3 skipped budget" \
	"start 2 n4 $TAG" \
	"start 3 n2 $TAG" \
	"plan: upgrade 3 done 0 failed 0 skipped 1 left 0"

# maxUnavailable: 8 nodes, one cordoned by hand, one not Ready; 50% is 4,
# so two more at a time; the two unavailable ones first, at no cost to -u
# but each a slot of -p.
t_fleet m1:535.183.06::::True m2:535.183.06::::True m3:535.183.06::::True m4:535.183.06::::True \
	m5:535.183.06::::True m6:535.183.06::::False m7:535.183.06:::true:True m8:535.183.06::::True
budgets && pods
t_plan -D -p 3 -u 50% -m "$M" "$NEW"
t_rc 0 "the plan under -u 50%"
t_out "m6 and m7 first, then the available ones in order: 4 unavailable at most, 3 under way" \
	"start 1 m6 $TAG" \
	"start 2 m7 $TAG" \
	"start 3 m1 $TAG" \
	"start 4 m2 $TAG" \
	"start 5 m3 $TAG" \
	"start 6 m4 $TAG" \
	"start 7 m5 $TAG" \
	"start 8 m8 $TAG" \
	"plan: upgrade 8 done 0 failed 0 skipped 0 left 0"
cp out u50
t_plan -D -p 1 -u 100% -m "$M" "$NEW"
t_rc 0 "-p 1"
cp out p1
t_run grep -c '^start ' p1
t_out "-p 1: every node, one at a time" 8
t_plan -D -p 3 -u 10% -m "$M" "$NEW"
t_rc 1 "-u 10% of 8 nodes is 1 (rounded up), and 2 are unavailable already"
t_out "the two unavailable nodes go (no cost to -u); the others are left" \
	"start 1 m6 $TAG" \
	"start 2 m7 $TAG" \
	"plan: upgrade 2 done 0 failed 0 skipped 0 left 6"
t_grep "says why" err "^drv-rollout.sh: 6 node(s) left: 2 GPU node(s) are cordoned or not Ready, and maxUnavailable is 1$"
t_plan -D -p 3 -u 4 -m "$M" "$NEW"
t_cmp "-u 4, a number: as 50%" u50 out

# Skip label, a node done already, a node left under way (first), a node in
# upgrade-failed (stops the plan, unless -c), -l.
t_fleet k1:535.183.06::true::True k2:$NEW:upgrade-done:::True k3:535.183.06::::True \
	k4:535.183.06:drain-required::true:True k5:535.183.06:upgrade-failed::true:True
budgets && pods
t_plan -D -p 1 -u 100% -m "$M" "$NEW"
t_rc 1 "a node in upgrade-failed"
t_out "the skip label, and the failed node" \
	"k1 skipped nvidia.com/gpu-driver-upgrade.skip=true" \
	"k5 upgrade-failed" \
	"plan: upgrade 0 done 1 failed 1 skipped 1 left 2"
t_grep "says how to go on" err "^drv-rollout.sh: k5: $S=upgrade-failed from an earlier upgrade: see why, then resume it with drv-upgrade.sh, or run with -c to go on past it$"
t_plan -D -c -p 1 -u 100% -m "$M" "$NEW"
t_rc 1 "-c: past the failed node (still not done)"
t_out "k4, left under way, first; k2 done; k5 left as it is" \
	"k1 skipped nvidia.com/gpu-driver-upgrade.skip=true" \
	"start 1 k4 $TAG" \
	"start 2 k3 $TAG" \
	"plan: upgrade 2 done 1 failed 1 skipped 1 left 0"
printf '%s\n' k3 k4 >sel
t_plan -D -p 1 -u 100% -l pool=a -m "$M" "$NEW"
t_rc 0 "-l: the nodes it selects only (k5's failure is not theirs)"
t_out "k4, then k3" "start 1 k4 $TAG" "start 2 k3 $TAG" "plan: upgrade 2 done 0 failed 0 skipped 0 left 0"
t_grep "-l goes to the API server with gpu.present" kubectl.log "get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue%2Cpool%3Da$"

# A missing image: every one listed, and the rows to add; exit 1 before
# anything else is read.
t_fleet n1:535.183.06::::True n2:535.183.06::::True
budgets && pods
rm -f kubectl.log
t_plan -D -m "$ROOT/lab/support-matrix.csv" "$NEW"
t_rc 1 "images missing"
t_out "each node's missing image, and the counts" \
	"n1 MISSING $TAG" "n2 MISSING $TAG" "plan: upgrade 0 done 0 failed 0 skipped 0 left 2"
t_grep "says nothing was changed" err "^drv-rollout.sh: 2 node(s) need an image that is not in $ROOT/lab/support-matrix.csv: build and push it first; nothing was changed$"
t_grep "with the row to add" err "^    550,5.15.0-107-generic,ubuntu22.04$"
t_is "the row once, for the two nodes that need it" "$(grep -c '^    550,5.15.0-107-generic,ubuntu22.04$' err)" 1
t_run grep -c poddisruptionbudgets kubectl.log
t_out "the budgets are not even read" 0

# A node labelled skip is left out whatever its labels (one with no kernel
# label does not stop the rollout); a node to upgrade without a tag stops it
# before anything is read or changed, saying why.
t_fleet s1:535.183.06::true::True:- n2:535.183.06::::True:-
t_plan -D -m "$M" "$NEW"
t_rc 2 "a node to upgrade whose labels give no tag"
t_grep "names it and the label" err "^drv-rollout.sh: n2: its labels give no tag for driver $NEW (label feature.node.kubernetes.io/kernel-version.full is missing): its image cannot be checked$"
t_grep "and nothing was changed" err "^drv-rollout.sh: nothing was changed$"
t_fleet s1:535.183.06::true::True:- n2:$NEW:upgrade-done:::True
t_plan -D -m "$M" "$NEW"
t_rc 0 "a skip-labelled node without a kernel label, the other done"
t_out "it is left out, not an error" "s1 skipped nvidia.com/gpu-driver-upgrade.skip=true" \
	"plan: upgrade 0 done 1 failed 0 skipped 1 left 0"

# A node done and labelled skip is done, once.
t_fleet d1:$NEW:upgrade-done:true::True d2:535.183.06::::True
t_plan -D -m "$M" "$NEW"
t_rc 0 "a node done and labelled skip"
t_out "counted once, as done" "start 1 d2 $TAG" "plan: upgrade 1 done 1 failed 0 skipped 0 left 0"

# A node labelled skip in upgrade-failed is left out, once: it does not stop
# the rollout, and is counted skipped, not failed.
t_fleet f1:535.183.06:upgrade-failed:true:true:True f2:535.183.06::::True
t_plan -D -u 100% -m "$M" "$NEW"
t_rc 0 "a failed node labelled skip"
t_out "left out, counted once" "f1 skipped nvidia.com/gpu-driver-upgrade.skip=true" \
	"start 1 f2 $TAG" "plan: upgrade 1 done 0 failed 0 skipped 1 left 0"

# Every node done: exit 0, nothing to plan.
t_fleet d1:$NEW:upgrade-done:::True d2:$NEW::::True
t_plan -D -m "$M" "$NEW"
t_rc 0 "nothing to do"
t_out "says so in the plan's line" "plan: upgrade 0 done 2 failed 0 skipped 0 left 0"

# The cluster's upgradePolicy: -D prints each owner's, field by field, with
# where each came from; an owner whose policy says autoUpgrade stops the
# rollout before it starts, unless -f.
t_fleet a1:535.183.06::::True a2:535.183.06::::True
printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},"spec":{"driver":{"upgradePolicy":{"autoUpgrade":false,"maxParallelUpgrades":2,"drain":{"enable":true}}}}}]}\n' >clusterpolicies.json
t_run drv-rollout.sh -D -u 100% -m "$M" "$NEW"
t_rc 0 "-D with a ClusterPolicy"
cp out plan.out
t_run grep '^policy ' plan.out
t_out "each field of its policy: the object's, the defaults, the flags" \
	"policy clusterpolicy/cluster-policy autoUpgrade object false" \
	"policy clusterpolicy/cluster-policy maxParallelUpgrades object 2" \
	"policy clusterpolicy/cluster-policy maxUnavailable flag 100%" \
	"policy clusterpolicy/cluster-policy waitForCompletion.podSelector default " \
	"policy clusterpolicy/cluster-policy waitForCompletion.timeoutSeconds default 0" \
	"policy clusterpolicy/cluster-policy podDeletion.force default false" \
	"policy clusterpolicy/cluster-policy podDeletion.timeoutSeconds default 300" \
	"policy clusterpolicy/cluster-policy podDeletion.deleteEmptyDir default false" \
	"policy clusterpolicy/cluster-policy drain.enable object true" \
	"policy clusterpolicy/cluster-policy drain.force default false" \
	"policy clusterpolicy/cluster-policy drain.podSelector default nvidia.com/gpu-driver-upgrade-drain.skip!=true" \
	"policy clusterpolicy/cluster-policy drain.timeoutSeconds default 300" \
	"policy clusterpolicy/cluster-policy drain.deleteEmptyDir default false" \
	"policy clusterpolicy/cluster-policy podDeletionFilter default gpu"
t_run grep '^start ' plan.out
t_out "its maxParallelUpgrades: two at once" "start 1 a1 $TAG" "start 2 a2 $TAG"
printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},"spec":{"driver":{"upgradePolicy":{"autoUpgrade":true}}}}]}\n' >clusterpolicies.json
t_run drv-rollout.sh -D -m "$M" "$NEW"
t_rc 2 "autoUpgrade: true"
t_err "says the operator's controller acts too, and what to do" \
	"drv-rollout.sh: clusterpolicy/cluster-policy's upgradePolicy says autoUpgrade: true: the GPU Operator's upgrade controller upgrades its nodes itself" \
	"drv-rollout.sh: two controllers must never move one node: set autoUpgrade: false there, or, if the operator's upgrade controller does not run, go on with -f; nothing was changed"
t_out "prints nothing"
t_run drv-rollout.sh -D -f -m "$M" "$NEW"
t_rc 0 "-f: beside it"
t_grep "says so" err "^drv-rollout.sh: warning: autoUpgrade is true for clusterpolicy/cluster-policy and -f goes on beside the operator's upgrade controller$"
rm clusterpolicies.json

# No GPU node at all.
: >facts
t_plan -D -m "$M" "$NEW"
t_rc 2 "no GPU node"
t_err "says so" "drv-rollout.sh: no GPU node in the cluster"
t_done
