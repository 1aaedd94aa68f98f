#!/bin/sh
# gate-pod: the health gate's pod made from the user's manifest (bound to the
# node, through its cordon, never restarted, its failure's log kept in its
# status), and read back: name, phase, the worst container's reason and exit,
# its last lines shown safe; bad manifests refused, exit 2.
. "$(dirname "$0")/lib.sh"

cat >vectoradd.yaml <<'EOF2'
apiVersion: v1
kind: Pod
metadata:
  name: cuda-vectoradd
  namespace: somewhere
  labels:
    app: check
spec:
  containers:
  - name: vectoradd
    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
    resources:
      limits:
        nvidia.com/gpu: 1
status:
  phase: Succeeded
EOF2
t_run gate-pod -n gpudrv lab-node-1 vectoradd.yaml
t_rc 0 "a manifest"
t_out "the pod to create, on one line" '{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"app":"check","app.kubernetes.io/part-of":"gpudrv","gpudrv/gate":"lab-node-1"},"generateName":"gpudrv-gate-lab-node-1-","namespace":"gpudrv"},"spec":{"containers":[{"name":"vectoradd","image":"nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0","resources":{"limits":{"nvidia.com/gpu":1}},"terminationMessagePolicy":"FallbackToLogsOnError"}],"nodeName":"lab-node-1","restartPolicy":"Never","tolerations":[{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}]}}'
t_err "nothing on stderr"
cat >own.json <<'EOF2'
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"restartPolicy":"OnFailure","tolerations":[{"key":"node.kubernetes.io/unschedulable","operator":"Exists"}],"initContainers":[{"name":"i","image":"a","terminationMessagePolicy":"File"}],"containers":[{"name":"c","image":"b"}]}}
EOF2
t_run gate-pod -n gpudrv n1 own.json
t_grep "what the manifest says is kept: OnFailure, its toleration, its message policy" out \
	'"initContainers":\[{"name":"i","image":"a","terminationMessagePolicy":"File"}\],"containers":\[{"name":"c","image":"b","terminationMessagePolicy":"FallbackToLogsOnError"}\],"nodeName":"n1"}'
t_grep "the toleration not given twice" out '"restartPolicy":"OnFailure","tolerations":\[{"key":"node.kubernetes.io/unschedulable","operator":"Exists"}\]'

while IFS='|' read -r what doc msg; do
	printf '%s\n' "$doc" >bad.json
	t_run gate-pod -n gpudrv n1 bad.json
	t_rc 2 "$what"
	t_out "$what: nothing on stdout"
	t_grep "$what: says why" err "$msg"
done <<'EOF2'
restartPolicy Always|{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"restartPolicy":"Always","containers":[{"name":"c","image":"b"}]}}|^gate-pod: the manifest's restartPolicy is Always: the pod would never end; use Never (or OnFailure, retried until the gate's timeout)$
no containers|{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[]}}|^gate-pod: the manifest's spec.containers is empty, not a list of containers$
not a Pod|{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}|ConfigMap
a list of pods|{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}}]}|^gate-pod: bad.json: a list of pods: give one Pod$
tolerations not a list|{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"tolerations":{},"containers":[{"name":"c","image":"b"}]}}|^gate-pod: the manifest's spec.tolerations is an object, not a list$
EOF2
t_run gate-pod -n 'Bad_NS' n1 vectoradd.yaml
t_rc 2 "a namespace that is not one"
t_run gate-pod -n gpudrv 'n1;x' vectoradd.yaml
t_rc 2 "a node name that is not one"
long=gpu-node-0123456789-0123456789-0123456789-01234567890123456789.rack.cluster.example
t_run gate-pod -n gpudrv "$long" vectoradd.yaml
t_rc 0 "a node name of more than 63 characters"
t_grep "its label: the name's first 63 characters, ending in a letter or digit" out \
	'"gpudrv/gate":"gpu-node-0123456789-0123456789-0123456789-01234567890123456789"}'
t_grep "its spec.nodeName: the whole name" out "\"nodeName\":\"$long\""
t_run gate-pod n1 vectoradd.yaml
t_rc 2 "no -n"
t_err "the usage" "usage: gate-pod -n namespace node manifest | -r [pod]"

# -r: how the pod stands.
st() { printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpudrv-gate-n1-x7k2p","namespace":"gpudrv"},"spec":{"containers":[]},"status":%s}\n' "$1" >pod.json; }
st '{"phase":"Succeeded","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
t_run gate-pod -r pod.json
t_out "succeeded" "gpudrv-gate-n1-x7k2p Succeeded Completed 0"
st '{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"b","state":{"terminated":{"exitCode":1,"reason":"Error","message":"line 1\nCUDA error: no device\u001b[0m\nTest FAILED\n"}}}]}'
t_run gate-pod -r pod.json
t_out "failed: the container that failed, its last lines, control characters shown safe" \
	"gpudrv-gate-n1-x7k2p Failed Error 1" "line 1" "CUDA error: no device?[0m" "Test FAILED"
st '{"phase":"Failed","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":1,"reason":"Error","message":"GPU 0: 85\u00b0C \u009b2J\u007f too hot\n"}}}]}'
t_run gate-pod -r pod.json
t_out "UTF-8, a C1 escape, DEL: every byte but printable ASCII shown as ?" \
	"gpudrv-gate-n1-x7k2p Failed Error 1" "GPU 0: 85??C ??2J? too hot"
st '{"phase":"Pending","containerStatuses":[{"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}'
t_run gate-pod -r pod.json
t_out "pending: why it waits" "gpudrv-gate-n1-x7k2p Pending ImagePullBackOff -"
st '{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory."}'
t_run gate-pod -r pod.json
t_out "the pod's own reason and message" "gpudrv-gate-n1-x7k2p Failed Evicted -" "The node was low on resource: memory."
awk 'BEGIN { printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"terminated\":{\"exitCode\":2,\"message\":\""; for (i = 1; i <= 30; i++) printf "line %d\\n", i; print "\"}}}]}}" }' >long.json
t_run gate-pod -r long.json
t_rc 0 "a long message"
cp out long.out
t_run sed -n '2p;$p' long.out
t_out "its last 20 lines" "line 11" "line 30"
STDIN=pod.json
t_run sh -c 'printf %s "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":{}}" | gate-pod -r'
t_rc 2 "-r: a pod without a name"
t_done
