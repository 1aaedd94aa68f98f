/*
 * kubectl output, JSON or YAML, as one cJSON tree.  The format is told from
 * the content: JSON starts with '{' or '['; anything else is read as YAML and
 * becomes the same tree JSON would.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "gpudrv.h"

static int
is_json(const struct input *in)
{
	size_t i = 0;

	if (in->len >= 3 && memcmp(in->data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < in->len && isspace((unsigned char)in->data[i]))
		i++;
	return i < in->len && (in->data[i] == '{' || in->data[i] == '[');
}

/* Does the input end inside a string or an open object or array? */
static int
json_cut_short(const struct input *in)
{
	size_t i, depth = 0;
	int instr = 0;

	for (i = 0; i < in->len; i++) {
		char c = in->data[i];

		if (instr) {
			if (c == '\\')
				i++;
			else if (c == '"')
				instr = 0;
		} else if (c == '"') {
			instr = 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return instr || depth > 0;
}

static cJSON *
json_parse(const struct input *in)
{
	const char *end = NULL;
	cJSON *doc;
	size_t line, col, off;
	char near[2] = "";

	if (memchr(in->data, '\0', in->len) != NULL) {
		off = (size_t)((const char *)memchr(in->data, '\0', in->len) - in->data);
		input_where(in, off, &line, &col);
		die("%s:%zu:%zu: NUL byte in JSON input", in->name, line, col);
	}
	doc = cJSON_ParseWithLengthOpts(in->data, in->len + 1, &end, 1);
	if (doc != NULL)
		return doc;
	off = end != NULL ? (size_t)(end - in->data) : in->len;
	if (off >= in->len || json_cut_short(in))
		die("%s: truncated JSON: input ends inside a value (%zu bytes read)",
		    in->name, in->len);
	input_where(in, off, &line, &col);
	near[0] = in->data[off];
	die("%s:%zu:%zu: malformed JSON near %s", in->name, line, col, qstr(near));
	return NULL;
}

/* YAML 1.2 core schema resolution of a plain scalar, as kubectl's YAML needs. */
static cJSON *
plain_scalar(const char *s, size_t n)
{
	char *end;
	double d;

	if (n == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	    strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
		return cJSON_CreateNull();
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
		return cJSON_CreateTrue();
	if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
		return cJSON_CreateFalse();
	if (isdigit((unsigned char)s[0]) ||
	    ((s[0] == '-' || s[0] == '+' || s[0] == '.') && n > 1)) {
		errno = 0;
		d = strtod(s, &end);
		if (*end == '\0' && errno == 0 && strspn(s, "+-.0123456789eE") == n)
			return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(s);
}

struct ybuild {
	const struct input *in;
	cJSON *root;
	cJSON *stack[1024];
	char *key[1024]; /* pending mapping key of each open mapping */
	int depth;
};

static void
ydie(struct ybuild *b, const yaml_mark_t *m, const char *what)
{
	die("%s:%zu:%zu: %s", b->in->name, m->line + 1, m->column + 1, what);
}

/* Places node under the open collection, or as the root. */
static void
attach(struct ybuild *b, cJSON *node, const yaml_event_t *ev)
{
	cJSON *top;

	if (b->depth == 0) {
		b->root = node;
		return;
	}
	top = b->stack[b->depth - 1];
	if (cJSON_IsArray(top)) {
		cJSON_AddItemToArray(top, node);
		return;
	}
	if (b->key[b->depth - 1] == NULL) {
		if (!cJSON_IsString(node)) {
			cJSON_Delete(node);
			ydie(b, &ev->start_mark, "mapping key is not a string");
		}
		b->key[b->depth - 1] = xstrndup(node->valuestring, strlen(node->valuestring));
		cJSON_Delete(node);
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(top, b->key[b->depth - 1]) != NULL) {
		cJSON_Delete(node);
		ydie(b, &ev->start_mark, "duplicate mapping key");
	}
	cJSON_AddItemToObject(top, b->key[b->depth - 1], node);
	free(b->key[b->depth - 1]);
	b->key[b->depth - 1] = NULL;
}

static void
push(struct ybuild *b, cJSON *node, const yaml_event_t *ev)
{
	if (b->depth == (int)(sizeof b->stack / sizeof b->stack[0])) {
		cJSON_Delete(node);
		ydie(b, &ev->start_mark, "YAML nested too deep");
	}
	attach(b, node, ev);
	b->stack[b->depth] = node;
	b->key[b->depth] = NULL;
	b->depth++;
}

static cJSON *
yaml_parse(const struct input *in)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ybuild b;
	int docs = 0, done = 0;
	char what[256];

	memset(&b, 0, sizeof b);
	b.in = in;
	if (!yaml_parser_initialize(&p))
		die("out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)in->data, in->len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(what, sizeof what, "malformed YAML: %s%s%s",
			    p.problem ? p.problem : "error",
			    p.context ? " " : "", p.context ? p.context : "");
			if (p.problem_mark.index >= in->len)
				die("%s: truncated YAML: %s (%zu bytes read)", in->name, what, in->len);
			die("%s:%zu:%zu: %s", in->name, p.problem_mark.line + 1,
			    p.problem_mark.column + 1, what);
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				ydie(&b, &ev.start_mark, "more than one YAML document");
			break;
		case YAML_MAPPING_START_EVENT:
			push(&b, cJSON_CreateObject(), &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			push(&b, cJSON_CreateArray(), &ev);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			b.depth--;
			free(b.key[b.depth]);
			b.key[b.depth] = NULL;
			break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			size_t n = ev.data.scalar.length;

			if (memchr(v, '\0', n) != NULL)
				ydie(&b, &ev.start_mark, "NUL byte in a YAML scalar");
			if (ev.data.scalar.plain_implicit && ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
				attach(&b, plain_scalar(v, n), &ev);
			else
				attach(&b, cJSON_CreateString(v), &ev);
			break;
		}
		case YAML_ALIAS_EVENT:
			ydie(&b, &ev.start_mark, "YAML aliases are not accepted (kubectl never writes them)");
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (b.root == NULL)
		die("%s: empty input: expected kubectl JSON or YAML", in->name);
	return b.root;
}

cJSON *
doc_parse(const struct input *in)
{
	size_t i;

	for (i = 0; i < in->len && isspace((unsigned char)in->data[i]); i++)
		;
	if (i == in->len)
		die("%s: empty input: expected kubectl JSON or YAML", in->name);
	return is_json(in) ? json_parse(in) : yaml_parse(in);
}

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

int
j_int(const cJSON *obj, const char *key, long *out)
{
	const cJSON *v = j_get(obj, key);

	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble)
		return 0;
	*out = (long)v->valuedouble;
	return 1;
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
