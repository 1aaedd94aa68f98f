/*
 * Reading a cJSON tree as Kubernetes does: keys are case-sensitive, a null or
 * absent optional field is its zero value, and a field of the wrong type is
 * an error naming where it is.
 */
#include <stdio.h>
#include <string.h>

#include "gpudrv.h"

const cJSON *
j_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *
j_str(const cJSON *obj, const char *key)
{
	const cJSON *v = j_get(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *
j_path(const cJSON *obj, const char *dotted)
{
	char key[128];
	const char *dot;
	size_t n;

	while (obj != NULL && (dot = strchr(dotted, '.')) != NULL) {
		n = (size_t)(dot - dotted);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, dotted, n);
		key[n] = '\0';
		obj = j_get(obj, key);
		dotted = dot + 1;
	}
	return obj ? j_get(obj, dotted) : NULL;
}

/*
 * An integer as Go's decoder takes one into an int field: written as one
 * (json.c and yaml.c keep a number's literal in its valuestring), so 1.0 and
 * 1e0 are not, whatever their value.  A number made here (a count) has no
 * literal and is integral by construction.
 */
static int
int_literal(const cJSON *v)
{
	const char *s = v->valuestring;

	if (s == NULL)
		return 1;
	if (*s == '-')
		s++;
	return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

int
j_int(const cJSON *obj, const char *key, long *out)
{
	const cJSON *v = j_get(obj, key);

	if (!cJSON_IsNumber(v) || !int_literal(v) ||
	    v->valuedouble != (double)(long)v->valuedouble)
		return 0;
	*out = (long)v->valuedouble;
	return 1;
}

/* A number for messages: as written if known. */
static const char *
num_text(const cJSON *v, char *buf, size_t bufsz)
{
	if (v->valuestring != NULL) /* digits, signs, dots, e: bounded, not quoted */
		snprintf(buf, bufsz, "%.64s%s", v->valuestring,
		    strlen(v->valuestring) > 64 ? "..." : "");
	else
		snprintf(buf, bufsz, "%g", v->valuedouble);
	return buf;
}

const char *
j_type(const cJSON *v)
{
	if (v == NULL)
		return "missing";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "a list";
	return "an object";
}

const char *
need_str(const cJSON *obj, const char *path, const char *where)
{
	const cJSON *v = j_path(obj, path);

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		die("%s: %s is %s", where, path, cJSON_IsString(v) ? "empty" : j_type(v));
	return v->valuestring;
}

int
opt_int32(const cJSON *obj, const char *key, const char *path, long *out, const char *where)
{
	const cJSON *v = j_get(obj, key);
	char num[80];

	*out = 0;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v) && (v->valuedouble > 2147483647.0 || v->valuedouble < -2147483648.0 ||
	    !j_int(obj, key, out)))
		die("%s: %s is %s, not a 32-bit integer", where, path, num_text(v, num, sizeof num));
	if (!cJSON_IsNumber(v))
		die("%s: %s is %s, not an integer", where, path,
		    cJSON_IsString(v) ? qstr(v->valuestring) : j_type(v));
	return 1;
}

const cJSON *
opt_obj(const cJSON *obj, const char *key, const char *path, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v == NULL || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsObject(v))
		die("%s: %s is %s, not an object", where, path, j_type(v));
	return v;
}

int
opt_bool(const cJSON *obj, const char *key, const char *path, int def, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v == NULL || cJSON_IsNull(v))
		return def;
	if (!cJSON_IsBool(v))
		die("%s: %s is %s, not a boolean", where, path, j_type(v));
	return cJSON_IsTrue(v);
}

const char *
opt_str(const cJSON *obj, const char *key, const char *path, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v == NULL || cJSON_IsNull(v))
		return NULL;
	if (!cJSON_IsString(v))
		die("%s: %s is %s, not a string", where, path, j_type(v));
	return *v->valuestring ? v->valuestring : NULL;
}

/* Present, it must be an object: null is not one (a field the API never writes null). */
const cJSON *
obj_if_present(const cJSON *obj, const char *key, const char *path, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v != NULL && !cJSON_IsObject(v))
		die("%s: %s is %s, not an object", where, path, j_type(v));
	return v;
}

const char *
str_if_present(const cJSON *obj, const char *key, const char *path, const char *where)
{
	const cJSON *v = j_get(obj, key);

	if (v != NULL && !cJSON_IsString(v))
		die("%s: %s is %s, not a string", where, path, j_type(v));
	return v != NULL ? v->valuestring : NULL;
}

const cJSON *
opt_strmap(const cJSON *obj, const char *key, const char *path, const char *what,
    const char *where)
{
	const cJSON *m = opt_obj(obj, key, path, where), *v;

	cJSON_ArrayForEach(v, m)
		if (!cJSON_IsString(v))
			die("%s: %s %s is %s, not a string", where, what, qstr(v->string), j_type(v));
	return m;
}

int
opt_intstr(const cJSON *obj, const char *key, const char *path, long *n, const char **s,
    const char *where)
{
	const cJSON *v = j_get(obj, key);

	*n = 0;
	*s = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		opt_int32(obj, key, path, n, where);
		return 1;
	}
	if (!cJSON_IsString(v))
		die("%s: %s is %s, not an integer or a percentage", where, path, j_type(v));
	*s = v->valuestring;
	return 2;
}

int
j_has(const cJSON *obj, const char *key)
{
	const cJSON *v = j_get(obj, key);

	return v != NULL && !cJSON_IsNull(v);
}

int
j_true(const cJSON *obj, const char *key)
{
	return cJSON_IsTrue(j_get(obj, key));
}

long
j_count(const cJSON *obj, const char *key)
{
	const cJSON *v = j_get(obj, key);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

const cJSON *
j_next(const cJSON *v, const cJSON *prev)
{
	if (prev != NULL)
		return prev->next;
	return v != NULL ? v->child : NULL;
}
