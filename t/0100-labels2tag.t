#!/bin/sh
# labels2tag: tags from kubectl node JSON and YAML, and every way it refuses.
. "$(dirname "$0")/lib.sh"

T0=550-5.15.0-119-generic-ubuntu22.04
T1=535-5.15.0-107-generic-ubuntu22.04
T2=550-6.8.0-45-generic-ubuntu24.04

t_run labels2tag <"$DATA/lab-nodes.json"
t_rc 0 "a NodeList as kubectl -o json prints it"
t_out "one '<node> <tag>' line per node, in input order" \
	"lab-node-0 $T0" "lab-node-1 $T1" "lab-node-2 $T2"
t_err "nothing on stderr"

t_run labels2tag "$DATA/lab-nodes.yaml"
t_rc 0 "the same list as YAML, from a file argument"
t_out "YAML gives the same lines as JSON" \
	"lab-node-0 $T0" "lab-node-1 $T1" "lab-node-2 $T2"

t_run labels2tag <"$DATA/node-1.json"
t_rc 0 "a single Node"
t_out "a single Node gives its tag alone" "$T1"

t_run labels2tag - <"$DATA/node-1.yaml"
t_out "a single Node as YAML, '-' for stdin" "$T1"

t_run labels2tag -n "$DATA/node-1.json"
t_out "-n names the node even for a single Node" "lab-node-1 $T1"

t_run labels2tag -N "$DATA/lab-nodes.json"
t_out "-N prints tags only for a list" "$T0" "$T1" "$T2"

t_run labels2tag -b 550 "$DATA/node-1.json"
t_out "-b: the tag the node needs after a driver-branch change" \
	550-5.15.0-107-generic-ubuntu22.04
t_run labels2tag -k 5.15.0-125-generic "$DATA/lab-nodes.json"
t_out "-k: the tags the nodes need after a kernel change" \
	"lab-node-0 550-5.15.0-125-generic-ubuntu22.04" \
	"lab-node-1 535-5.15.0-125-generic-ubuntu22.04" \
	"lab-node-2 550-5.15.0-125-generic-ubuntu24.04"

t_run labels2tag -c -b 550 "$DATA/lab-nodes.json"
t_out "-c: the matrix row each node needs, never split from a tag" \
	"lab-node-0 550,5.15.0-119-generic,ubuntu22.04" \
	"lab-node-1 550,5.15.0-107-generic,ubuntu22.04" \
	"lab-node-2 550,6.8.0-45-generic,ubuntu24.04"

sed -e 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu-driver-upgrade-state": "drain-required", &/' \
	-e 's/"podCIDR":/"unschedulable": true, &/' "$DATA/node-1.json" >draining.json
t_run labels2tag -s draining.json
t_out "-s: name, tag, upgrade state and cordon" \
	"lab-node-1 $T1 drain-required cordoned"
t_run labels2tag -s "$DATA/lab-nodes.json"
t_out "-s: '-' for no upgrade state" \
	"lab-node-0 $T0 - schedulable" "lab-node-1 $T1 - schedulable" "lab-node-2 $T2 - schedulable"
t_run labels2tag -s -u "$DATA/bad-nodes.json"
t_rc 2 "-s -u with broken nodes"
t_grep "-s -u puts UNKNOWN in the tag's place" out '^no-major UNKNOWN - schedulable$'
# -s acts on the state and the cordon: a value the API server would not
# hold is an error naming it, never "-" or "schedulable".
sed 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu-driver-upgrade-state": "drain required!", &/' \
	"$DATA/node-1.json" >badstate.json
t_run labels2tag -s badstate.json
t_rc 2 "-s: a state label that is not a label value"
t_err "names the node, the label and the value" \
	'labels2tag: node lab-node-1: nvidia.com/gpu-driver-upgrade-state "drain required!" is not a valid label value (at most 63 of [A-Za-z0-9_.-], a letter or digit at each end)'
t_out "and prints no line for it"
sed 's/"podCIDR":/"unschedulable": "true", &/' "$DATA/node-1.json" >strcordon.json
t_run labels2tag -s strcordon.json
t_rc 2 '-s: spec.unschedulable "true", a string'
t_err "names the field and the value" \
	'labels2tag: node lab-node-1: spec.unschedulable "true" is a string, not a boolean'

# -F: the facts the scripts decide on, one record a node: name, tag, driver,
# upgrade state, skip, cordon, ready, initial, since, cordoner (all from one
# read).
t_run labels2tag -F -b 550 "$DATA/lab-nodes.json"
t_rc 0 "-F on the lab nodes"
t_out "-F: one record a node" \
	"lab-node-0 550-5.15.0-119-generic-ubuntu22.04 550.90.07 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-540164815469" \
	"lab-node-1 550-5.15.0-107-generic-ubuntu22.04 535.183.06 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188" \
	"lab-node-2 550-6.8.0-45-generic-ubuntu24.04 550.90.07 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-610225251663"
sed -e 's/"nvidia.com\/gpu.present": "true"/"nvidia.com\/gpu-driver-upgrade-state": "drain-required", "nvidia.com\/gpu-driver-upgrade.skip": "true", &/' \
	-e 's/"podCIDR":/"unschedulable": true, &/' \
	-e 's/"annotations": {/&"nvidia.com\/gpu-driver-upgrade.node-initial-state.unschedulable": "true", /' \
	-e 's/"status": "True",/"status": "False",/' "$DATA/node-1.json" >facts.json
t_run labels2tag -F facts.json
t_out "-F: state, skip, cordon, not ready, cordoned before the upgrade" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 drain-required skip cordoned not-ready was-cordoned - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
t_run labels2tag -F -c -b 550 "$DATA/node-1.json"
t_out "-F -c: the matrix row in the tag's place" \
	"lab-node-1 550,5.15.0-107-generic,ubuntu22.04 535.183.06 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
t_run labels2tag -F "$DATA/bad-nodes.json"
t_rc 0 "-F: a node whose labels give no tag is a record, not an error"
t_grep "-F: UNKNOWN:fault:label in the tag's place" out \
	'^empty-kernel UNKNOWN:empty:feature.node.kubernetes.io/kernel-version.full 550.90.07 - - schedulable ready - - - [0-9a-f-]*$'
t_grep "-F: a driver label that is not digits is '-'" out '^alpha-branch UNKNOWN:invalid:nvidia.com/cuda.driver.major - - - schedulable ready - - - [0-9a-f-]*$'
t_run labels2tag -F -b 550 "$DATA/lab-nodes.yaml"
t_out "-F: YAML the same" \
	"lab-node-0 550-5.15.0-119-generic-ubuntu22.04 550.90.07 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-540164815469" \
	"lab-node-1 550-5.15.0-107-generic-ubuntu22.04 535.183.06 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188" \
	"lab-node-2 550-6.8.0-45-generic-ubuntu24.04 550.90.07 - - schedulable ready - - - 6f1c2f4e-8a51-4f4e-9d3a-610225251663"
# -F's since and cordoner, from what get --raw answers: the managedFields
# entry that owns the state label (its last change), the operator's own
# start time for the two waits it times, and who owns spec.unschedulable.
mf='"managedFields": [{"manager": "kubectl-label", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T08:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu-driver-upgrade-state": {}}}}}, {"manager": "kubectl-label", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T09:30:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu-driver-upgrade-state": {}}}}}, {"manager": "kubectl cordon", "operation": "Update", "apiVersion": "v1", "time": "2024-02-29T23:59:59Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:unschedulable": {}}}}, {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T00:00:00Z", "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}],'
sed "s|\"annotations\": {|$mf &|" facts.json >since.json
t_run labels2tag -F since.json
t_rc 0 "-F with managedFields"
t_out "-F: since the state label's last change (the latest owner), cordoned by the owner of spec.unschedulable" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 drain-required skip cordoned not-ready was-cordoned 1796031000:label kubectl?cordon 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
t_is "1796031000 is 2026-11-30T09:30:00Z" "$(date -u -d @1796031000 +%Y-%m-%dT%H:%M:%SZ)" 2026-11-30T09:30:00Z
sed -e 's/"drain-required"/"validation-required"/' \
	-e 's/"annotations": {/&"nvidia.com\/gpu-driver-upgrade-validation-start-time": "1796000000", "nvidia.com\/gpu-driver-upgrade-wait-for-pod-completion-start-time": "1795000000", /' since.json >valid.json
t_run labels2tag -F valid.json
t_out "-F: in validation-required, since the operator's validation start time" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 validation-required skip cordoned not-ready was-cordoned 1796000000:validation kubectl?cordon 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed 's/"validation-required"/"wait-for-jobs-required"/' valid.json >jobs.json
t_run labels2tag -F jobs.json
t_out "-F: in wait-for-jobs-required, since the operator's wait-for-completion start time" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 wait-for-jobs-required skip cordoned not-ready was-cordoned 1795000000:jobs kubectl?cordon 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed 's/"1795000000"/"soon"/' jobs.json >jobs-bad.json
t_run labels2tag -F jobs-bad.json
t_out "-F: a start time that is not Unix seconds falls back to the label's change" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 wait-for-jobs-required skip cordoned not-ready was-cordoned 1796031000:label kubectl?cordon 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed -e 's/"drain-required", //' -e 's/"nvidia.com\/gpu-driver-upgrade-state": //' -e 's/"unschedulable": true, //' since.json >nostate.json
t_run labels2tag -F nostate.json
t_out "-F: no state, no since; schedulable, no cordoner, and the record of a cordon since lifted says nothing" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 - skip schedulable not-ready - - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
# gpudrv's record of its cordon holds while no other manager owns the
# cordon: left behind by an upgrade, it says nothing of kubectl cordon's.
A_OLD='"nvidia.com\/gpu-driver-upgrade.node-initial-state.unschedulable": "true"'
sed "s/$A_OLD/\"gpudrv\/cordoned\": \"true\"/" since.json >stale.json
t_run labels2tag -F stale.json
t_out "-F: gpudrv's record, kubectl cordon's cordon: someone else's" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 drain-required skip cordoned not-ready - 1796031000:label kubectl?cordon 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed 's/"manager": "kubectl cordon"/"manager": "gpudrv"/' stale.json >ours.json
t_run labels2tag -F ours.json
t_out "-F: gpudrv's record, gpudrv's cordon: gpudrv's" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 drain-required skip cordoned not-ready gpudrv 1796031000:label gpudrv 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed "s/$A_OLD/\"gpudrv\/cordoned\": \"true\"/" facts.json >ours.json
t_run labels2tag -F ours.json
t_out "-F: gpudrv's record, no managedFields: gpudrv's" \
	"lab-node-1 535-5.15.0-107-generic-ubuntu22.04 535.183.06 drain-required skip cordoned not-ready gpudrv - - 6f1c2f4e-8a51-4f4e-9d3a-052151099188"
sed 's/"2024-02-29T23:59:59Z"/"2023-02-29T23:59:59Z"/' since.json >badtime.json
t_run labels2tag -F badtime.json
t_rc 2 "-F: a managedFields time the API server would not write (2023-02-29)"
t_err "names the node, the field and the time" \
	'labels2tag: node lab-node-1: metadata.managedFields has a time "2023-02-29T23:59:59Z" that is not RFC 3339 in UTC (2026-12-01T19:09:12Z)'
t_out "and prints no record"
sed 's/"2024-02-29T23:59:59Z"/"2024-02-29T23:59:59+01:00"/' since.json >badtime.json
t_run labels2tag -F badtime.json
t_rc 2 "-F: a managedFields time with an offset is not the API server's"
sed 's/"managedFields": \[/"managedFields": ["x", /' since.json >badmf.json
t_run labels2tag -F badmf.json
t_rc 2 "-F: a managedFields item that is not an object"
t_err "says so" 'labels2tag: node lab-node-1: metadata.managedFields has an item that is not an object'
t_run labels2tag -s since.json
t_rc 0 "-s does not read managedFields"
t_out "and its line is as before" "lab-node-1 535-5.15.0-107-generic-ubuntu22.04 drain-required cordoned"
t_run labels2tag -F badstate.json
t_rc 2 "-F: a state label that is not a label value"
t_run labels2tag -F strcordon.json
t_rc 2 "-F: a string for spec.unschedulable"
printf '' >empty.json
t_run labels2tag -F empty.json
t_rc 2 "-F: an empty answer is no list"
t_out "and prints nothing"
t_run labels2tag -F -s "$DATA/node-1.json"
t_rc 2 "-F with -s: a usage error"

t_run labels2tag "$DATA/rhel-nodes.json"
t_rc 0 "RHEL, Rocky and RHCOS nodes"
t_out "RHEL and Rocky drop the minor OS version, as the GPU Operator does since v26.7.0" \
	"rhel-9 550-5.14.0-427.13.1.el9_4.x86_64-rhel9" \
	"rhel-10 570-6.12.0-55.9.1.el10_0.x86_64-rhel10" \
	"rocky-9 550-5.14.0-503.14.1.el9_5.x86_64-rocky9" \
	"rhcos 550-5.14.0-284.59.1.el9_2.x86_64-rhcos4.14"

# Broken labels: the good nodes are printed, every bad one is named.
t_run labels2tag "$DATA/bad-nodes.json"
t_rc 2 "a list with nodes whose labels are broken"
t_out "only the good nodes are printed" \
	"good-a $T0" "good-b $T1"
t_err "each bad node is named with its label; missing and empty told apart" \
	"labels2tag: node no-major: label nvidia.com/cuda.driver.major is missing (gpu-feature-discovery sets it: is it running there?)" \
	"labels2tag: node empty-kernel: label feature.node.kubernetes.io/kernel-version.full is present but empty (node-feature-discovery sets it: is it running there?)" \
	"labels2tag: node space-kernel: label feature.node.kubernetes.io/kernel-version.full value \"5.15.0 119\" is not a valid label value (at most 63 of [A-Za-z0-9_.-], a letter or digit at each end)" \
	"labels2tag: node forged: label feature.node.kubernetes.io/kernel-version.full value \"5.15.0-119-generic\\nlab-node-9 550-x-ubuntu22.04\" is not a valid label value (at most 63 of [A-Za-z0-9_.-], a letter or digit at each end)" \
	"labels2tag: node alpha-branch: label nvidia.com/cuda.driver.major value \"r550\" is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)" \
	"labels2tag: node no-osver: label feature.node.kubernetes.io/system-os_release.VERSION_ID is missing (node-feature-discovery sets it: is it running there?)"

t_run labels2tag -u "$DATA/bad-nodes.json"
t_rc 2 "-u with broken nodes"
t_out "-u names each bad node on stdout too, in input order, one line each" \
	"good-a $T0" \
	"no-major UNKNOWN missing:nvidia.com/cuda.driver.major" \
	"empty-kernel UNKNOWN empty:feature.node.kubernetes.io/kernel-version.full" \
	"space-kernel UNKNOWN invalid:feature.node.kubernetes.io/kernel-version.full" \
	"forged UNKNOWN invalid:feature.node.kubernetes.io/kernel-version.full" \
	"alpha-branch UNKNOWN invalid:nvidia.com/cuda.driver.major" \
	"no-osver UNKNOWN missing:feature.node.kubernetes.io/system-os_release.VERSION_ID" \
	"good-b $T1"

sed 's/"nvidia.com\/cuda.driver.major": "535"/"nvidia.com\/cuda.driver.major": 535/' \
	"$DATA/node-1.json" >number.json
t_run labels2tag number.json
t_rc 2 "a label value that is a number, not a string"
t_err "says the label is not a string" \
	"labels2tag: node lab-node-1: label nvidia.com/cuda.driver.major is not a string (a number)"

sed 's/"name": "lab-node-1"/"name": "Lab_Node 1"/' "$DATA/node-1.json" >badname.json
t_run labels2tag badname.json
t_rc 2 "a node name that is not a DNS name"
t_out "prints nothing for it"
t_err "names the item and the bad name" \
	"labels2tag: item 0: metadata.name \"Lab_Node 1\" is not a valid node name"

# Input that is not a node list at all.
t_run labels2tag </dev/null
t_rc 2 "empty input"
t_err "says the input is empty" \
	"labels2tag: <stdin>: empty input: expected kubectl JSON or YAML"

head -c 3000 "$DATA/lab-nodes.json" >cut.json
t_run labels2tag cut.json
t_rc 2 "JSON cut short, as by a killed kubectl"
t_out "prints nothing from a cut list"
t_err "says it is truncated" \
	"labels2tag: cut.json: truncated JSON: input ends inside a value (3000 bytes read)"

sed '5s/$/ ,,/' "$DATA/lab-nodes.json" >bad.json
t_run labels2tag bad.json
t_rc 2 "malformed JSON"
t_grep "names file, line and column" err '^labels2tag: bad.json:5:[0-9]*: malformed JSON near'

printf '%s\n' '{"kind": "List", "apiVersion": "v1", "items": [' >pod.json
sed '$d' "$DATA/node-1.json" >>pod.json
printf '%s\n' '}, {"kind": "Pod", "metadata": {"name": "p"}}]}' >>pod.json
t_run labels2tag pod.json
t_rc 2 "a List holding a Pod"
t_out "prints nothing, not even the Node before it"
t_err "names the item" 'labels2tag: pod.json: item 1 is a "Pod", not a Node'

printf '{"kind": "PodList", "items": []}\n' >podlist.json
t_run labels2tag podlist.json
t_rc 2 "a PodList"
t_err "names the kind" 'labels2tag: podlist.json: not a Node nor a list of Nodes (kind is "PodList")'

printf '{"kind": "NodeList", "items": []}\n' >empty.json
t_run labels2tag empty.json
t_rc 0 "an empty NodeList is not an error for labels2tag"
t_out "and prints nothing"

printf 'kind: List\nitems:\n  - kind: Node\n    metadata: {name: a\n' >bad.yaml
t_run labels2tag bad.yaml
t_rc 2 "malformed YAML"
t_grep "names file, line and column" err '^labels2tag: bad.yaml.*: .*YAML'

printf 'kind: Node\nmetadata: &m {name: a}\n---\nkind: Node\n' >two.yaml
t_run labels2tag two.yaml
t_rc 2 "two YAML documents"
t_err "says so with the line" "labels2tag: two.yaml:3:1: more than one YAML document"

printf 'kind: List\nitems:\n- &n {kind: Node, metadata: {name: a}}\n- *n\n' >alias.yaml
t_run labels2tag alias.yaml
t_rc 2 "YAML aliases"
t_err "are refused with their place" \
	"labels2tag: alias.yaml:4:3: YAML aliases are not accepted (kubectl never writes them)"

# -L: one answer to a GET of a list, the whole list of the kind asked for,
# or what it is instead, a line on stdout and exit 1 (get_targets names
# the request and says it).  Only the top level counts.
printf '{"apiVersion":"nvidia.com/v1alpha1","items":[{"kind":"NVIDIADriver","metadata":{"name":"a","annotations":{"k":"{\\"kind\\":\\"Status\\"} }]"}}},{"x":1,"x":2}],\n "kind":"NVIDIADriverList","metadata":{}}\n' >list.json
t_run labels2tag -L NVIDIADriverList list.json
t_rc 0 "-L: the list asked for, kind after items, tricky strings and an item's twice key inside"
t_out "-L: says nothing of it"
t_err "-L: nor on stderr"
t_run labels2tag -L NVIDIADriverList <list.json
t_rc 0 "-L: from standard input"
: >empty.json
printf ' \n\t\r\n' >blank.json
head -c 40 list.json >cut.json
printf '{"kind":"NVIDIADriverList","items":[],"m":"abc' >cutstr.json
printf '{"kind":"NVIDIADriverList","items":[{"a":tr' >cutlit.json
printf '{"items":[],"kind":"NVIDIADriverList","items":[]}' >twice.json
printf '{"kind":"NVIDIADriverList","a\\"b":1,"a\\"b":2,"items":[]}' >twice-esc.json
printf '[{"kind":"NVIDIADriverList","items":[]}]' >array.json
{ cat list.json; cat list.json; } >two.json
printf '{"kind":"NVIDIADriverList","items":[1,]}' >comma.json
printf '\357\273\277{"kind":"NVIDIADriverList","items":[]}' >bom.json
printf 'kind: NVIDIADriverList\nitems: []\n' >list.yaml
printf '<html><body>502 Bad Gateway</body></html>\n' >html.json
printf '{"apiVersion":"v1","items":[]}' >nokind.json
printf '{"kind":null,"items":[]}' >nullkind.json
echo '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}' >status.json
printf '{"kind":"Status","message":"a \\"quoted\\"\\nword","code":"429"}' >status-odd.json
echo '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}' >pods.json
printf '{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},"spec":{}}' >one.json
printf '{"kind":"NVIDIADriverList","metadata":{}}' >noitems.json
printf '{"kind":"NVIDIADriverList","items":null}' >nullitems.json
printf '{"kind":"NVIDIADriverList","items":{}}' >objitems.json
for case in "empty:an empty body" "blank:an empty body" \
	"cut:a body cut short (not one whole JSON object)" \
	"cutstr:a body cut short (not one whole JSON object)" \
	"cutlit:a body cut short (not one whole JSON object)" \
	'twice:an object that has the member "items" twice' \
	'twice-esc:an object that has the member "a\"b" twice' \
	"array:a body that is not one JSON object" "two:a body that is not one JSON object" \
	"comma:a body that is not one JSON object" "bom:a body that is not one JSON object" \
	"list.yaml:a body that is not one JSON object" "html:a body that is not one JSON object" \
	"nokind:an object that has no kind" "nullkind:an object that has no kind" \
	"status:a Status (500 InternalError: etcdserver: request timed out)" \
	'status-odd:a Status (429 : a \"quoted\"\nword)' \
	"pods:kind PodList" "one:kind ClusterPolicy" \
	"noitems:kind NVIDIADriverList but no items list" \
	"nullitems:kind NVIDIADriverList but no items list" \
	"objitems:kind NVIDIADriverList but no items list"; do
	f=${case%%:*}
	case $f in *.*) ;; *) f=$f.json ;; esac
	t_run labels2tag -L NVIDIADriverList "$f"
	t_rc 1 "-L, $f: not the list asked for"
	t_out "-L, $f: says what it is instead" "${case#*:}"
	t_err "-L, $f: nothing on stderr"
done
t_run labels2tag -L ClusterPolicyList list.json
t_rc 1 "-L: the list of another kind than asked for"
t_out "-L: names its kind" "kind NVIDIADriverList"
t_run labels2tag -L NVIDIADriverList no-such-file
t_rc 2 "-L: a missing file"
t_err "-L: names it and the reason" "labels2tag: cannot open no-such-file: No such file or directory"
for args in "-L NVIDIADriverList -t list.json list.json" "-n -L NVIDIADriverList list.json" \
	"-L NVIDIADriverList list.json list.json" "-L '' list.json"; do
	eval "t_run labels2tag $args"
	t_rc 2 "-L: a usage error: $args"
	t_grep "-L: says the usage: $args" err '^       labels2tag -L kind \[file\]$'
done

# Usage.
t_run labels2tag -x
t_rc 2 "an unknown option"
t_err "says which option, then the usage lines" "labels2tag: unknown option -x" 'usage: labels2tag [-cFnNsuw] [-b version | -t targets] [-k kernel] [file]' \
	'       labels2tag -i [-nNuw] [-b version | -t targets] [-k kernel] [-R repository] [file]' \
	'       labels2tag -L kind [file]'
t_run labels2tag -h
t_rc 0 "-h"
t_grep "-h prints the usage on stdout" out '^usage: labels2tag'
t_grep "-h: -L's line too" out '^       labels2tag -L kind \[file\]$'
t_run labels2tag -b 5x0 "$DATA/node-1.json"
t_rc 2 "a bad -b"
t_err "-b is checked before reading" \
	'labels2tag: -b "5x0": is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)'
t_run labels2tag no-such-file
t_rc 2 "a missing file"
t_err "names the file and the reason" \
	"labels2tag: cannot open no-such-file: No such file or directory"

if [ -w /dev/full ]; then
	t_run sh -c 'labels2tag "$1" >/dev/full' sh "$DATA/lab-nodes.json"
	t_rc 2 "a full disk"
	t_grep "is a write error, not silence" err 'labels2tag: write error on stdout'
fi

t_done
