#!/bin/sh
# Width: every command that reads kubectl output takes a list of production
# size (5,200 items, JSON and YAML), streamed, as alike as the tests'
# whole-tree reader parses it (t/whole.c).  A list's width is never counted
# as depth: a whole-tree path once refused any list of more than about 1,018
# items ("JSON nested too deep").
. "$(dirname "$0")/lib.sh"

N=5200
t_gen
gen() { "$GEN" -s "$1" ${3:+-y} "$2"; }
gen nodes $N >nodes.json
gen nodes $N 1 >nodes.yaml
gen pdb $N >pdb.json
gen pdb $N 1 >pdb.yaml

# both WHAT CMD... FILE: CMD streams FILE, and gives the same stdout and
# status on what the tests' whole-tree reader makes of it (t_same); CMD's
# own run kept in out, err and $rc.
both() {
	d=$1
	shift
	t_same "$d: parsed whole, the same output and status" "$@"
}

for f in nodes.json nodes.yaml; do
	both "labels2tag, $N nodes in $f" labels2tag "$f"
	t_rc 0 "labels2tag reads $N nodes from $f"
	t_run sh -c "labels2tag $f | wc -l"
	t_val "one line per node" "$N"
	t_run sh -c "labels2tag $f | sed -n '1p;5200p'"
	t_out "in input order, RHEL 9.4 as rhel9" \
		"slim-node-0000 535-5.15.0-100-generic-rhel9" \
		"slim-node-5199 550-5.15.0-119-generic-ubuntu22.04"
	both "labels2tag -s, $N nodes in $f" labels2tag -s "$f"
	t_run sh -c "labels2tag -s $f | grep -c ' cordoned\$'"
	t_val "every 5th node cordoned" 1040
done

# labels2tag -t keeps every label of each node (the nodeSelectors may name
# any): the same width, the same answers both ways.
cat >targets.json <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cp"},
  "spec": {"driver": {"useNvidiaDriverCRD": true}}},
 {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "all"},
  "spec": {"default": true, "usePrecompiled": true, "version": "550"}},
 {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": "el"},
  "spec": {"usePrecompiled": true, "version": "570.86.10",
   "nodeSelector": {"feature.node.kubernetes.io/system-os_release.ID": "rhel"}}}]}
EOF
for f in nodes.json nodes.yaml; do
	both "labels2tag -t -s, $N nodes in $f" labels2tag -t targets.json -s "$f"
	t_rc 0 "labels2tag -t reads $N nodes from $f"
	t_run sh -c "labels2tag -t targets.json $f | grep -c ' 570.86.10-'"
	t_val "every 7th node (RHEL) is the el NVIDIADriver's" 743
	t_run sh -c "labels2tag -t targets.json $f | grep -c ' 550-'"
	t_val "the others the default's" $((N - 743))
done

# matrix-grep: the tags of all but the nodes on kernel 5.15.0-119.
labels2tag -c -n nodes.json | sed 's/^[^ ]* //' | grep -v 5.15.0-119 | sort -u >rows
{ echo driver_branch,kernel,os_tag; cat rows; } >matrix.csv
labels2tag -n nodes.json >tags
t_run matrix-grep -m matrix.csv tags
t_rc 1 "matrix-grep over $N nodes, the 5.15.0-119 images missing"
t_run sh -c 'matrix-grep -m matrix.csv tags | grep -c " MISSING 5[35][05]-5.15.0-119-generic-"'
t_val "a MISSING line for each of the 260 nodes on 5.15.0-119" 260

# report-fmt over the same list.
matrix-grep -m matrix.csv tags >audit.txt
for f in nodes.json nodes.yaml; do
	both "report-fmt, $N nodes in $f" report-fmt -a audit.txt -m matrix.csv slim-node-5199 "$f"
	t_rc 0 "report-fmt reads $N nodes from $f"
	t_out "counts them all" NODES=5200 SKEW=260 SLIM_NODE_5199_TAG=550-5.15.0-119-generic-ubuntu22.04 \
		MATRIX_ROWS="$(wc -l <rows | tr -d ' ')" UPGRADE_STATE=-
done

# pdb-check over 5,200 pods and 100 budgets: slim-node-0001 holds 52 pods
# of app-1 and app-51; both budgets allow 1 disruption.
for f in pdb.json pdb.yaml; do
	both "pdb-check, $N pods in $f" pdb-check slim-node-0001 "$f"
	t_rc 1 "pdb-check reads $N pods and 100 budgets from $f"
	t_run sh -c "pdb-check slim-node-0001 $f | cut -d' ' -f1,2,4-"
	t_out "names both budgets with their 52 pods each" \
		"ns-1/pdb-1 BLOCKS maxUnavailable=1 currentHealthy=52 desiredHealthy=51 disruptionsAllowed=1 needed=52: raise maxUnavailable to 52" \
		"ns-1/pdb-51 BLOCKS maxUnavailable=1 currentHealthy=52 desiredHealthy=51 disruptionsAllowed=1 needed=52: raise maxUnavailable to 52"
	t_run sh -c "pdb-check slim-node-0001 $f | head -n 1 | cut -d' ' -f3 | tr ',' '\n' | sed -n '1p;52p'"
	t_out "every pod of the node, in input order" ns-1/pod-000001 ns-1/pod-005101
done
# pdb-check -a: node slim-node-00NN holds 52 pods of app-NN and 52 of app-(NN+50).
for f in pdb.json pdb.yaml; do
	both "pdb-check -a, $N pods in $f" pdb-check -a "$f"
	t_rc 1 "pdb-check -a reads $N pods and 100 budgets from $f"
	t_run sh -c "pdb-check -a $f | grep -c ' DRAWS '"
	t_val "two DRAWS lines for each of the 50 nodes" 100
	t_run sh -c "pdb-check -a $f | sed -n '1,2p;5,6p;199,200p' | sed 's/ BLOCKS [^ ]* / BLOCKS /'"
	t_out "node by node, each line prefixed; app-0's budget allows none, the others 1" \
		"slim-node-0000 DRAWS ns-0/pdb-0 52 0" "slim-node-0000 DRAWS ns-0/pdb-50 52 1" \
		"slim-node-0001 DRAWS ns-1/pdb-1 52 1" "slim-node-0001 DRAWS ns-1/pdb-51 52 1" \
		"slim-node-0049 ns-9/pdb-49 BLOCKS maxUnavailable=1 currentHealthy=52 desiredHealthy=51 disruptionsAllowed=1 needed=52: raise maxUnavailable to 52" \
		"slim-node-0049 ns-9/pdb-99 BLOCKS maxUnavailable=1 currentHealthy=52 desiredHealthy=51 disruptionsAllowed=1 needed=52: raise maxUnavailable to 52"
done
both "pdb-check, a node with no pod, among $N" pdb-check slim-node-9999 pdb.json
t_rc 0 "a node none of the $N pods runs on"
t_err "says so on stderr" "pdb-check: pdb.json: no pod runs on node slim-node-9999 (is the node name right?)"

# The width that broke the whole-tree path, exactly: 1,100 items.
gen nodes 1100 >n1100.json
both "labels2tag, 1,100 nodes" labels2tag n1100.json
t_rc 0 "1,100 nodes parsed whole"
gen pdb 1100 >p1100.json
both "pdb-check, 1,000 pods and 100 budgets" pdb-check slim-node-0001 p1100.json
t_rc 1 "1,100 items parsed whole"

# The scripts, with kubectl standing in and $N nodes on its stdout.
t_fake_kubectl
FAKE_OUT=$PWD/nodes.json
export FAKE_OUT
t_run drv-audit.sh -m matrix.csv
t_rc 1 "drv-audit.sh over $N GPU nodes"
t_run sh -c 'drv-audit.sh -m matrix.csv | grep -c " MISSING "'
t_val "260 missing images" 260
t_run drv-states.sh -m matrix.csv
t_rc 1 "drv-states.sh over $N GPU nodes"
t_run sh -c 'drv-states.sh -m matrix.csv | sed -n "1p;5200p"'
t_out "a line per node: state, cordon, tag, image, age, what it waits for" \
	"slim-node-0000 - cordoned 535-5.15.0-100-generic-rhel9 ok - cordon cordoned by someone, outside any upgrade; fix: kubectl uncordon slim-node-0000 when nobody needs it so" \
	"slim-node-5199 - schedulable 550-5.15.0-119-generic-ubuntu22.04 MISSING - image its driver image 550-5.15.0-119-generic-ubuntu22.04 does not exist: its next driver pod cannot pull it; fix: build and push 550-5.15.0-119-generic-ubuntu22.04 before the node restarts its driver"
t_done
