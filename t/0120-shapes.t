#!/bin/sh
# The shapes users pipe in besides a plain list: kubectl get -w output and
# watch events (labels2tag -w), a trailing "---", a Status or an HTML page
# where a list was expected, labels that are not an object, label values the
# API would refuse, YAML scalars by kubectl's rule, and matrix files with
# comments and quoted fields.
. "$(dirname "$0")/lib.sh"

N1=$DATA/node-1.json
T1=535-5.15.0-107-generic-ubuntu22.04
# node NAME KERNEL: node-1 renamed, on another kernel.
node() {
	sed -e "s/\"name\": \"lab-node-1\"/\"name\": \"$1\"/" \
		-e "s/\"kubernetes.io\/hostname\": \"lab-node-1\"/\"kubernetes.io\/hostname\": \"$1\"/" \
		-e "s/5.15.0-107-generic/$2/" "$N1"
}
# event TYPE FILE: a watch event as kubectl get -w --output-watch-events prints it.
event() {
	printf '{\n    "type": "%s",\n    "object": ' "$1"
	sed '$!s/$//' "$2"
	printf '}\n'
}

# kubectl get nodes -w -o json: the objects back to back.
node gpu-a 6.8.0-45-generic >a.json
node gpu-b 6.8.0-49-generic >b.json
cat a.json b.json a.json >watch.json
t_run labels2tag -w watch.json
t_rc 0 "-w: Nodes back to back, as kubectl get -w -o json prints them"
t_out "a named line for each, in order" \
	"gpu-a 535-6.8.0-45-generic-ubuntu22.04" \
	"gpu-b 535-6.8.0-49-generic-ubuntu22.04" \
	"gpu-a 535-6.8.0-45-generic-ubuntu22.04"
t_err "nothing on stderr"
t_run labels2tag -w -s watch.json
t_out "-w -s: with state and cordon" \
	"gpu-a 535-6.8.0-45-generic-ubuntu22.04 - schedulable" \
	"gpu-b 535-6.8.0-49-generic-ubuntu22.04 - schedulable" \
	"gpu-a 535-6.8.0-45-generic-ubuntu22.04 - schedulable"
t_run labels2tag watch.json
t_rc 2 "without -w, a second document"
t_out "prints nothing: not even the first"
t_err "says where the second begins" "labels2tag: watch.json:148:1: more than one JSON document"
t_run labels2tag -w "$DATA/lab-nodes.json"
t_out "-w takes a whole list too, naming its nodes" \
	"lab-node-0 550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 550-6.8.0-45-generic-ubuntu24.04"

# Each line as its document ends, not at the end of the input: a live view.
mkfifo feed
labels2tag -w <feed >live.out 2>live.err &
l2t=$!
exec 3>feed
cat a.json >&3
n=0
until [ -s live.out ] || [ "$n" -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
cp live.out first.out
cat b.json >&3
exec 3>&-
wait "$l2t"
t_ok $? "-w on a pipe that stays open"
t_run cat first.out
t_out "the first node's line came while the pipe was still open" "gpu-a 535-6.8.0-45-generic-ubuntu22.04"
t_run cat live.out
t_out "then the second's" "gpu-a 535-6.8.0-45-generic-ubuntu22.04" "gpu-b 535-6.8.0-49-generic-ubuntu22.04"

# kubectl get nodes -w -o json --output-watch-events.
sed 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu-driver-upgrade-state": "upgrade-done", &/' b.json >b2.json
printf '{"type": "BOOKMARK", "object": {"kind": "Node", "apiVersion": "v1", "metadata": {"resourceVersion": "12345"}}}\n' >bookmark.json
{ event ADDED a.json; event ADDED b.json; cat bookmark.json; event MODIFIED b2.json; event DELETED a.json; } >events.json
t_run labels2tag -w -s events.json
t_rc 0 "-w: watch events"
t_out "a line per event, the event first; a bookmark has none" \
	"ADDED gpu-a 535-6.8.0-45-generic-ubuntu22.04 - schedulable" \
	"ADDED gpu-b 535-6.8.0-49-generic-ubuntu22.04 - schedulable" \
	"MODIFIED gpu-b 535-6.8.0-49-generic-ubuntu22.04 upgrade-done schedulable" \
	"DELETED gpu-a 535-6.8.0-45-generic-ubuntu22.04 - schedulable"
{ event ADDED a.json; printf '{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}}\n'; event ADDED b.json; } >error.json
t_run labels2tag -w error.json
t_rc 2 "-w: an ERROR event"
t_out "the other events still have their lines" \
	"ADDED gpu-a 535-6.8.0-45-generic-ubuntu22.04" "ADDED gpu-b 535-6.8.0-49-generic-ubuntu22.04"
t_err "and the error is said" \
	'labels2tag: error.json: the watch reported an error: "too old resource version: 1 (2)" (reason "Expired", code 410)'
sed 's/"name": "gpu-a"/"name": "Gpu_A"/' a.json >badname.json
{ event ADDED badname.json; } >badev.json
t_run labels2tag -w -u badev.json
t_rc 2 "-w -u: an event of a node whose name is not a node name"
t_out "its UNKNOWN line says the event too" "ADDED #0 UNKNOWN invalid:metadata.name"
t_run labels2tag events.json
t_rc 2 "watch events without -w"
t_err "say what they are and what reads them" \
	"labels2tag: events.json:151:1: more than one JSON document"
event ADDED a.json >one-event.json
t_run labels2tag one-event.json
t_rc 2 "a single watch event without -w"
t_err "is named as one" \
	"labels2tag: one-event.json: a watch event (ADDED), not a Node nor a list of Nodes"
# A reader that did not ask for events (no -w) is blind to the list it wanted
# whatever the event: an ERROR or a BOOKMARK is no list, and no "nothing there".
printf '{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}}\n' >one-error.json
t_run labels2tag one-error.json
t_rc 2 "an ERROR event without -w"
t_out "prints nothing"
t_err "names the event and what the server said" \
	'labels2tag: one-error.json: a watch event (ERROR: "too old resource version: 1 (2)"), not a Node nor a list of Nodes'
t_run labels2tag bookmark.json
t_rc 2 "a BOOKMARK event without -w"
t_out "prints nothing either"
t_err "is named" "labels2tag: bookmark.json: a watch event (BOOKMARK), not a Node nor a list of Nodes"
printf '{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}}\n' >podev.json
t_run labels2tag -w podev.json
t_rc 2 "-w: an event of a Pod"
t_err "is refused" 'labels2tag: podev.json: a watch event (ADDED) of "Pod", not a Node'

# kubectl get nodes -w -o yaml: documents after "---".
{ cat "$DATA/node-1.yaml"; echo ---; sed 's/lab-node-1/gpu-c/g' "$DATA/node-1.yaml"; } >watch.yaml
t_run labels2tag -w watch.yaml
t_rc 0 "-w: YAML documents"
t_out "a named line for each" "lab-node-1 $T1" "gpu-c $T1"
{ cat "$DATA/node-1.yaml"; echo ---; } >trailing.yaml
t_run labels2tag trailing.yaml
t_rc 0 "a trailing '---' (an empty last document)"
t_out "is no document: the Node alone" "$T1"
{ echo ---; cat "$DATA/node-1.yaml"; echo ---; echo ---; } >empties.yaml
t_run labels2tag empties.yaml
t_rc 0 "empty documents before and after"
t_out "are no documents either" "$T1"

# A Status or an HTML page where kubectl output was expected.
printf '{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "nodes is forbidden: User \\"system:anonymous\\" cannot list resource \\"nodes\\"", "reason": "Forbidden", "details": {"kind": "nodes"}, "code": 403}\n' >status.json
t_run labels2tag status.json
t_rc 2 "a Kubernetes Status"
t_out "prints nothing"
t_err "is named, with its message, reason and code" \
	'labels2tag: status.json: a Kubernetes Status, not a Node nor a list of Nodes: "nodes is forbidden: User \"system:anonymous\" cannot list resource \"nodes\"" (reason "Forbidden", code 403)'
t_run pdb-check lab-node-1 status.json
t_rc 2 "pdb-check given a Status"
t_err "names it too" \
	'pdb-check: status.json: a Kubernetes Status, not a List of PodDisruptionBudgets and Pods: "nodes is forbidden: User \"system:anonymous\" cannot list resource \"nodes\"" (reason "Forbidden", code 403)'
printf 'apiVersion: v1\ncode: 401\nkind: Status\nmessage: Unauthorized\nmetadata: {}\nreason: Unauthorized\nstatus: Failure\n' >status.yaml
t_run labels2tag status.yaml
t_rc 2 "a Status in YAML"
t_err "is named the same way" \
	'labels2tag: status.yaml: a Kubernetes Status, not a Node nor a list of Nodes: "Unauthorized" (reason "Unauthorized", code 401)'
printf '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>nginx</body>\r\n</html>\r\n' >page.html
echo OK >ok.audit
for c in labels2tag "pdb-check lab-node-1" "report-fmt -a ok.audit -m $ROOT/lab/support-matrix.csv lab-node-1"; do
	# shellcheck disable=SC2086 # a command and its arguments
	t_run $c page.html
	t_rc 2 "${c%% *} given an HTML page"
	t_grep "${c%% *} names it, with its first line" err \
		'an HTML page, not kubectl output (did a proxy or load balancer answer instead of the API server?): "<html>"$'
done
printf '\n  <!DOCTYPE html><html><title>Sign in</title>' >login.html
t_run labels2tag login.html
t_err "after white space too, the line shown" \
	"labels2tag: login.html: an HTML page, not kubectl output (did a proxy or load balancer answer instead of the API server?): \"<!DOCTYPE html><html><title>Sign in</title>\""

# One page of a list (a request with limit=, or a proxy that adds one):
# metadata.continue or remainingItemCount says more is left, so it is not
# the whole list, whatever it holds; an empty continue is the last page,
# the whole list.  JSON and YAML, each command's lists.
sed 's/"metadata": {/"metadata": {"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ", /' "$DATA/lab-nodes.json" >page1.json
grep -q '"continue": "eyJ' page1.json || echo "Bail out! t/data/lab-nodes.json has no list metadata"
t_run labels2tag page1.json
t_rc 2 "labels2tag given a List (kubectl get -o json) with metadata.continue"
t_out "prints none of its nodes"
t_err "says it is a page, not the list" \
	"labels2tag: page1.json: this List is one page of a longer list (metadata.continue is set: the request had a limit), not the whole list"
printf 'apiVersion: v1\nkind: PodList\nmetadata:\n  remainingItemCount: 12\nitems:\n- kind: Pod\n  metadata: {name: a, namespace: d}\n  spec: {nodeName: lab-node-1}\n  status: {phase: Running}\n' >page2.yaml
t_run pdb-check -p page2.yaml
t_rc 2 "pdb-check -p given a PodList with remainingItemCount, in YAML"
t_out "prints no pod"
t_err "says so" \
	"pdb-check: page2.yaml: this PodList is one page of a longer list (metadata.remainingItemCount is set: the request had a limit), not the whole list"
{ echo '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{"continue":"x"},"items":[]}'
	echo '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}'; } >page3.json
t_run pdb-check -a page3.json
t_rc 2 "pdb-check -a: a budget list that is a page"
t_err "names it" \
	"pdb-check: page3.json: this PodDisruptionBudgetList is one page of a longer list (metadata.continue is set: the request had a limit), not the whole list"
printf '{"kind":"NodeList","apiVersion":"v1","metadata":{"continue":"","resourceVersion":"9"},"items":[]}\n' >last.json
t_run labels2tag last.json
t_rc 0 "an empty continue, the last page, is the whole list"
t_out "of no nodes"
printf '{"kind":"PodList","apiVersion":"v1","metadata":{"continue":null,"remainingItemCount":0},"items":[]}\n' >lastpods.json
t_run pdb-check -p lastpods.json
t_rc 0 "a null continue and remainingItemCount 0 are the whole list too"
t_out "of no pods"

# metadata.labels that is not an object.
printf '{"kind": "Node", "metadata": {"name": "odd", "labels": "nvidia.com/cuda.driver.major=550"}}\n' >strlabels.json
t_run labels2tag -u strlabels.json
t_rc 2 "metadata.labels that is a string"
t_out "an UNKNOWN line naming metadata.labels" "odd UNKNOWN invalid:metadata.labels"
t_err "says what it is" "labels2tag: node odd: metadata.labels is a string, not an object"
printf '{"kind": "Node", "metadata": {"name": "odd", "labels": [1]}}\n' >listlabels.json
t_run labels2tag listlabels.json
t_err "or a list" "labels2tag: node odd: metadata.labels is a list, not an object"
printf '{"kind": "Node", "metadata": {"name": "none", "labels": null}}\n' >nulllabels.json
t_run labels2tag nulllabels.json
t_err "null labels are no labels" \
	"labels2tag: node none: label nvidia.com/cuda.driver.major is missing (gpu-feature-discovery sets it: is it running there?)"

# Label values the API server refuses never make a tag.
L64=$(printf '%064d' 5)
for v in -5.15.0-107 5.15.0-107- .. _x "$L64"; do
	sed "s/\"5.15.0-107-generic\",/\"$v\",/" "$N1" >v.json
	t_run labels2tag -u v.json
	t_rc 2 "kernel label value '$v'"
	t_out "'$v' gives UNKNOWN, no tag" "lab-node-1 UNKNOWN invalid:feature.node.kubernetes.io/kernel-version.full"
	t_grep "'$v' is named as no valid label value" err "is not a valid label value (at most 63 of \[A-Za-z0-9_.-\], a letter or digit at each end)$"
done
L63=$(printf '%063d' 5)
sed "s/\"5.15.0-107-generic\",/\"$L63\",/" "$N1" >v.json
t_run labels2tag v.json
t_rc 0 "a kernel label value of 63 characters is a label value"
t_out "and makes a tag" "535-$L63-ubuntu22.04"

# YAML scalars are read as kubectl reads them (YAML 1.1): a plain yes is a
# boolean, a plain 22.04 a number; quoted, !!str and block scalars are strings.
# osver VALUE: node-1.yaml with VERSION_ID written as VALUE.
# ">-" is a folded block scalar: its text on the next line.
osver() {
	awk -v v="$1" '/^    feature.node.kubernetes.io\/system-os_release.VERSION_ID: / {
		print "    feature.node.kubernetes.io/system-os_release.VERSION_ID: " v
		if (v == ">-") print "      22.04"
		next } { print }' "$DATA/node-1.yaml" >v.yaml
}
for v in "'22.04'" '"22.04"' '!!str 22.04' '! 22.04' '>-'; do
	osver "$v"
	t_run labels2tag v.yaml
	t_rc 0 "VERSION_ID: $v is a string"
	t_out "and gives the tag" "$T1"
done
for v in 22.04 '!!float 22.04' 2_2.04 0x16 0o26 026 1e3 .5; do
	osver "$v"
	t_run labels2tag v.yaml
	t_rc 2 "VERSION_ID: $v is a number"
	t_err "$v: not a string" \
		"labels2tag: node lab-node-1: label feature.node.kubernetes.io/system-os_release.VERSION_ID is not a string (a number)"
done
for v in yes No on OFF y N true '!!bool True'; do
	osver "$v"
	t_run labels2tag v.yaml
	t_rc 2 "VERSION_ID: $v is a boolean"
	t_err "$v: not a string" \
		"labels2tag: node lab-node-1: label feature.node.kubernetes.io/system-os_release.VERSION_ID is not a string (a boolean)"
done
for v in '~' null '!!null ""'; do
	osver "$v"
	t_run labels2tag v.yaml
	t_rc 2 "VERSION_ID: $v is null"
	t_err "$v: not a string" \
		"labels2tag: node lab-node-1: label feature.node.kubernetes.io/system-os_release.VERSION_ID is not a string (null)"
done
for v in 22.04x 22.04.1 0x 1_a 1.2.3 2026-11-30; do
	osver "$v"
	t_run labels2tag -n -u v.yaml
	t_out "VERSION_ID: $v is a string" "lab-node-1 535-5.15.0-107-generic-ubuntu$v"
done
osver '!!int 22.04'
t_run labels2tag v.yaml
t_rc 2 "!!int on a number that is not an integer"
t_err "says so where it stands" 'labels2tag: v.yaml:32:62: "22.04" is not a !!int'
osver '!!binary MjIuMDQ='
t_run labels2tag v.yaml
t_rc 2 "a tag kubectl never writes"
t_err "is named" 'labels2tag: v.yaml:32:62: YAML tag "tag:yaml.org,2002:binary" is not one kubectl writes'
osver .inf
t_run labels2tag v.yaml
t_rc 2 "YAML infinity"
t_err "has no JSON number" "labels2tag: v.yaml:32:62: YAML infinity or NaN: JSON has no such number"
osver '!custom x'
t_run labels2tag v.yaml
t_err "a local tag is refused" 'labels2tag: v.yaml:32:62: YAML tag "!custom" is not one kubectl writes'

# The matrix: comments and RFC 4180 quoting, or a message saying exactly what.
printf '%s\n' 'lab-node-1 535-5.15.0-107-generic-ubuntu22.04' 'lab-node-2 550-6.8.0-45-generic-ubuntu24.04' >tags
printf '# images built by the driver pipeline\r\n"driver_branch","kernel","os_tag"\r\n  # 535\r\n"535","5.15.0-107-generic",ubuntu22.04\r\n550,"6.8.0-45-generic","ubuntu24.04"\r\n' >quoted.csv
t_run matrix-grep -m quoted.csv tags
t_rc 0 "a matrix with comment lines and quoted fields"
t_out "reads every row" OK
printf '# one tag per line\n535-5.15.0-107-generic-ubuntu22.04\n# and another\n550-6.8.0-45-generic-ubuntu24.04\n' >tags.txt
t_run matrix-grep -m tags.txt tags
t_out "comments in a tag list too" OK
for bad in '"550,5.15.0-107-generic,ubuntu22.04|a quoted field is not closed' \
	'"550"x,5.15.0-107-generic,ubuntu22.04|text after a quoted field'"'"'s closing quote' \
	'5"50,5.15.0-107-generic,ubuntu22.04|a quote inside an unquoted field' \
	'"5""50",5.15.0-107-generic,ubuntu22.04|driver_branch "5\"50" is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)' \
	'"550","5.15.0-107-generic","ubuntu22.04","x"|more than 3 columns (expected driver_branch,kernel,os_tag)'; do
	printf 'driver_branch,kernel,os_tag\n%s\n' "${bad%%|*}" >bad.csv
	t_run matrix-grep -m bad.csv tags
	t_rc 2 "matrix row ${bad%%|*}"
	t_err "is refused: ${bad#*|}" "matrix-grep: bad.csv:2: ${bad#*|}"
done
t_done
