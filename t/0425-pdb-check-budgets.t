#!/bin/sh
# pdb-check -b: the budgets alone, a line each (with -w, a watch of them
# too), as drv-rollout.sh watches the budgets its waiting nodes need.
. "$(dirname "$0")/lib.sh"

# The API server's own answer (GET /apis/policy/v1/poddisruptionbudgets), as
# the sandbox gave it, but for managedFields.
B1='{"metadata":{"name":"web","namespace":"cap","uid":"adaaef1b-1df7-427c-9737-01d729f301cc","resourceVersion":"1163","generation":1,"creationTimestamp":"2026-12-06T11:17:27Z"},"spec":{"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":1},"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2,"conditions":[{"type":"DisruptionAllowed","status":"True","observedGeneration":1,"lastTransitionTime":"2026-12-06T11:17:27Z","reason":"SufficientPods","message":""}]}}'
# One the disruption controller has not yet counted: no status.
B2='{"metadata":{"name":"train-pdb","namespace":"gpu-drv","resourceVersion":"1170","generation":1},"spec":{"selector":{"matchLabels":{"app":"train"}},"minAvailable":"50%"}}'
printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{"resourceVersion":"1164"},"items":[%s,%s]}\n' "$B1" "$B2" >list.json
t_run pdb-check -b list.json
t_rc 0 "a PodDisruptionBudgetList"
t_out "a line a budget, in input order: namespace/name, then disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods" \
	"cap/web 1 2 1 2" \
	"gpu-drv/train-pdb - - - -"
t_err "nothing on stderr"
STDIN=list.json t_same "on standard input, the same" pdb-check -b
cp out list.out

# kubectl get pdb -A -o yaml: a List, each item's kind first.
cat >list.yaml <<'EOF2'
apiVersion: v1
items:
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: cap, resourceVersion: "1163", generation: 1}
  spec:
    maxUnavailable: 1
    selector: {matchLabels: {app: web}}
  status: {observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: train-pdb, namespace: gpu-drv, resourceVersion: "1170"}
  spec: {minAvailable: 50%}
kind: List
metadata: {resourceVersion: ""}
EOF2
t_run pdb-check -b list.yaml
t_rc 0 "kubectl's YAML"
t_cmp "the same lines" list.out out

printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{"resourceVersion":"9"},"items":[]}\n' >empty.json
t_run pdb-check -b empty.json
t_rc 0 "a list with no budget"
t_out "prints nothing"

# What is no list of budgets is an error, named; nothing is printed.
bad() { # bad FILE WHAT MESSAGE
	t_run pdb-check -b "$1"
	t_rc 2 "$2"
	t_out "$2: nothing printed"
	t_err "$2: said" "$3"
}
: >none.json
bad none.json "an empty input" "pdb-check: none.json: empty input: expected kubectl JSON or YAML"
printf '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}\n' >pods.json
bad pods.json "a PodList" "pdb-check: pods.json: not a List of PodDisruptionBudgets (kind is \"PodList\"); use kubectl get pdb -o json"
sed 's/"disruptionsAllowed":1/"disruptionsAllowed":-1/' list.json >n.json
bad n.json "a negative count" \
	"pdb-check: n.json: item 0: PodDisruptionBudget cap/web: status.disruptionsAllowed is -1: a count is never negative"
sed 's/"currentHealthy":2/"currentHealthy":"2"/' list.json >n.json
bad n.json "a count that is a string" \
	"pdb-check: n.json: item 0: PodDisruptionBudget cap/web: status.currentHealthy is \"2\", not an integer"
sed 's/"name":"web"/"name":"we b"/' list.json >n.json
bad n.json "a name with a space" \
	"pdb-check: n.json: item 0 (PodDisruptionBudget): metadata.name \"we b\" is not a valid budget name"
sed 's/"namespace":"cap",//' list.json >n.json
t_run pdb-check -b n.json
t_rc 2 "a budget without a namespace"
t_grep "names the item and the field" err '^pdb-check: n\.json: item 0 (PodDisruptionBudget): metadata\.namespace '

# -w: the list led by ITEM and LIST, then a watch's events, as the sandbox
# gave them when a budget's deployment grew by one, then the budget went.
t_run pdb-check -b -w list.json
t_rc 0 "-w: a list"
t_out "each item led by ITEM and its resourceVersion, then the list's" \
	"ITEM 1163 cap/web 1 2 1 2" \
	"ITEM 1170 gpu-drv/train-pdb - - - -" \
	"LIST 1164"
ev() { # ev TYPE RV ALLOWED HEALTHY DESIRED EXPECTED: an event of cap/web
	printf '%s' "$B1" | sed -e "s/^{/{\"type\":\"$1\",\"object\":{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy\/v1\",/" \
		-e "s/\"resourceVersion\":\"1163\"/\"resourceVersion\":\"$2\"/" \
		-e "s/\"disruptionsAllowed\":1,\"currentHealthy\":2,\"desiredHealthy\":1,\"expectedPods\":2/\"disruptionsAllowed\":$3,\"currentHealthy\":$4,\"desiredHealthy\":$5,\"expectedPods\":$6/"
	echo '}'
}
{ ev MODIFIED 1174 0 2 2 3; ev MODIFIED 1178 1 3 2 3; ev DELETED 1185 1 3 2 3; } >events.json
t_run pdb-check -b -w events.json
t_rc 0 "-w: watch events"
t_out "each event led by its type and the budget's resourceVersion" \
	"MODIFIED 1174 cap/web 0 2 2 3" \
	"MODIFIED 1178 cap/web 1 3 2 3" \
	"DELETED 1185 cap/web 1 3 2 3"
t_err "nothing on stderr"
t_run pdb-check -b -w none.json
t_rc 0 "-w: a watch that gave no event"
t_out "prints nothing"
t_run pdb-check -b events.json
t_rc 2 "without -w, watch events are not a list"
t_grep "says so" err '^pdb-check: events\.json: a watch event (MODIFIED), not a List of PodDisruptionBudgets'
{ ev MODIFIED 1174 0 2 2 3; printf '%s\n' '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1164 (1300)","reason":"Expired","code":410}}'; } >e410.json
t_run pdb-check -b -w e410.json
t_rc 2 "-w: an ERROR event (410 Expired)"
t_out "the event before it is printed" "MODIFIED 1174 cap/web 0 2 2 3"
t_err "the error, with its reason and code" \
	'pdb-check: e410.json: the watch reported an error: "too old resource version: 1164 (1300)" (reason "Expired", code 410)'
sed 's/"resourceVersion":"1178"/"resourceVersion":"1178\&watch=1"/' events.json >badrv.json
t_run pdb-check -b -w badrv.json
t_rc 2 "-w: a resourceVersion a watch's query could not take"
t_err "is refused, named" \
	'pdb-check: badrv.json: item 0: PodDisruptionBudget cap/web: metadata.resourceVersion "1178&watch=1" is not one a watch can start from (letters, digits and ._~- only, 64 at most)'
# Each line is out as its event comes (a pipe, not a file).
mkfifo ev.fifo back.fifo
{
	ev MODIFIED 1174 0 2 2 3
	read -r first <back.fifo
	echo "$first" >first.line
	ev MODIFIED 1178 1 3 2 3
} >ev.fifo &
timeout 20 pdb-check -b -w <ev.fifo | { read -r l; echo "$l" >back.fifo; cat; } >rest
wait
t_is "the first event's line is out before the second event comes" "$(cat first.line)" "MODIFIED 1174 cap/web 0 2 2 3"
t_is "then the second's" "$(cat rest)" "MODIFIED 1178 cap/web 1 3 2 3"

U="usage: pdb-check [-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]"
t_run pdb-check -w list.json
t_rc 2 "-w without -p or -b"
t_err "is a usage error" "pdb-check: -w reads a watch of pods or of budgets: it goes with -p or -b" "$U"
t_run pdb-check -b -p list.json
t_rc 2 "-b with -p"
t_err "is a usage error" "$U"
t_run pdb-check -b -a list.json
t_rc 2 "-b with -a"
t_err "is a usage error" "$U"
t_run pdb-check -b list.json list.json
t_rc 2 "-b with two files"
t_done
