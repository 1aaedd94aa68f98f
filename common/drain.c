/*
 * The eviction API's rules for a drain (k8s pkg/registry/core/pod/storage/
 * eviction.go), the disruption controller's arithmetic (pkg/controller/
 * disruption: percentages rounded up), and what would let a blocked drain
 * pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

#define WAIT_DC "wait for the disruption controller (is kube-controller-manager running?)"

long long
pct_ceil(long long pct, long long total)
{
	return (pct * total + 99) / 100;
}

long long
intstr_scaled(const struct intstr *v, long long total)
{
	return v->pct ? pct_ceil(v->val, total) : v->val;
}

int
intstr_parse(const char *s, struct intstr *out)
{
	size_t n = strspn(s, "0123456789");
	int pct = s[n] == '%' && s[n + 1] == '\0';

	memset(out, 0, sizeof *out);
	if (n == 0 || (s[n] != '\0' && !pct) || n > 9 || strlen(s) >= sizeof out->text)
		return -1;
	out->set = 1;
	out->pct = pct;
	out->val = strtol(s, NULL, 10);
	if (pct && out->val > 100)
		return -1;
	strcpy(out->text, s);
	return 0;
}

long long
desired_for(const struct budget *b, long long e)
{
	long long d;

	if (b->maxun.set) {
		d = e - intstr_scaled(&b->maxun, e);
		return d < 0 ? 0 : d;
	}
	if (b->minav.set)
		return intstr_scaled(&b->minav, e);
	return 0;
}

/* An unready pod is evicted outright if its status read healthy h, desired d. */
static int
frees_unready(const struct budget *b, long long h, long long d)
{
	return b->always_allow || (h >= d && d > 0);
}

int
unready_goes(const struct budget *b)
{
	return frees_unready(b, b->healthy, b->desired);
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
	return nr + (!frees_unready(b, h, d) && nu > 0);
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

/* What would let the pods go, each way joined by ", or ". */
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
		if (x >= 0 && x < b->minav.val && passes(b, h, e, pct_ceil(x, e)))
			ADD("lower minAvailable to %lld%%", x);
	} else if (!b->maxun.pct) {
		k = e - dmax; /* pods that may be unavailable */
		if (k > b->maxun.val && passes(b, h, e, e - k))
			ADD("raise maxUnavailable to %lld", k);
	} else if (e > 0) {
		k = e - dmax;
		x = k >= 1 ? 100 * (k - 1) / e + 1 : 0;
		x = x > 100 ? 100 : x;
		if (x > b->maxun.val && passes(b, h, e, e - pct_ceil(x, e)))
			ADD("raise maxUnavailable to %lld%%", x);
	}
	if ((r = fewest(b, 1)) > 0)
		ADD("add %lld ready replica%s elsewhere", r, r == 1 ? "" : "s");
	else if ((r = fewest(b, 0)) > 0)
		ADD("get %lld more of its pods Ready", r);
	if (b->unready > 0 && !frees_unready(b, h, b->desired) && nready <= b->allowed)
		ADD("set unhealthyPodEvictionPolicy: AlwaysAllow (%zu of the pods %s not Ready)",
		    b->unready, b->unready == 1 ? "is" : "are");
	if (len == 0)
		ADD("wait for more of its pods to become Ready");
#undef ADD
}

long long
needed(const struct budget *b)
{
	long long nu = (long long)b->unready;

	return need_of(b, (long long)b->npods - nu, nu, b->healthy, b->desired);
}

int
budget_blocks(const struct budget *b)
{
	long long n = needed(b);

	return n > 0 && (b->missing != NULL || b->obsgen < b->gen ||
	    b->disrupted > MAX_DISRUPTED || n > b->allowed);
}

void
block_why(const struct budget *b, char *out, size_t outsz)
{
	if (b->syncfailed != NULL && (b->missing != NULL || b->obsgen < b->gen ||
	    (long long)b->allowed < needed(b)))
		snprintf(out, outsz, "the disruption controller cannot count its pods "
		    "(condition DisruptionAllowed, reason SyncFailed: %s); fix what it says, "
		    "waiting will not help", b->syncfailed);
	else if (b->missing != NULL && strcmp(b->missing, "observedGeneration") == 0)
		snprintf(out, outsz, "status never computed (no status.observedGeneration): "
		    WAIT_DC);
	else if (b->missing != NULL)
		snprintf(out, outsz, "status incomplete (no status.%s): " WAIT_DC, b->missing);
	else if (b->obsgen < b->gen)
		snprintf(out, outsz, "status not yet recomputed (observedGeneration %ld < "
		    "generation %ld): " WAIT_DC, b->obsgen, b->gen);
	else if (b->disrupted > MAX_DISRUPTED)
		snprintf(out, outsz, "%ld evictions not yet confirmed (status.disruptedPods "
		    "over %d), so the API refuses more (HTTP 403): " WAIT_DC, b->disrupted,
		    MAX_DISRUPTED);
	else
		advise(b, out, outsz);
}

/* ---- a drain: the budgets a node's pods draw on ---- */

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

/* The budgets' input order: their place in the array they were read into. */
static int
by_place(const void *a, const void *b)
{
	const struct budget *x = *(struct budget *const *)a, *y = *(struct budget *const *)b;

	return (x > y) - (x < y);
}

void
drain_init(struct drain *d, struct budget *budgets, size_t nb)
{
	size_t i;

	memset(d, 0, sizeof *d);
	d->nb = nb;
	d->idx = xmalloc(nb * sizeof *d->idx);
	for (i = 0; i < nb; i++)
		d->idx[i] = &budgets[i];
	qsort(d->idx, nb, sizeof *d->idx, by_ns);
}

size_t
budgets_of(struct drain *d, const struct pod *p)
{
	size_t j, n = 0;

	for (j = ns_first(d->idx, d->nb, p->ns); j < d->nb && strcmp(d->idx[j]->ns, p->ns) == 0;
	    j++) {
		if (!selector_matches(d->idx[j]->selector, p->labels))
			continue;
		d->match = xgrow(d->match, &d->matchcap, n, 4, sizeof *d->match);
		d->match[n++] = d->idx[j];
	}
	return n;
}

void
drain_node(struct drain *d, struct pod *pods, size_t np)
{
	struct budget *b;
	size_t i, n;

	d->nused = 0;
	/* Each pod once; only the budgets of its namespace are tried. */
	for (i = 0; i < np; i++) {
		struct pod *p = &pods[i];

		/* the pods the removal takes, or would but for its refusal */
		if (p->skip != NULL || (!p->go && p->refused == NULL) || (n = budgets_of(d, p)) == 0)
			continue;
		if (n > 1) {
			p->multi = 1;
			continue;
		}
		b = d->match[0];
		if (b->npods == 0) {
			d->used = xgrow(d->used, &d->usedcap, d->nused, 16, sizeof *d->used);
			d->used[d->nused++] = b;
		}
		b->pods = xgrow(b->pods, &b->cap, b->npods, 4, sizeof *b->pods);
		b->pods[b->npods++] = p;
		if (!p->ready)
			b->unready++;
	}
	if (d->nused > 1)
		qsort(d->used, d->nused, sizeof *d->used, by_place);
}

void
drain_next(struct drain *d)
{
	size_t j;

	for (j = 0; j < d->nused; j++) {
		d->used[j]->npods = 0;
		d->used[j]->unready = 0;
	}
	d->nused = 0;
}

void
drain_free(struct drain *d)
{
	free(d->idx);
	free(d->match);
	free(d->used);
}
