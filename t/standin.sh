# t/standin.sh: sourced by t/lib.sh, the helpers that set up t/kubectl,
# the tests' one stand-in for kubectl and the API server (it says how it
# answers): an empty one (t_standin, t_serve), and the stand-ins of a
# cluster built on it.
# shellcheck shell=sh disable=SC2154 # T, DATA: t/lib.sh's

# t_standin: an empty ./api, $STANDIN, for t/kubectl, the tests' kubectl
# (it says how it answers); each call a line of ./kubectl.log.
t_standin() {
	rm -rf "$PWD/api"
	mkdir "$PWD/api"
	STANDIN=$PWD/api
	STANDIN_LOG=$PWD/kubectl.log
	KUBECTL=$T/kubectl
	export STANDIN STANDIN_LOG KUBECTL
}

# t_serve KEY [FILE]: the stand-in answers FILE (default: standard input)
# for KEY (GET/api/v1/nodes, PATCH/api/v1/nodes/NAME, _any, ...).
t_serve() {
	mkdir -p "$(dirname "$STANDIN/$1")"
	cat "${2:--}" >"$STANDIN/$1"
}

# t_server FILE: the stand-in with FILE, a stateful server, answering
# every request ($STANDIN/_any), run through ./kubectl (for the tests that
# wrap it), which $KUBECTL names.
t_server() {
	t_standin
	cp "$1" "$STANDIN/_any"
	chmod +x "$STANDIN/_any"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/kubectl" >kubectl
	chmod +x kubectl
	KUBECTL=$PWD/kubectl
}

# t_fake_kubectl: the stand-in answering $FAKE_OUT for any request.
t_fake_kubectl() {
	t_standin
	echo FAKE_OUT | t_serve _any.from
}

# t_fake_ops: ./ops, the stand-in over ./ops.d, answering by path: the GPU
# nodes ($FAKE_OUT), the ClusterPolicies ($FAKE_CP), the GPUClusters
# ($FAKE_GC) and the NVIDIADrivers ($FAKE_NVD), each unset or empty for "CRD
# not installed" (NotFound), "forbidden" as RBAC refuses.  It logs its
# arguments to ./ops.log.
t_fake_ops() {
	rm -rf ops.d
	mkdir -p ops.d/GET/api/v1/nodes ops.d/GET/apis/nvidia.com/v1 ops.d/GET/apis/nvidia.com/v1alpha1
	echo FAKE_OUT >ops.d/GET/api/v1/nodes.from
	echo FAKE_OUT >ops.d/GET/api/v1/nodes/_any.from
	echo FAKE_CP >ops.d/GET/apis/nvidia.com/v1/clusterpolicies.from
	echo FAKE_GC >ops.d/GET/apis/nvidia.com/v1alpha1/gpuclusters.from
	echo FAKE_NVD >ops.d/GET/apis/nvidia.com/v1alpha1/nvidiadrivers.from
	printf '#!/bin/sh\nSTANDIN=%s/ops.d STANDIN_LOG=%s/ops.log exec "%s" "$@"\n' "$PWD" "$PWD" "$T/kubectl" >ops
	chmod +x ops
}

# t_fake_pods: the stand-in for drv-states.sh, answering from files in the
# test's directory: the GPU nodes (nodes.json), the budgets (budgets.json;
# default the lab's t/data/pdb-lab.json), every pod (pods.json; default an
# empty PodList), and the driver and validator pods (driver.json,
# validator.json, t_gpu_pods lists; default none), the GPU Operator's
# objects (clusterpolicies.json, gpuclusters.json, nvidiadrivers.json;
# absent: the CRD is not installed), the driver DaemonSets and their
# ControllerRevisions (daemonsets.json, revisions.json; default none).
t_fake_pods() {
	t_standin
	[ -e budgets.json ] || cp "$DATA/pdb-lab.json" budgets.json
	for t_f in pods driver validator; do
		[ -e $t_f.json ] || printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' >$t_f.json
	done
	mkdir -p "$STANDIN/GET/api/v1" "$STANDIN/GET/apis/policy/v1" "$STANDIN/GET/apis/nvidia.com/v1" "$STANDIN/GET/apis/nvidia.com/v1alpha1"
	ln -s "$PWD/nodes.json" "$STANDIN/GET/api/v1/nodes"
	ln -s "$PWD/budgets.json" "$STANDIN/GET/apis/policy/v1/poddisruptionbudgets"
	ln -s "$PWD/pods.json" "$STANDIN/GET/api/v1/pods"
	ln -s "$PWD/driver.json" "$STANDIN/GET/api/v1/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver"
	ln -s "$PWD/validator.json" "$STANDIN/GET/api/v1/pods?labelSelector=app%3Dnvidia-operator-validator"
	ln -s "$PWD/clusterpolicies.json" "$STANDIN/GET/apis/nvidia.com/v1/clusterpolicies"
	ln -s "$PWD/gpuclusters.json" "$STANDIN/GET/apis/nvidia.com/v1alpha1/gpuclusters"
	ln -s "$PWD/nvidiadrivers.json" "$STANDIN/GET/apis/nvidia.com/v1alpha1/nvidiadrivers"
	# -R: the driver DaemonSets and their revisions (default none).
	mkdir -p "$STANDIN/GET/apis/apps/v1"
	[ -e daemonsets.json ] || printf '{"kind":"DaemonSetList","apiVersion":"apps/v1","metadata":{},"items":[]}\n' >daemonsets.json
	[ -e revisions.json ] || printf '{"kind":"ControllerRevisionList","apiVersion":"apps/v1","metadata":{},"items":[]}\n' >revisions.json
	ln -s "$PWD/daemonsets.json" "$STANDIN/GET/apis/apps/v1/daemonsets?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver"
	ln -s "$PWD/revisions.json" "$STANDIN/GET/apis/apps/v1/controllerrevisions?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver"
}

# t_fake_cluster: the stand-in (./kubectl runs it) with t/fake-cluster.sh
# behind it, the API server of one node, lab-node-1 (t/data/node-1.json),
# for the unit tests of drv-upgrade.sh and of what the scripts leave
# behind.  The node's state is in ./fake: state (the upgrade-state label),
# unsched (true when cordoned), driver (branch.minor.rev), initial (the
# initial-state annotation), ours (gpudrv/cordoned), skip (the skip
# label); GET of the node answers its JSON with those values.  Each call
# appends its arguments to ./kubectl.log and its pid to ./kubectl.pids.
# The first call matching the pattern $FAKE_HANG (the $FAKE_HANG_NTH-th
# with that set) hangs instead (and every later call with FAKE_HANG_ALL=1),
# with a child of its own as a credential plugin that waits would have,
# both pids in kubectl.pids; ./hung names the call once it hangs.
# FAKE_PDB: the budgets and pods listed (default: room for the drain); the
# GPU Operator's objects are ./fake/clusterpolicies.json, gpuclusters.json
# and nvidiadrivers.json (absent: the CRD is not installed); the Events
# posted go to ./fake/events ("type reason message"); FAKE_EVICT=429 or
# 500: evictions refused so; FAKE_NO_DRIVER=1: the driver labels are not
# taken up; FAKE_NEW_DRIVER: the driver the node reports once its driver
# pod is deleted, from the next look (a GET, a watch's event) on, or
# FAKE_DRIVER_DELAY seconds after the deletion; FAKE_WATCH: end (each watch
# of the node ends after its first event), fail (the first fails) or
# forbidden (RBAC refuses them); FAKE_SKIP: the node's skip label, over
# ./fake/skip; FAKE_JOBS: the answers to -j's query, files of
# t/data/upgrade, one a call; FAKE_PDB_AFTER: the budgets and pods from
# the second look on; FAKE_DENY: a state whose write a webhook denies.
t_fake_cluster() {
	mkdir -p fake
	: >fake/state
	: >fake/unsched
	: >fake/initial
	: >fake/skip
	: >fake/ours
	: >fake/events
	echo 535.183.06 >fake/driver
	rm -f hung hang.count kubectl.log kubectl.pids fake/restarted fake/restarted.at fake/watch.failed
	t_server "$T/fake-cluster.sh"
	STANDIN_PIDS=$PWD/kubectl.pids
	FAKE_DIR=$PWD
	FAKE_NODE=$DATA/node-1.json
	FAKE_NODES=$DATA/lab-nodes.json
	FAKE_PDB=$DATA/pdb-lab-ok.json
	FAKE_DATA=$DATA
	export KUBECTL FAKE_DIR FAKE_NODE FAKE_NODES FAKE_PDB FAKE_DATA STANDIN_PIDS
}

# t_fake_state: the fake node's state, as drv-upgrade.sh's last line says it:
# unschedulable=<unsched> state=<state>.
t_fake_state() {
	echo "unschedulable=$(cat fake/unsched) state=$(cat fake/state)"
}

# t_fake_fleet: the stand-in (./kubectl runs it) for drv-rollout.sh, with
# t/fake-fleet.sh behind it, answering from files here: facts (the GPU
# nodes, one a line, tab-separated: name, driver, upgrade state, skip
# label, unschedulable, Ready status, kernel: 5.15.0-107-generic if empty,
# none if "-"), of which it makes the NodeList of GET /api/v1/nodes (those
# named in ./sel for a selector beyond gpu.present); pdbs.json and
# pods.json (empty lists when absent; pods.json an item a line, for the GET
# of one node's pods); blockpods.json, the pods any label selector picks
# (drv-rollout.sh -B; failing while blockpods.fail exists); the GPU Operator's objects, clusterpolicies.json,
# gpuclusters.json and nvidiadrivers.json (absent: the CRD is not
# installed); while ./down exists it fails as with no API server; the
# rollout's Lease is ./lease (t/fake-lease.sh).  Logs to kubectl.log.
t_fake_fleet() {
	t_server "$T/fake-fleet.sh"
	FLEET_DIR=$PWD
	FAKE_LEASE=$T/fake-lease.sh
	export KUBECTL FLEET_DIR FAKE_LEASE
}

# t_rollout_tree: ./x, drv-rollout.sh installed as make install lays it
# out: x/bin with it and the filters it runs (linked from $BIN's, or the
# valgrind wrappers on PATH), its library in x/lib/gpudrv; the test puts
# its drv-upgrade.sh stand-in in x/bin.  $R names the script.
t_rollout_tree() {
	mkdir -p x/bin x/lib/gpudrv
	cp "$BIN/drv-rollout.sh" x/bin/
	cp "$BIN"/../lib/gpudrv/*.sh x/lib/gpudrv/
	for t_t in labels2tag matrix-grep pdb-check rollout-plan upgrade-policy time-window alert-gate; do
		ln -s "$(command -v "$t_t")" "x/bin/$t_t"
	done
	R=$PWD/x/bin/drv-rollout.sh
}

# t_fleet NODE:VERSION:STATE:SKIP:CORDONED:READY[:KERNEL]...: those GPU
# nodes (Ubuntu 22.04, kernel 5.15.0-107-generic unless KERNEL, "-" for no
# kernel label), into facts, for t_fake_fleet.
t_fleet() {
	: >facts
	for t_spec; do
		printf '%s\n' "$t_spec" | tr : '\t' >>facts
	done
}
