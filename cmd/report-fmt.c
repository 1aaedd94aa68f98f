/* report-fmt: the upgrade report, every value computed from current state. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "-a audit -m matrix node [nodes]";

struct count {
	const char *want; /* the node of the report */
	size_t gpu_nodes;
	cJSON *node;      /* a copy: the stream frees each node after the call */
};

static void
count_node(const struct item *it, void *arg)
{
	struct count *c = arg;
	const cJSON *node = it->obj;
	const char *present = j_str(node_labels(node), L_PRESENT);
	const char *name = j_str(j_get(node, "metadata"), "name");

	if (present != NULL && strcmp(present, "true") == 0)
		c->gpu_nodes++;
	if (name != NULL && strcmp(name, c->want) == 0 && c->node == NULL)
		c->node = cJSON_Duplicate(node, 1);
}

/* Items seen before the document turned out to be one Node: forget them. */
static void
end_doc(int ok, void *arg)
{
	struct count *c = arg;

	if (ok)
		return;
	c->gpu_nodes = 0;
	cJSON_Delete(c->node);
	c->node = NULL;
}

/* What an audit says: its MISSING nodes, its UNKNOWN ones, and NONE. */
struct audit {
	size_t missing, unknown;
	int none;      /* NONE: it saw no GPU node */
};

/*
 * The lines of a drv-audit.sh output, which is one of: OK alone, NONE alone,
 * or node lines (SKIP lines before an OK).  Anything else (an empty file:
 * the audit did not run) dies: a count from it would be a guess.  A node is
 * one node however often it is named: a line given again, word for word,
 * counts once; another line for the same node contradicts the first, and no
 * count can say which is right.
 */
static void
audit_read(const char *path, struct audit *a)
{
	struct lines l;
	struct strset *nodes = strset_new(), *seen = strset_new();
	char *line, *f[4];
	size_t lines = 0, verdicts = 0, skips = 0, first;
	int n;

	memset(a, 0, sizeof *a);
	lines_open(&l, path);
	while ((line = lines_next(&l, NULL)) != NULL) {
		if (strset_add(seen, line, l.lineno) != 0)
			continue; /* the same line again: the same node, the same finding */
		lines++;
		n = split_fields(line, f, 4);
		if (n == 1 && (strcmp(f[0], "OK") == 0 || strcmp(f[0], "NONE") == 0)) {
			verdicts++;
			a->none = strcmp(f[0], "NONE") == 0;
			continue;
		}
		if (n == 3 && strcmp(f[1], "SKIP") == 0)
			skips++; /* drv-audit.sh -t: a node that needs no precompiled image */
		else if (n == 3 && strcmp(f[1], "MISSING") == 0 && tag_valid(f[2]))
			a->missing++;
		else if (n == 3 && strcmp(f[1], "UNKNOWN") == 0)
			a->unknown++;
		else
			die("%s:%zu: not a drv-audit.sh line", l.name, l.lineno);
		if ((first = strset_add(nodes, f[0], l.lineno)) != 0)
			die("%s:%zu: node %s again, as %s %s, where line %zu said otherwise: not "
			    "one drv-audit.sh output", l.name, l.lineno, qstr(f[0]), f[1],
			    qstr(f[2]), first);
	}
	if (lines == 0)
		die("%s: empty: the audit did not run", l.name);
	if (verdicts > 1 || (verdicts > 0 && lines > 1 + skips))
		die("%s: OK or NONE with other lines: not one drv-audit.sh output", l.name);
	lines_close(&l);
	strset_free(nodes);
	strset_free(seen);
}

int
main(int argc, char **argv)
{
	const char *audit = NULL, *matrix_path = NULL, *state;
	struct count c = { 0 };
	struct matrix *m;
	struct node_reader nr = { .fn = count_node, .end = end_doc };
	struct tagfault f;
	struct tag_override ov = { NULL, NULL, RULE_2607 };
	char tag[TAG_MAX + 1], key[300], *k;
	struct audit a;
	const char *nodes;
	size_t rows;
	int ch;

	setprogname(argv[0]);
	while ((ch = nextopt(argc, argv, "a:m:h", usage)) != -1) {
		switch (ch) {
		case 'a': audit = optarg; break;
		case 'm': matrix_path = optarg; break;
		}
	}
	if (audit == NULL || matrix_path == NULL || argc - optind < 1 || argc - optind > 2)
		usage_exit(usage);
	c.want = argv[optind];
	if (!dns_subdomain_ok(c.want))
		die("%s is not a node name", qstr(c.want));

	/* Everything is read and checked before the first line is printed. */
	audit_read(audit, &a);
	if (a.unknown > 0)
		die("%s: %zu node%s UNKNOWN: the skew cannot be counted", audit, a.unknown,
		    a.unknown == 1 ? "" : "s");
	m = matrix_load(matrix_path, 0);
	rows = matrix_rows(m);
	matrix_free(m);
	nr.arg = &c;
	nodes = argv[optind + 1] && strcmp(argv[optind + 1], "-") != 0 ? argv[optind + 1] :
	    "<stdin>";
	if (nodes_read(argv[optind + 1], &nr) != EXIT_CLEAN)
		return EXIT_TROUBLE; /* the reader said why */
	if (c.node == NULL)
		die("%s: node %s is not in the node list", nodes, c.want);
	/* The audit and the node list must be of the same fleet: a skew of 0
	 * from an audit that saw no GPU node says nothing of the GPU nodes there are. */
	if (a.none && c.gpu_nodes > 0)
		die("%s says NONE (no GPU node) but %s has %zu GPU node%s: the audit is not "
		    "of this fleet; run drv-audit.sh again", audit, nodes, c.gpu_nodes,
		    c.gpu_nodes == 1 ? "" : "s");
	if (!a.none && c.gpu_nodes == 0)
		die("%s is an audit of GPU nodes but %s has none (no node labelled %s=true): the "
		    "audit is not of this fleet; run drv-audit.sh again", audit, nodes, L_PRESENT);
	ov.rule = tagrule_env();
	if (node_tag(c.node, &ov, tag, sizeof tag, NULL, 0, &f) != 0)
		die("node %s: label %s %s", c.want, f.label, f.detail);
	state = j_str(node_labels(c.node), L_STATE);

	snprintf(key, sizeof key, "%s_TAG", c.want);
	for (k = key; *k != '\0'; k++)
		*k = *k == '-' || *k == '.' ? '_' : (char)toupper((unsigned char)*k);
	printf("NODES=%zu\n", c.gpu_nodes);
	printf("SKEW=%zu\n", a.missing);
	printf("%s=%s\n", key, tag);
	printf("MATRIX_ROWS=%zu\n", rows);
	printf("UPGRADE_STATE=%s\n", state != NULL && *state != '\0' ? state : "-");
	cJSON_Delete(c.node);
	return fshut(stdout, "stdout");
}
