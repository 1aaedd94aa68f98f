#!/bin/sh
# pdb-check -y: the pods a node's upgradePolicy removes (upgrade-policy's
# output) judged, as the GPU Operator removes them: its pod deletion (the
# pods that hold a GPU, through kubectl drain's filters with podDeletion's
# force and deleteEmptyDir), the drain in its place when it would fail and
# drain.enable says so, or the drain alone (podDeletionFilter none); what
# would refuse named with the field that would allow it; -a as NODE says it.
. "$(dirname "$0")/lib.sh"

P=$DATA/policy
printf '{"kind":"List","apiVersion":"v1","items":[]}\n' >objects.json
# pol FILE FIELD=VALUE...: the policy of every node, the defaults and these flags.
pol() {
	f=$1
	shift
	for a; do set -- "$@" -U "$a"; shift; done
	upgrade-policy "$@" objects.json >"$f" || echo "Bail out! upgrade-policy $*"
}
pol defaults.pol
GPU_E="w/gpu-e LOCAL-STORAGE: it holds a GPU and has emptyDir data, which its deletion loses, and podDeletion.deleteEmptyDir is false: set it true to let the data go, or keep it elsewhere than in emptyDir"
GPU_N="w/gpu-n NO-CONTROLLER: it holds a GPU and no controller manages it, so its deletion would be for good, and podDeletion.force is false: set it true to delete it, or run it under a Deployment, StatefulSet or Job"
DEV_G="w/dev-g UNDELETABLE: it holds a GPU and is a DaemonSet's pod: the pod deletion leaves it and fails; drain.enable: true drains the node instead"
CPU_E="w/cpu-e LOCAL-STORAGE: it has emptyDir data, which the drain loses, and drain.deleteEmptyDir is false: set it true to let the data go, or keep it elsewhere than in emptyDir"
CPU_N="w/cpu-n NO-CONTROLLER: no controller manages it, so the drain's would be for good, and drain.force is false: set it true to delete it, or run it under a Deployment, StatefulSet or Job"
PDB_C="w/pdb-c BLOCKS w/cpu-c minAvailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: lower minAvailable to 0, or add 1 ready replica elsewhere"

# 1. The operator's defaults: the pod deletion takes the two pods that hold
# a GPU (Running, and Pending: no budget asked), nothing else.
t_run pdb-check -y defaults.pol n1 "$P/clean.json"
t_rc 0 "defaults: the pods that hold a GPU can go"
t_out "OK" OK
t_run pdb-check -s -y defaults.pol n1 "$P/clean.json"
t_out "-s: the method and the pods it removes, first" "METHOD pod-deletion" "REMOVE w/gpu-a" "REMOVE w/mig-b" \
	"SKIP w/mig-b pending" OK
t_err "nothing on stderr"

# 2. What the pod deletion cannot take, each named with the field that
# would let it: an emptyDir, no controller, a DaemonSet's pod that holds a
# GPU; a pod that holds a resource claim counts as a GPU pod.
t_run pdb-check -s -y defaults.pol n1 "$P/hard.json"
t_rc 1 "defaults, pods that hold a GPU and cannot go"
t_out "names each, and why" "METHOD pod-deletion" "REMOVE w/gpu-a" "REMOVE w/mig-b" "REMOVE w/dra-d" \
	"SKIP w/mig-b pending" "$DEV_G" "$GPU_E" "$GPU_N"
pol del.pol podDeletion.deleteEmptyDir=true podDeletion.force=true
t_run pdb-check -s -y del.pol n1 "$P/hard.json"
t_rc 1 "podDeletion.deleteEmptyDir and force: the DaemonSet's pod still cannot go"
t_out "they go; it does not" "METHOD pod-deletion" "REMOVE w/gpu-a" "REMOVE w/mig-b" "REMOVE w/gpu-e" \
	"REMOVE w/gpu-n" "REMOVE w/dra-d" "SKIP w/mig-b pending" "$DEV_G"

# 3. drain.enable: the drain where the pod deletion would fail, every pod
# its selector selects (not the one labelled to be skipped), with drain's
# own force and deleteEmptyDir; a budget of a pod that holds no GPU counts.
pol drain.pol drain.enable=true
t_run pdb-check -s -y drain.pol n1 "$P/hard.json"
t_rc 1 "drain.enable, in place of a pod deletion that would fail"
t_out "the drain, why, and what refuses it" \
	"METHOD drain: the pod deletion cannot take w/dev-g (UNDELETABLE), and drain.enable is true" \
	"REMOVE w/gpu-a" "REMOVE w/mig-b" "REMOVE w/cpu-c" "REMOVE w/done-g" "REMOVE w/dra-d" \
	"SKIP w/mig-b pending" "SKIP w/done-g succeeded" \
	"$CPU_E" "$CPU_N" \
	"w/gpu-e LOCAL-STORAGE: it has emptyDir data, which the drain loses, and drain.deleteEmptyDir is false: set it true to let the data go, or keep it elsewhere than in emptyDir" \
	"w/gpu-n NO-CONTROLLER: no controller manages it, so the drain's would be for good, and drain.force is false: set it true to delete it, or run it under a Deployment, StatefulSet or Job" \
	"$PDB_C"
t_run pdb-check -s -y drain.pol n1 "$P/clean.json"
t_rc 0 "drain.enable where the pod deletion can go: no drain"
t_out "the pod deletion, as the GPU Operator's own drain is only its fallback" \
	"METHOD pod-deletion" "REMOVE w/gpu-a" "REMOVE w/mig-b" "SKIP w/mig-b pending" OK
pol drain-all.pol podDeletionFilter=none drain.enable=true drain.deleteEmptyDir=true drain.force=true \
	'drain.podSelector=app notin (cpu-c)'
t_run pdb-check -s -y drain-all.pol n1 "$P/clean.json"
t_rc 0 "podDeletionFilter none: the drain alone, its podSelector, force and deleteEmptyDir"
t_out "every pod it selects goes (the skip label, the DaemonSet's and cpu-c stay)" "METHOD drain" \
	"REMOVE w/gpu-a" "REMOVE w/mig-b" "REMOVE w/cpu-e" "REMOVE w/cpu-n" "REMOVE w/done-g" \
	"SKIP w/mig-b pending" "SKIP w/done-g succeeded" OK
pol none.pol podDeletionFilter=none
t_run pdb-check -s -y none.pol n1 "$P/hard.json"
t_rc 0 "no pod deletion, no drain: nothing is removed"
t_out "METHOD none, and OK" "METHOD none" OK

# 4. Without -s the lines are pdb-check's own; -a says each node as pdb-check NODE does.
t_run pdb-check -y drain.pol n1 "$P/hard.json"
t_out "without -s: the obstacles alone" "$CPU_E" "$CPU_N" \
	"w/gpu-e LOCAL-STORAGE: it has emptyDir data, which the drain loses, and drain.deleteEmptyDir is false: set it true to let the data go, or keep it elsewhere than in emptyDir" \
	"w/gpu-n NO-CONTROLLER: no controller manages it, so the drain's would be for good, and drain.force is false: set it true to delete it, or run it under a Deployment, StatefulSet or Job" \
	"$PDB_C"
for f in defaults del drain drain-all none; do
	pdb-check -y $f.pol n1 "$P/hard.json" | grep -v '^OK$' | sed 's/^/n1 /' >one
	pdb-check -y $f.pol n2 "$P/hard.json" | grep -v '^OK$' | sed 's/^/n2 /' >>one
	t_run pdb-check -a -y $f.pol "$P/hard.json"
	grep -v ' DRAWS ' out >all
	t_cmp "-a -y $f: each node as pdb-check -y NODE says it" one all
done
t_run pdb-check -a -y drain.pol "$P/hard.json"
t_grep "-a -y: the drain draws on the budget of a pod that holds no GPU" out "^n1 DRAWS w/pdb-c 1 0$"
t_run pdb-check -a -y defaults.pol "$P/clean.json"
t_out "-a -y, the pod deletion: only the GPU pods' budget" "n1 DRAWS w/pdb-a 1 1"

# 5. The node's own owner's policy: a policies file with an owner each.
{
	echo "node n1 nvidiadriver/a100"
	echo "node n2 clusterpolicy/cluster-policy"
	sed 's/^policy - /policy nvidiadriver\/a100 /' drain-all.pol
	sed 's/^policy - /policy clusterpolicy\/cluster-policy /' defaults.pol
} >owners.pol
t_run pdb-check -s -y owners.pol n1 "$P/clean.json"
t_grep "n1: its NVIDIADriver's policy" out "^METHOD drain$"
t_run pdb-check -s -y owners.pol n2 "$P/clean.json"
t_grep "n2: the ClusterPolicy's" out "^METHOD pod-deletion$"

# 6. Bad policies: exit 2, named, nothing on stdout.
while IFS='|' read -r what edit msg; do
	sed "$edit" defaults.pol >bad.pol
	t_run pdb-check -y bad.pol n1 "$P/clean.json"
	t_rc 2 "-y: $what"
	t_out "$what: nothing on stdout"
	t_grep "$what: says why" err "$msg"
done <<'EOF2'
a field missing|/drain.enable/d|^pdb-check: bad.pol: - has no policy line for drain.enable: not the whole of upgrade-policy's output$
a value of the wrong kind|s/drain.enable default false/drain.enable default maybe/|^pdb-check: bad.pol:[0-9]*: drain.enable "maybe" takes true or false$
an unknown field|s/drain.enable default/drain.enabled default/|^pdb-check: bad.pol:[0-9]*: "drain.enabled" is not a field of the upgradePolicy$
an unknown source|s/drain.enable default/drain.enable cluster/|^pdb-check: bad.pol:[0-9]*: "cluster" is not default, object or flag$
a selector that is not one|s/^\(policy - drain.podSelector default\) .*/\1 a in (/|^pdb-check: bad.pol:[0-9]*: drain.podSelector "a in (" "a in (": a value list is (v1,v2,...)$
a field twice|/drain.force/p|^pdb-check: bad.pol:[0-9]*: drain.force of - again$
not a line of it|1s/^/hello\n/|^pdb-check: bad.pol:1: not a "policy OWNER FIELD SOURCE VALUE" line (upgrade-policy(1))$
EOF2
# A pod's name and namespace are printed in lines a script acts on: one the
# API server would not allow (a space, a line break) is refused, not printed.
sed 's/"name": *"gpu-a"/"name": "gpu-a\\nREMOVE kube-system\/coredns"/' "$P/clean.json" >forged.json
t_run pdb-check -s -y defaults.pol n1 forged.json
t_rc 2 "a pod name with a line break"
t_out "nothing on stdout"
t_err "names the pod" 'pdb-check: forged.json: item 0 (Pod): metadata.name "gpu-a\nREMOVE kube-system/coredns" is not a valid pod name'
sed 's/"namespace": *"w"/"namespace": "w x"/' "$P/clean.json" >forged.json
t_run pdb-check -a -y defaults.pol forged.json
t_rc 2 "a namespace with a space"
t_grep "names it" err '^pdb-check: forged.json: item [0-9]* (Pod): metadata.namespace "w x" is not a valid namespace$'
t_run pdb-check -p -y defaults.pol "$P/clean.json"
t_rc 2 "-p takes no -y"
t_run pdb-check -y - n1 -
t_rc 2 "-y - with the cluster on standard input too"
t_err "says so" "pdb-check: -y -: the policies and the cluster cannot both be standard input"
t_done
