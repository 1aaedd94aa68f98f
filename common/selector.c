/*
 * Kubernetes label selectors (metav1.LabelSelector) matched against an
 * object's labels, as metav1.LabelSelectorAsSelector does: a null or absent
 * selector selects nothing; an empty one ({}, or with empty matchLabels and
 * matchExpressions) selects everything; the requirements are ANDed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

enum op { OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS, OP_GT, OP_LT, OP_BAD };

static enum op
op_of(const char *s)
{
	if (s == NULL)
		return OP_BAD;
	if (strcmp(s, "In") == 0)
		return OP_IN;
	if (strcmp(s, "NotIn") == 0)
		return OP_NOTIN;
	if (strcmp(s, "Exists") == 0)
		return OP_EXISTS;
	if (strcmp(s, "DoesNotExist") == 0)
		return OP_NOTEXISTS;
	if (strcmp(s, "Gt") == 0)
		return OP_GT;
	if (strcmp(s, "Lt") == 0)
		return OP_LT;
	return OP_BAD;
}

static int
bad(char *why, size_t whysz, const char *fmt, const char *a, const char *b)
{
	snprintf(why, whysz, fmt, a, b);
	return -1;
}

int
selector_check(const cJSON *sel, char *why, size_t whysz)
{
	const cJSON *ml, *me, *it, *v;
	size_t i = 0;
	char where[64];

	if (sel == NULL || cJSON_IsNull(sel))
		return 0;
	if (!cJSON_IsObject(sel))
		return bad(why, whysz, "selector is %s, not an object", j_type(sel), "");
	ml = j_get(sel, "matchLabels");
	if (ml != NULL && !cJSON_IsNull(ml)) {
		if (!cJSON_IsObject(ml))
			return bad(why, whysz, "selector.matchLabels is %s, not an object",
			    j_type(ml), "");
		cJSON_ArrayForEach(it, ml)
			if (!cJSON_IsString(it))
				return bad(why, whysz, "selector.matchLabels %s is %s, not a string",
				    qstr(it->string), j_type(it));
	}
	me = j_get(sel, "matchExpressions");
	if (me == NULL || cJSON_IsNull(me))
		return 0;
	if (!cJSON_IsArray(me))
		return bad(why, whysz, "selector.matchExpressions is %s, not a list", j_type(me), "");
	cJSON_ArrayForEach(it, me) {
		const char *key = j_str(it, "key"), *opname = j_str(it, "operator");
		const cJSON *vals = j_get(it, "values");
		enum op op = op_of(opname);
		int n = 0;

		snprintf(where, sizeof where, "selector.matchExpressions[%zu]", i++);
		if (!cJSON_IsObject(it))
			return bad(why, whysz, "%s is %s, not an object", where, j_type(it));
		if (key == NULL || *key == '\0')
			return bad(why, whysz, "%s has no key%s", where, "");
		if (op == OP_BAD || op == OP_GT || op == OP_LT) /* a string selector's alone */
			return bad(why, whysz, "%s: operator %s is not In, NotIn, Exists or DoesNotExist",
			    where, opname ? qstr(opname) : j_type(j_get(it, "operator")));
		if (vals != NULL && !cJSON_IsNull(vals)) {
			if (!cJSON_IsArray(vals))
				return bad(why, whysz, "%s: values is %s, not a list", where,
				    j_type(vals));
			cJSON_ArrayForEach(v, vals) {
				if (!cJSON_IsString(v))
					return bad(why, whysz, "%s: a value is %s, not a string",
					    where, j_type(v));
				n++;
			}
		}
		/* The same rules as labels.NewRequirement. */
		if ((op == OP_IN || op == OP_NOTIN) && n == 0)
			return bad(why, whysz, "%s: operator %s needs at least one value", where,
			    opname);
		if ((op == OP_EXISTS || op == OP_NOTEXISTS) && n != 0)
			return bad(why, whysz, "%s: operator %s takes no values", where, opname);
	}
	return 0;
}

/* Both integers (labels.Requirement's strconv.ParseInt, base 10), and a > b (gt) or a < b. */
static int
int_cmp(const char *a, const char *b, int gt)
{
	char *end;
	long long x, y;

	errno = 0;
	x = strtoll(a, &end, 10);
	if (*a == '\0' || *end != '\0' || errno != 0 || isspace((unsigned char)*a))
		return 0;
	y = strtoll(b, &end, 10);
	if (*b == '\0' || *end != '\0' || errno != 0 || isspace((unsigned char)*b))
		return 0;
	return gt ? x > y : x < y;
}

static int
in_values(const cJSON *vals, const char *s)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, vals)
		if (strcmp(v->valuestring, s) == 0)
			return 1;
	return 0;
}

int
selector_matches(const cJSON *sel, const cJSON *labels)
{
	const cJSON *it;

	if (sel == NULL || cJSON_IsNull(sel))
		return 0; /* labels.Nothing() */
	cJSON_ArrayForEach(it, j_get(sel, "matchLabels")) {
		const char *have = j_str(labels, it->string);

		if (have == NULL || strcmp(have, it->valuestring) != 0)
			return 0;
	}
	cJSON_ArrayForEach(it, j_get(sel, "matchExpressions")) {
		const char *have = j_str(labels, j_str(it, "key"));
		const cJSON *vals = j_get(it, "values");
		enum op op = op_of(j_str(it, "operator"));

		switch (op) {
		case OP_IN:
			if (have == NULL || !in_values(vals, have))
				return 0;
			break;
		case OP_NOTIN: /* a missing key is not in any set */
			if (have != NULL && in_values(vals, have))
				return 0;
			break;
		case OP_EXISTS:
			if (have == NULL)
				return 0;
			break;
		case OP_NOTEXISTS:
			if (have != NULL)
				return 0;
			break;
		case OP_GT:
		case OP_LT: /* integers both (a label that is not one never matches) */
			if (have == NULL || vals == NULL || !cJSON_IsString(vals->child) ||
			    !int_cmp(have, vals->child->valuestring, op == OP_GT))
				return 0;
			break;
		default:
			return 0; /* selector_check refuses it first */
		}
	}
	return 1;
}

/*
 * A selector as text (metav1.ListOptions.labelSelector, kubectl's -l, the
 * upgradePolicy's podSelector), read as labels.Parse reads it: requirements
 * separated by commas, each "key", "!key", "key=value", "key==value",
 * "key!=value", "key in (v,...)", "key notin (v,...)", "key>N" or "key<N",
 * white space around the words; keys and values by the API's rules for
 * label keys and values.  Made into the LabelSelector it means (every
 * requirement a matchExpression; Gt and Lt the text's alone), which
 * selector_matches takes; "" selects everything.
 */
struct lex {
	const char *p;
	char *why;
	size_t whysz;
};

enum tok { T_END, T_ID, T_COMMA, T_OPEN, T_CLOSE, T_EQ, T_DEQ, T_NEQ, T_NOT, T_GT, T_LT, T_IN, T_NOTIN };

/* The next token: its kind, and for T_ID its text in buf. */
static enum tok
next_tok(struct lex *l, char *buf, size_t bufsz, int *toolong)
{
	size_t n = 0;

	*toolong = 0;
	while (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r')
		l->p++;
	switch (*l->p) {
	case '\0': return T_END;
	case ',': l->p++; return T_COMMA;
	case '(': l->p++; return T_OPEN;
	case ')': l->p++; return T_CLOSE;
	case '>': l->p++; return T_GT;
	case '<': l->p++; return T_LT;
	case '=':
		l->p++;
		if (*l->p == '=') {
			l->p++;
			return T_DEQ;
		}
		return T_EQ;
	case '!':
		l->p++;
		if (*l->p == '=') {
			l->p++;
			return T_NEQ;
		}
		return T_NOT;
	}
	while (*l->p != '\0' && strchr(" \t\n\r,()=!<>", *l->p) == NULL) {
		if (n + 1 < bufsz)
			buf[n++] = *l->p;
		else
			*toolong = 1;
		l->p++;
	}
	buf[n] = '\0';
	if (strcmp(buf, "in") == 0)
		return T_IN;
	if (strcmp(buf, "notin") == 0)
		return T_NOTIN;
	return T_ID;
}

/* next_tok where a key or a value stands: there "in" and "notin" are the
 * words themselves, as the API server's parser reads them (only where an
 * operator stands are they operators). */
static enum tok
next_word(struct lex *l, char *buf, size_t bufsz, int *toolong)
{
	enum tok t = next_tok(l, buf, bufsz, toolong);

	return t == T_IN || t == T_NOTIN ? T_ID : t;
}

/* A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends, or empty. */
static int
value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n == 0)
		return 1;
	return n <= 63 && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n &&
	    isalnum((unsigned char)v[0]) && isalnum((unsigned char)v[n - 1]);
}

/* A label key: [prefix/]name, the prefix a DNS subdomain, the name a non-empty value. */
static int
key_ok(const char *k)
{
	const char *slash = strchr(k, '/');
	char prefix[254];

	if (slash == NULL)
		return *k != '\0' && value_ok(k);
	if ((size_t)(slash - k) >= sizeof prefix || slash == k)
		return 0;
	memcpy(prefix, k, (size_t)(slash - k));
	prefix[slash - k] = '\0';
	return dns_subdomain_ok(prefix) && slash[1] != '\0' && value_ok(slash + 1);
}

static cJSON *
parse_fail(cJSON *sel, struct lex *l, const char *fmt, const char *a)
{
	snprintf(l->why, l->whysz, fmt, a);
	cJSON_Delete(sel);
	return NULL;
}

cJSON *
selector_parse(const char *text, char *why, size_t whysz)
{
	struct lex l = { text, why, whysz };
	cJSON *sel = cJSON_CreateObject(), *exprs = cJSON_AddArrayToObject(sel, "matchExpressions");
	cJSON *e, *vals;
	char key[320], val[320];
	const char *opname;
	enum tok t;
	int toolong, first = 1;

	for (;;) {
		t = next_word(&l, key, sizeof key, &toolong);
		if (t == T_END && first)
			return sel; /* "": every object */
		first = 0;
		opname = NULL;
		if (t == T_NOT) {
			if (next_word(&l, key, sizeof key, &toolong) != T_ID)
				return parse_fail(sel, &l, "%s: a key must follow '!'", qstr(text));
			opname = "DoesNotExist";
		} else if (t != T_ID) {
			return parse_fail(sel, &l, "%s: a requirement must start with a key", qstr(text));
		}
		if (toolong || !key_ok(key))
			return parse_fail(sel, &l, "%s is not a valid label key", qstr(key));
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(exprs, e);
		cJSON_AddStringToObject(e, "key", key);
		vals = cJSON_AddArrayToObject(e, "values");
		if (opname == NULL) {
			const char *at = l.p;

			t = next_tok(&l, val, sizeof val, &toolong);
			switch (t) {
			case T_END:
			case T_COMMA:
				l.p = at; /* "key": it exists */
				opname = "Exists";
				break;
			case T_EQ: case T_DEQ: opname = "In"; break;
			case T_NEQ: opname = "NotIn"; break;
			case T_IN: opname = "In"; break;
			case T_NOTIN: opname = "NotIn"; break;
			case T_GT: opname = "Gt"; break;
			case T_LT: opname = "Lt"; break;
			default:
				return parse_fail(sel, &l, "%s: an operator (=, ==, !=, in, notin, >, <) must follow a key",
				    qstr(text));
			}
			if (t == T_IN || t == T_NOTIN) {
				if (next_tok(&l, val, sizeof val, &toolong) != T_OPEN)
					return parse_fail(sel, &l, "%s: '(' must follow in and notin", qstr(text));
				for (;;) {
					const char *vat = l.p;

					t = next_word(&l, val, sizeof val, &toolong);
					if (t == T_COMMA || t == T_CLOSE) { /* an empty value */
						l.p = vat;
						val[0] = '\0';
						t = next_tok(&l, val, sizeof val, &toolong);
						cJSON_AddItemToArray(vals, cJSON_CreateString(""));
					} else if (t == T_ID) {
						if (toolong || !value_ok(val))
							return parse_fail(sel, &l, "%s is not a valid label value", qstr(val));
						cJSON_AddItemToArray(vals, cJSON_CreateString(val));
						t = next_tok(&l, val, sizeof val, &toolong);
					} else {
						return parse_fail(sel, &l, "%s: a value list is (v1,v2,...)", qstr(text));
					}
					if (t == T_CLOSE)
						break;
					if (t != T_COMMA)
						return parse_fail(sel, &l, "%s: a value list is (v1,v2,...)", qstr(text));
				}
			} else if (t != T_END && t != T_COMMA) {
				const char *vat = l.p;

				t = next_word(&l, val, sizeof val, &toolong);
				if (t == T_END || t == T_COMMA) { /* "key=": the empty value */
					l.p = vat;
					val[0] = '\0';
				} else if (t != T_ID) {
					return parse_fail(sel, &l, "%s: a value must follow the operator", qstr(text));
				}
				if (toolong || !value_ok(val))
					return parse_fail(sel, &l, "%s is not a valid label value", qstr(val));
				if ((strcmp(opname, "Gt") == 0 || strcmp(opname, "Lt") == 0) &&
				    (val[0] == '\0' || strspn(val + (val[0] == '-'), "0123456789") !=
				    strlen(val + (val[0] == '-')) || val[val[0] == '-'] == '\0'))
					return parse_fail(sel, &l, "%s: > and < take an integer", qstr(text));
				cJSON_AddItemToArray(vals, cJSON_CreateString(val));
			}
		}
		cJSON_AddStringToObject(e, "operator", opname);
		t = next_tok(&l, val, sizeof val, &toolong);
		if (t == T_END)
			return sel;
		if (t != T_COMMA)
			return parse_fail(sel, &l, "%s: requirements are separated by commas", qstr(text));
	}
}
