/*
 * What is kept of a document, the one rule both formats apply: json.c and
 * yaml.c turn bytes into keys and values, and ask the keeper what becomes
 * of each value (keep_key, keep_how), hand it what they built of it
 * (keep_put) and each item of a top-level "items" list (keep_item).  Here
 * too: KS_COUNT, and the one walk of a kept tree for a key given twice.  It
 * calls nothing of the readers above it (json.c, yaml.c, doc.c): they call it.
 */
#include <string.h>

#include "gpudrv.h"

/* The deeper of the two scanners' nesting limits (json.c 500, yaml.c 1024). */
#define KEEP_DEPTH 1024

const struct kspec KS_COUNT[1] = { { NULL, NULL } };
const char KS_EACH[] = "";

/* The first key of obj given twice (in member order) is an error. */
static void
member_dups(const cJSON *obj, const char *name)
{
	const cJSON *c, *d;
	struct strset *seen;
	int n = 0;

	for (c = obj->child; c != NULL && n <= 16; c = c->next)
		n++;
	if (n > 16) {
		/* large objects through a hash set, small ones pairwise */
		seen = strset_new();
		for (c = obj->child; c != NULL; c = c->next)
			if (strset_add(seen, c->string, 1) != 0)
				die("%s: duplicate key %s", name, qstr(c->string));
		strset_free(seen);
		return;
	}
	for (c = obj->child; c != NULL; c = c->next)
		for (d = obj->child; d != c; d = d->next)
			if (d->string[0] == c->string[0] && strcmp(d->string, c->string) == 0)
				die("%s: duplicate key %s", name, qstr(c->string));
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
	const cJSON *up[KEEP_DEPTH + 2], *n = root;
	int depth = 0;

	for (;;) {
		if (cJSON_IsObject(n))
			member_dups(n, name);
		if (n->child != NULL && (cJSON_IsObject(n) || cJSON_IsArray(n))) {
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

/* The entry of keys for the key of n bytes (a NUL ends a key, as in cJSON), or NULL. */
const struct kspec *
keep_find(const struct kspec *keys, const char *key, size_t n)
{
	if (keys == NULL || keys == KS_COUNT || n == 0)
		return NULL;
	for (; keys->key != NULL; keys++)
		if (keys->key[0] == key[0] && strncmp(keys->key, key, n) == 0 && keys->key[n] == '\0')
			return keys;
	return NULL;
}

void
keep_open(struct kept *k, const struct kspec *keys, int top)
{
	k->obj = cJSON_CreateObject();
	k->keys = keys;
	k->at = NULL;
	k->top = top;
}

void
keep_key(struct kept *k, const char *key, size_t n)
{
	k->at = keep_find(k->keys, key, n);
}

/*
 * What becomes of the value of the key last given, a mapping (map), a list
 * (seq) or a scalar: a kept key given twice is an error (which of two
 * values would count?  Either would be a guess).
 */
enum keep_how
keep_how(const struct kept *k, int map, int seq, const char *name)
{
	if (k->at == NULL)
		return KEEP_NONE;
	if (cJSON_GetObjectItemCaseSensitive(k->obj, k->at->key) != NULL)
		die("%s: duplicate key %s", name, qstr(k->at->key));
	if (k->top && strcmp(k->at->key, "items") == 0)
		return seq ? KEEP_ITEMS : KEEP_VALUE;
	if (k->at->sub == KS_COUNT)
		return map || seq ? KEEP_COUNT : KEEP_VALUE;
	if (k->at->sub != NULL && k->at->sub->key == KS_EACH)
		return seq ? KEEP_EACH : KEEP_VALUE;
	if (k->at->sub != NULL && map)
		return KEEP_OBJECT;
	return KEEP_VALUE;
}

const struct kspec *
keep_each(const struct kept *k)
{
	return k->at->sub->sub;
}

void
keep_put(struct kept *k, cJSON *v)
{
	cJSON_AddItemToObject(k->obj, k->at->key, v);
	k->at = NULL;
}

void
keep_item(const struct scan *sc, cJSON *item, size_t *index, const char *kind)
{
	sc->item_fn(sc, item, (*index)++, kind);
	cJSON_Delete(item);
}
