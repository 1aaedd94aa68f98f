# t/gen-slim.awk: large kubectl-shaped lists with little in each item, for
# the scale tests (the benchmarks' bench/gen-nodes.c makes full-size items).
#   awk -v what=nodes -v n=5000 [-v yaml=1] -f t/gen-slim.awk
#       a List of n GPU Nodes, every 7th on RHEL 9.4, every 5th cordoned
#   awk -v what=pdb -v n=5000 -v nodes=50 [-v yaml=1] -f t/gen-slim.awk
#       a List of n Pods over nodes slim-node-NNNN (app-K, K = i % 100), then
#       one budget per app (maxUnavailable 1; app-0 allows no disruption)
# Keys in kubectl's order (sorted), JSON 4-space indented as kubectl -o json
# prints it, or kubectl's YAML.
function node(i,   os, ver, cord) {
	os = i % 7 == 0 ? "rhel" : "ubuntu"
	ver = i % 7 == 0 ? "9.4" : "22.04"
	cord = i % 5 == 0
	if (yaml) {
		printf "- apiVersion: v1\n  kind: Node\n  metadata:\n    labels:\n"
		printf "      feature.node.kubernetes.io/kernel-version.full: 5.15.0-%d-generic\n", 100 + i % 20
		printf "      feature.node.kubernetes.io/system-os_release.ID: %s\n", os
		printf "      feature.node.kubernetes.io/system-os_release.VERSION_ID: \"%s\"\n", ver
		printf "      nvidia.com/cuda.driver.major: \"%d\"\n", i % 2 ? 550 : 535
		printf "      nvidia.com/gpu.present: \"true\"\n"
		printf "    name: slim-node-%04d\n  spec:\n", i
		printf cord ? "    unschedulable: true\n" : "    podCIDR: 10.%d.%d.0/24\n", i / 256, i % 256
		return
	}
	printf "%s        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Node\",\n", i ? ",\n" : ""
	printf "            \"metadata\": {\n                \"labels\": {\n"
	printf "                    \"feature.node.kubernetes.io/kernel-version.full\": \"5.15.0-%d-generic\",\n", 100 + i % 20
	printf "                    \"feature.node.kubernetes.io/system-os_release.ID\": \"%s\",\n", os
	printf "                    \"feature.node.kubernetes.io/system-os_release.VERSION_ID\": \"%s\",\n", ver
	printf "                    \"nvidia.com/cuda.driver.major\": \"%d\",\n", i % 2 ? 550 : 535
	printf "                    \"nvidia.com/gpu.present\": \"true\"\n                },\n"
	printf "                \"name\": \"slim-node-%04d\"\n            },\n            \"spec\": {\n", i
	if (cord)
		printf "                \"unschedulable\": true\n"
	else
		printf "                \"podCIDR\": \"10.%d.%d.0/24\"\n", i / 256, i % 256
	printf "            }\n        }"
}
function pod(i,   app) {
	app = i % 100
	if (yaml) {
		printf "- apiVersion: v1\n  kind: Pod\n  metadata:\n    labels:\n      app: app-%d\n", app
		printf "    name: pod-%06d\n    namespace: ns-%d\n    ownerReferences:\n", i, app % 10
		printf "    - apiVersion: apps/v1\n      controller: true\n      kind: ReplicaSet\n      name: rs-%d\n", app
		printf "  spec:\n    containers:\n    - image: registry.invalid/cuda:12\n      name: c\n"
		printf "    nodeName: slim-node-%04d\n  status:\n    conditions:\n    - status: \"True\"\n      type: Ready\n", i % nodes
		printf "    phase: Running\n"
		return
	}
	printf "%s        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Pod\",\n", i ? ",\n" : ""
	printf "            \"metadata\": {\n                \"labels\": {\n                    \"app\": \"app-%d\"\n                },\n", app
	printf "                \"name\": \"pod-%06d\",\n                \"namespace\": \"ns-%d\",\n", i, app % 10
	printf "                \"ownerReferences\": [\n                    {\n                        \"apiVersion\": \"apps/v1\",\n"
	printf "                        \"controller\": true,\n                        \"kind\": \"ReplicaSet\",\n"
	printf "                        \"name\": \"rs-%d\"\n                    }\n                ]\n            },\n", app
	printf "            \"spec\": {\n                \"containers\": [\n                    {\n"
	printf "                        \"image\": \"registry.invalid/cuda:12\",\n                        \"name\": \"c\"\n"
	printf "                    }\n                ],\n                \"nodeName\": \"slim-node-%04d\"\n            },\n", i % nodes
	printf "            \"status\": {\n                \"conditions\": [\n                    {\n"
	printf "                        \"status\": \"True\",\n                        \"type\": \"Ready\"\n"
	printf "                    }\n                ],\n                \"phase\": \"Running\"\n            }\n        }"
}
# One budget per app, in the app's namespace; app-0's allows no disruption.
function pdb(a,   per, allowed) {
	per = int(n / 100) + (a < n % 100)
	allowed = a == 0 ? 0 : 1
	if (yaml) {
		printf "- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata:\n    generation: 1\n"
		printf "    name: pdb-%d\n    namespace: ns-%d\n  spec:\n    maxUnavailable: %d\n", a, a % 10, allowed
		printf "    selector:\n      matchLabels:\n        app: app-%d\n  status:\n", a
		printf "    currentHealthy: %d\n    desiredHealthy: %d\n    disruptionsAllowed: %d\n", per, per - allowed, allowed
		printf "    expectedPods: %d\n    observedGeneration: 1\n", per
		return
	}
	printf ",\n        {\n            \"apiVersion\": \"policy/v1\",\n            \"kind\": \"PodDisruptionBudget\",\n"
	printf "            \"metadata\": {\n                \"generation\": 1,\n                \"name\": \"pdb-%d\",\n", a
	printf "                \"namespace\": \"ns-%d\"\n            },\n            \"spec\": {\n", a % 10
	printf "                \"maxUnavailable\": %d,\n                \"selector\": {\n", allowed
	printf "                    \"matchLabels\": {\n                        \"app\": \"app-%d\"\n", a
	printf "                    }\n                }\n            },\n            \"status\": {\n"
	printf "                \"currentHealthy\": %d,\n                \"desiredHealthy\": %d,\n", per, per - allowed
	printf "                \"disruptionsAllowed\": %d,\n                \"expectedPods\": %d,\n", allowed, per
	printf "                \"observedGeneration\": 1\n            }\n        }"
}
BEGIN {
	if (nodes == "")
		nodes = 50
	printf yaml ? "apiVersion: v1\nitems:\n" : "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n"
	for (i = 0; i < n; i++)
		if (what == "nodes")
			node(i)
		else
			pod(i)
	if (what == "pdb")
		for (a = 0; a < 100; a++)
			pdb(a)
	printf yaml ? "kind: List\nmetadata:\n  resourceVersion: \"\"\n" : \
	    "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
}
