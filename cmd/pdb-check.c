/*
 * pdb-check: would `kubectl drain --ignore-daemonsets --delete-emptydir-data`
 * of a node pass its PodDisruptionBudgets?  Reading them is pdb.c's, the
 * eviction API's rules drain.c's; this says what they find.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-s] node [file] | -a [-s] [file] | -p [file]";

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

/* The pods' own obstacles, in input order; 1 if there is one. */
static int
pods_report(struct drain *d, const struct pod *pods, size_t np, const char *node)
{
	size_t i, j, n;
	int blocked = 0;

	for (i = 0; i < np; i++) {
		const struct pod *p = &pods[i];

		if (p->nocontroller) {
			lead(node);
			printf("%s/%s NO-CONTROLLER: kubectl drain refuses a pod no controller "
			    "manages (--force would delete it for good); delete it or run it "
			    "under a Deployment, StatefulSet or Job\n", p->ns, p->name);
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
 * The drain of the node that pods[0..np) run on (in input order), as
 * `pdb-check NODE` says it, but for the line OK; with node (-a) each line
 * starts with it, and the DRAWS lines come before the obstacles.  1 if the
 * drain would be blocked.
 */
static int
node_report(struct drain *d, struct pod *pods, size_t np, const char *node, int listing)
{
	size_t i;
	int blocked;

	if (listing)
		for (i = 0; i < np; i++)
			if (pods[i].skip != NULL) {
				lead(node);
				printf("SKIP %s/%s %s\n", pods[i].ns, pods[i].name, pods[i].skip);
			}
	drain_node(d, pods, np);
	if (node != NULL)
		draws_report(d, node);
	blocked = pods_report(d, pods, np, node);
	/* Then the budgets, in input order. */
	for (i = 0; i < d->nused; i++) {
		if (budget_blocks(d->used[i]))
			blocked = 1;
		budget_report(d->used[i], node);
	}
	drain_next(d);
	return blocked;
}

int
main(int argc, char **argv)
{
	struct cluster cl;
	struct drain d;
	const char *node = NULL;
	size_t i, j;
	int c, rc, all = 0, listing = 0, blocked = 0, pods = 0;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "ashp", usage)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 's': listing = 1; break;
		case 'p': pods = 1; break;
		}
	}
	if (pods) {
		/* the pods as read, a line each: no budget, no verdict */
		if (all || listing || argc - optind > 1)
			usage_exit(usage);
		if ((rc = pods_print(argv[optind], stdout)) != EXIT_CLEAN)
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

	/* One pass: every budget is read and kept, only the node's pods are kept
	 * (-a: every pod that runs on a node). */
	if (cluster_read(&cl, argv[optind], node) != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	drain_init(&d, cl.budgets, cl.nb);

	if (all) {
		cluster_by_node(&cl);
		for (i = 0; i < cl.np; i = j) {
			j = node_pods_end(&cl, i);
			if (node_report(&d, &cl.pods[i], j - i, cl.pods[i].node, listing))
				blocked = 1;
		}
	} else {
		if (cl.np == 0)
			warnf("%s: no pod runs on node %s (is the node name right?)", cl.name, node);
		blocked = node_report(&d, cl.pods, cl.np, NULL, listing);
		if (!blocked)
			puts("OK");
	}

	drain_free(&d);
	cluster_free(&cl);
	rc = fshut(stdout, "stdout");
	return rc ? rc : blocked ? EXIT_FINDINGS : EXIT_CLEAN;
}
