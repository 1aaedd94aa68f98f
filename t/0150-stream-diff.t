#!/bin/sh
# labels2tag and pdb-check stream their input.  Each must say the same on
# stdout, with the same exit status, of every fixture, of generated
# kubectl-shaped lists, and of every kind of bad input, as of what the
# tests' own whole-tree reader (t/whole.c: cJSON and libyaml's document
# API, no code of common/) makes of it; what that reader refuses, they
# refuse.
. "$(dirname "$0")/lib.sh"

t_gen

# same DESC ARGS... FILE: t_same on $CMD ARGS FILE (labels2tag unless CMD
# says; $STDIN: the file given on standard input instead).  Under valgrind
# (make check-valgrind) one case in three runs: make check-asan runs them all.
n_same=0
same() {
	d=$1
	shift
	n_same=$((n_same + 1))
	if [ "${GPUDRV_VALGRIND:-0}" = 1 ] && [ $((n_same % 3)) != 1 ]; then
		t_skip "$d: under valgrind, one case in three (check-asan runs them all)"
		return
	fi
	t_same "$d" ${CMD:-labels2tag} "$@"
}

# cut FILE N OUT: the first N bytes of FILE; flip FILE N BYTES OUT: byte N
# (0-based) replaced by BYTES (printf format).
cut_at() { head -c "$2" "$1" >"$3"; }
flip() {
	# shellcheck disable=SC2059 # $3 is a printf format on purpose
	{ head -c "$2" "$1"; printf "$3"; tail -c +"$(($2 + 2))" "$1"; } >"$4"
}

# Every fixture, with the options that change what is read.
for f in "$DATA"/*.json "$DATA"/*.yaml; do
	for o in "" -s -u "-s -u" -c; do
		# shellcheck disable=SC2086 # $o is zero or more options
		same "fixture $(basename "$f") ${o:-(no option)}" $o "$f"
	done
done
# (set and unset: an assignment before a function call may outlive it)
STDIN=$DATA/lab-nodes.json
same "a fixture on standard input" -
STDIN=$DATA/lab-nodes.yaml
same "a YAML fixture on standard input"
unset STDIN

# Generated lists, kubectl-shaped.
for n in 1 7 40; do
	"$GEN" "$n" >g.json
	"$GEN" -y "$n" >g.yaml
	same "generated JSON list of $n" g.json
	same "generated JSON list of $n, -s -u" -s -u g.json
	same "generated YAML list of $n" g.yaml
	same "generated YAML list of $n, -s -u" -s -u g.yaml
done
"$GEN" -r 9 >raw.json
same "a --raw NodeList (items without kind, compact)" raw.json
"$GEN" -B 3 12 >broken.json
"$GEN" -y -B 3 12 >broken.yaml
same "generated list with broken labels" broken.json
same "generated list with broken labels, -u" -u broken.json
same "generated YAML list with broken labels, -u" -u broken.yaml
labels2tag raw.json >raw.out
t_ok $? "the --raw NodeList is read without error"
t_grep "and gives its nodes' tags" raw.out '^gpu-node-00008 570-6.8.0-49-generic-ubuntu24.04$'

# Truncated at many offsets: refused, nothing printed.
"$GEN" 2 >two.json
"$GEN" -y 2 >two.yaml
size=$(wc -c <two.json)
step=$((size / 40))
[ "${GPUDRV_VALGRIND:-0}" = 1 ] && step=$((size / 10))
off=1
while [ "$off" -lt "$size" ]; do
	cut_at two.json "$off" cut.json
	same "JSON cut at byte $off of $size" cut.json
	off=$((off + step))
done
for off in 1 2 3 5 16 30 31; do
	cut_at two.json "$off" cut.json
	same "JSON cut at byte $off" cut.json
done
size=$(wc -c <two.yaml)
step=$((size / 25))
[ "${GPUDRV_VALGRIND:-0}" = 1 ] && step=$((size / 8))
off=1
while [ "$off" -lt "$size" ]; do
	cut_at two.yaml "$off" cut.yaml
	same "YAML cut at byte $off of $size" cut.yaml
	off=$((off + step))
done

# Malformed: one byte changed, in the skipped parts (status) and the kept ones.
"$GEN" 1 >one.json
for off in 0 4 20 300 1500 6000 9000 12000 20000; do
	# shellcheck disable=SC1003 # a backslash, not an escaped quote
	for b in ',' '}' ']' 'x' '\001' '\\' '"' '\000' ' '; do
		flip one.json "$off" "$b" bad.json
		same "JSON byte $off made $b" bad.json
	done
done
for off in 0 3 25 200 2500 4000; do
	for b in ':' '-' '[' '\t' '&' '*' '\000' "'"; do
		"$GEN" -y 1 >one.yaml
		flip one.yaml "$off" "$b" bad.yaml
		same "YAML byte $off made $b" bad.yaml
	done
done

# Documents that are not lists of Nodes, or are odd but valid.
j() { printf '%s\n' "$1" >doc.json; same "$2" doc.json; }
y() { printf '%s\n' "$1" >doc.yaml; same "$2" doc.yaml; }
NODE='{"kind": "Node", "metadata": {"name": "a", "labels": {"nvidia.com/cuda.driver.major": "550", "feature.node.kubernetes.io/kernel-version.full": "6.8.0-45-generic", "feature.node.kubernetes.io/system-os_release.ID": "ubuntu", "feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04"}}}'
BARE='{"metadata": {"name": "b", "labels": {"nvidia.com/cuda.driver.major": "535", "feature.node.kubernetes.io/kernel-version.full": "6.8.0-45-generic", "feature.node.kubernetes.io/system-os_release.ID": "ubuntu", "feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04"}}}'
j "{\"items\": [$NODE, {\"kind\": \"Pod\"}], \"kind\": \"List\"}" "a Pod after a Node, kind last"
j "{\"items\": [$NODE, $BARE], \"kind\": \"List\"}" "an item without kind in a List"
j "{\"items\": [$NODE, $BARE], \"kind\": \"NodeList\"}" "an item without kind in a NodeList"
j "{\"items\": [$BARE, {\"kind\": null}], \"kind\": \"NodeList\"}" "a null kind in a NodeList"
j "{\"items\": [$NODE, 5, \"x\", [], null], \"kind\": \"List\"}" "items that are not objects"
j "{\"items\": [$NODE], \"kind\": \"PodList\"}" "a PodList holding a Node"
j "{\"items\": [$NODE]}" "a list without kind"
j "{\"items\": [$NODE], \"kind\": 7}" "a kind that is a number"
j "{\"items\": {}, \"kind\": \"List\"}" "items that are an object"
j "{\"items\": null, \"kind\": \"List\"}" "null items"
j "{\"kind\": \"List\"}" "no items"
j "[$NODE]" "a top-level array"
j "{\"items\": [$BARE], \"kind\": \"Node\", \"metadata\": {\"name\": \"top\", \"labels\": {}}}" "a Node with an items member"
j "{\"items\": [$NODE], \"kind\": \"List\", \"kind\": \"Node\"}" "two kind members: refused"
j "{\"items\": [$NODE], \"items\": [5], \"kind\": \"List\"}" "two items members: refused"
j "{\"items\": [$NODE], \"kin\\u0064\": \"List\"}" "an escaped key"
j "{\"items\": [$NODE], \"kind\\u0000x\": \"List\"}" "a key with an escaped NUL"
j "{\"items\": [$NODE], \"kind\": \"List\"} x" "trailing garbage"
j "{\"items\": [$NODE], \"kind\": \"List\"} {}" "two documents"
j "{\"items\": [01], \"kind\": \"List\"}" "a number with a leading zero"
j "{\"items\": [1.], \"kind\": \"List\"}" "a number without fraction digits"
j "{\"items\": [\"\\ud800\"], \"kind\": \"List\"}" "a lone high surrogate"
j "{\"items\": [\"\\udc00\"], \"kind\": \"List\"}" "a lone low surrogate"
j "{\"items\": [\"\\ud83d\\ude00\", \"\\q\"], \"kind\": \"List\"}" "a bad escape"
j "{\"items\": [tru], \"kind\": \"List\"}" "a bad literal"
j "$(printf '\357\273\277')$NODE" "a byte order mark"
j "$(printf '\n\n   \t')$NODE" "leading white space"
j "$(printf '{\n\001}')" "a control byte as white space"
j "$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "["; for (i = 0; i < 600; i++) printf "]" }')" "nesting 600 deep"
y "$(printf 'items:\n- kind: Node\n  metadata: {name: a}\n- kind: Pod\nkind: List')" "YAML: a Pod after a Node"
y "$(printf 'items:\n- metadata: {name: a}\nkind: NodeList')" "YAML: an item without kind in a NodeList"
y "$(printf 'items:\n- kind: Node\n  kind: Node\nkind: List')" "YAML: a duplicate key in an item"
y "$(printf 'items:\n- kind: Node\n  status: {a: 1, a: 2}\nkind: List')" "YAML: a duplicate key in a skipped part"
y "$(printf 'items:\n- kind: Node\n  status: {1: x}\nkind: List')" "YAML: a number as a key in a skipped part"
y "$(printf 'items:\n- kind: Node\n  status: {[a]: x}\nkind: List')" "YAML: a list as a key"
y "$(printf 'items: []\nkind: List\nitems: []')" "YAML: a duplicate top-level key"
y "$(printf 'kind: List\nitems:\n- &a {kind: Node}\n- *a')" "YAML: an alias"
y "$(printf 'kind: Node\nmetadata: {name: a}\n---\nkind: Node')" "YAML: two documents"
y "$(printf '# only a comment')" "YAML: no document"
y "$(printf -- '---\n...')" "YAML: an empty document"
y "$(printf -- '- a\n- b')" "YAML: a top-level sequence"
y "$(printf 'kind: List\nitems: 5')" "YAML: items that are a number"
y "$(printf 'items:\n- {kind: Node, metadata: {name: a}, spec: {unschedulable: true}}\nkind: List\nmetadata: {}')" "YAML: a flow-style item"
y "$(printf 'kind: Node\nmetadata: {name: a, labels: {nvidia.com/cuda.driver.major: !!int 550}}')" "YAML: a tagged label"
y "$(printf 'kind: Node\nmetadata: {name: a, labels: {x: !!binary eA==}}')" "YAML: a binary tag in a skipped label"
y "$(printf 'kind: Node\nmetadata: {name: a}\nstatus: !!set {a: null}')" "YAML: a set tag in a skipped part"
y "$(printf 'kind: Node\nmetadata: {name: a}\n---\n')" "YAML: a trailing empty document"
j '{"kind": "Status", "status": "Failure", "message": "denied", "reason": "Forbidden", "code": 403}' "a Status"
j "{\"items\": [$NODE], \"kind\": \"List\", \"metadata\": {\"labels\": 5}}" "a List with odd metadata"
j "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\", \"labels\": \"x\"}}" "labels that are a string"

# Watch output, labels2tag -w: documents back to back, and watch events.
j "$NODE $NODE" "two Nodes back to back, without -w"
printf '%s\n%s\n' "$NODE" "$BARE" >w.json
same "-w: a Node, then one without kind" -w w.json
printf '%s\n{"items": [%s], "kind": "List"}\n%s\n' "$NODE" "$NODE" "$NODE" >w.json
same "-w: a Node, a List, a Node" -w w.json
printf '{"type": "ADDED", "object": %s}\n{"type": "MODIFIED", "object": %s}\n{"type": "DELETED", "object": %s}\n' "$NODE" "$NODE" "$NODE" >w.json
same "-w: watch events" -w -s w.json
printf '{"type": "ADDED", "object": %s}\n{"type": "ERROR", "object": {"kind": "Status", "message": "gone", "code": 410}}\n{"type": "ADDED", "object": %s}\n' "$NODE" "$NODE" >w.json
same "-w: an ERROR event between two" -w w.json
printf '{"type": "ADDED", "object": %s}\n{"type": "ADDED", "object": {"kind": "Pod"}}\n' "$NODE" >w.json
same "-w: an event of a Pod after a Node" -w w.json
printf '{"type": "RENAMED", "object": %s}\n' "$NODE" >w.json
same "-w: an event of an unknown type" -w w.json
printf '%s\n{"items": [' "$NODE" >w.json
same "-w: a stream cut in its second document" -w w.json
printf 'kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: b}\n---\n' >w.yaml
same "-w: YAML documents" -w -u w.yaml
printf 'type: ADDED\nobject: {kind: Node, metadata: {name: a}}\n---\ntype: BOOKMARK\nobject: {kind: Node}\n' >w.yaml
same "-w: YAML watch events" -w -u w.yaml

# pdb-check: every fixture on the nodes they hold, generated lists, cuts and
# corruptions, and documents it must refuse.
CMD=pdb-check
export CMD
for f in "$DATA"/pdb-*.json "$DATA"/pdb-*.yaml; do
	for n in lab-node-1 gpu-node-7 gpu-node-8; do
		same "pdb-check $n $(basename "$f")" "$n" "$f"
		same "pdb-check -s $n $(basename "$f")" -s "$n" "$f"
	done
done
STDIN=$DATA/pdb-lab.json
same "pdb-check: a fixture on standard input" lab-node-1
unset STDIN
"$GEN" -s pdb -n 7 300 >gp.json
"$GEN" -s pdb -y -n 7 300 >gp.yaml
for n in slim-node-0000 slim-node-0003 slim-node-0099; do
	same "pdb-check $n, 300 generated pods, JSON" "$n" gp.json
	same "pdb-check $n, 300 generated pods, YAML" "$n" gp.yaml
done
"$GEN" -s pdb -n 2 3 >p3.json
"$GEN" -s pdb -y -n 2 3 >p3.yaml
size=$(wc -c <p3.json)
step=$((size / 30))
[ "${GPUDRV_VALGRIND:-0}" = 1 ] && step=$((size / 8))
off=1
while [ "$off" -lt "$size" ]; do
	cut_at p3.json "$off" cut.json
	same "pdb-check: JSON cut at byte $off of $size" slim-node-0001 cut.json
	off=$((off + step))
done
size=$(wc -c <p3.yaml)
step=$((size / 20))
[ "${GPUDRV_VALGRIND:-0}" = 1 ] && step=$((size / 6))
off=1
while [ "$off" -lt "$size" ]; do
	cut_at p3.yaml "$off" cut.yaml
	same "pdb-check: YAML cut at byte $off of $size" slim-node-0001 cut.yaml
	off=$((off + step))
done
for off in 0 30 200 700 1500 2600 4000; do
	for b in ',' '}' 'x' '\000' '"' '1'; do
		flip p3.json "$off" "$b" bad.json
		same "pdb-check: JSON byte $off made $b" slim-node-0001 bad.json
	done
done
POD='{"metadata": {"name": "p", "namespace": "n", "labels": {"app": "a"}, "ownerReferences": [{"kind": "ReplicaSet", "controller": true}]}, "spec": {"nodeName": "gpu-node-7"}, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}'
PDB='{"metadata": {"name": "b", "namespace": "n", "generation": 1}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}, "status": {"observedGeneration": 1, "currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 1, "disruptedPods": {"x": "2026-11-30T00:00:00Z"}}}'
pj() { printf '%s\n' "$1" >doc.json; same "pdb-check: $2" gpu-node-7 doc.json; }
pj "{\"kind\": \"PodList\", \"items\": [$POD]}" "a PodList, kind first, items without kind"
pj "{\"items\": [$POD], \"kind\": \"PodList\"}" "a PodList, kind last: which kind is a kindless item?"
pj "{\"kind\": \"PodDisruptionBudgetList\", \"items\": [$PDB]}" "a budget list, kind first"
pj "{\"kind\": \"List\", \"items\": [$POD]}" "a List with a kindless item"
pj "{\"items\": [{\"kind\": \"Service\"}], \"kind\": \"Foo\"}" "a Service in a list of an unknown kind"
pj "{\"items\": [], \"kind\": \"NodeList\"}" "a NodeList"
pj "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}}" "a single Pod"
pj '{"kind": "Status", "message": "forbidden", "code": 403}' "a Status"
pj "{\"kind\": \"List\", \"items\": [{\"kind\": \"PodDisruptionBudget\", \"metadata\": {\"name\": \"b\", \"namespace\": \"n\"}, \"status\": {\"disruptedPods\": [1, 2]}}]}" "disruptedPods that is a list"
pj "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", \"namespace\": \"n\", \"annotations\": {\"kubernetes.io/config.mirror\": \"x\", \"a\": 1, \"a\": 2}}, \"spec\": {\"nodeName\": \"gpu-node-7\"}}]}" "a duplicate key among skipped annotations"
pj "{\"kind\": \"List\", \"items\": [$POD, {\"kind\": \"Pod\", \"metadata\": {\"namespace\": \"n\"}, \"spec\": {\"nodeName\": \"elsewhere\"}}]}" "a nameless pod on another node"
pj "{\"kind\": \"PodDisruptionBudgetList\", \"items\": [$PDB]}{\"kind\": \"PodList\", \"items\": [$POD]}" "a budget list and a pod list back to back"
pj "{\"kind\": \"PodList\", \"items\": [$POD]} {\"items\": [$PDB]}" "a pod list, then a list without kind"
printf 'kind: PodList\nitems: []\n---\nkind: PodDisruptionBudgetList\nitems: []\n' >doc.yaml
same "pdb-check: two YAML lists" gpu-node-7 doc.yaml
# Issue 19: the lists proven whole, watch events refused, integers as written.
pj "{\"kind\": \"PodDisruptionBudgetList\", \"items\": [$PDB]}{\"type\": \"ERROR\", \"object\": {\"kind\": \"Status\", \"message\": \"gone\", \"code\": 410}}" "budgets, then an ERROR event"
pj "{\"type\": \"BOOKMARK\", \"object\": {\"kind\": \"Pod\"}}{\"kind\": \"PodList\", \"items\": [$POD]}" "a BOOKMARK, then pods"
for v in 1.0 1e0 -1 10E-1 0 2147483648; do
	pj "{\"kind\": \"List\", \"items\": [$(printf '%s' "$PDB" | sed "s/\"disruptionsAllowed\": 0/\"disruptionsAllowed\": $v/"), $POD]}" "disruptionsAllowed $v"
	printf 'kind: List\nitems:\n- kind: PodDisruptionBudget\n  metadata: {name: b, namespace: ns}\n  spec: {minAvailable: 1, selector: {matchLabels: {app: a}}}\n  status: {observedGeneration: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, disruptionsAllowed: %s}\n' "$v" >doc.yaml
	same "pdb-check: YAML disruptionsAllowed $v" gpu-node-7 doc.yaml
done
unset CMD

t_done
