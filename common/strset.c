/* A hash set of strings (open addressing, FNV-1a), each with a line number. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

struct strset {
	char **key;
	size_t *line;
	size_t cap; /* a power of two */
	size_t n;
};

static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct strset *
strset_new(void)
{
	struct strset *s = xmalloc(sizeof *s);

	s->cap = 64;
	s->n = 0;
	s->key = calloc(s->cap, sizeof *s->key);
	s->line = calloc(s->cap, sizeof *s->line);
	if (s->key == NULL || s->line == NULL)
		die("out of memory:");
	return s;
}

static size_t
slot(const struct strset *s, const char *str)
{
	size_t i = (size_t)fnv1a(str) & (s->cap - 1);

	while (s->key[i] != NULL && strcmp(s->key[i], str) != 0)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void
grow(struct strset *s)
{
	struct strset big = { .cap = s->cap * 2 };
	size_t i, j;

	big.key = calloc(big.cap, sizeof *big.key);
	big.line = calloc(big.cap, sizeof *big.line);
	if (big.key == NULL || big.line == NULL)
		die("out of memory:");
	for (i = 0; i < s->cap; i++) {
		if (s->key[i] == NULL)
			continue;
		j = slot(&big, s->key[i]);
		big.key[j] = s->key[i];
		big.line[j] = s->line[i];
	}
	free(s->key);
	free(s->line);
	s->key = big.key;
	s->line = big.line;
	s->cap = big.cap;
}

int
strset_add(struct strset *s, const char *str, size_t line)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap)
		grow(s);
	i = slot(s, str);
	if (s->key[i] != NULL)
		return (int)(s->line[i] ? s->line[i] : 1);
	s->key[i] = xstrndup(str, strlen(str));
	s->line[i] = line;
	s->n++;
	return 0;
}

size_t
strset_get(const struct strset *s, const char *str)
{
	size_t i = slot(s, str);

	return s->key[i] != NULL ? (s->line[i] ? s->line[i] : 1) : 0;
}

void
strset_free(struct strset *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->cap; i++)
		free(s->key[i]);
	free(s->key);
	free(s->line);
	free(s);
}

/* 1 when s is one of words (NULL-terminated), else 0: a list too short for a set. */
int
word_in(const char *s, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strcmp(s, *words) == 0)
			return 1;
	return 0;
}
