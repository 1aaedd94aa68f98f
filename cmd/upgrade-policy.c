/*
 * upgrade-policy: the GPU Operator's upgradePolicy in force for each node,
 * field by field, and where each field came from (the owner object, the
 * default, a flag); policy.c reads it, target.c finds the owner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-U field=value]... objects [nodes]";

struct run {
	const struct targets *t;
	char **set;       /* the -U assignments */
	int nset;
	char **owners;    /* first seen first; their policies */
	const cJSON **pol;
	int *nvd;
	size_t no, ocap;
	char **nodes;     /* "node NAME OWNER" lines held until their document ends */
	size_t nn, ncap, kept;
};

/* An owner's place among those seen, added with its upgradePolicy if new. */
static void
owner_add(struct run *r, const char *owner, const cJSON *policy, int nvd)
{
	size_t i;

	for (i = 0; i < r->no; i++)
		if (strcmp(r->owners[i], owner) == 0)
			return;
	r->owners = xgrow(r->owners, &r->ocap, r->no, 4, sizeof *r->owners);
	r->pol = xrealloc(r->pol, r->ocap * sizeof *r->pol);
	r->nvd = xrealloc(r->nvd, r->ocap * sizeof *r->nvd);
	r->owners[r->no] = xstrndup(owner, strlen(owner));
	r->pol[r->no] = policy;
	r->nvd[r->no++] = nvd;
}

static void
each_owner(const char *owner, const cJSON *policy, int nvd, void *arg)
{
	owner_add(arg, owner, policy, nvd);
}

static void
one_node(const struct item *it, void *arg)
{
	struct run *r = arg;
	const char *name = node_name(it->obj);
	struct target tg;
	char *line;

	if (name == NULL)
		die("item %zu: a Node without a valid metadata.name", it->index);
	if (target_of(r->t, it->obj, &tg) < 0)
		warnf("node %s: %s and %s both select it: the GPU Operator upgrades it under "
		    "neither; its policy here is the defaults", name, tg.source, tg.other);
	owner_add(r, tg.owner, tg.policy, tg.nvd);
	line = xmalloc(strlen(name) + strlen(tg.owner) + 8);
	sprintf(line, "node %s %s", name, tg.owner);
	r->nodes = xgrow(r->nodes, &r->ncap, r->nn, 64, sizeof *r->nodes);
	r->nodes[r->nn++] = line;
}

/* A document ends: its nodes stand, or (one Node read as a list) are forgotten. */
static void
end_doc(int ok, void *arg)
{
	struct run *r = arg;

	if (!ok)
		while (r->nn > r->kept)
			free(r->nodes[--r->nn]);
	r->kept = r->nn;
}

/* An owner's policy, the flags over it, the drain's selector as the operator runs it. */
static void
make_policy(const struct run *r, size_t i, struct policy *p)
{
	const char *why;
	char *sel;
	int k;

	policy_from(p, r->owners[i], r->pol[i], r->nvd[i]);
	for (k = 0; k < r->nset; k++)
		if (policy_set(p, r->set[k], &why) != 0)
			die("-U %s: %s", qstr(r->set[k]), why); /* checked before: not reached */
	sel = policy_drain_selector(p);
	free(p->value[PF_DR_SEL]);
	p->value[PF_DR_SEL] = sel;
}

int
main(int argc, char **argv)
{
	struct run r;
	struct node_reader nr = { .fn = one_node, .end = end_doc, .all_labels = 1 };
	struct policy check, *pols;
	struct targets *t;
	const char *why;
	size_t i;
	int c, f, rc, trouble = 0;

	setprogname(argv[0]);
	memset(&r, 0, sizeof r);
	r.set = xmalloc((size_t)argc * sizeof *r.set);
	while ((c = nextopt(argc, argv, "hU:", usage)) != -1)
		if (c == 'U')
			r.set[r.nset++] = optarg;
	if (argc - optind < 1 || argc - optind > 2)
		usage_exit(usage);
	/* The flags first: a bad one is said before any input is read. */
	policy_from(&check, "-", NULL, 0);
	for (c = 0; c < r.nset; c++)
		if (policy_set(&check, r.set[c], &why) != 0)
			die("-U %s: %s", qstr(r.set[c]), why);
	policy_free(&check);
	if (argc - optind == 2 && strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		die("the objects and the nodes cannot both be standard input");

	t = targets_load(argv[optind], 1);
	r.t = t;
	if (argc - optind == 2) {
		nr.arg = &r;
		trouble = nodes_read(argv[optind + 1], &nr);
	} else {
		targets_owners(t, each_owner, &r);
		owner_add(&r, "-", NULL, 0);
	}
	/* Every policy made (a bad field dies here) before a line is printed. */
	pols = xmalloc((r.no + 1) * sizeof *pols);
	for (i = 0; i < r.no; i++)
		make_policy(&r, i, &pols[i]);
	for (i = 0; i < r.nn; i++)
		puts(r.nodes[i]);
	for (i = 0; !trouble && i < r.no; i++)
		for (f = 0; f < PF_N; f++)
			printf("policy %s %s %s %s\n", pols[i].owner, policy_field_name(f),
			    pols[i].source[f], pols[i].value[f]);
	for (i = 0; i < r.no; i++)
		policy_free(&pols[i]);
	free(pols);
	for (i = 0; i < r.nn; i++)
		free(r.nodes[i]);
	for (i = 0; i < r.no; i++)
		free(r.owners[i]);
	free(r.nodes);
	free(r.owners);
	free(r.pol);
	free(r.nvd);
	free(r.set);
	targets_free(t);
	rc = fshut(stdout, "stdout");
	return rc ? rc : trouble ? EXIT_TROUBLE : EXIT_CLEAN;
}
