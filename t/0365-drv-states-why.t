#!/bin/sh
# drv-states.sh: how long each GPU node has been in its state and what it
# waits for, with the fix, in every state the GPU Operator's library writes;
# the pods and budgets are read only when a state needs them, and a list
# that cannot be read is exit 2, never "nothing holds it".  (t/0925 places
# nodes in these states on the sandbox.)
. "$(dirname "$0")/lib.sh"

M=$ROOT/lab/support-matrix.csv
K=5.15.0-107-generic
TAG=550-$K-ubuntu22.04
now=$t_now
t_fake_pods
printf '%s\n' driver_branch,kernel,os_tag 550,$K,ubuntu22.04 >ok.csv

# Nodes in no state, and done: nothing to wait for, unless cordoned.
t_state_nodes "$(t_state_node idle - - false True 0)" "$(t_state_node done upgrade-done - false True 86400)" \
	"$(t_state_node held - - true True 0 '' kubectl)" "$(t_state_node kept upgrade-done - true True 90000 '' 'ops?team')" >nodes.json
t_run drv-states.sh -m ok.csv
t_rc 0 "no node waits"
t_out "done and idle nodes wait for nothing; a cordon outside an upgrade is named, with who and the fix" \
	"idle - schedulable $TAG ok - -" \
	"done upgrade-done schedulable $TAG ok 1d0h -" \
	"held - cordoned $TAG ok - cordon cordoned by kubectl, outside any upgrade; fix: kubectl uncordon held when nobody needs it so" \
	"kept upgrade-done cordoned $TAG ok 1d1h cordon upgrade done, still cordoned by ops?team; fix: kubectl uncordon kept when nobody needs it so"
t_run cat kubectl.log
t_out "one GET: no state needs the pods" "--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"

# Every state of the operator's library, each with its phrase.
rm -f kubectl.log
t_state_nodes "$(t_state_node a-req upgrade-required - false True 1830)" \
	"$(t_state_node b-req upgrade-required - true True 1830 '' kubectl)" \
	"$(t_state_node c-cordon cordon-required - false True 30)" \
	"$(t_state_node d-jobs wait-for-jobs-required - true True 7230 '"nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time":"'$((now - 3630))'"' gpu-operator)" \
	"$(t_state_node e-del pod-deletion-required - true True 100 '' gpu-operator)" \
	"$(t_state_node lab-node-1 drain-required - true True 3630 '' gpu-operator)" \
	"$(t_state_node g-maint node-maintenance-required - false True 200000)" \
	"$(t_state_node h-post post-maintenance-required - true True 90 '' maintenance-operator)" \
	"$(t_state_node i-restart pod-restart-required - true True 930 '' gpu-operator)" \
	"$(t_state_node j-valid validation-required - true True 2000 '"nvidia.com/gpu-driver-upgrade-validation-start-time":"'$((now - 900))'"' gpu-operator)" \
	"$(t_state_node k-uncordon uncordon-required - true True 10 '' gpu-operator)" \
	"$(t_state_node l-failed upgrade-failed - true True 172830 '' gpu-operator)" \
	"$(t_state_node m-odd half-done - false True 50)" \
	"$(t_state_node n-skip upgrade-required true false True 50)" \
	"$(t_state_node o-down drain-required - true False 50 '' gpu-operator)" >nodes.json
t_gpu_pods "$(t_gpu_pod i-restart gpu-operator/nvidia-driver-daemonset-aaaaa Running False 4)" \
	"$(t_gpu_pod l-failed gpu-operator/nvidia-driver-daemonset-bbbbb Pending -)" \
	"$(t_gpu_pod - gpu-operator/nvidia-driver-daemonset-ccccc Pending -)" >driver.json
t_gpu_pods "$(t_gpu_pod k-uncordon gpu-operator/nvidia-operator-validator-zzzzz Running True 0)" >validator.json
t_run drv-states.sh -m ok.csv
t_rc 0 "every state: findings are not errors"
t_err "nothing on stderr"
t_grep "upgrade-required: the slots, counted" out \
	"^a-req upgrade-required schedulable $TAG ok 30m3[0-9]s slot waits for an upgrade slot: 10 GPU node(s) under way, 10 unavailable (maxParallelUpgrades, maxUnavailable); fix: the GPU Operator takes it when a slot frees (autoUpgrade on), or drv-rollout.sh\$"
t_grep "upgrade-required, cordoned by hand: it counts as unavailable" out \
	"^b-req upgrade-required cordoned $TAG ok 30m3[0-9]s slot waits for an upgrade slot: .*; cordoned by kubectl before its upgrade, it counts as unavailable; fix: "
t_grep "cordon-required: the controller's next pass" out \
	"^c-cordon cordon-required schedulable $TAG ok 3[0-9]s controller waits for the GPU Operator to cordon it on its next pass; fix: if this lasts, see that the GPU Operator runs: kubectl -n gpu-operator get pods\$"
t_grep "wait-for-jobs-required: since the operator's own start time, not the label's" out \
	"^d-jobs wait-for-jobs-required cordoned $TAG ok 1h0m jobs waits for the pods of waitForCompletion.podSelector on it to finish; fix: they end, or waitForCompletion.timeoutSeconds (0: for ever) moves it on; deleting them moves it now\$"
t_grep "pod-deletion-required, no budget refusing" out \
	"^e-del pod-deletion-required cordoned $TAG ok 1m4[0-9]s pods its GPU pods deleted, no budget refusing: pods are still terminating; fix: kubectl get pods -A --field-selector spec.nodeName=e-del\$"
t_grep "drain-required: the budget that refuses, in pdb-check's words" out \
	"^lab-node-1 drain-required cordoned $TAG ok 1h0m budget its drain is refused: gpu-drv/trainer-pdb BLOCKS gpu-drv/trainer-7d9f5c6b8d-m4q7z minAvailable=4 currentHealthy=4 desiredHealthy=4 disruptionsAllowed=0 needed=1: lower minAvailable to 3, or add 1 ready replica elsewhere; fix: as pdb-check says; the operator fails it at drain.timeoutSeconds\$"
t_grep "node-maintenance-required: the maintenance operator" out \
	"^g-maint node-maintenance-required schedulable $TAG ok 2d7h maintenance waits for the maintenance operator to cordon and drain it (a NodeMaintenance, requestor mode); fix: kubectl get nodemaintenances -A\$"
t_grep "post-maintenance-required: no driver pod on it" out \
	"^h-post post-maintenance-required cordoned $TAG ok 1m3[0-9]s driver-pod waits for a driver pod on it: there is none (app.kubernetes.io/component=nvidia-driver); fix: kubectl -n gpu-operator get daemonsets: is the driver scheduled there?\$"
t_grep "pod-restart-required: the driver pod, its phase and restarts, and its logs" out \
	"^i-restart pod-restart-required cordoned $TAG ok 15m3[0-9]s driver-pod waits for the new driver pod: gpu-operator/nvidia-driver-daemonset-aaaaa is Running, not Ready, 4 restarts; fix: kubectl -n gpu-operator logs nvidia-driver-daemonset-aaaaa (past 10 restarts the operator fails it)\$"
t_grep "validation-required: no validator, past the operator's 600 s" out \
	"^j-valid validation-required cordoned $TAG ok 15m[0-9]s validator waits for a validator pod on it: there is none (app=nvidia-operator-validator); the operator fails it 600 s after its start, past; fix: kubectl -n gpu-operator get daemonsets: is the validator scheduled there?\$"
t_grep "uncordon-required" out \
	"^k-uncordon uncordon-required cordoned $TAG ok 1[0-9]s controller waits for the GPU Operator to uncordon it on its next pass; "
t_grep "upgrade-failed: the driver pod, and the operator's retry" out \
	"^l-failed upgrade-failed cordoned $TAG ok 2d0h failed its upgrade failed; the operator moves it on once its driver pod is Ready and current (gpu-operator/nvidia-driver-daemonset-bbbbb is Pending, not Ready); fix: find why (kubectl describe node l-failed; the driver pod), then: kubectl label node l-failed nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite\$"
t_grep "a state nobody writes" out \
	"^m-odd half-done schedulable $TAG ok 5[0-9]s unknown a state neither the GPU Operator nor gpudrv writes; fix: kubectl label node m-odd nvidia.com/gpu-driver-upgrade-state- to forget it\$"
t_grep "the skip label, whatever the state" out \
	"^n-skip upgrade-required schedulable $TAG ok 5[0-9]s skip labelled nvidia.com/gpu-driver-upgrade.skip=true: neither the GPU Operator nor gpudrv upgrades it; fix: kubectl label node n-skip nvidia.com/gpu-driver-upgrade.skip- to let them\$"
t_grep "a node not Ready: before what it waits for" out \
	"^o-down drain-required cordoned $TAG ok 5[0-9]s node the node is not Ready: its kubelet does not report; the operator counts it unavailable; fix: kubectl describe node o-down\$"
cp out all.txt
t_run grep -c . all.txt
t_out "one line a node" 15
t_run cat kubectl.log
t_out "the budgets and pods once, the driver and validator pods once each" \
	"--request-timeout=60s get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue" \
	"--request-timeout=60s get --raw /apis/policy/v1/poddisruptionbudgets" \
	"--request-timeout=60s get --raw /api/v1/pods?fieldSelector=spec.nodeName%21%3D" \
	"--request-timeout=60s get --raw /api/v1/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver" \
	"--request-timeout=60s get --raw /api/v1/pods?labelSelector=app%3Dnvidia-operator-validator"

# The validator not Ready yet, within the operator's 600 s: how long is left.
t_state_nodes "$(t_state_node v validation-required - true True 400 '"nvidia.com/gpu-driver-upgrade-validation-start-time":"'$((now - 100))'"' gpu-operator)" >nodes.json
t_gpu_pods "$(t_gpu_pod v gpu-operator/nvidia-operator-validator-vvvvv Running False 0 0)" >validator.json
t_run drv-states.sh -m ok.csv
t_grep "validation-required: since the operator's start time, and the time left" out \
	"^v validation-required cordoned $TAG ok 1m[0-9]*s validator waits for the validator: gpu-operator/nvidia-operator-validator-vvvvv is Running, not Ready; the operator fails it 600 s after its start, in [89]m[0-9]*s; fix: kubectl -n gpu-operator logs nvidia-operator-validator-vvvvv\$"

# A missing image comes first: the driver pod cannot pull it.
t_state_nodes "$(t_state_node p pod-restart-required - true True 3630 '' gpu-operator)" >nodes.json
printf '%s\n' driver_branch,kernel,os_tag >none.csv
t_run drv-states.sh -m none.csv
t_rc 1 "a node waiting for an image that does not exist"
t_out "says the image, not the pod" \
	"p pod-restart-required cordoned $TAG MISSING 1h0m image its driver image $TAG does not exist: the driver pod cannot pull it; fix: build and push $TAG (drv-audit.sh prints the matrix row)"

# -S: one line a state, for people: how many, the longest, what it waits for.
t_state_nodes "$(t_state_node a upgrade-required - false True 100)" "$(t_state_node b upgrade-required - false True 5000)" \
	"$(t_state_node c - - false True 0)" "$(t_state_node lab-node-1 drain-required - true True 7230 '' gpu-operator)" \
	"$(t_state_node e upgrade-done - false True 3630)" "$(t_state_node f zz-custom - false True 3630)" "$(t_state_node g aa-custom - false True 7300)" >nodes.json
t_run drv-states.sh -S -m ok.csv
t_rc 0 "-S"
t_out "a line a state, in the operator's order, then the others by name" \
	"- 1 - c -" \
	"upgrade-required 2 1h23m b slot" \
	"drain-required 1 2h0m lab-node-1 budget" \
	"upgrade-done 1 1h0m e -" \
	"aa-custom 1 2h1m g unknown" \
	"zz-custom 1 1h0m f unknown"

# -o json: every node, for programs; times as numbers, absent ones null.
t_run drv-states.sh -o json -m ok.csv
t_rc 0 "-o json"
cp out nodes.out.json
t_run python3 -c '
import json, sys
d = json.load(open("nodes.out.json"))
print(len(d))
for n in d:
    print(n["node"], n["state"], n["cordoned"], n["image"], n["sinceFrom"], type(n["seconds"]).__name__, n["waiting"], n["cordonedBy"])
'
t_out "one object a node, every field typed" 7 \
	"a upgrade-required False ok label int slot None" \
	"b upgrade-required False ok label int slot None" \
	"c None False ok None NoneType None None" \
	"lab-node-1 drain-required True ok label int budget gpu-operator" \
	"e upgrade-done False ok label int None None" \
	"f zz-custom False ok label int unknown None" \
	"g aa-custom False ok label int unknown None"
# (within a minute: a busy machine may take seconds between the fixture and here)
t_run python3 -c '
import json, time
d = json.load(open("nodes.out.json"))
b = [n for n in d if n["node"] == "b"][0]
print(abs(b["since"] + 5000 - int(time.time())) <= 60, abs(b["seconds"] - 5000) <= 60)
print(b["why"].startswith("waits for an upgrade slot"), b["fix"].endswith("or drv-rollout.sh"))'
t_out "since and seconds agree with the label's change; why and fix apart" "True True" "True True"
t_run drv-states.sh -o json -S -m ok.csv
t_rc 2 "-o json with -S"
t_grep "is one or the other" err "^drv-states.sh: -S is the summary for people; -o json gives every node to a program: one or the other$"
t_run drv-states.sh -o yaml -m ok.csv
t_rc 2 "-o yaml"
t_err "says what -o takes" "drv-states.sh: -o takes text or json, not 'yaml'"

# -o json stays JSON whatever the words: a budget the disruption controller
# cannot count, its message with quotes and a backslash (pdb-check escapes
# them), and an empty fleet with -e.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for i in d["items"]:
    if i.get("kind") == "PodDisruptionBudget":
        i["status"]["conditions"] = [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
            "message": "found no controllers for pod \"x\" in C:\\temp\t(tab)", "lastTransitionTime": "2026-12-01T00:00:00Z"}]
        i["status"]["observedGeneration"] = 0
json.dump(d, open("budgets.json", "w"))' "$DATA/pdb-lab.json"
t_state_nodes "$(t_state_node lab-node-1 drain-required - true True 70 '' gpu-operator)" >nodes.json
t_run drv-states.sh -o json -m ok.csv
t_rc 0 "-o json with a SyncFailed budget"
cp out sync.json
cat >sync.py <<'EOF'
import json
n = json.load(open("sync.json"))[0]
w = n["why"]
print(n["waiting"], 'SyncFailed: "found no controllers for pod' in w, 'pod \\"x\\" in' in w, 'C:\\\\temp' in w)
EOF
t_run python3 sync.py
t_out "valid JSON, the message kept with its quotes and backslash as pdb-check wrote them" "budget True True True"
cp "$DATA/pdb-lab.json" budgets.json
printf '{"kind": "NodeList", "apiVersion": "v1", "items": []}\n' >nodes.json
t_run drv-states.sh -e -o json -m ok.csv
t_rc 0 "-e -o json, no GPU node"
t_out "an empty JSON list, not nothing" "[]"

# -t, two NVIDIADrivers selecting every GPU node: the operator deploys no
# driver on any; said as that, not as a missing label.
cp "$DATA/targets/cp-crd.json" clusterpolicies.json
cat >nvidiadrivers.json <<'EOF'
{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriverList", "items": [
 {"metadata": {"name": "a"}, "spec": {"usePrecompiled": true, "version": "550"}},
 {"metadata": {"name": "b"}, "spec": {"usePrecompiled": true, "version": "570"}}]}
EOF
t_state_nodes "$(t_state_node lab-node-1 upgrade-required - false True 70)" >nodes.json
t_run drv-states.sh -t -m ok.csv
t_rc 2 "-t: two NVIDIADrivers select the node"
t_grep "says so, and the fix" out \
	"^lab-node-1 upgrade-required schedulable UNKNOWN UNKNOWN 1m[0-9]*s labels two NVIDIADrivers select it (labels2tag names them): the GPU Operator then deploys no driver on it; fix: change their nodeSelectors so that one selects it\$"
t_grep "labels2tag names both" err "nvidiadriver/a and nvidiadriver/b both select it"
rm -f clusterpolicies.json nvidiadrivers.json

# Never "nothing holds it": a pod or budget list that cannot be read is
# exit 2, and nothing is printed.
t_state_nodes "$(t_state_node lab-node-1 drain-required - true True 70 '' gpu-operator)" "$(t_state_node i pod-restart-required - true True 60 '' gpu-operator)" >nodes.json
for f in apis/policy/v1/poddisruptionbudgets api/v1/pods; do
	echo forbidden >"$STANDIN/GET/$f.fault"
	t_run drv-states.sh -m ok.csv
	t_rc 2 "the ${f##*/} cannot be listed"
	t_out "prints nothing"
	t_grep "says which request, in kubectl's words" err "cannot .*${f##*/}"
	rm -f "$STANDIN/GET/$f.fault"
done
: >empty.json
cp empty.json pods.json
t_run drv-states.sh -m ok.csv
t_rc 2 "the pods answered with an empty body"
t_out "prints nothing"
t_grep "names the request" err "^drv-states.sh: GET /api/v1/pods?fieldSelector=spec.nodeName%21%3D answered with an empty body (kubectl exit 0): nothing can be said of it$"
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' >pods.json
printf '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}\n' >budgets.json
t_run drv-states.sh -m ok.csv
t_rc 2 "the budgets answered with a list of another kind"
t_out "prints nothing"
cp "$DATA/pdb-lab.json" budgets.json
# Driver pod lists that are not whole: cut short, empty, a lone Pod.
cp driver.json driver.whole
head -c 300 driver.whole >driver.json
t_run drv-states.sh -m ok.csv
t_rc 2 "the driver pods cut short"
t_out "prints nothing"
t_grep "says where the list ends" err "^pdb-check: [^ ]*: .*"
t_grep "and which list it was" err "^drv-states.sh: cannot list the driver pods (app.kubernetes.io/component=nvidia-driver): pdb-check cannot read the answer to GET /api/v1/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver (exit 2)$"
: >driver.json
t_run drv-states.sh -m ok.csv
t_rc 2 "the driver pods answered with an empty body"
t_out "prints nothing"
t_err "says so" "drv-states.sh: cannot list the driver pods (app.kubernetes.io/component=nvidia-driver): GET /api/v1/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver answered with an empty body (kubectl exit 0): nothing can be said of it"
t_gpu_pod i-restart gpu-operator/nvidia-driver-daemonset-aaaaa Running True 0 >driver.json
t_run drv-states.sh -m ok.csv
t_rc 2 "a lone Pod where the list was asked for"
t_out "prints nothing"
t_grep "says it is not a list" err "^pdb-check: [^ ]*: not a List of Pods"
rm driver.json driver.whole

# A managedFields time the API server would not write is an error, named.
t_state_nodes "$(t_state_node a upgrade-required - false True 100)" | sed 's/"time":"[^"]*","fieldsType":"FieldsV1","fieldsV1":{"f:metadata"/"time":"yesterday","fieldsType":"FieldsV1","fieldsV1":{"f:metadata"/' >nodes.json
t_run drv-states.sh -m ok.csv
t_rc 2 "a managedFields time that is not the API server's"
t_grep "names the node and the time" err '^labels2tag: node a: metadata.managedFields has a time "yesterday" that is not RFC 3339 in UTC'

# kubectl get -o json leaves managedFields out: no time, said as "-".
t_state_nodes "$(t_state_node a upgrade-required - true True 100)" | sed 's/"managedFields":\[[^]]*\]*\]/"managedFields":null/' >nodes.json
t_run drv-states.sh -m ok.csv
t_rc 0 "no managedFields"
t_out "the age and the cordoner are not known" \
	"a upgrade-required cordoned $TAG ok - slot waits for an upgrade slot: 0 GPU node(s) under way, 1 unavailable (maxParallelUpgrades, maxUnavailable); cordoned by someone before its upgrade, it counts as unavailable; fix: the GPU Operator takes it when a slot frees (autoUpgrade on), or drv-rollout.sh"
t_done
