#!/bin/sh
# End to end: the cluster fails under the scripts.  RBAC forbids what they
# need, a kubeconfig trusts the wrong CA, the API server stops answering in
# the middle of an upgrade.  Never OK, never a silent cordon.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }

apiserver_pid=$(cat "$e2e_dir/state/kube-apiserver.pid")
# Whatever happens, the API server is not left stopped for the next test.
trap 'kill -CONT "$apiserver_pid" 2>/dev/null; rm -rf "$SCRATCH"' EXIT

e2e_facts
t_matrix
node1() { kubectl get node lab-node-1 -o 'jsonpath={.metadata.labels}{.metadata.annotations}{.spec}'; }

# sa_kubeconfig NAME: a kubeconfig for service account NAME (default namespace).
sa_kubeconfig() {
	kubectl create serviceaccount "$1" >/dev/null 2>&1 || :
	token=$(kubectl create token "$1" --duration=10m)
	kubectl config view --raw --minify -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}' |
		base64 -d >ca.crt
	server=$(kubectl config view --raw --minify -o 'jsonpath={.clusters[0].cluster.server}')
	KUBECONFIG=$PWD/$1.kubeconfig kubectl config set-cluster sandbox --server="$server" \
		--certificate-authority=ca.crt --embed-certs >/dev/null
	KUBECONFIG=$PWD/$1.kubeconfig kubectl config set-credentials "$1" --token="$token" >/dev/null
	KUBECONFIG=$PWD/$1.kubeconfig kubectl config set-context sa --cluster=sandbox --user="$1" >/dev/null
	KUBECONFIG=$PWD/$1.kubeconfig kubectl config use-context sa >/dev/null
}

# A service account with no rights at all.
sa_kubeconfig gpudrv-nobody
KUBECONFIG=$PWD/gpudrv-nobody.kubeconfig t_run drv-audit.sh -m "$M"
t_rc 2 "drv-audit.sh when RBAC forbids listing nodes"
t_out "prints nothing on stdout, never OK"
t_grep "relays the API's refusal" err 'nodes is forbidden: User "system:serviceaccount:default:gpudrv-nobody" cannot list resource "nodes"'
KUBECONFIG=$PWD/gpudrv-nobody.kubeconfig t_run drv-tag.sh lab-node-1
t_rc 2 "drv-tag.sh when RBAC forbids reading the node"
t_out "prints no tag"
KUBECONFIG=$PWD/gpudrv-nobody.kubeconfig t_run drv-states.sh -m "$M"
t_rc 2 "drv-states.sh when RBAC forbids listing nodes"
t_out "prints nothing on stdout"
node1 >before
KUBECONFIG=$PWD/gpudrv-nobody.kubeconfig t_run drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh when RBAC forbids reading the node"
t_grep "says it cannot read the node" err "drv-upgrade.sh: cannot read node lab-node-1 from the cluster; kubectl said:"
node1 >after
t_cmp "the node is untouched" before after

# Nodes (and the operator's objects) may be read, but budgets and pods may
# not: step 2 cannot look.
kubectl create clusterrole gpudrv-node-reader --verb=get,list \
	--resource=nodes,clusterpolicies.nvidia.com,gpuclusters.nvidia.com,nvidiadrivers.nvidia.com >/dev/null 2>&1 || :
kubectl create clusterrolebinding gpudrv-node-reader --clusterrole=gpudrv-node-reader \
	--serviceaccount=default:gpudrv-reader >/dev/null 2>&1 || :
sa_kubeconfig gpudrv-reader
KUBECONFIG=$PWD/gpudrv-reader.kubeconfig t_run drv-audit.sh -m "$M"
t_rc 0 "drv-audit.sh needs nothing but reading nodes"
t_out "OK" OK
KUBECONFIG=$PWD/gpudrv-reader.kubeconfig t_run drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh when RBAC forbids listing budgets and pods"
t_grep "says it cannot look at the budgets" err "^drv-upgrade.sh: cannot GET /apis/policy/v1/poddisruptionbudgets; kubectl said:$"
node1 >after
t_cmp "the node is untouched: no drain without knowing the budgets" before after

# A kubeconfig that trusts another CA.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=other -keyout other.key -out other.crt -days 1 >/dev/null 2>&1
sed "s|certificate-authority-data: .*|certificate-authority-data: $(base64 -w0 other.crt)|" "$KUBECONFIG" >wrongca.kubeconfig
KUBECONFIG=$PWD/wrongca.kubeconfig t_run drv-audit.sh -m "$M"
t_rc 2 "drv-audit.sh with a kubeconfig trusting the wrong CA"
t_out "prints nothing on stdout"
t_grep "relays the certificate error" err "certificate signed by unknown authority"

# The API server stops answering in the middle of the drain.
cat >kubectl-stop <<'EOF2'
#!/bin/sh
# kubectl, but a drain first stops the API server (SIGSTOP: it hangs).
case " $* " in *" drain "*) kill -STOP "$APISERVER_PID" ;; esac
exec kubectl "$@"
EOF2
chmod +x kubectl-stop
APISERVER_PID=$apiserver_pid KUBECTL=$PWD/kubectl-stop GPUDRV_REQUEST_TIMEOUT=3s \
	t_run drv-upgrade.sh -L $T_DRAIN -m "$M" -t 30 lab-node-1 550.90.07
kill -CONT "$apiserver_pid"
t_rc 1 "drv-upgrade.sh whose drain meets a dead API server"
t_grep "says the uncordon failed and the node is still cordoned" err \
	"lab-node-1: driver unchanged; the node is CORDONED: uncordon failed; run: kubectl uncordon lab-node-1"
t_grep "says the API did not answer, with the last known state" err \
	"lab-node-1: now: unknown: the API did not answer; last known: cordoned, nvidia.com/gpu-driver-upgrade-state=drain-required"
until kubectl get --raw /readyz >/dev/null 2>&1; do sleep 1; done
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.major}'
t_val "and the node agrees once the API answers: cordoned, drain-required, driver 535" true/drain-required/535
t_run drv-upgrade.sh -L $T_DRAIN -m "$M" -t 30 lab-node-1 550.90.07
t_rc 0 "the command it named resumes the upgrade"
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "and ends with the node schedulable: it was before the first attempt" /upgrade-done

# A black hole: the API server accepts connections and never answers.  The
# read-only scripts give up at their deadline, saying so, with no discovery
# retries first and no kubectl left behind.
cat >kubectl-rec <<'EOF2'
#!/bin/sh
# kubectl, its pid and arguments recorded first.
echo "$$ $*" >>"$KUBECTL_REC"
exec kubectl "$@"
EOF2
chmod +x kubectl-rec
KUBECTL_REC=$PWD/kubectl.rec
export KUBECTL_REC
# none_left DESC: no kubectl recorded in kubectl.rec still runs.
none_left() {
	cut -d' ' -f1 kubectl.rec >kubectl.pids
	t_none_alive "$1" kubectl.pids
}
kill -STOP "$apiserver_pid"
for s in drv-tag.sh drv-audit.sh; do
	: >kubectl.rec
	case $s in drv-tag.sh) set -- lab-node-1 ;; *) set -- -m "$M" ;; esac
	t0=$(date +%s)
	GPUDRV_TIMEOUT=4 KUBECTL=$PWD/kubectl-rec t_run "$s" "$@"
	took=$(($(date +%s) - t0))
	t_rc 2 "$s against an API server that never answers"
	if [ "$took" -le 14 ]; then t_ok 0 "gives up by its deadline, GPUDRV_TIMEOUT=4 (${took}s)"; else
		t_ok 1 "gives up by its deadline, GPUDRV_TIMEOUT=4 (${took}s)"
	fi
	t_out "prints nothing on stdout"
	t_grep "says it gave up, and why" err "^$s: gave up after [0-9]*s, the run's deadline (GPUDRV_TIMEOUT=4): no answer to 'kubectl get --raw /api/v1/nodes"
	t_run cut -d' ' -f2- kubectl.rec
	t_grep "one call, bounded by the deadline, with no discovery" out "^--request-timeout=[1-4]s get --raw /api/v1/nodes"
	none_left "$s leaves no kubectl running"
done
kill -CONT "$apiserver_pid"
until kubectl get --raw /readyz >/dev/null 2>&1; do sleep 1; done

# SIGTERM in the middle of a drain that cannot finish: the same path as a
# failure, taken at once, and the drain stops with it (no kubectl drain
# left evicting pods from a node said to be back in service).
e2e_namespace gpu-drv
e2e_holder lab-node-1
: >kubectl.rec
KUBECTL=$PWD/kubectl-rec drv-upgrade.sh -L $T_DRAIN -m "$M" -t 60 lab-node-1 550.127.05 >up.out 2>up.err &
up=$!
e2e_until 120 grep -q 'kubectl drain --' up.err
sleep 2
# To the script alone: it must not wait for the 60 s drain to end.
t0=$(date +%s)
kill -TERM "$up"
rc=0
wait "$up" || rc=$?
took=$(($(date +%s) - t0))
cp up.err err
t_rc 2 "drv-upgrade.sh stopped by SIGTERM during the drain"
if [ "$took" -lt 20 ]; then t_ok 0 "at once, not at the drain's timeout (${took}s)"; else
	t_ok 1 "at once, not at the drain's timeout (${took}s)"
fi
t_grep "says it was interrupted" err "drv-upgrade.sh: lab-node-1: interrupted"
t_grep "puts the node back in service: the driver is unchanged" err \
	"lab-node-1: driver unchanged; the node is schedulable again (uncordoned); nvidia.com/gpu-driver-upgrade-state=upgrade-failed"
t_grep "and ends with the node's state from the API" err "lab-node-1: now: unschedulable= state=upgrade-failed"
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}/{.metadata.labels.nvidia\.com/cuda\.driver\.minor}'
t_val "and the node agrees" /upgrade-failed/90
t_run grep -c ' drain lab-node-1 ' kubectl.rec
t_out "the drain was started once" 1
grep ' drain lab-node-1 ' kubectl.rec | cut -d' ' -f1 >drain.pid
t_none_alive "and the kubectl drain is not left running" drain.pid
none_left "nor any other kubectl of the script's"
sleep 3
t_run kubectl get node lab-node-1 -o 'jsonpath={.spec.unschedulable}/{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}'
t_val "and the node stays as the message said: schedulable, upgrade-failed" /upgrade-failed
e2e_holder_release

kubectl delete clusterrolebinding gpudrv-node-reader >/dev/null 2>&1 || :
kubectl delete clusterrole gpudrv-node-reader >/dev/null 2>&1 || :
kubectl delete serviceaccount gpudrv-nobody gpudrv-reader >/dev/null 2>&1 || :
e2e_reset_lab >/dev/null 2>&1 || :
t_done
