/*
 * Kubernetes label selectors (metav1.LabelSelector) matched against an
 * object's labels, as metav1.LabelSelectorAsSelector does: a null or absent
 * selector selects nothing; an empty one ({}, or with empty matchLabels and
 * matchExpressions) selects everything; the requirements are ANDed.
 */
#include <stdio.h>
#include <string.h>

#include "gpudrv.h"

enum op { OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS, OP_BAD };

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
		if (op == OP_BAD)
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

		switch (op_of(j_str(it, "operator"))) {
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
		default:
			return 0; /* selector_check refuses it first */
		}
	}
	return 1;
}
