/*
 * What is kept of a document, below both formats: the key lists' KS_COUNT,
 * the one rule for a key given twice in a tree, and a document parsed whole
 * handed over as the streaming scanners hand one over (json_whole,
 * yaml_whole).  It calls nothing of the readers above it (json.c, yaml.c,
 * doc.c): they call it.
 */
#include <string.h>

#include "gpudrv.h"

/* The deeper of the two scanners' nesting limits (json.c 500, yaml.c 1024). */
#define KEEP_DEPTH 1024

const struct kspec KS_COUNT[1] = { { NULL, NULL } };

/*
 * v as the streaming scanners keep it: only the members keys asks for, and,
 * as they do, a key given twice where it is kept is an error.
 */
static cJSON *
keep_copy(const cJSON *v, const struct kspec *keys, const char *name)
{
	const struct kspec *k;
	const cJSON *m;
	cJSON *o;

	if (keys == KS_COUNT && (cJSON_IsObject(v) || cJSON_IsArray(v)))
		return cJSON_CreateNumber(cJSON_GetArraySize(v));
	if (keys == NULL || keys == KS_COUNT || !cJSON_IsObject(v)) {
		tree_dups(v, name);
		return cJSON_Duplicate(v, 1);
	}
	o = cJSON_CreateObject();
	for (m = v->child; m != NULL; m = m->next)
		for (k = keys; k->key != NULL; k++)
			if (strcmp(k->key, m->string) == 0) {
				if (j_get(o, m->string) != NULL)
					die("%s: duplicate key %s", name, qstr(m->string));
				cJSON_AddItemToObject(o, m->string, keep_copy(m, k->sub, name));
			}
	return o;
}

/* A document parsed whole, handed over as the streaming scanners would. */
void
scan_replay(const struct scan *sc, const cJSON *doc, const char *name)
{
	const struct kspec *k;
	const cJSON *m, *it;
	cJSON *top, *kept;
	int items = 0;
	size_t i = 0;

	if (sc->top == NULL || !cJSON_IsObject(doc)) {
		sc->doc_fn(sc, sc->top == NULL ? doc : NULL);
		return;
	}
	top = cJSON_CreateObject();
	for (m = doc->child; m != NULL; m = m->next) {
		for (k = sc->top; k->key != NULL && strcmp(k->key, m->string) != 0; k++)
			;
		if (k->key == NULL)
			continue;
		if (!items && strcmp(m->string, "items") == 0 && cJSON_IsArray(m)) {
			items = 1;
			if (j_get(top, "items") != NULL)
				die("%s: duplicate key %s", name, qstr("items"));
			cJSON_ArrayForEach(it, m) {
				kept = keep_copy(it, cJSON_IsObject(it) ? sc->item : NULL, name);
				sc->item_fn(sc, kept, i++, j_str(top, "kind"));
				cJSON_Delete(kept);
			}
			cJSON_AddItemToObject(top, "items", cJSON_CreateArray());
		} else {
			if (j_get(top, m->string) != NULL)
				die("%s: duplicate key %s", name, qstr(m->string));
			cJSON_AddItemToObject(top, m->string, keep_copy(m, k->sub, name));
		}
	}
	sc->doc_fn(sc, top);
	cJSON_Delete(top);
}

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
