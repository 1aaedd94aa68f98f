/*
 * pdb-check: would the removal of a node's pods pass its
 * PodDisruptionBudgets: `kubectl drain --ignore-daemonsets
 * --delete-emptydir-data`, or (-y) what the node's upgradePolicy removes?
 * Reading them is pdb.c's, which pods go remove.c's, the eviction API's
 * rules drain.c's; this says what they find.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] =
    "[-s] [-y policies] node [file] | -a [-s] [-y policies] [file] | -p [-w] [file] | -b [-w] [file]";

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
	char why[1024], h[24], d[24], a[24];
	size_t i, j;

	if (!budget_blocks(b))
		return;
	block_why(b, why, sizeof why);
	/* the pods that draw on it: an unready one evicted outright does not */
	lead(node);
	printf("%s/%s BLOCKS ", b->ns, b->name);
	for (i = 0, j = 0; i < b->npods; i++)
		if (b->pods[i]->ready || !unready_goes(b))
			printf("%s%s/%s", j++ ? "," : "", b->pods[i]->ns, b->pods[i]->name);
	snprintf(h, sizeof h, b->has_healthy ? "%ld" : "-", b->healthy);
	snprintf(d, sizeof d, b->has_desired ? "%ld" : "-", b->desired);
	snprintf(a, sizeof a, b->has_allowed ? "%ld" : "-", b->allowed);
	printf(" %s=%s currentHealthy=%s desiredHealthy=%s disruptionsAllowed=%s needed=%lld: %s\n",
	    b->maxun.set ? "maxUnavailable" : "minAvailable",
	    b->maxun.set ? b->maxun.text : b->minav.set ? b->minav.text : "unset",
	    h, d, a, needed(b), why);
}

/* DRAWS BUDGET N A: the disruptions the node's pods need of each budget, and A it allows. */
static void
draws_report(const struct drain *d, const char *node)
{
	const struct budget *b;
	size_t j;

	for (j = 0; j < d->nused; j++) {
		b = d->used[j];
		if (needed(b) < 1)
			continue;
		lead(node);
		if (b->has_allowed)
			printf("DRAWS %s/%s %lld %ld\n", b->ns, b->name, needed(b), b->allowed);
		else
			printf("DRAWS %s/%s %lld -\n", b->ns, b->name, needed(b));
	}
}

/* Why the removal refuses p, and which field would let it go. */
static void
refusal(const struct pod *p, const struct removal *rm, int method)
{
	int del = method == RM_DELETION;

	printf("%s/%s %s: ", p->ns, p->name, p->refused);
	if (!rm->policy)
		printf("kubectl drain refuses a pod no controller manages (--force would delete "
		    "it for good); delete it or run it under a Deployment, StatefulSet or Job\n");
	else if (strcmp(p->refused, RF_LOCAL) == 0)
		printf("%s emptyDir data, which %s loses, and %s.deleteEmptyDir is false: set it "
		    "true to let the data go, or keep it elsewhere than in emptyDir\n",
		    del ? "it holds a GPU and has" : "it has", del ? "its deletion" : "the drain",
		    del ? "podDeletion" : "drain");
	else if (strcmp(p->refused, RF_UNMANAGED) == 0)
		printf("%sno controller manages it, so %s would be for good, and %s.force is false: "
		    "set it true to delete it, or run it under a Deployment, StatefulSet or Job\n",
		    del ? "it holds a GPU and " : "", del ? "its deletion" : "the drain's",
		    del ? "podDeletion" : "drain");
	else
		printf("it holds a GPU and is %s: the pod deletion leaves it and fails; "
		    "drain.enable: true drains the node instead\n",
		    p->daemonset ? "a DaemonSet's pod" : "a mirror pod");
}

/* The pods' own obstacles, in input order; 1 if there is one. */
static int
pods_report(struct drain *d, const struct pod *pods, size_t np, const char *node,
    const struct removal *rm, int method)
{
	size_t i, j, n;
	int blocked = 0;

	for (i = 0; i < np; i++) {
		const struct pod *p = &pods[i];

		if (p->refused != NULL) {
			lead(node);
			refusal(p, rm, method);
			blocked = 1;
		}
		if (!p->multi)
			continue;
		n = budgets_of(d, p);
		lead(node);
		printf("%s/%s MULTIPLE-BUDGETS ", p->ns, p->name);
		for (j = 0; j < n; j++)
			printf("%s%s/%s", j ? "," : "", d->match[j]->ns, d->match[j]->name);
		printf(": the eviction API refuses (HTTP 500); keep one budget per pod\n");
		blocked = 1;
	}
	return blocked;
}

/*
 * The removal of the pods of the node that pods[0..np) run on (in input
 * order), as `pdb-check NODE` says it, but for the line OK; with node (-a)
 * each line starts with it, and the DRAWS lines come before the obstacles.
 * listing: the pods taken without a budget asked (SKIP), and for one node
 * under a policy the method and the pods it takes first.  1 if the removal
 * would be refused.
 */
static int
node_report(struct drain *d, struct pod *pods, size_t np, const char *node, int listing,
    const struct removal *rm)
{
	const struct pod *fell;
	const char *fell_why;
	size_t i;
	int blocked, method;

	method = removal_plan(rm, pods, np, &fell, &fell_why);
	if (listing && rm->policy && node == NULL) {
		printf("METHOD %s", removal_methods[method]);
		if (fell != NULL)
			printf(": the pod deletion cannot take %s/%s (%s), and drain.enable is true",
			    fell->ns, fell->name, fell_why);
		putchar('\n');
		for (i = 0; i < np; i++)
			if (pods[i].go)
				printf("REMOVE %s/%s\n", pods[i].ns, pods[i].name);
	}
	if (listing)
		for (i = 0; i < np; i++)
			if (pods[i].skip != NULL && (!rm->policy || pods[i].go)) {
				lead(node);
				printf("SKIP %s/%s %s\n", pods[i].ns, pods[i].name, pods[i].skip);
			}
	drain_node(d, pods, np);
	if (node != NULL)
		draws_report(d, node);
	blocked = pods_report(d, pods, np, node, rm, method);
	/* Then the budgets, in input order. */
	for (i = 0; i < d->nused; i++) {
		if (budget_blocks(d->used[i]))
			blocked = 1;
		budget_report(d->used[i], node);
	}
	drain_next(d);
	return blocked;
}

/* The removal of a node: its owner's (made once an owner), else the "-" policy's, else plain. */
struct removals {
	struct policies *ps;
	struct removal *rm; /* by owner, as policies_at */
	int *made;
	struct removal plain;
};

static const struct removal *
removal_of(struct removals *r, const char *node)
{
	const struct policy *p;
	char why[320];
	size_t i;

	if (r->ps == NULL)
		return &r->plain;
	if ((p = policies_node(r->ps, node)) == NULL) {
		for (i = 0; i < policies_count(r->ps); i++)
			if (strcmp(policies_at(r->ps, i)->owner, "-") == 0)
				break;
		if (i == policies_count(r->ps))
			return &r->plain;
		p = policies_at(r->ps, i);
	}
	i = (size_t)(p - policies_at(r->ps, 0));
	if (!r->made[i]) {
		if (removal_from(&r->rm[i], p, why, sizeof why) != 0)
			die("%s: drain.podSelector: %s", p->owner, why);
		r->made[i] = 1;
	}
	return &r->rm[i];
}

int
main(int argc, char **argv)
{
	struct cluster cl;
	struct drain d;
	struct removals r;
	const char *node = NULL, *policies = NULL;
	size_t i, j;
	int c, rc, all = 0, listing = 0, blocked = 0, pods = 0, budgets = 0, watch = 0;

	setprogname(argv[0]);
	memset(&r, 0, sizeof r);
	while ((c = nextopt(argc, argv, "abshpwy:", usage)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'b': budgets = 1; break;
		case 's': listing = 1; break;
		case 'p': pods = 1; break;
		case 'w': watch = 1; break;
		case 'y': policies = optarg; break;
		}
	}
	if (watch && !pods && !budgets) {
		warnf("-w reads a watch of pods or of budgets: it goes with -p or -b");
		usage_exit(usage);
	}
	if (pods || budgets) {
		/* the pods or the budgets as read (-w: as they come), a line each: no verdict */
		if ((pods && budgets) || all || listing || policies || argc - optind > 1)
			usage_exit(usage);
		rc = pods ? pods_print(argv[optind], stdout, watch) :
		    budgets_print(argv[optind], stdout, watch);
		if (rc != EXIT_CLEAN)
			return rc;
		return fshut(stdout, "stdout");
	}
	if (all && argc - optind > 1) {
		warnf("-a checks every node: it takes no node name");
		usage_exit(usage);
	}
	if (argc - optind < !all || argc - optind > 2)
		usage_exit(usage);
	if (!all) {
		node = argv[optind++];
		if (!dns_subdomain_ok(node))
			die("node %s is not a valid node name", qstr(node));
	}

	removal_plain(&r.plain);
	if (policies != NULL) {
		if (strcmp(policies, "-") == 0 && (argv[optind] == NULL || strcmp(argv[optind], "-") == 0))
			die("-y -: the policies and the cluster cannot both be standard input");
		r.ps = policies_read(policies);
		r.rm = xmalloc((policies_count(r.ps) + 1) * sizeof *r.rm);
		r.made = xmalloc((policies_count(r.ps) + 1) * sizeof *r.made);
		memset(r.made, 0, (policies_count(r.ps) + 1) * sizeof *r.made);
		if (node != NULL)
			removal_of(&r, node); /* a bad selector said before the cluster is read */
	}

	/* One pass: every budget is read and kept, only the node's pods are kept
	 * (-a: every pod that runs on a node). */
	if (cluster_read(&cl, argv[optind], node, policies != NULL) != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	drain_init(&d, cl.budgets, cl.nb);

	if (all) {
		cluster_by_node(&cl);
		for (i = 0; i < cl.np; i = j) {
			j = node_pods_end(&cl, i);
			if (node_report(&d, &cl.pods[i], j - i, cl.pods[i].node, listing,
			    removal_of(&r, cl.pods[i].node)))
				blocked = 1;
		}
	} else {
		if (cl.np == 0)
			warnf("%s: no pod runs on node %s (is the node name right?)", cl.name, node);
		blocked = node_report(&d, cl.pods, cl.np, NULL, listing, removal_of(&r, node));
		if (!blocked)
			puts("OK");
	}

	drain_free(&d);
	cluster_free(&cl);
	if (r.ps != NULL)
		for (i = 0; i < policies_count(r.ps); i++)
			if (r.made[i])
				removal_free(&r.rm[i]);
	free(r.rm);
	free(r.made);
	policies_free(r.ps);
	rc = fshut(stdout, "stdout");
	return rc ? rc : blocked ? EXIT_FINDINGS : EXIT_CLEAN;
}
