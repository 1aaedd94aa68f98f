/*
 * gen -e SEED -R RUN -d DIR N: random PodDisruptionBudget scenarios for
 * t/0950-e2e-evict.t, the same files for the same seed (a Park-Miller
 * generator of its own).
 *
 * Scenario k (1..N) is named RUN-k: namespace RUN-k, a look-alike namespace
 * RUN-k-x (used by some scenarios), and two kwok fake nodes RUN-k-d (the one
 * drained) and RUN-k-o, each with the taint gpudrv.test/evict=RUN-k:NoSchedule
 * that only the scenario's pods tolerate.  The names do not depend on the
 * seed: pre.yaml is the same for every seed, so that a test can keep the
 * nodes and namespaces from one seed to the next.  Every pod is placed on one
 * of the two: a Deployment's or ReplicaSet's by the nodeSelector of its
 * "part" (a workload group has a part on each node, each its own
 * controller), a bare pod by spec.nodeName, a DaemonSet's on both.  Writes
 * into DIR:
 *   pre.yaml     the nodes and namespaces of all scenarios (created first,
 *                so that the namespaces' default service accounts exist)
 *   main.yaml    their workloads and budgets, all labelled gpudrv-evict=1
 *                (pods too), so that one kubectl delete -l removes them
 *   RUN-k.yaml   scenario k's objects, both kinds (for the diagnostics)
 *   RUN-k.plan   what the test needs to know, one fact a line:
 *                  drain NODE | other NODE | ns NS (a namespace it uses)
 *                  pods NS COUNT
 *                  unready NS CTL COUNT   (make COUNT pods labelled ctl=CTL,
 *                                          first by name, not Ready)
 *                  budget NS NAME TOKEN... (its selector: k=v, k~a|b In,
 *                                          k!~a|b NotIn, k? Exists, k!?
 *                                          DoesNotExist; none: every pod)
 *                  feature TAG             (for the coverage count)
 *   list         the scenario names, one a line
 * Labels: pods have app=gI (their group), ctl=gI-d|gI-o (their part; the
 * controllers select on it), sometimes tier=a|b and track=stable|canary; the
 * budgets select on these (never on gpudrv-evict).  Each scenario also gets
 * one feature in turn (k + SEED through feats[]) forced on, so that every
 * N >= 18 run covers all of them.
 */
#include <stdarg.h>

#include "gen.h"

static const char *const kinds[] = { "dep", "rs", "bare" };
static const char *const sels[] = { "matchLabels", "matchLabels2", "part", "In", "NotIn",
	"Exists", "DoesNotExist", "empty" };
enum { S_LABELS, S_LABELS2, S_PART, S_IN, S_NOTIN, S_EXISTS, S_NOTEXISTS, S_EMPTY };
static const char *const specs[] = { "minAvailable-int", "minAvailable-pct",
	"maxUnavailable-int", "maxUnavailable-pct" };
static const char *const pcts[] = { "0", "20", "25", "34", "50", "60", "75", "100" };
static const char *const policies[] = { "unset", "IfHealthyBudget", "AlwaysAllow" };
static const char *const feats[] = { "kind-dep", "kind-rs", "kind-bare", "ds", "lookalike",
	"two-budgets", "minAvailable-int", "minAvailable-pct", "maxUnavailable-int",
	"maxUnavailable-pct", "sel-In", "sel-NotIn", "sel-Exists", "sel-DoesNotExist",
	"sel-empty", "unready", "policy-AlwaysAllow", "policy-IfHealthyBudget" };
#define NF (sizeof feats / sizeof feats[0])

static unsigned long long X;
static FILE *pre, *mainf, *sf, *pf;
static char sid[256];

static long rnd(long m) { X = X * 16807 % 2147483647; return (long)(X % (unsigned long long)m); }
static int pct(int p) { return rnd(100) < p; }

/* wpick("10 30 35 25"): an index 0.. drawn with these weights (summing to 100) */
static int
wpick(const char *w)
{
	long r = rnd(100), c = 0;
	char *e;
	int i;

	for (i = 0;; i++, w = e)
		if (r < (c += strtol(w, &e, 10)) || *e == '\0')
			return i;
}

static int find(const char *const *t, const char *s) { int i = 0; while (strcmp(t[i], s) != 0) i++; return i; }

/* to two files: pre.yaml or main.yaml, and the scenario's */
static void
put(FILE *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(a, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vfprintf(sf, fmt, ap);
	va_end(ap);
}

static void feature(const char *pfx, const char *t) { fprintf(pf, "feature %s%s\n", pfx, t); }

static void
node(const char *role)
{
	put(pre, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s-%s\n"
	    "  annotations: {kwok.x-k8s.io/node: fake}\n  labels: {kubernetes.io/hostname: %s-%s, "
	    "kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, gpudrv-evict: \"1\", "
	    "gpudrv-evict/scn: %s, gpudrv-evict/role: %s}\n"
	    "spec:\n  taints: [{key: gpudrv.test/evict, value: %s, effect: NoSchedule}]\n"
	    "status:\n  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\"}\n"
	    "  capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\"}\n",
	    sid, role, sid, role, sid, role, sid);
}

/* the pod spec, indented by ind, placed by place */
static const char *
podspec(const char *ind, const char *place)
{
	static char b[1024];

	snprintf(b, sizeof b, "%sspec:\n%s  %s\n%s  tolerations: [{key: gpudrv.test/evict, "
	    "operator: Equal, value: %s, effect: NoSchedule}]\n%s  terminationGracePeriodSeconds: 1\n"
	    "%s  containers: [{name: c, image: busybox}]\n", ind, ind, place, ind, sid, ind, ind);
	return b;
}

/* a workload group's pods on one node (where: d or o) */
static void
part(const char *ns, long *pods, int g, const char *where, int kind, long count, const char *extra)
{
	char labels[256], place[512];
	long i;

	if (count == 0)
		return;
	snprintf(labels, sizeof labels, "{ctl: g%d-%s, app: g%d%s, gpudrv-evict: \"1\"}", g, where,
	    g, extra);
	if (kind == 2) {
		snprintf(place, sizeof place, "nodeName: %s-%s", sid, where);
		for (i = 0; i < count; i++)
			put(mainf, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: g%d-%s-%ld\n"
			    "  namespace: %s\n  labels: %s\n%s", g, where, i, ns, labels, podspec("", place));
	} else {
		snprintf(place, sizeof place, "nodeSelector: {kubernetes.io/hostname: %s-%s}", sid, where);
		put(mainf, "---\napiVersion: apps/v1\nkind: %s\nmetadata:\n  name: g%d-%s\n"
		    "  namespace: %s\n  labels: {gpudrv-evict: \"1\"}\nspec:\n  replicas: %ld\n"
		    "  selector: {matchLabels: {ctl: g%d-%s}}\n  template:\n    metadata:\n"
		    "      labels: %s\n%s", kind == 0 ? "Deployment" : "ReplicaSet", g, where, ns, count,
		    g, where, labels, podspec("    ", place));
	}
	*pods += count;
	feature("kind-", kinds[kind]);
}

static void
extralabels(char *s)
{
	int t = wpick("40 30 30");

	*s = '\0';
	if (t > 0)
		strcat(s, t == 1 ? ", tier: a" : ", tier: b");
	t = wpick("50 30 20");
	if (t > 0)
		strcat(s, t == 1 ? ", track: stable" : ", track: canary");
}

static void
unready(const char *ns, int g, const char *where, long count, long u)
{
	if (u > count)
		u = count;
	if (u < 1)
		return;
	fprintf(pf, "unready %s g%d-%s %ld\n", ns, g, where, u);
	feature("", "unready");
}

/* a budget of group g (its neighbour other) of total pods */
static void
budget(const char *ns, int g, int j, int sel, int spec, int policy, int other, long total)
{
	char sp[64], se[256], tok[128];
	const char *k = spec < 2 ? "minAvailable" : "maxUnavailable";

	feature("", specs[spec]);
	if (spec % 2 == 0)
		snprintf(sp, sizeof sp, "%s: %ld", k, rnd(total + 2));
	else
		snprintf(sp, sizeof sp, "%s: \"%s%%\"", k, pcts[rnd(8)]);
	feature("sel-", sels[sel]);
	/* tok: the selector again, for the plan (k=v, k~a|b: In, k!~a|b: NotIn,
	 * k?: Exists, k!?: DoesNotExist; none: every pod) */
	if (sel == S_LABELS) {
		snprintf(se, sizeof se, "{matchLabels: {app: g%d}}", g);
		snprintf(tok, sizeof tok, "app=g%d", g);
	} else if (sel == S_LABELS2) {
		const char *t = pct(50) ? "a" : "b";

		snprintf(se, sizeof se, "{matchLabels: {app: g%d, tier: %s}}", g, t);
		snprintf(tok, sizeof tok, "app=g%d tier=%s", g, t);
	} else if (sel == S_PART) {
		snprintf(se, sizeof se, "{matchLabels: {ctl: g%d-d}}", g);
		snprintf(tok, sizeof tok, "ctl=g%d-d", g);
	} else if (sel == S_IN && other != g && pct(40)) {
		snprintf(se, sizeof se, "{matchExpressions: [{key: app, operator: In, values: [g%d, g%d]}]}", g, other);
		snprintf(tok, sizeof tok, "app~g%d|g%d", g, other);
	} else if (sel == S_IN) {
		snprintf(se, sizeof se, "{matchExpressions: [{key: app, operator: In, values: [g%d]}]}", g);
		snprintf(tok, sizeof tok, "app~g%d", g);
	} else if (sel == S_NOTIN && pct(60)) {
		snprintf(se, sizeof se, "{matchLabels: {app: g%d}, matchExpressions: [{key: tier, operator: NotIn, values: [b]}]}", g);
		snprintf(tok, sizeof tok, "app=g%d tier!~b", g);
	} else if (sel == S_NOTIN) {
		snprintf(se, sizeof se, "{matchExpressions: [{key: app, operator: NotIn, values: [g%d, ds]}]}", other);
		snprintf(tok, sizeof tok, "app!~g%d|ds", other);
	} else if (sel == S_EXISTS || sel == S_NOTEXISTS) {
		snprintf(se, sizeof se, "{matchLabels: {app: g%d}, matchExpressions: [{key: track, operator: %s}]}",
		    g, sel == S_EXISTS ? "Exists" : "DoesNotExist");
		snprintf(tok, sizeof tok, "app=g%d track%s", g, sel == S_EXISTS ? "?" : "!?");
	} else {
		snprintf(se, sizeof se, "{}");
		tok[0] = '\0';
	}
	fprintf(pf, "budget %s g%d-b%d%s%s\n", ns, g, j, tok[0] ? " " : "", tok);
	feature("policy-", policies[policy]);
	put(mainf, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: g%d-b%d\n"
	    "  namespace: %s\n  labels: {gpudrv-evict: \"1\"}\nspec:\n  %s\n  selector: %s%s%s\n", g, j,
	    ns, sp, se, policy ? "\n  unhealthyPodEvictionPolicy: " : "", policy ? policies[policy] : "");
}

static FILE *
create_(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		exit(2);
	}
	return f;
}

/* a group: its parts on d and o: kind, pods, extra labels, unready pods; budgets */
struct group {
	int kd, ko, nb, sk[3], st[3], po[3];
	long nd, no, ud, uo;
	char ld[64], lo[64];
};

/* a selector of the group's pods only */
static int plain(int s) { return s == S_LABELS || s == S_IN; }
static int randsel(void) { return wpick("34 8 5 14 12 9 9 9"); }
static int randspec(void) { return wpick("30 20 30 20"); }
static int randpolicy(void) { return wpick("45 25 30"); }

int
evict(unsigned long long seed, long n, const char *run, const char *dir)
{
	FILE *list;
	struct group gr[4], *g1 = &gr[1];
	long k, pods;
	int g, j, ng, ds, look, i;
	char ns[300];
	const char *force;

	X = seed % 2147483646 + 1;
	for (i = 0; i < 8; i++)
		rnd(2);
	pre = create_(dir, "pre", ".yaml");
	mainf = create_(dir, "main", ".yaml");
	list = create_(dir, "list", "");
	for (k = 1; k <= n; k++) {
		snprintf(sid, sizeof sid, "%s-%ld", run, k);
		sf = create_(dir, sid, ".yaml");
		pf = create_(dir, sid, ".plan");
		fprintf(list, "%s\n", sid);
		force = feats[(k + seed) % NF];
		fprintf(pf, "feature forced:%s\ndrain %s-d\nother %s-o\n", force, sid, sid);
		node("d");
		node("o");
		for (i = 0; i < 2; i++)
			put(pre, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s%s\n"
			    "  labels: {gpudrv-evict: \"1\"}\n", sid, i ? "-x" : "");
		fprintf(pf, "ns %s\n", sid);
		pods = 0;

		/* The groups: kinds, sizes, labels, unready pods. */
		ng = 1 + (int)rnd(3);
		for (g = 1; g <= ng; g++) {
			struct group *p = &gr[g];

			p->kd = wpick("45 30 25");
			p->ko = pct(75) ? p->kd : wpick("45 30 25");
			p->nd = wpick("10 30 35 25");
			p->no = wpick("30 35 25 10");
			extralabels(p->ld);
			if (pct(50))
				strcpy(p->lo, p->ld);
			else
				extralabels(p->lo);
			p->ud = pct(35) ? 1 + rnd(p->nd + 1) : 0;
			p->uo = pct(25) ? 1 + rnd(p->no + 1) : 0;
			p->nb = wpick("20 60 20");
			for (j = 1; j <= 2; j++) {
				p->sk[j] = randsel();
				p->st[j] = randspec();
				p->po[j] = randpolicy();
			}
		}
		/* Group 1 always has pods on the drained node. */
		if (g1->nd == 0)
			g1->nd = 1 + rnd(3);
		ds = pct(35);
		look = pct(35);
		/* The forced feature. */
		if (strncmp(force, "kind-", 5) == 0)
			g1->kd = find(kinds, force + 5);
		else if (strcmp(force, "ds") == 0)
			ds = 1;
		else if (strcmp(force, "lookalike") == 0)
			look = 1;
		else if (strcmp(force, "two-budgets") == 0) {
			g1->nb = 2;
			g1->sk[1] = S_LABELS;
			g1->sk[2] = pct(50) ? S_IN : S_LABELS;
		} else if (strncmp(force, "minAvailable-", 13) == 0) {
			g1->nb += g1->nb == 0;
			g1->st[1] = find(specs, force);
		} else if (strncmp(force, "sel-", 4) == 0) {
			g1->nb += g1->nb == 0;
			g1->sk[1] = find(sels, force + 4);
		} else if (strcmp(force, "unready") == 0) {
			g1->ud = 1 + rnd(g1->nd);
		} else if (strncmp(force, "policy-", 7) == 0) {
			g1->nb += g1->nb == 0;
			g1->po[1] = find(policies, force + 7);
			if (g1->ud == 0)
				g1->ud = 1 + rnd(g1->nd);
		} /* maxUnavailable-*: nothing forced, as the awk original never did (its
		   * /Available-/ matched minAvailable- only): a fix would change every seed */

		for (g = 1; g <= ng; g++) {
			struct group *p = &gr[g];

			part(sid, &pods, g, "d", p->kd, p->nd, p->ld);
			part(sid, &pods, g, "o", p->ko, p->no, p->lo);
			unready(sid, g, "d", p->nd, p->ud);
			unready(sid, g, "o", p->no, p->uo);
			fprintf(pf, "feature group-budgets-%d\n", p->nb);
			if (p->nd > 0 && p->no > 0)
				feature("", "split");
			for (j = 1; j <= p->nb; j++)
				budget(sid, g, j, p->sk[j], p->st[j], p->po[j], g % ng + 1, p->nd + p->no);
			if (p->nb == 2 && plain(p->sk[1]) && plain(p->sk[2]) && p->nd > 0)
				feature("", "two-budgets");
		}
		if (ds) {
			int sel = pct(50);

			put(mainf, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n"
			    "  namespace: %s\n  labels: {gpudrv-evict: \"1\"}\nspec:\n"
			    "  selector: {matchLabels: {ctl: ds}}\n  template:\n    metadata:\n"
			    "      labels: {ctl: ds, app: %s, gpudrv-evict: \"1\"}\n", sid, sel ? "g1" : "ds");
			snprintf(ns, sizeof ns, "nodeSelector: {gpudrv-evict/scn: %s}", sid);
			put(mainf, "%s", podspec("    ", ns));
			pods += 2;
			feature("", "ds");
			if (sel)
				feature("", "ds-selected");
		}
		fprintf(pf, "pods %s %ld\n", sid, pods);

		/* The look-alike namespace: group 1 again, same labels and places,
		 * with a budget of its own or none. */
		if (look) {
			snprintf(ns, sizeof ns, "%s-x", sid);
			fprintf(pf, "ns %s\n", ns);
			pods = 0;
			part(ns, &pods, 1, "d", g1->kd, g1->nd, g1->ld);
			part(ns, &pods, 1, "o", g1->ko, g1->no, g1->lo);
			if (pct(30))
				unready(ns, 1, "d", g1->nd, 1);
			if (pct(60)) {
				int st = randspec();

				budget(ns, 1, 1, S_LABELS, st, randpolicy(), 2, g1->nd + g1->no);
			}
			fprintf(pf, "pods %s %ld\n", ns, pods);
			feature("", "lookalike");
		}
		if (fclose(sf) != 0 || fclose(pf) != 0)
			return 2;
	}
	return (fclose(pre) | fclose(mainf) | fclose(list)) != 0 ? 2 : 0;
}
