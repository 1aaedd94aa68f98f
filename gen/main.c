/*
 * gen: synthetic but realistic inputs for the benchmarks and tests.
 *
 *   gen [-y] [-r] [-B k] N      a List of N Nodes as `kubectl get nodes -o
 *                               json` (-y: -o yaml) prints it: ~110 labels,
 *                               40 images, a full status each, ~25 KB of
 *                               JSON per node.  -r: as `kubectl get --raw`
 *                               (NodeList, compact, items without kind).
 *                               -B k: every k-th node lacks its
 *                               driver-branch label.
 *   gen -k N                    the same nodes for kwok: annotation
 *                               kwok.x-k8s.io/node=fake, no conditions
 *                               (kwok's node-initialize stage sets them).
 *   gen -m ROWS                 a support matrix CSV of ROWS rows that holds
 *                               the tags of every 2nd generated node.
 *   gen [-y] -p PODS,PDBS NODES `kubectl get pdb,pods -A -o json` (-y: -o
 *                               yaml) of a GPU cluster of NODES nodes: PDBS
 *                               budgets, then PODS pods, each as the API
 *                               shows it (~5 KB of JSON); see pods.c.
 *   gen -r -p PODS,PDBS NODES   the two `kubectl get --raw` lists instead,
 *                               one a line: PodDisruptionBudgetList
 *                               (/apis/policy/v1/poddisruptionbudgets),
 *                               then PodList (/api/v1/pods).
 *   gen -C WHAT [-U uids] -p PODS,PDBS NODES
 *                               the same cluster for kubectl create, one
 *                               compact object a line, without what the API
 *                               sets (status, uid, ...): WHAT is owners
 *                               (namespaces, the DaemonSet, the ReplicaSets,
 *                               the Jobs), pods (but the Jobs'), budgets, or
 *                               unready ("namespace name" of the pods meant
 *                               not Ready).  -U: the owners' uids,
 *                               "namespace/name uid" lines (else generated).
 *   gen -s nodes|pdb [-y] [-n NODES] N
 *                               slim lists for the scale tests, little in
 *                               each item (slim.c): N Nodes, or N Pods on
 *                               NODES (default 50) nodes and 100 budgets.
 *   gen -e SEED -R RUN -d DIR N N random budget scenarios for
 *                               t/0950-e2e-evict.t, files in DIR (evict.c).
 *
 * Key order is kubectl's (sorted); the YAML is kubectl's: 2-space indent,
 * list items not indented under their key, strings quoted only where YAML
 * would read them as something else.
 */
#include "gen.h"

void
usage(void)
{
	fputs("usage: gen [-y | -r] [-k] [-B k] N\n"
	      "       gen -m ROWS\n"
	      "       gen [-y | -r | -C owners|pods|budgets|unready [-U uids]] -p PODS,PDBS NODES\n"
	      "       gen -s nodes|pdb [-y] [-n NODES] N\n"
	      "       gen -e SEED -R RUN -d DIR N\n",
	    stderr);
	exit(2);
}

/* a number of digits only, else usage */
static unsigned long long
number(const char *s)
{
	if (*s == '\0' || s[strspn(s, "0123456789")] != '\0')
		usage();
	return strtoull(s, NULL, 10);
}

int
main(int argc, char **argv)
{
	long n, broken = 0, np = 0, nb = 0, nnodes = 50;
	const char *what = NULL, *slimwhat = NULL, *seed = NULL, *run = NULL, *dir = NULL;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		const char *o = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "-y") == 0)
			yaml = 1;
		else if (strcmp(o, "-r") == 0)
			raw = 1;
		else if (strcmp(o, "-k") == 0)
			kwok = 1;
		else if (a == NULL)
			usage();
		else if (strcmp(o, "-B") == 0)
			broken = atol(argv[++i]);
		else if (strcmp(o, "-C") == 0)
			create = 1, what = argv[++i];
		else if (strcmp(o, "-U") == 0)
			uidfile = argv[++i];
		else if (strcmp(o, "-m") == 0) {
			matrix(atol(argv[++i]));
			return fflush(stdout) != 0;
		} else if (strcmp(o, "-p") == 0 &&
		    sscanf(argv[++i], "%ld,%ld", &np, &nb) == 2 && np >= 0 && nb >= 0)
			;
		else if (strcmp(o, "-s") == 0)
			slimwhat = argv[++i];
		else if (strcmp(o, "-n") == 0)
			nnodes = (long)number(argv[++i]);
		else if (strcmp(o, "-e") == 0)
			seed = argv[++i];
		else if (strcmp(o, "-R") == 0)
			run = argv[++i];
		else if (strcmp(o, "-d") == 0)
			dir = argv[++i];
		else
			usage();
	}
	if (seed != NULL) {
		if (i != argc - 1 || run == NULL || dir == NULL || *run == '\0' || *dir == '\0')
			usage();
		return evict(number(seed), (long)number(argv[i]), run, dir);
	}
	if (i != argc - 1 || (n = atol(argv[i])) <= 0 || yaml + raw + create > 1 ||
	    ((create || uidfile) && np == 0) || (uidfile && !create) || (kwok && np > 0))
		usage();
	if (slimwhat != NULL) {
		if (raw || kwok || np > 0 || nnodes <= 0 ||
		    (strcmp(slimwhat, "nodes") != 0 && strcmp(slimwhat, "pdb") != 0))
			usage();
		slim(slimwhat, n, nnodes);
	} else if (np > 0)
		pods(np, nb, n, what);
	else
		nodes(n, broken);
	return fflush(stdout) != 0 || ferror(stdout);
}
