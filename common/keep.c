/*
 * What is kept of a document, below both formats: the key lists' KS_COUNT,
 * and the one walk of a kept tree for a key given twice.  It calls nothing
 * of the readers above it (json.c, yaml.c, doc.c): they call it.
 */
#include <string.h>

#include "gpudrv.h"

/* The deeper of the two scanners' nesting limits (json.c 500, yaml.c 1024). */
#define KEEP_DEPTH 1024

const struct kspec KS_COUNT[1] = { { NULL, NULL } };

/*
 * A key given twice in one object anywhere in a tree: cJSON keeps both and
 * finds the first, Go's decoder (the API server's) takes the last.  Either
 * would be a guess, so it is an error, in JSON as in YAML.  Iterative, its
 * stack as deep as the nesting (at most KEEP_DEPTH, which both scanners
 * check before a tree is built), whatever the width.
 */
void
tree_dups(const cJSON *root, const char *name)
{
	const cJSON *up[KEEP_DEPTH + 2], *n = root, *c, *d;
	struct strset *seen;
	int depth = 0;

	for (;;) {
		if (cJSON_IsObject(n) && cJSON_GetArraySize(n) > 16) {
			/* large objects through a hash set, small ones pairwise */
			seen = strset_new();
			for (c = n->child; c != NULL; c = c->next)
				if (strset_add(seen, c->string, 1) != 0)
					die("%s: duplicate key %s", name, qstr(c->string));
			strset_free(seen);
		} else if (cJSON_IsObject(n)) {
			for (c = n->child; c != NULL; c = c->next)
				for (d = n->child; d != c; d = d->next)
					if (strcmp(d->string, c->string) == 0)
						die("%s: duplicate key %s", name, qstr(c->string));
		}
		if ((cJSON_IsObject(n) || cJSON_IsArray(n)) && n->child != NULL) {
			up[depth++] = n;
			n = n->child;
			continue;
		}
		while (n->next == NULL) {
			if (depth == 0)
				return;
			n = up[--depth];
		}
		if (depth == 0)
			return;
		n = n->next;
	}
}
