/*
 * PodDisruptionBudgets and Pods, read as the eviction API and kubectl drain
 * see them: a budget's spec and status checked as the API server validates
 * them, a pod as drain's filters (kubectl/pkg/drain/filters.go) sort it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

/* What is read of an item, all the streaming way keeps of one. */
static const struct kspec ann_keys[] = { { "kubernetes.io/config.mirror", NULL }, { NULL, NULL } };
static const struct kspec meta_keys[] = { { "name", NULL }, { "namespace", NULL },
	{ "labels", NULL }, { "annotations", ann_keys }, { "ownerReferences", NULL },
	{ "deletionTimestamp", NULL }, { "generation", NULL }, { NULL, NULL } };
static const struct kspec spec_keys[] = { { "nodeName", NULL }, { "selector", NULL },
	{ "minAvailable", NULL }, { "maxUnavailable", NULL },
	{ "unhealthyPodEvictionPolicy", NULL }, { NULL, NULL } };
static const struct kspec status_keys[] = { { "phase", NULL }, { "conditions", NULL },
	{ "observedGeneration", NULL }, { "currentHealthy", NULL }, { "desiredHealthy", NULL },
	{ "disruptionsAllowed", NULL }, { "expectedPods", NULL }, { "disruptedPods", KS_COUNT },
	{ NULL, NULL } };
static const struct kspec item_keys[] = { { "kind", NULL }, { "metadata", meta_keys },
	{ "spec", spec_keys }, { "status", status_keys }, { NULL, NULL } };
/* With a policy, also what the pod deletion's filters ask of a pod: its
 * emptyDir volumes, what its containers ask for, its resource claims. */
static const struct kspec rsrc_keys[] = { { "limits", NULL }, { "requests", NULL }, { NULL, NULL } };
static const struct kspec ctr_keys[] = { { "resources", rsrc_keys }, { NULL, NULL } };
static const struct kspec ctr_each[] = { { KS_EACH, ctr_keys }, { NULL, NULL } };
static const struct kspec vol_keys[] = { { "emptyDir", KS_COUNT }, { NULL, NULL } };
static const struct kspec vol_each[] = { { KS_EACH, vol_keys }, { NULL, NULL } };
static const struct kspec claim_keys[] = { { "name", NULL }, { "resourceClaimName", NULL },
	{ NULL, NULL } };
static const struct kspec claim_each[] = { { KS_EACH, claim_keys }, { NULL, NULL } };
static const struct kspec spec_keys_p[] = { { "nodeName", NULL }, { "selector", NULL },
	{ "minAvailable", NULL }, { "maxUnavailable", NULL },
	{ "unhealthyPodEvictionPolicy", NULL }, { "containers", ctr_each },
	{ "volumes", vol_each }, { "resourceClaims", claim_each }, { NULL, NULL } };
static const struct kspec status_keys_p[] = { { "phase", NULL }, { "conditions", NULL },
	{ "observedGeneration", NULL }, { "currentHealthy", NULL }, { "desiredHealthy", NULL },
	{ "disruptionsAllowed", NULL }, { "expectedPods", NULL }, { "disruptedPods", KS_COUNT },
	{ "resourceClaimStatuses", claim_each }, { NULL, NULL } };
static const struct kspec item_keys_p[] = { { "kind", NULL }, { "metadata", meta_keys },
	{ "spec", spec_keys_p }, { "status", status_keys_p }, { NULL, NULL } };
static const char *const kinds[] = { "PodDisruptionBudget", "Pod", NULL };
static const char *const lists[] = { "PodDisruptionBudgetList", "PodList", NULL };

/* metadata.KEY of item i, a non-empty string, copied. */
static char *
meta_str(const cJSON *item, const char *key, size_t i, const char *kind, const char *docname)
{
	char where[600], path[32];
	const char *v;

	snprintf(where, sizeof where, "%s: item %zu (%s)", docname, i, kind);
	snprintf(path, sizeof path, "metadata.%s", key);
	v = need_str(item, path, where);
	return xstrndup(v, strlen(v));
}

/* minAvailable or maxUnavailable: an int32 >= 0, or a percentage up to 100%. */
static void
intstr_get(const cJSON *spec, const char *key, struct intstr *o, const char *where)
{
	char path[32];
	const char *s;
	size_t n;
	int is;

	memset(o, 0, sizeof *o);
	snprintf(path, sizeof path, "spec.%s", key);
	if ((is = opt_intstr(spec, key, path, &o->val, &s, where)) == 0)
		return;
	o->set = 1;
	if (is == 1) {
		if (o->val < 0)
			die("%s: spec.%s is negative", where, key);
		snprintf(o->text, sizeof o->text, "%ld", o->val);
		return;
	}
	n = strlen(s);
	/* The API's own check: ^[0-9]+%$, at most 100%. */
	if (n < 2 || n > 10 || s[n - 1] != '%' || strspn(s, "0123456789") != n - 1)
		die("%s: spec.%s %s is neither an integer nor a percentage like \"50%%\"", where,
		    key, qstr(s));
	o->pct = 1;
	o->val = strtol(s, NULL, 10);
	if (o->val > 100)
		die("%s: spec.%s %s is over 100%%", where, key, qstr(s));
	snprintf(o->text, sizeof o->text, "%s", s);
}

/* A message's "where" (as long as it takes) into buf, or if longer into memory to free. */
static char *
where_of(char *buf, size_t bufsz, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, bufsz, fmt, ap);
	va_end(ap);
	if ((size_t)n < bufsz)
		return buf;
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/*
 * A count of the status: an int32 written as an integer (1.0 and 1e0 are
 * not), never negative (the API server validates each >= 0, so a negative
 * one is not its answer, and no verdict can rest on it).
 */
static int
count_get(const cJSON *st, const char *key, long *out, const char *where)
{
	char path[40];
	int has;

	snprintf(path, sizeof path, "status.%s", key);
	has = opt_int32(st, key, path, out, where);
	if (*out < 0)
		die("%s: %s is %ld: a count is never negative", where, path, *out);
	return has;
}

/* A DisruptionAllowed condition with reason SyncFailed: its message, or NULL. */
static const char *
sync_failed(const cJSON *st)
{
	const cJSON *c = NULL;

	while ((c = j_next(j_get(st, "conditions"), c)) != NULL) {
		const char *type = j_str(c, "type"), *reason = j_str(c, "reason");

		if (type != NULL && reason != NULL && strcmp(type, "DisruptionAllowed") == 0 &&
		    strcmp(reason, "SyncFailed") == 0)
			return j_str(c, "message") ? j_str(c, "message") : "";
	}
	return NULL;
}

static void
budget_read(struct budget *b, const cJSON *item, size_t i, const char *docname)
{
	const cJSON *meta = j_get(item, "metadata"), *spec, *st;
	const char *pol, *why;
	char where[400], selwhy[256];

	memset(b, 0, sizeof *b);
	b->index = i;
	b->name = meta_str(item, "name", i, "PodDisruptionBudget", docname);
	b->ns = meta_str(item, "namespace", i, "PodDisruptionBudget", docname);
	snprintf(where, sizeof where, "%s: item %zu: PodDisruptionBudget %.63s/%.253s", docname,
	    i, b->ns, b->name);
	opt_int32(meta, "generation", "metadata.generation", &b->gen, where);
	spec = obj_if_present(item, "spec", "spec", where);
	if (selector_check(j_get(spec, "selector"), selwhy, sizeof selwhy) != 0)
		die("%s: spec.%s", where, selwhy);
	b->selector = j_get(spec, "selector") ? cJSON_Duplicate(j_get(spec, "selector"), 1) : NULL;
	intstr_get(spec, "minAvailable", &b->minav, where);
	intstr_get(spec, "maxUnavailable", &b->maxun, where);
	if (b->minav.set && b->maxun.set)
		die("%s: spec sets both minAvailable and maxUnavailable (the API allows one)", where);
	pol = opt_str(spec, "unhealthyPodEvictionPolicy", "spec.unhealthyPodEvictionPolicy", where);
	/* Anything but AlwaysAllow acts as IfHealthyBudget, the default. */
	b->always_allow = pol != NULL && strcmp(pol, "AlwaysAllow") == 0;

	st = opt_obj(item, "status", "status", where);
	b->has_obsgen = opt_int32(st, "observedGeneration", "status.observedGeneration", &b->obsgen, where);
	b->has_healthy = count_get(st, "currentHealthy", &b->healthy, where);
	b->has_desired = count_get(st, "desiredHealthy", &b->desired, where);
	b->has_allowed = count_get(st, "disruptionsAllowed", &b->allowed, where);
	b->has_expected = count_get(st, "expectedPods", &b->expected, where);
	if (!b->has_obsgen)
		b->missing = "observedGeneration";
	else if (!b->has_allowed)
		b->missing = "disruptionsAllowed";
	else if (!b->has_healthy)
		b->missing = "currentHealthy";
	else if (!b->has_desired)
		b->missing = "desiredHealthy";
	else if (!b->has_expected)
		b->missing = "expectedPods";
	/* Then waiting will not help. */
	if ((why = sync_failed(st)) != NULL) {
		why = qmsg(why);
		b->syncfailed = xstrndup(why, strlen(why));
	}
	/* kept as the number of its members (item_keys) */
	b->disrupted = j_count(st, "disruptedPods");
}

static const cJSON *
controller_of(const cJSON *item)
{
	const cJSON *refs = j_get(j_get(item, "metadata"), "ownerReferences"), *ref = NULL;

	while ((ref = j_next(refs, ref)) != NULL)
		if (j_true(ref, "controller"))
			return ref;
	return NULL;
}

static int
pod_ready(const cJSON *item)
{
	const cJSON *conds = j_get(j_get(item, "status"), "conditions"), *c = NULL;

	while ((c = j_next(conds, c)) != NULL) {
		const char *type = j_str(c, "type"), *status = j_str(c, "status");

		if (type != NULL && strcmp(type, "Ready") == 0)
			return status != NULL && strcmp(status, "True") == 0;
	}
	return 0;
}

/* A resource name the GPU Operator's filter counts as a GPU. */
static int
gpu_resource(const cJSON *list, const char *where)
{
	const cJSON *r;

	if (list != NULL && !cJSON_IsObject(list) && !cJSON_IsNull(list))
		die("%s: a container's resources list is %s, not an object", where, j_type(list));
	cJSON_ArrayForEach(r, list)
		if (strncmp(r->string, "nvidia.com/gpu", 14) == 0 ||
		    strncmp(r->string, "nvidia.com/mig-", 15) == 0)
			return 1;
	return 0;
}

/* A list member, if there, is a list (null as absent); dies naming it otherwise. */
static const cJSON *
opt_list(const cJSON *obj, const char *key, const char *path, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v != NULL && !cJSON_IsArray(v) && !cJSON_IsNull(v))
		die("%s: %s is %s, not a list", where, path, j_type(v));
	return v;
}

/*
 * gpuPodSpecFilter: Running or Pending, and a container asks for
 * nvidia.com/gpu* or nvidia.com/mig-* (limits or requests), or it holds a
 * resource claim.  The operator reads the claim and counts it when the NVIDIA
 * DRA driver allocated it, or when it cannot read it; gpudrv reads no
 * ResourceClaim, so a claim made for the pod counts.
 */
static int
pod_gpu(const cJSON *item, const char *phase, const char *where)
{
	const cJSON *spec = j_get(item, "spec"), *c = NULL, *st;
	const cJSON *res;

	if (phase == NULL || (strcmp(phase, "Running") != 0 && strcmp(phase, "Pending") != 0))
		return 0;
	while ((c = j_next(opt_list(spec, "containers", "spec.containers", where), c)) != NULL) {
		res = opt_obj(c, "resources", "spec.containers[].resources", where);
		if (gpu_resource(j_get(res, "limits"), where) || gpu_resource(j_get(res, "requests"), where))
			return 1;
	}
	c = NULL;
	while ((c = j_next(opt_list(spec, "resourceClaims", "spec.resourceClaims", where), c)) != NULL)
		if (opt_str(c, "resourceClaimName", "spec.resourceClaims[].resourceClaimName", where))
			return 1;
	st = j_get(item, "status");
	c = NULL;
	while ((c = j_next(opt_list(st, "resourceClaimStatuses", "status.resourceClaimStatuses",
	    where), c)) != NULL)
		if (opt_str(c, "resourceClaimName", "status.resourceClaimStatuses[].resourceClaimName",
		    where))
			return 1;
	return 0;
}

/* An emptyDir volume (hasLocalStorage). */
static int
pod_local(const cJSON *item, const char *where)
{
	const cJSON *v = NULL;

	while ((v = j_next(opt_list(j_get(item, "spec"), "volumes", "spec.volumes", where), v)) != NULL)
		if (j_has(v, "emptyDir"))
			return 1;
	return 0;
}

/* The drain filters (kubectl/pkg/drain/filters.go), then canIgnorePDB. */
static void
pod_read(struct pod *p, const cJSON *item, size_t i, const char *docname, int policy)
{
	const cJSON *meta = j_get(item, "metadata"), *ctl = controller_of(item), *labels;
	const char *phase = j_str(j_get(item, "status"), "phase");
	const char *ctlkind = j_str(ctl, "kind");
	char buf[512], *where;
	int finished;

	memset(p, 0, sizeof *p);
	p->name = meta_str(item, "name", i, "Pod", docname);
	p->ns = meta_str(item, "namespace", i, "Pod", docname);
	/* its lines (REMOVE, BLOCK) are split at spaces, and a script acts on
	 * them: names as the API server allows them */
	if (!dns_subdomain_ok(p->ns))
		die("%s: item %zu (Pod): metadata.namespace %s is not a valid namespace", docname, i,
		    qstr(p->ns));
	if (!dns_subdomain_ok(p->name))
		die("%s: item %zu (Pod): metadata.name %s is not a valid pod name", docname, i,
		    qstr(p->name));
	where = where_of(buf, sizeof buf, "%s: item %zu: Pod %s/%s", docname, i, p->ns, p->name);
	labels = opt_strmap(meta, "labels", "metadata.labels", "label", where);
	if (where != buf)
		free(where);
	p->ready = pod_ready(item);

	finished = phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	p->finished = finished;
	p->daemonset = ctlkind != NULL && strcmp(ctlkind, "DaemonSet") == 0;
	p->mirror = j_get(j_get(meta, "annotations"), "kubernetes.io/config.mirror") != NULL;
	if (policy) {
		where = where_of(buf, sizeof buf, "%s: item %zu: Pod %s/%s", docname, i, p->ns, p->name);
		p->gpu = pod_gpu(item, phase, where);
		p->local = pod_local(item, where);
		if (where != buf)
			free(where);
	}
	if (finished)
		p->skip = strcmp(phase, "Succeeded") == 0 ? "succeeded" : "failed";
	else if (p->daemonset)
		p->skip = "daemonset";
	else if (p->mirror)
		p->skip = "mirror";
	else {
		p->nocontroller = ctl == NULL;
		if (j_has(meta, "deletionTimestamp"))
			p->skip = "terminating";
		else if (phase != NULL && strcmp(phase, "Pending") == 0)
			p->skip = "pending";
	}
	/* only a pod that consults its budgets needs its labels (or any, a
	 * drain's podSelector) */
	p->labels = labels != NULL && (p->skip == NULL || policy) ? cJSON_Duplicate(labels, 1) : NULL;
}

static void
on_item(const struct item *it, void *arg)
{
	struct cluster *cl = arg;
	const cJSON *spec;
	const char *on;
	char buf[512], *where;
	struct pod *p;

	if (strcmp(it->kind, "PodDisruptionBudget") == 0) {
		cl->budgets = xgrow(cl->budgets, &cl->bcap, cl->nb, 64, sizeof *cl->budgets);
		budget_read(&cl->budgets[cl->nb++], it->obj, it->index, cl->name);
		return;
	}
	spec = j_get(it->obj, "spec");
	if ((on = j_str(spec, "nodeName")) == NULL && j_get(spec, "nodeName") != NULL) {
		/* not a string: said as such (the message is made only then: every pod comes here) */
		where = where_of(buf, sizeof buf, "%s: item %zu (Pod)", cl->name, it->index);
		str_if_present(spec, "nodeName", "spec.nodeName", where);
	}
	if (on == NULL || (cl->node != NULL ? strcmp(on, cl->node) != 0 : *on == '\0')) {
		/* not on the node, but checked all the same (meta_str says what is wrong) */
		const char *name = j_str(j_get(it->obj, "metadata"), "name");
		const char *ns = j_str(j_get(it->obj, "metadata"), "namespace");

		if (name == NULL || ns == NULL || *name == '\0' || *ns == '\0') {
			free(meta_str(it->obj, "name", it->index, "Pod", cl->name));
			free(meta_str(it->obj, "namespace", it->index, "Pod", cl->name));
		}
		return;
	}
	cl->pods = xgrow(cl->pods, &cl->pcap, cl->np, 64, sizeof *cl->pods);
	p = &cl->pods[cl->np];
	pod_read(p, it->obj, it->index, cl->name, cl->policy);
	p->seq = cl->np++;
	if (cl->node != NULL)
		return;
	/* every node: its name starts each of its lines */
	if (!dns_subdomain_ok(on))
		die("%s: item %zu: Pod %s/%s: spec.nodeName %s is not a valid node name", cl->name,
		    it->index, p->ns, p->name, qstr(on));
	p->node = xstrndup(on, strlen(on));
}

static void
on_end(int ok, void *arg)
{
	(void)ok;
	(void)arg;
}

static void
on_listed(const char *kind, const cJSON *list, void *arg)
{
	struct cluster *cl = arg;

	(void)list;
	if (strcmp(kind, "List") == 0)
		cl->lists++;
	else if (strcmp(kind, "PodDisruptionBudgetList") == 0)
		cl->budget_list++;
	else if (strcmp(kind, "PodList") == 0)
		cl->pod_list++;
}

/*
 * The input is proven whole when it holds both lists the verdict needs: a
 * PodDisruptionBudgetList and a PodList (the API server's answers to the two
 * GETs, back to back), or a List (kubectl get pdb,pods's one answer covers
 * both).  A GET that answered nothing at all (exit 0, an empty body) leaves
 * its list out: then every budget would seem to leave room, or every pod to
 * have none, and nothing can be said of the drain.
 */
static void
check_whole(const struct cluster *cl)
{
	if (cl->lists > 0 || (cl->budget_list > 0 && cl->pod_list > 0))
		return;
	if (cl->budget_list == 0 && cl->pod_list == 0)
		die("no list in %s: neither the budgets nor the pods were read; nothing can be "
		    "said of the drain", cl->name);
	if (cl->pod_list == 0)
		die("no PodList in %s: the pods were not read; nothing can be said of the drain",
		    cl->name);
	die("no PodDisruptionBudgetList in %s: the budgets were not read; nothing can be said "
	    "of the drain", cl->name);
}

int
cluster_read(struct cluster *cl, const char *path, const char *node, int policy)
{
	/* Lists back to back are one cluster: kubectl get --raw of the budgets,
	 * then of the pods (of the node: the drain evicts no other). */
	struct doc_reader dr = { kinds, lists, "a List of PodDisruptionBudgets and Pods",
		"; use kubectl get pdb,pods -A -o json", 0, 1, item_keys, on_item, on_end, NULL,
		0, on_listed, 0 };

	memset(cl, 0, sizeof *cl);
	cl->node = node;
	cl->policy = policy;
	if (policy)
		dr.keys = item_keys_p;
	cl->name = path == NULL || strcmp(path, "-") == 0 ? "<stdin>" : path;
	dr.arg = cl;
	if (doc_each(path, &dr) != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	check_whole(cl);
	return EXIT_CLEAN;
}

/* The pods node by node (bytewise), each node's in input order. */
static int
by_node(const void *a, const void *b)
{
	const struct pod *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

void
cluster_by_node(struct cluster *cl)
{
	if (cl->np > 1)
		qsort(cl->pods, cl->np, sizeof *cl->pods, by_node);
}

size_t
node_pods_end(const struct cluster *cl, size_t i)
{
	size_t j;

	for (j = i + 1; j < cl->np && strcmp(cl->pods[j].node, cl->pods[i].node) == 0; j++)
		;
	return j;
}

void
cluster_free(struct cluster *cl)
{
	size_t i;

	for (i = 0; i < cl->nb; i++) {
		free(cl->budgets[i].pods);
		free(cl->budgets[i].ns);
		free(cl->budgets[i].name);
		free(cl->budgets[i].syncfailed);
		cJSON_Delete(cl->budgets[i].selector);
	}
	for (i = 0; i < cl->np; i++) {
		free(cl->pods[i].ns);
		free(cl->pods[i].name);
		free(cl->pods[i].node);
		cJSON_Delete(cl->pods[i].labels);
	}
	free(cl->budgets);
	free(cl->pods);
}

/*
 * Pods alone (pdb-check -p): kubectl get pods -o json, or GET of a PodList,
 * each pod as a line: its node, namespace/name, phase, Ready condition and
 * restarts, "-" for what is not set.  The scripts read pods only so, never
 * through a jsonpath of their own.  Budgets alone (-b) the same way, each
 * as namespace/name and its status's four counts.  With watch (-w), a watch
 * too, each line led by what it is and a resourceVersion: "ITEM RV" (a
 * list's item, its own), then "LIST RV" alone once the list is whole (the
 * list's, where a watch of what follows starts); "ADDED RV" ("MODIFIED",
 * "DELETED") for an event, as each comes.
 */
static const struct kspec row_meta[] = { { "name", NULL }, { "namespace", NULL },
	{ "resourceVersion", NULL }, { NULL, NULL } };
static const struct kspec row_spec[] = { { "nodeName", NULL }, { NULL, NULL } };
static const struct kspec row_status[] = { { "phase", NULL }, { "conditions", NULL },
	{ "containerStatuses", NULL }, { NULL, NULL } };
static const struct kspec row_keys[] = { { "kind", NULL }, { "metadata", row_meta },
	{ "spec", row_spec }, { "status", row_status }, { NULL, NULL } };
static const char *const row_kinds[] = { "Pod", NULL };
static const char *const row_lists[] = { "PodList", NULL };
static const struct kspec brow_meta[] = { { "name", NULL }, { "namespace", NULL },
	{ "resourceVersion", NULL }, { NULL, NULL } };
static const struct kspec brow_status[] = { { "disruptionsAllowed", NULL },
	{ "currentHealthy", NULL }, { "desiredHealthy", NULL }, { "expectedPods", NULL },
	{ NULL, NULL } };
static const struct kspec brow_keys[] = { { "kind", NULL }, { "metadata", brow_meta },
	{ "status", brow_status }, { NULL, NULL } };
static const char *const brow_kinds[] = { "PodDisruptionBudget", NULL };
static const char *const brow_lists[] = { "PodDisruptionBudgetList", NULL };

struct rows {
	const char *name; /* the input, for messages */
	FILE *out;        /* where the lines go once their document is whole */
	char *buf;        /* the lines of the document being read */
	size_t len;
	FILE *held;
	int listed;       /* a list read whole: List or the kind's own */
	int watch;        /* -w: each line led by its event and resourceVersion */
};

/* A word of the API's own (a phase, a condition's status): letters only. */
static const char *
word_of(const char *s, const char *path, const char *where)
{
	if (s == NULL || *s == '\0')
		return "-";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != strlen(s))
		die("%s: %s %s is not a word of the API's (letters only)", where, path, qstr(s));
	return s;
}

/* A resourceVersion, to go into a watch's query as it is: "-" if not set. */
static const char *
rv_of(const cJSON *meta, const char *where)
{
	const char *rv = str_if_present(meta, "resourceVersion", "metadata.resourceVersion", where);

	if (rv == NULL || *rv == '\0')
		return "-";
	if (strspn(rv, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-") !=
	    strlen(rv) || strlen(rv) > 64)
		die("%s: metadata.resourceVersion %s is not one a watch can start from (letters, "
		    "digits and ._~- only, 64 at most)", where, qstr(rv));
	return rv;
}

static void
row_item(const struct item *it, void *arg)
{
	struct rows *r = arg;
	const cJSON *st, *c = NULL;
	const char *node, *ready = NULL, *ns, *name;
	char buf[600];
	long long restarts = 0;
	long n;

	/* nothing allocated here: a bad item's die() leaves by longjmp (doc.c) */
	snprintf(buf, sizeof buf, "%s: item %zu (Pod)", r->name, it->index);
	name = need_str(it->obj, "metadata.name", buf);
	ns = need_str(it->obj, "metadata.namespace", buf);
	/* one line a pod, split at spaces: names as the API server allows them */
	if (!dns_subdomain_ok(ns))
		die("%s: item %zu (Pod): metadata.namespace %s is not a valid namespace", r->name,
		    it->index, qstr(ns));
	if (!dns_subdomain_ok(name))
		die("%s: item %zu (Pod): metadata.name %s is not a valid pod name", r->name, it->index,
		    qstr(name));
	snprintf(buf, sizeof buf, "%s: item %zu: Pod %s/%s", r->name, it->index, ns, name);
	node = str_if_present(opt_obj(it->obj, "spec", "spec", buf), "nodeName", "spec.nodeName", buf);
	st = opt_obj(it->obj, "status", "status", buf);
	if (node != NULL && *node != '\0' && !dns_subdomain_ok(node))
		die("%s: spec.nodeName %s is not a valid node name", buf, qstr(node));
	while ((c = j_next(j_get(st, "conditions"), c)) != NULL) {
		const char *type = str_if_present(c, "type", "status.conditions[].type", buf);

		if (type != NULL && strcmp(type, "Ready") == 0) {
			ready = str_if_present(c, "status", "status.conditions[].status", buf);
			break;
		}
	}
	c = NULL;
	while ((c = j_next(j_get(st, "containerStatuses"), c)) != NULL) {
		opt_int32(c, "restartCount", "status.containerStatuses[].restartCount", &n, buf);
		if (n < 0)
			die("%s: status.containerStatuses[].restartCount is %ld: a count is never negative",
			    buf, n);
		restarts += n;
	}
	if (r->watch)
		fprintf(r->held, "%s %s ", it->event != NULL ? it->event : "ITEM",
		    rv_of(j_get(it->obj, "metadata"), buf));
	fprintf(r->held, "%s %s/%s %s %s %lld\n", node != NULL && *node != '\0' ? node : "-", ns,
	    name, word_of(str_if_present(st, "phase", "status.phase", buf), "status.phase", buf),
	    word_of(ready, "status.conditions[Ready].status", buf), restarts);
}

/* A budget's line: "namespace/name allowed healthy desired expected". */
static void
budget_row(const struct item *it, void *arg)
{
	static const char *const counts[] = { "disruptionsAllowed", "currentHealthy",
		"desiredHealthy", "expectedPods" };
	struct rows *r = arg;
	const cJSON *st;
	const char *ns, *name;
	char buf[600];
	long n;
	size_t i;

	/* nothing allocated here, as for a pod */
	snprintf(buf, sizeof buf, "%s: item %zu (PodDisruptionBudget)", r->name, it->index);
	name = need_str(it->obj, "metadata.name", buf);
	ns = need_str(it->obj, "metadata.namespace", buf);
	if (!dns_subdomain_ok(ns))
		die("%s: metadata.namespace %s is not a valid namespace", buf, qstr(ns));
	if (!dns_subdomain_ok(name))
		die("%s: metadata.name %s is not a valid budget name", buf, qstr(name));
	snprintf(buf, sizeof buf, "%s: item %zu: PodDisruptionBudget %s/%s", r->name, it->index,
	    ns, name);
	st = opt_obj(it->obj, "status", "status", buf);
	if (r->watch)
		fprintf(r->held, "%s %s ", it->event != NULL ? it->event : "ITEM",
		    rv_of(j_get(it->obj, "metadata"), buf));
	fprintf(r->held, "%s/%s", ns, name);
	for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		if (count_get(st, counts[i], &n, buf))
			fprintf(r->held, " %ld", n);
		else
			fputs(" -", r->held);
	}
	fputc('\n', r->held);
}

/* A document's end: its lines are printed if it was whole, else forgotten. */
static void
row_end(int ok, void *arg)
{
	struct rows *r = arg;

	if (fflush(r->held) != 0)
		die("cannot hold the lines read:");
	if (ok && r->len > 0 && fwrite(r->buf, 1, r->len, r->out) != r->len)
		die("cannot write the lines read:");
	/* a watch's reader acts on each event as it comes */
	if (r->watch && fflush(r->out) != 0)
		die("cannot write the lines read:");
	rewind(r->held);
	r->len = 0;
}

static void
row_listed(const char *kind, const cJSON *list, void *arg)
{
	struct rows *r = arg;
	char where[300];

	r->listed = 1;
	if (!r->watch)
		return;
	snprintf(where, sizeof where, "%s: the %s", r->name, kind);
	if (fprintf(r->out, "LIST %s\n", rv_of(j_get(list, "metadata"), where)) < 0 ||
	    fflush(r->out) != 0)
		die("cannot write the lines read:");
}

/* The rows of one kind: a pod's or a budget's reader, and its noun. */
struct rowkind {
	const char *const *kinds, *const *lists;
	const char *what, *hint;
	const struct kspec *keys;
	void (*item)(const struct item *it, void *arg);
	const char *noun;
};
static const struct rowkind pod_rows = { row_kinds, row_lists, "a List of Pods",
	"; use kubectl get pods -o json", row_keys, row_item, "pod" };
static const struct rowkind budget_rows = { brow_kinds, brow_lists,
	"a List of PodDisruptionBudgets", "; use kubectl get pdb -o json", brow_keys, budget_row,
	"budget" };

static int
rows_print(const char *path, FILE *out, int watch, const struct rowkind *k)
{
	struct doc_reader dr = { k->kinds, k->lists, k->what, k->hint, 0, 1, k->keys, k->item,
		row_end, NULL, watch, row_listed, watch };
	struct rows r;
	int rc;

	memset(&r, 0, sizeof r);
	r.name = path == NULL || strcmp(path, "-") == 0 ? "<stdin>" : path;
	r.out = out;
	r.watch = watch;
	if ((r.held = open_memstream(&r.buf, &r.len)) == NULL)
		die("cannot hold the lines read:");
	dr.arg = &r;
	rc = doc_each(path, &dr);
	fclose(r.held);
	free(r.buf);
	if (rc != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	/* an answer with no list (an empty body, a lone object) is not "none";
	 * a watch may give no event at all */
	if (!r.listed && !watch)
		die("no %sList in %s: the %ss were not read", k->kinds[0], r.name, k->noun);
	return EXIT_CLEAN;
}

int
pods_print(const char *path, FILE *out, int watch)
{
	return rows_print(path, out, watch, &pod_rows);
}

int
budgets_print(const char *path, FILE *out, int watch)
{
	return rows_print(path, out, watch, &budget_rows);
}
