/* gen: the output, one writer for both formats. */
#include <ctype.h>

#include "gen.h"

int yaml, raw, dquote;

struct level {
	int kind, first;
	int ind;    /* YAML: column of its keys or dashes */
	int inline_; /* YAML: a mapping in a sequence: its first key follows "- " */
};
static struct level lv[64];
static int depth; /* lv[depth] is the open collection; 0: none */

static int
needs_quote(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "y",
		"n", "null", "~", "True", "False", "Yes", "No", "On", "Off", "Null", "TRUE",
		"FALSE", "NULL", "Y", "N", NULL };
	size_t i, n = strlen(s);
	int numeric;

	if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) != NULL || s[n - 1] == ' ')
		return 1;
	if (strstr(s, ": ") != NULL || strstr(s, " #") != NULL || s[n - 1] == ':')
		return 1;
	for (i = 0; words[i] != NULL; i++)
		if (strcmp(s, words[i]) == 0)
			return 1;
	{
		char *end;

		(void)strtod(s, &end);
		numeric = *end == '\0';
	}
	/* and what YAML 1.1 reads as a timestamp */
	if (n >= 10 && isdigit((unsigned char)s[0]) && s[4] == '-' && s[7] == '-')
		numeric = 1;
	(void)i;
	return numeric;
}

static void
spaces(int n)
{
	while (n-- > 0)
		putchar(' ');
}

static void
jstring(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/* JSON: before a member or an element. */
static void
jsep(void)
{
	if (depth == 0)
		return;
	if (!lv[depth].first)
		putchar(',');
	if (!raw) {
		putchar('\n');
		spaces(4 * depth);
	}
}

/* YAML: before a value that is a sequence element: its dash. */
static void
ydash(void)
{
	putchar('\n');
	spaces(lv[depth].ind);
	fputs("- ", stdout);
}

void
key(const char *k)
{
	if (yaml) {
		if (lv[depth].inline_) {
			lv[depth].inline_ = 0;
		} else {
			if (!(depth == 1 && lv[depth].first))
				putchar('\n');
			spaces(lv[depth].ind);
		}
		fputs(k, stdout);
		putchar(':');
	} else {
		jsep();
		jstring(k);
		fputs(raw ? ":" : ": ", stdout);
	}
	lv[depth].first = 0;
}

/* A scalar, written as is (JSON numbers and booleans, YAML plain) or quoted. */
void
scalar(const char *v, int is_str)
{
	if (yaml) {
		if (lv[depth].kind == ARR)
			ydash();
		else
			putchar(' ');
		if (!is_str || !needs_quote(v))
			fputs(v, stdout);
		else if (*v == '\0')
			fputs("\"\"", stdout);
		else
			printf(dquote ? "\"%s\"" : "'%s'", v);
	} else {
		if (lv[depth].kind == ARR)
			jsep();
		if (is_str)
			jstring(v);
		else
			fputs(v, stdout);
	}
	lv[depth].first = 0;
}

void str(const char *v) { scalar(v, 1); }

void
num(long long v)
{
	char b[32];

	snprintf(b, sizeof b, "%lld", v);
	scalar(b, 0);
}

void
open_(int kind)
{
	struct level *up = &lv[depth], *l = &lv[depth + 1];

	l->kind = kind;
	l->first = 1;
	l->inline_ = 0;
	if (yaml) {
		if (depth == 0) {
			l->ind = 0;
		} else if (up->kind == ARR) {
			ydash();
			l->ind = up->ind + 2;
			l->inline_ = 1;
		} else {
			l->ind = kind == OBJ ? up->ind + 2 : up->ind;
		}
	} else {
		if (depth > 0 && up->kind == ARR)
			jsep();
		putchar(kind == OBJ ? '{' : '[');
	}
	up->first = 0;
	depth++;
}

void
close_(void)
{
	struct level *l = &lv[depth--];

	if (yaml) {
		if (l->first)
			fputs(l->kind == OBJ ? " {}" : " []", stdout);
		return;
	}
	if (!l->first && !raw) {
		putchar('\n');
		spaces(4 * depth);
	}
	putchar(l->kind == OBJ ? '}' : ']');
}

#define YSEQ_OPEN() open_(ARR)

void kv(const char *k, const char *v) { key(k); str(v); }
void ko(const char *k, int kind) { key(k); open_(kind); }
void closen(int n) { while (n-- > 0) close_(); }
void kn(const char *k, long long v) { key(k); num(v); }
void kb(const char *k, int v) { key(k); scalar(v ? "true" : "false", 0); }