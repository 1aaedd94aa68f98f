# End-to-end test helper, sourced by TAP test scripts (POSIX sh) in t/.
#   e2e_setup      sandbox built and up with the lab nodes (started once,
#                  then reused by later scripts), KUBECONFIG exported, our
#                  kubectl first in PATH. GPUDRV_E2E=0 skips the script
#                  (TAP SKIP); a sandbox that cannot start is a Bail out.
#   e2e_reset_lab  back to the lab's base state: no namespace gpu-drv, no
#                  extra fake nodes, lab-node-0..2 uncordoned and without
#                  nvidia.com/* and feature.node.kubernetes.io/* labels.
# shellcheck shell=sh

# The repo root: above the test script, else above the working directory.
for e2e_root in "${ROOT:-}" "$(cd "$(dirname "$0")" 2>/dev/null && pwd)" "$(pwd)"; do
	case $e2e_root in /*) ;; *) continue ;; esac
	while [ ! -f "$e2e_root/sandbox/up.sh" ] && [ "$e2e_root" != / ]; do
		e2e_root=$(dirname "$e2e_root")
	done
	[ ! -f "$e2e_root/sandbox/up.sh" ] || break
done
e2e_dir=${GPUDRV_SANDBOX_DIR:-$e2e_root/.sandbox}
case $e2e_dir in /*) ;; *) e2e_dir=$(pwd)/$e2e_dir ;; esac

e2e_bail() {
	echo "Bail out! $*"
	exit 1
}

e2e_setup() {
	if [ "${GPUDRV_E2E:-1}" = 0 ]; then
		echo "1..0 # SKIP end-to-end tests disabled (GPUDRV_E2E=0)"
		exit 0
	fi
	[ -f "$e2e_root/sandbox/up.sh" ] || e2e_bail "sandbox/up.sh not found above $0 or $(pwd)"
	mkdir -p "$e2e_dir/logs" || e2e_bail "cannot create $e2e_dir"
	# One starter at a time (mkdir is atomic); a dead holder's lock is stale.
	e2e_lock=$e2e_dir/e2e.lock
	e2e_n=0
	until mkdir "$e2e_lock" 2>/dev/null; do
		e2e_holder=$(cat "$e2e_lock/pid" 2>/dev/null || :)
		if [ -n "$e2e_holder" ] && ! kill -0 "$e2e_holder" 2>/dev/null; then
			rm -rf "$e2e_lock"
			continue
		fi
		e2e_n=$((e2e_n + 1))
		[ "$e2e_n" -lt 1800 ] || e2e_bail "sandbox lock $e2e_lock held for 30 min (pid $e2e_holder)"
		sleep 1
	done
	echo $$ >"$e2e_lock/pid"
	e2e_log=$e2e_dir/logs/e2e-setup.log
	echo "# sandbox: build (if needed) and up --lab; log in $e2e_log"
	if sh "$e2e_root/sandbox/up.sh" --lab >"$e2e_log" 2>&1; then
		rm -rf "$e2e_lock"
	else
		rm -rf "$e2e_lock"
		tail -n 30 "$e2e_log" | sed 's/^/# /'
		e2e_bail "sandbox could not be started (see $e2e_log)"
	fi
	KUBECONFIG=$e2e_dir/kubeconfig
	PATH=$e2e_dir/bin:$PATH
	# Nearly all of an end-to-end test's CPU is kubectl's start-up (0.1
	# CPU-s a call, the product's and the test's).  With GOGC=400 a call
	# ends before Go's first collection (5 by default), and GOMAXPROCS=1
	# starts no worker per core: 15-20% less CPU a call, the same answers.
	# (sandbox/up.sh starts the control plane with Go's defaults.)
	GOGC=400 GOMAXPROCS=1
	export KUBECONFIG PATH GOGC GOMAXPROCS
	[ "$(command -v kubectl)" = "$e2e_dir/bin/kubectl" ] ||
		e2e_bail "kubectl resolves to $(command -v kubectl), not $e2e_dir/bin/kubectl"
}

e2e_reset_lab() {
	# A test stopped while a holder held (e2e_holder) left its finalizer,
	# which the namespace's deletion would wait for: it goes first.
	for e2e_p in $(kubectl -n gpu-drv get pods -l app=holder -o name 2>/dev/null); do
		kubectl -n gpu-drv patch "$e2e_p" --type=json \
			-p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || :
	done
	kubectl delete namespace gpu-drv --ignore-not-found --wait=true --timeout=90s >/dev/null ||
		{ echo "# e2e_reset_lab: namespace gpu-drv not gone after 90s" && return 1; }
	# One list of the nodes: name, kwok's annotation, Ready, unschedulable,
	# then the keys of their labels; then a call for each kind of change
	# that is due, and none when none is.
	# shellcheck disable=SC2016 # a go-template, not shell
	e2e_nodes=$(kubectl get nodes -o go-template='{{range .items}}{{.metadata.name}} {{with .metadata.annotations}}{{with index . "kwok.x-k8s.io/node"}}{{.}}{{end}}{{end}}- {{range .status.conditions}}{{if eq .type "Ready"}}{{.status}}{{end}}{{end}}- {{if .spec.unschedulable}}true{{else}}false{{end}}{{range $k, $v := .metadata.labels}} {{$k}}{{end}}{{"\n"}}{{end}}') ||
		return 1
	e2e_fake=$(echo "$e2e_nodes" | awk '$1 !~ /^lab-node-[012]$/ && $2 == "fake-" { print $1 }')
	# shellcheck disable=SC2086 # one argument per node
	[ -z "$e2e_fake" ] || kubectl delete node $e2e_fake --wait=true --timeout=60s >/dev/null || return 1
	e2e_made=0 e2e_cordoned=
	for n in lab-node-0 lab-node-1 lab-node-2; do
		e2e_line=$(echo "$e2e_nodes" | awk -v n="$n" '$1 == n')
		if [ -z "$e2e_line" ]; then
			sed "s/@NAME@/$n/g" "$e2e_root/sandbox/node.yaml.in" | kubectl apply -f - >/dev/null || return 1
			e2e_made=1
			continue
		fi
		[ "$(echo "$e2e_line" | cut -d' ' -f3)" = True- ] || e2e_made=1
		[ "$(echo "$e2e_line" | cut -d' ' -f4)" != true ] || e2e_cordoned="$e2e_cordoned $n"
		e2e_drop=$(echo "$e2e_line" | tr ' ' '\n' | grep -E '^(nvidia\.com|feature\.node\.kubernetes\.io)/' | sed 's/$/-/')
		# shellcheck disable=SC2086 # one argument per label key
		[ -z "$e2e_drop" ] || kubectl label node "$n" $e2e_drop >/dev/null || return 1
	done
	# shellcheck disable=SC2086 # one argument per node
	[ -z "$e2e_cordoned" ] || kubectl uncordon $e2e_cordoned >/dev/null || return 1
	[ "$e2e_made" = 0 ] ||
		kubectl wait --for=condition=Ready node/lab-node-0 node/lab-node-1 node/lab-node-2 --timeout=90s >/dev/null
}

# e2e_gpu_nodes NAME...: kwok nodes of those names, GPU nodes on driver
# 535.183.06, Ubuntu 22.04, kernel 5.15.0-107-generic (lab-node-1's), Ready;
# 1 if they are not Ready in 90 s.
e2e_gpu_nodes() {
	for e2e_n; do
		sed "s/@NAME@/$e2e_n/g" "$e2e_root/sandbox/node.yaml.in"
		echo ---
	done | kubectl apply -f - >/dev/null || return 1
	kubectl label node "$@" --overwrite nvidia.com/gpu.present=true nvidia.com/cuda.driver.major=535 \
		nvidia.com/cuda.driver.minor=183 nvidia.com/cuda.driver.rev=06 \
		feature.node.kubernetes.io/kernel-version.full=5.15.0-107-generic \
		feature.node.kubernetes.io/system-os_release.ID=ubuntu \
		feature.node.kubernetes.io/system-os_release.VERSION_ID=22.04 >/dev/null || return 1
	for e2e_n; do
		set -- "$@" "node/$e2e_n"
		shift
	done
	kubectl wait --for=condition=Ready "$@" --timeout=90s >/dev/null
}

# e2e_until SECONDS COMMAND...: polls a condition; 0 when it held in time.
e2e_until() {
	e2e_end=$(($(date +%s) + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$e2e_end" ] || return 1
		sleep 1
	done
}

# e2e_facts: the driver, kernel and OS labels of the lab's step 1 on lab-node-0..2.
e2e_facts() {
	e2e_label() {
		kubectl label node "$1" --overwrite nvidia.com/gpu.present=true \
			nvidia.com/cuda.driver.major="$2" nvidia.com/cuda.driver.minor="$3" \
			nvidia.com/cuda.driver.rev="$4" feature.node.kubernetes.io/kernel-version.full="$5" \
			feature.node.kubernetes.io/system-os_release.ID="$6" \
			feature.node.kubernetes.io/system-os_release.VERSION_ID="$7" >/dev/null
	}
	e2e_label lab-node-0 550 90 07 5.15.0-119-generic ubuntu 22.04 &&
		e2e_label lab-node-1 535 183 06 5.15.0-107-generic ubuntu 22.04 &&
		e2e_label lab-node-2 550 90 07 6.8.0-45-generic ubuntu 24.04
}

# e2e_no_operator_objects: none of the GPU Operator's ClusterPolicies,
# GPUClusters or NVIDIADrivers left (they are cluster-scoped: a test's stay).
e2e_no_operator_objects() {
	kubectl delete clusterpolicies.nvidia.com,gpuclusters.nvidia.com,nvidiadrivers.nvidia.com --all >/dev/null 2>&1
}

# e2e_one_a_node NAME NODE...: the YAML of a Deployment NAME with one
# replica on each NODE (no two on one: anti-affinity) and its budget,
# maxUnavailable 1: the nodes' drains take turns.
e2e_one_a_node() {
	e2e_n=$1
	shift
	e2e_v=$(echo "$*" | sed 's/ /, /g')
	cat <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: $e2e_n}
spec:
  replicas: $#
  selector: {matchLabels: {app: $e2e_n}}
  template:
    metadata: {labels: {app: $e2e_n}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: kubernetes.io/hostname, operator: In, values: [$e2e_v]}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: $e2e_n}}
      containers: [{name: c, image: nginx}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $e2e_n}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: $e2e_n}}
EOF2
}

# e2e_namespace NS: creates NS and waits for its default service account.
e2e_namespace() {
	kubectl create namespace "$1" >/dev/null &&
		e2e_until 60 kubectl -n "$1" get serviceaccount default
}

# e2e_gpudrv_ns: the namespace gpudrv, where drv-rollout.sh keeps its lease,
# there and Active (one being deleted, as t/0960 leaves it, waited for).
e2e_gpudrv_ns() {
	# shellcheck disable=SC2016 # expanded by the inner sh
	e2e_until 120 sh -c '[ "$(kubectl get namespace gpudrv -o jsonpath={.status.phase} 2>/dev/null)" != Terminating ]' ||
		return 1
	kubectl get namespace gpudrv >/dev/null 2>&1 || e2e_namespace gpudrv
}

# e2e_logged_kubectl: ./logged-kubectl, the sandbox's kubectl that first
# writes each call's arguments, a line, to ./kubectl.calls (emptied now):
# KUBECTL=$PWD/logged-kubectl, for a test that counts what a script asks.
e2e_logged_kubectl() {
	cat >logged-kubectl <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >>"${0%/*}/kubectl.calls"
exec kubectl "$@"
STUB
	chmod +x logged-kubectl
	: >kubectl.calls
}

# e2e_holder NODE: in gpu-drv, a Deployment's pod on NODE that never finishes
# terminating (a finalizer): a drain of NODE waits for it until its timeout.
# e2e_holder_release lets it go.
e2e_holder() {
	kubectl -n gpu-drv apply -f - >/dev/null <<EOF2 || return 1
apiVersion: apps/v1
kind: Deployment
metadata: {name: holder}
spec:
  replicas: 1
  selector: {matchLabels: {app: holder}}
  template:
    metadata:
      labels: {app: holder}
      finalizers: [gpudrv.test/hold]
    spec:
      nodeSelector: {kubernetes.io/hostname: $1}
      containers: [{name: c, image: busybox}]
EOF2
	# shellcheck disable=SC2016 # expanded by the inner sh
	e2e_until 60 sh -c '[ "$(kubectl -n gpu-drv get pods -l app=holder --field-selector=status.phase=Running -o name | wc -l)" -eq 1 ]'
}
e2e_holder_release() {
	# (the Deployment first, so that no replacement comes after the look;
	# then every pod of it let go, as long as one is left: CI of 29d82d3
	# saw a replacement, made after the look, keep its finalizer)
	kubectl -n gpu-drv delete deployment holder --ignore-not-found --wait=false >/dev/null || return 1
	e2e_until 60 e2e_holder_gone
}
# e2e_holder_gone: the holder's pods let go (their finalizer removed);
# status 0 once none is left.
# shellcheck disable=SC2317 # called by e2e_until
e2e_holder_gone() {
	e2e_l=$(kubectl -n gpu-drv get pods -l app=holder -o name) || return 1
	[ -n "$e2e_l" ] || return 0
	for e2e_p in $e2e_l; do
		kubectl -n gpu-drv patch "$e2e_p" --type=json \
			-p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || :
	done
	return 1
}

# e2e_states FILE: the upgrade states drv-upgrade.sh -L writes on a node,
# in the GPU Operator's order, one a line: the cordon's write, the lab's
# driver with validation-required, and the uncordon's (drv-upgrade.sh(1)).
e2e_states() {
	printf '%s\n' drain-required validation-required upgrade-done >"$1"
}

# The sandbox registry's address (sandbox/lib.sh: the port block's base + 6).
# shellcheck disable=SC2034 # used by the test scripts
e2e_registry=127.0.0.1:$((${GPUDRV_SANDBOX_PORT_BASE:-26440} + 6))
