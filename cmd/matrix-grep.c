/* matrix-grep: the nodes whose driver image tag is not in the support matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-De] -m matrix [file]";

/* "#N" stands for a list item whose name was not a node name (labels2tag -u). */
static int
item_ref(const char *s)
{
	return s[0] == '#' && s[1] != '\0' && strspn(s + 1, "0123456789") == strlen(s + 1);
}

/* labels2tag's reason: <fault>:<label key> (-u), <skip>:<source> (-t). */
static int
reason_ok(const char *s, const char *const *kinds)
{
	const char *colon = strchr(s, ':');
	size_t i, k = colon ? (size_t)(colon - s) : 0;

	if (colon == NULL || colon[1] == '\0')
		return 0;
	for (i = 0; kinds[i] != NULL; i++)
		if (strlen(kinds[i]) == k && strncmp(s, kinds[i], k) == 0)
			return strspn(colon + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._/-") == strlen(colon + 1);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *matrix_path = NULL;
	struct matrix *m;
	struct lines in;
	char *line, *f[4], shown[96];
	size_t nodes = 0, missing = 0, unknown = 0;
	int c, n, dups = 0, empty_ok = 0, rc;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "Dem:h", usage)) != -1) {
		switch (c) {
		case 'D': dups = 1; break;
		case 'e': empty_ok = 1; break;
		case 'm': matrix_path = optarg; break;
		}
	}
	if (matrix_path == NULL || argc - optind > 1)
		usage_exit(usage);

	m = matrix_load(matrix_path, dups);
	lines_open(&in, argv[optind]);
	while ((line = lines_next(&in, NULL)) != NULL) {
		snprintf(shown, sizeof shown, "%s", line);
		n = split_fields(line, f, 4);
		if (n == 3 && strcmp(f[1], "UNKNOWN") == 0 &&
		    (dns_subdomain_ok(f[0]) || item_ref(f[0])) && reason_ok(f[2], tag_faults)) {
			/* A node whose tag could not be built: pass it on, never OK. */
			printf("%s UNKNOWN %s\n", f[0], f[2]);
			unknown++;
			nodes++;
			continue;
		}
		if (n == 3 && strcmp(f[1], "SKIP") == 0 && dns_subdomain_ok(f[0]) &&
		    reason_ok(f[2], target_skips)) {
			/* No precompiled image to look for (labels2tag -t): said, not counted. */
			printf("%s SKIP %s\n", f[0], f[2]);
			nodes++;
			continue;
		}
		if (n != 2 || !dns_subdomain_ok(f[0]) || !tag_valid(f[1]))
			die("%s:%zu: not a '<node> <tag>' line: %s", in.name, in.lineno,
			    qstr(shown));
		nodes++;
		if (!matrix_has(m, f[1])) {
			printf("%s MISSING %s\n", f[0], f[1]);
			missing++;
		}
	}
	lines_close(&in);
	matrix_free(m);
	if (nodes == 0) {
		puts("NONE");
		if (!empty_ok)
			warnf("no nodes on input: nothing was checked (-e accepts that)");
	} else if (missing == 0 && unknown == 0) {
		puts("OK");
	}
	rc = fshut(stdout, "stdout");
	if (rc != 0 || unknown > 0 || (nodes == 0 && !empty_ok))
		return EXIT_TROUBLE;
	return missing > 0 ? EXIT_FINDINGS : EXIT_CLEAN;
}
