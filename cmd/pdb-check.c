/*
 * pdb-check: would `kubectl drain --ignore-daemonsets --delete-emptydir-data`
 * of a node pass its PodDisruptionBudgets?  The eviction API's rules are
 * those of k8s pkg/registry/core/pod/storage/eviction.go; the percentages
 * those of pkg/controller/disruption (rounded up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-s] node [file] | -a [-s] [file]";

#define MAX_DISRUPTED 2000 /* eviction.go MaxDisruptedPodSize */
#define WAIT_DC "wait for the disruption controller (is kube-controller-manager running?)"

struct intstr {
	int set, pct;
	long val;
	char text[24]; /* as written: "4" or "50%" */
};

struct budget {
	char *ns, *name;
	size_t index;
	cJSON *selector; /* a copy: items are freed as they go by */
	struct intstr minav, maxun;
	int always_allow;
	long gen, obsgen, healthy, desired, allowed, expected, disrupted;
	int has_obsgen, has_healthy, has_desired, has_allowed, has_expected;
	const char *missing; /* the first status field missing, or NULL */
	char *syncfailed;    /* why the disruption controller cannot count it, or NULL */
	/* The node's pods whose eviction draws on it. */
	struct pod **pods;
	size_t npods, cap, unready;
};

struct pod {
	char *ns, *name;
	char *node;    /* -a: spec.nodeName, a copy; else NULL */
	size_t seq;    /* -a: its place among the pods kept */
	cJSON *labels; /* a copy, or NULL (and NULL if skipped: no budget is tried) */
	const char *skip; /* why no budget is consulted, or NULL */
	int nocontroller;
	int ready;
	int multi; /* selected by more than one budget */
};

/* What pdb-check reads of an item, all the streaming way keeps of one. */
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
static const char *const kinds[] = { "PodDisruptionBudget", "Pod", NULL };
static const char *const lists[] = { "PodDisruptionBudgetList", "PodList", NULL };

static const char *docname;

/* metadata.KEY of item i, a non-empty string, copied. */
static char *
meta_str(const cJSON *item, const char *key, size_t i, const char *kind)
{
	char where[600], path[32];

	const char *v;

	snprintf(where, sizeof where, "%s: item %zu (%s)", docname, i, kind);
	snprintf(path, sizeof path, "metadata.%s", key);
	v = need_str(item, path, where);
	return xstrndup(v, strlen(v));
}

static void
intstr_get(const cJSON *spec, const char *key, struct intstr *o, const char *where)
{
	const cJSON *v = j_get(spec, key);
	const char *s;
	size_t n;

	memset(o, 0, sizeof *o);
	if (v == NULL || cJSON_IsNull(v))
		return;
	o->set = 1;
	if (cJSON_IsNumber(v)) {
		char path[32];

		snprintf(path, sizeof path, "spec.%s", key);
		opt_int32(spec, key, path, &o->val, where);
		if (o->val < 0)
			die("%s: spec.%s is negative", where, key);
		snprintf(o->text, sizeof o->text, "%ld", o->val);
		return;
	}
	if (!cJSON_IsString(v))
		die("%s: spec.%s is %s, not an integer or a percentage", where, key, j_type(v));
	s = v->valuestring;
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

static void
budget_read(struct budget *b, const cJSON *item, size_t i)
{
	const cJSON *meta = j_get(item, "metadata"), *spec = j_get(item, "spec");
	const cJSON *st = j_get(item, "status"), *dp;
	const char *pol;
	char where[400], why[256];

	memset(b, 0, sizeof *b);
	b->index = i;
	b->name = meta_str(item, "name", i, "PodDisruptionBudget");
	b->ns = meta_str(item, "namespace", i, "PodDisruptionBudget");
	snprintf(where, sizeof where, "%s: item %zu: PodDisruptionBudget %.63s/%.253s", docname,
	    i, b->ns, b->name);
	opt_int32(meta, "generation", "metadata.generation", &b->gen, where);
	if (spec != NULL && !cJSON_IsObject(spec))
		die("%s: spec is %s, not an object", where, j_type(spec));
	if (selector_check(j_get(spec, "selector"), why, sizeof why) != 0)
		die("%s: spec.%s", where, why);
	b->selector = j_get(spec, "selector") ? cJSON_Duplicate(j_get(spec, "selector"), 1) : NULL;
	intstr_get(spec, "minAvailable", &b->minav, where);
	intstr_get(spec, "maxUnavailable", &b->maxun, where);
	if (b->minav.set && b->maxun.set)
		die("%s: spec sets both minAvailable and maxUnavailable (the API allows one)", where);
	pol = opt_str(spec, "unhealthyPodEvictionPolicy", "spec.unhealthyPodEvictionPolicy", where);
	/* Anything but AlwaysAllow acts as IfHealthyBudget, the default. */
	b->always_allow = pol != NULL && strcmp(pol, "AlwaysAllow") == 0;

	if (st != NULL && !cJSON_IsNull(st) && !cJSON_IsObject(st))
		die("%s: status is %s, not an object", where, j_type(st));
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
	/* A DisruptionAllowed condition with reason SyncFailed: waiting will not help. */
	cJSON_ArrayForEach(dp, j_get(st, "conditions")) {
		const char *type = j_str(dp, "type"), *reason = j_str(dp, "reason");

		const char *why;

		if (type != NULL && reason != NULL && strcmp(type, "DisruptionAllowed") == 0 &&
		    strcmp(reason, "SyncFailed") == 0 && b->syncfailed == NULL) {
			why = qmsg(j_str(dp, "message") ? j_str(dp, "message") : "");
			b->syncfailed = xstrndup(why, strlen(why));
		}
	}
	/* kept as the number of its members (item_keys) */
	dp = j_get(st, "disruptedPods");
	if (cJSON_IsNumber(dp))
		b->disrupted = (long)dp->valuedouble;
}

static const cJSON *
controller_of(const cJSON *item)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, j_get(j_get(item, "metadata"), "ownerReferences"))
		if (cJSON_IsTrue(j_get(ref, "controller")))
			return ref;
	return NULL;
}

static int
pod_ready(const cJSON *item)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, j_get(j_get(item, "status"), "conditions")) {
		const char *type = j_str(c, "type"), *status = j_str(c, "status");

		if (type != NULL && strcmp(type, "Ready") == 0)
			return status != NULL && strcmp(status, "True") == 0;
	}
	return 0;
}

/* The drain filters (kubectl/pkg/drain/filters.go), then canIgnorePDB. */
static void
pod_read(struct pod *p, const cJSON *item, size_t i)
{
	const cJSON *meta = j_get(item, "metadata"), *ctl = controller_of(item), *l, *labels;
	const char *phase = j_str(j_get(item, "status"), "phase");
	const char *ctlkind = j_str(ctl, "kind");
	int finished;

	memset(p, 0, sizeof *p);
	p->name = meta_str(item, "name", i, "Pod");
	p->ns = meta_str(item, "namespace", i, "Pod");
	labels = j_get(meta, "labels");
	if (labels != NULL && !cJSON_IsNull(labels) && !cJSON_IsObject(labels))
		die("%s: item %zu: Pod %s/%s: metadata.labels is %s, not an object", docname, i,
		    p->ns, p->name, j_type(labels));
	if (!cJSON_IsObject(labels))
		labels = NULL;
	cJSON_ArrayForEach(l, labels)
		if (!cJSON_IsString(l))
			die("%s: item %zu: Pod %s/%s: label %s is %s, not a string", docname, i,
			    p->ns, p->name, qstr(l->string), j_type(l));
	p->ready = pod_ready(item);

	finished = phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	if (finished)
		p->skip = strcmp(phase, "Succeeded") == 0 ? "succeeded" : "failed";
	else if (ctlkind != NULL && strcmp(ctlkind, "DaemonSet") == 0)
		p->skip = "daemonset";
	else if (j_get(j_get(meta, "annotations"), "kubernetes.io/config.mirror") != NULL)
		p->skip = "mirror";
	else {
		p->nocontroller = ctl == NULL;
		if (j_get(meta, "deletionTimestamp") != NULL &&
		    !cJSON_IsNull(j_get(meta, "deletionTimestamp")))
			p->skip = "terminating";
		else if (phase != NULL && strcmp(phase, "Pending") == 0)
			p->skip = "pending";
	}
	/* only a pod that consults its budgets needs its labels */
	p->labels = labels != NULL && p->skip == NULL ? cJSON_Duplicate(labels, 1) : NULL;
}

static int
by_ns(const void *a, const void *b)
{
	const struct budget *x = *(struct budget *const *)a, *y = *(struct budget *const *)b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The first budget of namespace ns in the sorted index. */
static size_t
ns_first(struct budget **idx, size_t n, const char *ns)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx[mid]->ns, ns) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static long long
ceil_pct(long long pct, long long total)
{
	return (pct * total + 99) / 100;
}

/* desiredHealthy as the disruption controller computes it for expectedPods e. */
static long long
desired_for(const struct budget *b, long long e)
{
	long long d;

	if (b->maxun.set) {
		d = e - (b->maxun.pct ? ceil_pct(b->maxun.val, e) : b->maxun.val);
		return d < 0 ? 0 : d;
	}
	if (b->minav.set)
		return b->minav.pct ? ceil_pct(b->minav.val, e) : b->minav.val;
	return 0;
}

/*
 * The disruptions b must allow for its pods on the node, nr of them Ready
 * and nu not, if its status read healthy h and desired d.  Each Ready pod
 * takes one, for good.  An unready pod takes none under AlwaysAllow or when
 * h >= d > 0 (eviction.go evicts it outright); otherwise its eviction needs
 * one allowed but does not keep it: the pod was never counted healthy, so
 * the disruption controller's next count gives it back, and kubectl drain
 * retries.  So any number of such pods need one more, not one each.
 */
static long long
need_of(const struct budget *b, long long nr, long long nu, long long h, long long d)
{
	int free_unready = b->always_allow || (h >= d && d > 0);

	return nr + (!free_unready && nu > 0);
}

/* Would they all be evicted if the status read healthy h, expected e, desired d? */
static int
passes(const struct budget *b, long long h, long long e, long long d)
{
	long long allowed = e > 0 && h > d ? h - d : 0;
	long long nu = (long long)b->unready, nr = (long long)b->npods - nu;

	return need_of(b, nr, nu, h, d) <= allowed;
}

/*
 * The fewest r >= 1 with which b passes, scaling its controller up by r ready
 * replicas (scale) or getting r of its unready pods Ready (!scale); 0 if none.
 * passes() never turns false as r grows, so a binary search finds it.
 */
static long long
fewest(const struct budget *b, int scale)
{
	long long h = b->healthy, e = b->expected, lo = 1, mid;
	long long hi = scale ? 100 * ((long long)b->npods + e + 1) + 100 : e - h;

#define OK_AT(r) (scale ? passes(b, h + (r), e + (r), desired_for(b, e + (r))) : \
	passes(b, h + (r), e, b->desired))
	if (hi < 1 || !OK_AT(hi))
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (OK_AT(mid))
			hi = mid;
		else
			lo = mid + 1;
	}
#undef OK_AT
	return lo;
}

static void
advise(const struct budget *b, char *out, size_t outsz)
{
	long long h = b->healthy, e = b->expected, n = (long long)b->npods;
	long long nready = n - (long long)b->unready, dmax, r, k, x;
	size_t len = 0;

#define ADD(...) do { \
	if (len > 0 && len < outsz) \
		len += (size_t)snprintf(out + len, outsz - len, ", or "); \
	if (len < outsz) \
		len += (size_t)snprintf(out + len, outsz - len, __VA_ARGS__); \
} while (0)

	out[0] = '\0';
	/* The highest desiredHealthy that lets the pods go, or -1 (at 0 an
	 * unready pod is no longer evicted outright: not monotonic). */
	for (dmax = h; dmax >= 0 && !passes(b, h, e, dmax); dmax--)
		;
	if (!b->minav.set && !b->maxun.set) {
		ADD("set minAvailable or maxUnavailable (with neither the disruption controller "
		    "allows no disruption)");
	} else if (dmax < 0) {
		; /* no spec change is enough */
	} else if (b->minav.set && !b->minav.pct) {
		if (dmax < b->minav.val && passes(b, h, e, dmax))
			ADD("lower minAvailable to %lld", dmax);
	} else if (b->minav.set) {
		x = e > 0 ? 100 * dmax / e : -1;
		x = x > 100 ? 100 : x;
		if (x >= 0 && x < b->minav.val && passes(b, h, e, ceil_pct(x, e)))
			ADD("lower minAvailable to %lld%%", x);
	} else if (!b->maxun.pct) {
		k = e - dmax; /* pods that may be unavailable */
		if (k > b->maxun.val && passes(b, h, e, e - k))
			ADD("raise maxUnavailable to %lld", k);
	} else if (e > 0) {
		k = e - dmax;
		x = k >= 1 ? 100 * (k - 1) / e + 1 : 0;
		x = x > 100 ? 100 : x;
		if (x > b->maxun.val && passes(b, h, e, e - ceil_pct(x, e)))
			ADD("raise maxUnavailable to %lld%%", x);
	}
	if ((r = fewest(b, 1)) > 0)
		ADD("add %lld ready replica%s elsewhere", r, r == 1 ? "" : "s");
	else if ((r = fewest(b, 0)) > 0)
		ADD("get %lld more of its pods Ready", r);
	if (b->unready > 0 && !b->always_allow && !(h >= b->desired && b->desired > 0) &&
	    nready <= b->allowed)
		ADD("set unhealthyPodEvictionPolicy: AlwaysAllow (%zu of the pods %s not Ready)",
		    b->unready, b->unready == 1 ? "is" : "are");
	if (len == 0)
		ADD("wait for more of its pods to become Ready");
#undef ADD
}

/* The disruptions its pods on the node need of b, as its status reads now. */
static long long
needed(const struct budget *b)
{
	long long nu = (long long)b->unready;

	return need_of(b, (long long)b->npods - nu, nu, b->healthy, b->desired);
}

/* Would evicting its pods on the node be refused (checkAndDecrement)? */
static int
budget_blocks(const struct budget *b)
{
	long long n = needed(b);

	return n > 0 && (b->missing != NULL || b->obsgen < b->gen ||
	    b->disrupted > MAX_DISRUPTED || n > b->allowed);
}

/* -a: each line of a node starts with its name. */
static void
lead(const char *node)
{
	if (node != NULL)
		printf("%s ", node);
}

static void
budget_report(const struct budget *b, const char *node)
{
	char adv[1024], h[24], d[24], a[24];
	size_t i, j;

	if (!budget_blocks(b))
		return;
	if (b->syncfailed != NULL && (b->missing != NULL || b->obsgen < b->gen ||
	    (long long)b->allowed < needed(b)))
		snprintf(adv, sizeof adv, "the disruption controller cannot count its pods "
		    "(condition DisruptionAllowed, reason SyncFailed: %s); fix what it says, "
		    "waiting will not help", b->syncfailed);
	else if (b->missing != NULL && strcmp(b->missing, "observedGeneration") == 0)
		snprintf(adv, sizeof adv, "status never computed (no status.observedGeneration): "
		    WAIT_DC);
	else if (b->missing != NULL)
		snprintf(adv, sizeof adv, "status incomplete (no status.%s): " WAIT_DC, b->missing);
	else if (b->obsgen < b->gen)
		snprintf(adv, sizeof adv, "status not yet recomputed (observedGeneration %ld < "
		    "generation %ld): " WAIT_DC, b->obsgen, b->gen);
	else if (b->disrupted > MAX_DISRUPTED)
		snprintf(adv, sizeof adv, "%ld evictions not yet confirmed (status.disruptedPods "
		    "over %d), so the API refuses more (HTTP 403): " WAIT_DC, b->disrupted,
		    MAX_DISRUPTED);
	else
		advise(b, adv, sizeof adv);

	/* the pods that draw on it: an unready one evicted outright does not */
	lead(node);
	printf("%s/%s BLOCKS ", b->ns, b->name);
	for (i = 0, j = 0; i < b->npods; i++)
		if (b->pods[i]->ready || !(b->always_allow ||
		    (b->healthy >= b->desired && b->desired > 0)))
			printf("%s%s/%s", j++ ? "," : "", b->pods[i]->ns, b->pods[i]->name);
	snprintf(h, sizeof h, b->has_healthy ? "%ld" : "-", b->healthy);
	snprintf(d, sizeof d, b->has_desired ? "%ld" : "-", b->desired);
	snprintf(a, sizeof a, b->has_allowed ? "%ld" : "-", b->allowed);
	printf(" %s=%s currentHealthy=%s desiredHealthy=%s disruptionsAllowed=%s needed=%lld: %s\n",
	    b->maxun.set ? "maxUnavailable" : "minAvailable",
	    b->maxun.set ? b->maxun.text : b->minav.set ? b->minav.text : "unset",
	    h, d, a, needed(b), adv);
}

static void
budget_add(struct budget *b, struct pod *p)
{
	if (b->npods == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 4;
		b->pods = xrealloc(b->pods, b->cap * sizeof *b->pods);
	}
	b->pods[b->npods++] = p;
	if (!p->ready)
		b->unready++;
}

/* What was read: every budget, and the pods on the node (-a: on any node). */
struct state {
	const char *node; /* NULL: -a */
	struct budget *budgets;
	struct pod *pods;
	size_t nb, np, bcap, pcap;
	int lists, budget_list, pod_list; /* the lists read whole: List, and the typed ones */
};

static void
on_item(const struct item *it, void *arg)
{
	struct state *st = arg;
	const cJSON *spec, *on, *name, *ns;
	struct pod *p;

	if (strcmp(it->kind, "PodDisruptionBudget") == 0) {
		if (st->nb == st->bcap) {
			st->bcap = st->bcap ? 2 * st->bcap : 64;
			st->budgets = xrealloc(st->budgets, st->bcap * sizeof *st->budgets);
		}
		budget_read(&st->budgets[st->nb++], it->obj, it->index);
		return;
	}
	spec = j_get(it->obj, "spec");
	on = j_get(spec, "nodeName");
	if (on != NULL && !cJSON_IsString(on))
		die("%s: item %zu (Pod): spec.nodeName is %s, not a string", docname, it->index,
		    j_type(on));
	if (on == NULL || (st->node != NULL ? strcmp(on->valuestring, st->node) != 0 :
	    *on->valuestring == '\0')) {
		/* not on the node, but checked all the same (meta_str says what is wrong) */
		name = j_path(it->obj, "metadata.name");
		ns = j_path(it->obj, "metadata.namespace");
		if (!cJSON_IsString(name) || !cJSON_IsString(ns) || *name->valuestring == '\0' ||
		    *ns->valuestring == '\0') {
			free(meta_str(it->obj, "name", it->index, "Pod"));
			free(meta_str(it->obj, "namespace", it->index, "Pod"));
		}
		return;
	}
	if (st->np == st->pcap) {
		st->pcap = st->pcap ? 2 * st->pcap : 64;
		st->pods = xrealloc(st->pods, st->pcap * sizeof *st->pods);
	}
	p = &st->pods[st->np];
	pod_read(p, it->obj, it->index);
	p->seq = st->np++;
	if (st->node != NULL)
		return;
	/* -a: the name starts each of the node's lines */
	if (!dns_subdomain_ok(on->valuestring))
		die("%s: item %zu: Pod %s/%s: spec.nodeName %s is not a valid node name", docname,
		    it->index, p->ns, p->name, qstr(on->valuestring));
	p->node = xstrndup(on->valuestring, strlen(on->valuestring));
}

static void
on_end(int ok, void *arg)
{
	(void)ok;
	(void)arg;
}

static void
on_listed(const char *kind, void *arg)
{
	struct state *st = arg;

	if (strcmp(kind, "List") == 0)
		st->lists++;
	else if (strcmp(kind, "PodDisruptionBudgetList") == 0)
		st->budget_list++;
	else if (strcmp(kind, "PodList") == 0)
		st->pod_list++;
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
check_whole(const struct state *st)
{
	if (st->lists > 0 || (st->budget_list > 0 && st->pod_list > 0))
		return;
	if (st->budget_list == 0 && st->pod_list == 0)
		die("no list in %s: neither the budgets nor the pods were read; nothing can be "
		    "said of the drain", docname);
	if (st->pod_list == 0)
		die("no PodList in %s: the pods were not read; nothing can be said of the drain",
		    docname);
	die("no PodDisruptionBudgetList in %s: the budgets were not read; nothing can be said "
	    "of the drain", docname);
}

/* -a: the pods node by node (bytewise), each node's in input order. */
static int
by_node(const void *a, const void *b)
{
	const struct pod *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The budgets' input order: their place in the array they were read into. */
static int
by_place(const void *a, const void *b)
{
	const struct budget *x = *(struct budget *const *)a, *y = *(struct budget *const *)b;

	return (x > y) - (x < y);
}

/* Every budget, and the room a node's check works in. */
struct eval {
	struct budget **idx; /* by namespace (by_ns) */
	size_t nb;
	int listing;         /* -s */
	struct budget **match, **used;
	size_t matchcap, usedcap;
};

/* The budgets of its namespace that select p, into e->match; how many. */
static size_t
budgets_of(struct eval *e, const struct pod *p)
{
	size_t j, n = 0;

	for (j = ns_first(e->idx, e->nb, p->ns); j < e->nb && strcmp(e->idx[j]->ns, p->ns) == 0;
	    j++) {
		if (!selector_matches(e->idx[j]->selector, p->labels))
			continue;
		if (n == e->matchcap) {
			e->matchcap = e->matchcap ? 2 * e->matchcap : 4;
			e->match = xrealloc(e->match, e->matchcap * sizeof *e->match);
		}
		e->match[n++] = e->idx[j];
	}
	return n;
}

/*
 * The drain of the node that pods[0..np) run on (in input order), as
 * `pdb-check NODE` says it, but for the line OK; with node (-a) each line
 * starts with it, and the DRAWS lines come before the obstacles.  1 if the
 * drain would be blocked.  The budgets are left without pods, for the next node.
 */
static int
node_check(struct eval *e, struct pod *pods, size_t np, const char *node)
{
	size_t i, j, n, nused = 0;
	int blocked = 0;

	if (e->listing)
		for (i = 0; i < np; i++)
			if (pods[i].skip != NULL) {
				lead(node);
				printf("SKIP %s/%s %s\n", pods[i].ns, pods[i].name, pods[i].skip);
			}

	/* Each pod once; only the budgets of its namespace are tried. */
	for (i = 0; i < np; i++) {
		struct pod *p = &pods[i];

		if (p->skip != NULL || (n = budgets_of(e, p)) == 0)
			continue;
		if (n > 1) {
			p->multi = 1;
			continue;
		}
		if (e->match[0]->npods == 0) {
			if (nused == e->usedcap) {
				e->usedcap = e->usedcap ? 2 * e->usedcap : 16;
				e->used = xrealloc(e->used, e->usedcap * sizeof *e->used);
			}
			e->used[nused++] = e->match[0];
		}
		budget_add(e->match[0], p);
	}
	if (nused > 1)
		qsort(e->used, nused, sizeof *e->used, by_place);

	if (node != NULL)
		for (j = 0; j < nused; j++) {
			const struct budget *b = e->used[j];
			long long need = needed(b);

			if (need < 1)
				continue;
			lead(node);
			if (b->has_allowed)
				printf("DRAWS %s/%s %lld %ld\n", b->ns, b->name, need, b->allowed);
			else
				printf("DRAWS %s/%s %lld -\n", b->ns, b->name, need);
		}

	/* The pods' own obstacles, in input order. */
	for (i = 0; i < np; i++) {
		struct pod *p = &pods[i];

		if (p->nocontroller) {
			lead(node);
			printf("%s/%s NO-CONTROLLER: kubectl drain refuses a pod no controller "
			    "manages (--force would delete it for good); delete it or run it "
			    "under a Deployment, StatefulSet or Job\n", p->ns, p->name);
			blocked = 1;
		}
		if (!p->multi)
			continue;
		n = budgets_of(e, p);
		lead(node);
		printf("%s/%s MULTIPLE-BUDGETS ", p->ns, p->name);
		for (j = 0; j < n; j++)
			printf("%s%s/%s", j ? "," : "", e->match[j]->ns, e->match[j]->name);
		printf(": the eviction API refuses (HTTP 500); keep one budget per pod\n");
		blocked = 1;
	}

	/* Then the budgets, in input order. */
	for (j = 0; j < nused; j++) {
		if (budget_blocks(e->used[j]))
			blocked = 1;
		budget_report(e->used[j], node);
		e->used[j]->npods = 0;
		e->used[j]->unready = 0;
	}
	return blocked;
}

int
main(int argc, char **argv)
{
	struct state st = { 0 };
	/* Lists back to back are one cluster: kubectl get --raw of the budgets,
	 * then of the pods (of the node: the drain evicts no other). */
	struct doc_reader dr = { kinds, lists, "a List of PodDisruptionBudgets and Pods",
		"; use kubectl get pdb,pods -A -o json", 0, 1, item_keys, on_item, on_end, NULL,
		0, on_listed };
	struct eval e = { 0 };
	struct pod *pods;
	const char *path;
	size_t nb, np, i, j;
	int c, rc, all = 0, blocked = 0;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "ash", usage)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 's': e.listing = 1; break;
		}
	}
	if (all && argc - optind > 1) {
		warnf("-a checks every node: it takes no node name");
		usage_exit(usage);
	}
	if (argc - optind < !all || argc - optind > 2)
		usage_exit(usage);
	if (!all) {
		st.node = argv[optind++];
		if (!dns_subdomain_ok(st.node))
			die("node %s is not a valid node name", qstr(st.node));
	}
	path = argv[optind];
	docname = path == NULL || strcmp(path, "-") == 0 ? "<stdin>" : path;

	/* One pass: every budget is read and kept, only the node's pods are kept
	 * (-a: every pod that runs on a node). */
	dr.arg = &st;
	if (doc_each(path, &dr) != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	check_whole(&st);
	nb = st.nb;
	np = st.np;
	pods = st.pods;

	e.nb = nb;
	e.idx = xmalloc(nb * sizeof *e.idx);
	for (i = 0; i < nb; i++)
		e.idx[i] = &st.budgets[i];
	qsort(e.idx, nb, sizeof *e.idx, by_ns);

	if (all) {
		if (np > 1)
			qsort(pods, np, sizeof *pods, by_node);
		for (i = 0; i < np; i = j) {
			for (j = i + 1; j < np && strcmp(pods[j].node, pods[i].node) == 0; j++)
				;
			if (node_check(&e, &pods[i], j - i, pods[i].node))
				blocked = 1;
		}
	} else {
		if (np == 0)
			warnf("%s: no pod runs on node %s (is the node name right?)", docname,
			    st.node);
		blocked = node_check(&e, pods, np, NULL);
		if (!blocked)
			puts("OK");
	}

	for (i = 0; i < nb; i++) {
		free(st.budgets[i].pods);
		free(st.budgets[i].ns);
		free(st.budgets[i].name);
		free(st.budgets[i].syncfailed);
		cJSON_Delete(st.budgets[i].selector);
	}
	for (i = 0; i < np; i++) {
		free(pods[i].ns);
		free(pods[i].name);
		free(pods[i].node);
		cJSON_Delete(pods[i].labels);
	}
	free(st.budgets);
	free(e.idx);
	free(e.match);
	free(e.used);
	free(pods);
	rc = fshut(stdout, "stdout");
	return rc ? rc : blocked ? EXIT_FINDINGS : EXIT_CLEAN;
}
