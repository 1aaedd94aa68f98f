/*
 * gen -s: large kubectl-shaped lists with little in each item, for the scale
 * tests (the other modes make full-size items).
 *   nodes: N GPU Nodes slim-node-NNNN, every 7th on RHEL 9.4, every 5th
 *          cordoned.
 *   pdb:   N Pods over NODES nodes slim-node-NNNN (app-K, K = i % 100), then
 *          one budget per app (maxUnavailable 1; app-0 allows no disruption).
 * As kubectl -o json (4-space indent) or -o yaml prints them.
 */
#include <stdarg.h>

#include "gen.h"

/* printf into a buffer of its own, for the next kv() */
static const char *
f(const char *fmt, ...)
{
	static char b[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	return b;
}

static void
node(long i)
{
	int el = i % 7 == 0;

	open_(OBJ);
	kv("apiVersion", "v1");
	kv("kind", "Node");
	ko("metadata", OBJ);
	ko("labels", OBJ);
	kv("feature.node.kubernetes.io/kernel-version.full", f("5.15.0-%ld-generic", 100 + i % 20));
	kv("feature.node.kubernetes.io/system-os_release.ID", el ? "rhel" : "ubuntu");
	kv("feature.node.kubernetes.io/system-os_release.VERSION_ID", el ? "9.4" : "22.04");
	kv("nvidia.com/cuda.driver.major", i % 2 ? "550" : "535");
	kv("nvidia.com/gpu.present", "true");
	close_();
	kv("name", f("slim-node-%04ld", i));
	close_();
	ko("spec", OBJ);
	if (i % 5 == 0)
		kb("unschedulable", 1);
	else
		kv("podCIDR", f("10.%ld.%ld.0/24", i / 256, i % 256));
	closen(2);
}

static void
pod(long i, long nnodes)
{
	long app = i % 100;

	open_(OBJ);
	kv("apiVersion", "v1");
	kv("kind", "Pod");
	ko("metadata", OBJ);
	ko("labels", OBJ);
	kv("app", f("app-%ld", app));
	close_();
	kv("name", f("pod-%06ld", i));
	kv("namespace", f("ns-%ld", app % 10));
	ko("ownerReferences", ARR);
	open_(OBJ);
	kv("apiVersion", "apps/v1");
	kb("controller", 1);
	kv("kind", "ReplicaSet");
	kv("name", f("rs-%ld", app));
	closen(3);
	ko("spec", OBJ);
	ko("containers", ARR);
	open_(OBJ);
	kv("image", "registry.invalid/cuda:12");
	kv("name", "c");
	closen(2);
	kv("nodeName", f("slim-node-%04ld", i % nnodes));
	close_();
	ko("status", OBJ);
	ko("conditions", ARR);
	open_(OBJ);
	kv("status", "True");
	kv("type", "Ready");
	closen(2);
	kv("phase", "Running");
	closen(2);
}

/* One budget per app, in the app's namespace; app-0's allows no disruption. */
static void
pdb(long a, long n)
{
	long per = n / 100 + (a < n % 100), allowed = a != 0;

	open_(OBJ);
	kv("apiVersion", "policy/v1");
	kv("kind", "PodDisruptionBudget");
	ko("metadata", OBJ);
	kn("generation", 1);
	kv("name", f("pdb-%ld", a));
	kv("namespace", f("ns-%ld", a % 10));
	close_();
	ko("spec", OBJ);
	kn("maxUnavailable", allowed);
	ko("selector", OBJ);
	ko("matchLabels", OBJ);
	kv("app", f("app-%ld", a));
	closen(3);
	ko("status", OBJ);
	kn("currentHealthy", per);
	kn("desiredHealthy", per - allowed);
	kn("disruptionsAllowed", allowed);
	kn("expectedPods", per);
	kn("observedGeneration", 1);
	closen(2);
}

void
slim(const char *what, long n, long nnodes)
{
	long i;

	dquote = 1; /* kubectl's YAML: "22.04" */
	list_open("v1", "List");
	for (i = 0; i < n; i++)
		if (strcmp(what, "nodes") == 0)
			node(i);
		else
			pod(i, nnodes);
	for (i = 0; strcmp(what, "pdb") == 0 && i < 100; i++)
		pdb(i, n);
	list_close();
}
