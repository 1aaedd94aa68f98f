/*
 * The fleet rollout's decisions (rollout-plan): which nodes to start now,
 * from the nodes' facts (labels2tag -F records), what each one's drain
 * draws on the budgets (pdb-check -a) and the nodes already under way.
 *
 * The limits are the GPU Operator's upgradePolicy, as k8s-operator-libs
 * (pkg/upgrade) applies them: at most maxParallelUpgrades nodes under way
 * (0: no limit), and no start that takes the GPU nodes that are cordoned or
 * not Ready (or under way) beyond maxUnavailable, a count or a percentage
 * of every GPU node rounded up; a node already unavailable costs none.  The
 * budgets add the rule the operator leaves to the eviction API: the nodes
 * under way and those started never draw on a budget beyond its
 * disruptionsAllowed.  The order is the operator's: nodes an earlier run
 * left under way, then nodes already cordoned or not Ready, then the
 * others, each by name.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

enum { PN_TODO, PN_DONE, PN_SKIP, PN_FAILED };
enum { W_NONE, W_PARALLEL, W_UNAVAILABLE, W_BUDGET };
static const char *const waits[] = { "-", "parallel", "unavailable", "budget" };

struct pdraw {
	size_t node, budget;
	long long n;
	size_t line;
};

struct pbudget {
	char *name;
	long long allowed; /* -1: not known */
	long long used;    /* by the nodes under way and those started */
};

/* The nodes one upgradePolicy owns (an NVIDIADriver, the ClusterPolicy):
 * the operator computes its limits for each owner apart. */
struct pgroup {
	const char *owner; /* "-" without policies */
	long long pmax, umax;
	struct intstr maxun;
	long long busy;    /* its nodes under way (and the unlisted ones) */
	long long unav;    /* down, or under way */
	long long unav0, n;
};

struct pnode {
	char *name, *tag;
	size_t g;          /* its group */
	int cls, down, rank;
	int in_scope, running, gone;
	int blocked;       /* its drain would be refused even alone */
	char *held_by;     /* or only by a budget a node under way took: that one */
	int why;           /* why it was not started at the last look: W_* */
	size_t line;       /* of its facts record */
	size_t d0, nd;     /* its draws: plan.draws[d0 .. d0 + nd) */
	size_t waited;     /* dry run: 1 + the budget it was last said to wait for */
	int held_said;     /* dry run: its wait for held_by was said */
	long long start;   /* dry run: its place among the starts, 0 if none */
};

struct plan {
	struct pgroup *groups;
	size_t ng;
	struct policies *ps;
	struct pnode *nodes;
	struct pbudget *budgets;
	struct pdraw *draws;
	size_t nn, nb, ndr, ncap, bcap, dcap;
	struct strset *by_name, *by_budget;
	struct strset *held;  /* the budgets the nodes under way took when they started */
	long long extra; /* nodes under way the facts no longer list: they hold a slot in each group */
};

static void
must_name(const char *s, const struct lines *l)
{
	if (!dns_subdomain_ok(s))
		die("%s:%zu: %s is not a node name", l->name, l->lineno, qstr(s));
}

static void
read_facts(struct plan *p, const char *path, const char *version)
{
	struct lines l;
	struct pnode *n;
	char *s, *f[RF_COUNT + 1];
	size_t first;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if (record_split(s, f) != 0)
			die("%s:%zu: not a labels2tag -F record (node tag driver state skip cordon "
			    "ready initial since cordoner uid)", l.name, l.lineno);
		must_name(f[RF_NODE], &l);
		if ((first = strset_get(p->by_name, f[RF_NODE])) != 0)
			die("%s:%zu: node %s again (first on line %zu)", l.name, l.lineno, f[RF_NODE],
			    p->nodes[first - 1].line);
		p->nodes = xgrow(p->nodes, &p->ncap, p->nn + 1, 64, sizeof *p->nodes);
		n = &p->nodes[p->nn++];
		memset(n, 0, sizeof *n);
		n->line = l.lineno;
		strset_add(p->by_name, f[RF_NODE], p->nn);
		n->name = xstrndup(f[RF_NODE], strlen(f[RF_NODE]));
		n->tag = xstrndup(f[RF_TAG], strlen(f[RF_TAG]));
		n->down = strcmp(f[RF_CORDON], "cordoned") == 0 || strcmp(f[RF_READY], "ready") != 0;
		n->in_scope = 1;
		if (strcmp(f[RF_DRIVER], version) == 0 &&
		    (strcmp(f[RF_STATE], "-") == 0 || strcmp(f[RF_STATE], S_DONE) == 0))
			n->cls = PN_DONE;
		else if (strcmp(f[RF_SKIP], "skip") == 0)
			n->cls = PN_SKIP;
		else if (strcmp(f[RF_STATE], S_FAILED) == 0)
			n->cls = PN_FAILED;
		n->rank = strcmp(f[RF_STATE], "-") != 0 && strcmp(f[RF_STATE], S_DONE) != 0 ? 1 : n->down ? 2 : 3;
	}
	lines_close(&l);
}

/* The node of a facts record, or NULL. */
static struct pnode *
node_of(const struct plan *p, const char *name)
{
	size_t i = strset_get(p->by_name, name);

	return i == 0 ? NULL : &p->nodes[i - 1];
}

static int
by_node(const void *a, const void *b)
{
	const struct pdraw *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

static long long
count_of(const char *s, int dash_ok)
{
	char *end;
	long long v;

	if (dash_ok && strcmp(s, "-") == 0)
		return -1;
	if (*s < '0' || *s > '9' || strlen(s) > 12)
		return -2;
	v = strtoll(s, &end, 10);
	return *end == '\0' ? v : -2;
}

/* namespace/name, neither empty. */
static int
budget_name(const char *s)
{
	const char *slash = strchr(s, '/');

	return slash != NULL && slash != s && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
}

/*
 * An obstacle to n's drain: a budget's BLOCKS (budget), or another.  A node
 * is blocked unless every obstacle is a budget that a node under way took
 * when it started: its drain evicted that budget's pod, and the budget
 * allows none until the pod's replacement is Ready; the node waits for it.
 */
static void
blocks(struct plan *p, struct pnode *n, const char *budget)
{
	if (budget != NULL && strset_get(p->held, budget) != 0) {
		if (n->held_by == NULL)
			n->held_by = xstrndup(budget, strlen(budget));
		return;
	}
	n->blocked = 1;
}

/*
 * pdb-check -a's lines: "node DRAWS ns/name N A" (A: disruptionsAllowed, or
 * - when the status has none), "node SKIP ..." (a pod no budget is asked
 * for), and any other line is what would block the node's drain even alone.
 * Nodes the facts do not list (no GPU) are passed over.
 */
static void
read_draws(struct plan *p, const char *path)
{
	struct lines l;
	struct pnode *n;
	struct pbudget *b;
	char *s, *rest, *f[6];
	long long need = 0, allowed = 0;
	size_t bi, i, j;
	int nf;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		/* (the node's name, then what pdb-check says: any number of words) */
		if ((rest = strchr(s, ' ')) == NULL || rest == s)
			die("%s:%zu: not a pdb-check -a line (node, then what it says)", l.name, l.lineno);
		*rest++ = '\0';
		must_name(s, &l);
		f[0] = s;
		nf = split_fields(rest, f + 1, 5); /* -1: more words than five (f[1..5] set) */
		nf = nf < 0 ? 6 : nf + 1;
		if ((n = node_of(p, s)) == NULL || strcmp(f[1], "SKIP") == 0)
			continue;
		if (*f[1] == '\0' || (nf > 2 && *f[2] == '\0'))
			die("%s:%zu: not a pdb-check -a line (node, then what it says)", l.name, l.lineno);
		if (strcmp(f[1], "DRAWS") != 0) {
			blocks(p, n, nf > 2 && strcmp(f[2], "BLOCKS") == 0 ? f[1] : NULL);
			continue;
		}
		if (nf != 5 || !budget_name(f[2]) || (need = count_of(f[3], 0)) < 1 ||
		    (allowed = count_of(f[4], 1)) < -1)
			die("%s:%zu: not a DRAWS line (node DRAWS namespace/budget needed allowed)",
			    l.name, l.lineno);
		if ((bi = strset_get(p->by_budget, f[2])) == 0) {
			p->budgets = xgrow(p->budgets, &p->bcap, p->nb + 1, 16, sizeof *p->budgets);
			b = &p->budgets[p->nb++];
			b->name = xstrndup(f[2], strlen(f[2]));
			b->allowed = allowed;
			b->used = 0;
			strset_add(p->by_budget, f[2], p->nb);
			bi = p->nb;
		} else if (p->budgets[bi - 1].allowed != allowed) {
			die("%s:%zu: budget %s allows %s here, %lld before: not one read of the budgets",
			    l.name, l.lineno, f[2], f[4], p->budgets[bi - 1].allowed);
		}
		p->draws = xgrow(p->draws, &p->dcap, p->ndr + 1, 64, sizeof *p->draws);
		p->draws[p->ndr].node = (size_t)(n - p->nodes);
		p->draws[p->ndr].budget = bi - 1;
		p->draws[p->ndr].line = l.lineno;
		p->draws[p->ndr++].n = need;
	}
	if (p->ndr > 0) /* (qsort of a null array, even empty, is undefined) */
		qsort(p->draws, p->ndr, sizeof *p->draws, by_node);
	for (i = 0; i < p->ndr; i++) {
		n = &p->nodes[p->draws[i].node];
		if (n->nd++ == 0)
			n->d0 = i;
		for (j = n->d0; j < i; j++)
			if (p->draws[j].budget == p->draws[i].budget)
				die("%s: node %s draws on %s twice (lines %zu and %zu)", l.name, n->name,
				    p->budgets[p->draws[i].budget].name, p->draws[j].line, p->draws[i].line);
	}
	lines_close(&l);
}

enum { N_SCOPE, N_RUNNING, N_GONE };

/* A file of node names, one a line, each a node of the scope, under way, or
 * done with; how many the facts do not list. */
static long long
read_names(struct plan *p, const char *path, int which)
{
	struct lines l;
	struct pnode *n;
	long long unlisted = 0;
	char *s;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		must_name(s, &l);
		if ((n = node_of(p, s)) == NULL)
			unlisted++;
		else if (which == N_SCOPE)
			n->in_scope = 1;
		else if (which == N_RUNNING)
			n->running = 1;
		else
			n->gone = 1;
	}
	lines_close(&l);
	return unlisted;
}

/* "node namespace/budget" lines: the budgets each node drew on when it
 * started; those of the nodes under way are held. */
static void
read_held(struct plan *p, const char *path)
{
	struct lines l;
	struct pnode *n;
	char *s, *f[3];

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if (split_fields(s, f, 3) != 2 || !budget_name(f[1]))
			die("%s:%zu: not a \"node namespace/budget\" line", l.name, l.lineno);
		must_name(f[0], &l);
		if ((n = node_of(p, f[0])) != NULL && n->running)
			strset_add(p->held, f[1], l.lineno);
	}
	lines_close(&l);
}

/*
 * The groups: one, the limits given, without policies; else one an owner
 * of upgrade-policy's output, its maxParallelUpgrades and maxUnavailable
 * (scaled over the GPU nodes it owns, as the operator scales it over the
 * nodes of its state).
 */
static void
make_groups(struct plan *p, const struct plan_input *in)
{
	const struct policy *pol;
	size_t i, k;

	if (in->policies == NULL) {
		p->groups = xmalloc(sizeof *p->groups);
		memset(p->groups, 0, sizeof *p->groups);
		p->groups[0].owner = "-";
		p->groups[0].pmax = in->par;
		p->groups[0].maxun = in->maxun;
		p->ng = 1;
	} else {
		p->ps = policies_read(in->policies);
		p->ng = policies_count(p->ps);
		p->groups = xmalloc((p->ng + 1) * sizeof *p->groups);
		memset(p->groups, 0, (p->ng + 1) * sizeof *p->groups);
		for (k = 0; k < p->ng; k++) {
			pol = policies_at(p->ps, k);
			p->groups[k].owner = pol->owner;
			p->groups[k].pmax = policy_count(pol, PF_PAR);
			if (intstr_parse(pol->value[PF_MAXUN], &p->groups[k].maxun) != 0)
				die("%s: %s: maxUnavailable %s is not a count or a percentage", in->policies,
				    pol->owner, qstr(pol->value[PF_MAXUN]));
		}
	}
	for (i = 0; i < p->nn; i++) {
		if (p->ps != NULL) {
			if ((pol = policies_node(p->ps, p->nodes[i].name)) == NULL)
				die("%s: node %s has no upgradePolicy (upgrade-policy's output for every GPU node)",
				    in->policies, p->nodes[i].name);
			p->nodes[i].g = (size_t)(pol - policies_at(p->ps, 0));
		}
		p->groups[p->nodes[i].g].n++;
	}
	for (k = 0; k < p->ng; k++)
		p->groups[k].umax = intstr_scaled(&p->groups[k].maxun, p->groups[k].n);
}

struct plan *
plan_load(const struct plan_input *in)
{
	struct plan *p = xmalloc(sizeof *p);
	size_t i;

	memset(p, 0, sizeof *p);
	p->by_name = strset_new();
	p->by_budget = strset_new();
	p->held = strset_new();
	read_facts(p, in->facts, in->version);
	/* A node under way the API no longer lists holds its slot all the same. */
	if (in->running != NULL)
		p->extra = read_names(p, in->running, N_RUNNING);
	if (in->held != NULL)
		read_held(p, in->held);
	read_draws(p, in->draws);
	if (in->scope != NULL) {
		for (i = 0; i < p->nn; i++)
			p->nodes[i].in_scope = 0;
		read_names(p, in->scope, N_SCOPE);
	}
	if (in->gone != NULL)
		read_names(p, in->gone, N_GONE);
	make_groups(p, in);
	return p;
}

void
plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->nn; i++) {
		free(p->nodes[i].name);
		free(p->nodes[i].tag);
		free(p->nodes[i].held_by);
	}
	for (i = 0; i < p->nb; i++)
		free(p->budgets[i].name);
	free(p->nodes);
	free(p->budgets);
	free(p->draws);
	strset_free(p->by_name);
	strset_free(p->by_budget);
	strset_free(p->held);
	free(p->groups);
	policies_free(p->ps);
	free(p);
}

static int
by_rank(const void *a, const void *b)
{
	const struct pnode *const *x = a, *const *y = b;

	if ((*x)->rank != (*y)->rank)
		return (*x)->rank - (*y)->rank;
	return strcmp((*x)->name, (*y)->name);
}

static int
by_name(const void *a, const void *b)
{
	const struct pnode *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/*
 * The first budget of n's that its draw does not fit now, or -1 (they all
 * do).  With alone: the first that allows less than n needs even with
 * nothing drawn on it, nothing under way holding it (no draw, not taken:
 * -k), whichever of n's draws it is.
 */
static long long
no_room(const struct plan *p, const struct pnode *n, int alone)
{
	const struct pdraw *d;
	const struct pbudget *b;
	size_t i;

	for (i = 0; i < n->nd; i++) {
		d = &p->draws[n->d0 + i];
		b = &p->budgets[d->budget];
		if ((b->allowed < 0 || b->used + d->n > b->allowed) &&
		    (!alone || (b->used == 0 && strset_get(p->held, b->name) == 0)))
			return (long long)d->budget;
	}
	return -1;
}

static void
take(struct plan *p, struct pnode *n, int sign)
{
	size_t i;

	for (i = 0; i < n->nd; i++)
		p->budgets[p->draws[n->d0 + i].budget].used += sign * p->draws[n->d0 + i].n;
	if (!n->down)
		p->groups[n->g].unav += sign;
}

static int
todo(const struct pnode *n)
{
	return n->in_scope && n->cls == PN_TODO && !n->gone && !n->running;
}

/*
 * One look: each node still to do, in order, started if it fits; else why
 * not.  Returns the nodes started.  A budget a node waits for is one the
 * nodes under way hold: with nothing under way, a drain its budget refuses
 * is pdb-check's to say (a line of its own: blocked).
 */
static long long
decide(struct plan *p, struct pnode **order, size_t n, FILE *out, int dry, long long *starts)
{
	struct pnode *c;
	struct pgroup *g;
	long long b, started = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		c = order[i];
		if (!todo(c))
			continue;
		g = &p->groups[c->g];
		c->why = g->pmax > 0 && g->busy >= g->pmax ? W_PARALLEL :
		    !c->down && g->unav >= g->umax ? W_UNAVAILABLE : W_NONE;
		if (c->why != W_NONE) {
			if (!dry)
				fprintf(out, "WAIT %s %s\n", c->name, waits[c->why]);
			continue;
		}
		if (c->blocked) {
			fprintf(out, "BLOCKED %s\n", c->name);
			c->gone = 1;
			continue;
		}
		if (c->held_by != NULL) {
			/* (said once in a dry run, as a budget's wait below) */
			if (!dry || !c->held_said)
				fprintf(out, "WAIT %s budget %s\n", c->name, c->held_by);
			c->held_said = 1;
			c->why = W_BUDGET;
			continue;
		}
		if (no_room(p, c, 1) >= 0) {
			/* too much for one budget alone: pdb-check says so, but
			 * whatever it said, the node is not started; whatever
			 * it waits for on its other budgets, it is blocked */
			fprintf(out, "BLOCKED %s\n", c->name);
			c->gone = 1;
			continue;
		}
		if ((b = no_room(p, c, 0)) >= 0) {
			/* (the look alone said the rest: what it waits for, a node
			 * under way holds; the fuzz targets hold it to that) */
			assert(p->budgets[b].used > 0 || strset_get(p->held, p->budgets[b].name) != 0);
			/* (a dry run says each wait once: its plan is a sequence) */
			if (!dry || c->waited != (size_t)b + 1)
				fprintf(out, "WAIT %s budget %s\n", c->name, p->budgets[b].name);
			c->waited = (size_t)b + 1;
			c->why = W_BUDGET;
			continue;
		}
		take(p, c, 1);
		c->running = 1;
		c->start = ++*starts;
		g->busy++;
		started++;
		fprintf(out, "START %s %s\n", c->name, c->tag);
	}
	return started;
}

void
plan_print(struct plan *p, int dry, FILE *out)
{
	struct pnode **order = xmalloc((p->nn + 1) * sizeof *order);
	long long starts = 0;
	size_t i, k, n = 0, first;
	struct pnode *c;

	for (k = 0; k < p->ng; k++)
		p->groups[k].busy = p->extra;
	for (i = 0; i < p->nn; i++) {
		c = &p->nodes[i];
		if (c->down)
			p->groups[c->g].unav++;
		if (c->running) { /* its slot, its draws, and its place if not down */
			p->groups[c->g].busy++;
			take(p, c, 1);
		}
		order[n++] = c;
	}
	for (k = 0; k < p->ng; k++)
		p->groups[k].unav0 = p->groups[k].unav;
	qsort(order, n, sizeof *order, by_rank);
	/* (a dry run ends the nodes under way first, in order) */
	for (i = 0; i < n; i++)
		if (order[i]->running)
			order[i]->start = ++starts - (long long)n - 1;
	starts = 0;
	if (!dry) {
		decide(p, order, n, out, 0, &starts);
	} else {
		/* As if each node took as long as the others: the one started
		 * first ends first, and gives back its slot, what it drew and its
		 * place among the unavailable (unless it was down before). */
		for (;;) {
			decide(p, order, n, out, 1, &starts);
			if (p->extra > 0) { /* unlisted, under way: they end first */
				p->extra--;
				for (k = 0; k < p->ng; k++)
					p->groups[k].busy--;
				continue;
			}
			first = n;
			for (i = 0; i < n; i++)
				if (order[i]->running && (first == n || order[i]->start < order[first]->start))
					first = i;
			if (first == n)
				break;
			c = order[first];
			take(p, c, -1);
			c->running = 0;
			c->gone = 1;
			p->groups[c->g].busy--;
		}
		for (i = 0; i < n; i++)
			if (todo(order[i]))
				fprintf(out, "LEFT %s %s\n", order[i]->name, waits[order[i]->why]);
	}
	qsort(order, n, sizeof *order, by_name);
	for (i = 0; i < n; i++) {
		c = order[i];
		if (!c->in_scope || c->cls == PN_TODO)
			continue;
		fprintf(out, "%s %s\n", c->cls == PN_DONE ? "DONE" : c->cls == PN_SKIP ? "SKIP" : "FAILED",
		    c->name);
	}
	/* each owner's (its name with policies), with nodes of its own */
	for (k = 0; k < p->ng; k++) {
		if (p->ps == NULL)
			fprintf(out, "UNAVAILABLE %lld %lld\n", p->groups[k].unav0, p->groups[k].umax);
		else if (p->groups[k].n > 0)
			fprintf(out, "UNAVAILABLE %lld %lld %s\n", p->groups[k].unav0, p->groups[k].umax,
			    p->groups[k].owner);
	}
	free(order);
}
