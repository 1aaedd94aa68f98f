#!/bin/sh
# End to end: drv-tag.sh and drv-audit.sh against the sandbox's API server.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

M=$ROOT/lab/support-matrix.csv
e2e_facts

for n in 0 1 2; do
	t_run dash "$BIN/drv-tag.sh" "lab-node-$n"
	echo "lab-node-$n $(cat out)" >>tags
done
t_cmp "drv-tag.sh gives each node's tag from the real API" - tags <<EOF2
lab-node-0 550-5.15.0-119-generic-ubuntu22.04
lab-node-1 535-5.15.0-107-generic-ubuntu22.04
lab-node-2 550-6.8.0-45-generic-ubuntu24.04
EOF2
t_run drv-tag.sh lab-node-7
t_rc 2 "drv-tag.sh on a node that does not exist"
t_err "says so" "drv-tag.sh: node lab-node-7 not found in the cluster"
kubectl label node lab-node-2 --overwrite feature.node.kubernetes.io/kernel-version.full= >/dev/null
t_run drv-tag.sh lab-node-2
t_rc 2 "drv-tag.sh on a node whose kernel label is empty"
t_out "prints no tag"
t_grep "says present but empty" err "label feature.node.kubernetes.io/kernel-version.full is present but empty"
kubectl label node lab-node-2 feature.node.kubernetes.io/kernel-version.full- >/dev/null
t_run drv-tag.sh lab-node-2
t_grep "and missing when it is removed" err "label feature.node.kubernetes.io/kernel-version.full is missing"
e2e_facts

# What a real kubectl prints, as JSON and as YAML, gives the same lines.
kubectl get nodes -o json >nodes.json
kubectl get nodes -o yaml >nodes.yaml
t_run labels2tag nodes.json
cp out from-json
t_run labels2tag nodes.yaml
t_cmp "labels2tag reads kubectl's -o json and -o yaml alike" from-json out
t_cmp "and they are the three nodes' tags" tags from-json

t_run dash "$BIN/drv-audit.sh" -m "$M"
t_rc 0 "the three lab nodes against the lab matrix"
t_out "OK" OK

kubectl label node lab-node-0 --overwrite feature.node.kubernetes.io/kernel-version.full=5.15.0-125-generic >/dev/null
t_run drv-audit.sh -m "$M"
t_rc 1 "one node's kernel moves up one notch"
t_out "exactly that node is MISSING, with its new tag" "lab-node-0 MISSING 550-5.15.0-125-generic-ubuntu22.04"
kubectl label node lab-node-0 --overwrite feature.node.kubernetes.io/kernel-version.full=5.15.0-119-generic >/dev/null
t_run drv-audit.sh -m "$M"
t_rc 0 "the kernel label restored"
t_out "OK again" OK

kubectl apply -f "$ROOT/lab/k8s/node3.yaml" >/dev/null
t_run drv-audit.sh -m "$M"
t_rc 1 "a GPU node added on a new kernel"
t_out "is caught" "lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04"

t_run drv-audit.sh -m "$M" -k 6.8.0-52-generic -l feature.node.kubernetes.io/system-os_release.VERSION_ID=24.04
t_rc 1 "-k: the 24.04 nodes planned on lab-node-3's kernel"
t_out "both need the image lab-node-3 needs, which the lab matrix lacks" \
	"lab-node-2 MISSING 550-6.8.0-52-generic-ubuntu24.04" \
	"lab-node-3 MISSING 550-6.8.0-52-generic-ubuntu24.04"

# One list call whatever the number of nodes, as kubectl's request log shows.
cat >kubectl-v6 <<'EOF2'
#!/bin/sh
exec kubectl -v=6 "$@" 2>>"$KLOG"
EOF2
chmod +x kubectl-v6
KLOG=$PWD/klog KUBECTL=$PWD/kubectl-v6 t_run drv-audit.sh -m "$M"
t_run grep -c 'verb="GET" url="https://[^"]*/api/v1/nodes?' klog
t_out "drv-audit.sh makes one GET of the node list for four nodes" 1
t_run grep -c -e 'limit=' -e 'continue=' klog
t_out "in one piece, not pages" 0
t_grep "with the GPU label selector" klog 'labelSelector=nvidia.com%2Fgpu.present%3Dtrue'

# A cluster it cannot see is never OK.
sed 's|server: https://127.0.0.1:[0-9]*|server: https://127.0.0.1:9|' "$KUBECONFIG" >dead.kubeconfig
KUBECONFIG=$PWD/dead.kubeconfig t_run drv-audit.sh -m "$M"
t_rc 2 "a kubeconfig whose API server does not answer"
t_out "prints nothing on stdout, never OK"
t_grep "says kubectl could not list the nodes" err "drv-audit.sh: cannot list the GPU nodes; kubectl said:"
KUBECONFIG=$PWD/nowhere t_run drv-audit.sh -m "$M"
t_rc 2 "a kubeconfig that does not exist"
t_out "prints nothing on stdout"

kubectl delete node lab-node-3 >/dev/null
e2e_reset_lab >/dev/null 2>&1 || :
t_done
