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
	size_t i = text_start(in->data, in->len);

	return i < in->len && (in->data[i] == '{' || in->data[i] == '[');
}

/*
 * Checked by json_check (jstream.c), the scanner the streaming path uses, so
 * both paths report bad JSON alike; cJSON then only builds the tree.
 */
static cJSON *
json_parse(const struct input *in)
{
	const char *end = NULL;
	cJSON *doc;
	size_t line, col, off;

	json_check(in);
	doc = cJSON_ParseWithLengthOpts(in->data, in->len + 1, &end, 1);
	if (doc != NULL)
		return doc;
	off = end != NULL ? (size_t)(end - in->data) : in->len;
	input_where(in, off, &line, &col);
	die("%s:%zu:%zu: JSON that cJSON does not read", in->name, line, col);
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
	const char *in_name;
	cJSON *root;
	cJSON *stack[1024];
	char *key[1024]; /* pending mapping key of each open mapping */
	int depth;
	int max;         /* depth allowed: 1024 less the levels above the root */
};

static void
ydie(struct ybuild *b, const yaml_mark_t *m, const char *what)
{
	die("%s:%zu:%zu: %s", b->in_name, m->line + 1, m->column + 1, what);
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
	if (b->depth >= b->max) {
		cJSON_Delete(node);
		ydie(b, &ev->start_mark, "YAML nested too deep");
	}
	attach(b, node, ev);
	b->stack[b->depth] = node;
	b->key[b->depth] = NULL;
	b->depth++;
}

static void
ymalformed(const yaml_parser_t *p, const char *name, size_t len, int eof)
{
	char what[256];

	snprintf(what, sizeof what, "malformed YAML: %s%s%s",
	    p->problem ? p->problem : "error",
	    p->context ? " " : "", p->context ? p->context : "");
	if (eof && p->problem_mark.index >= len)
		die("%s: truncated YAML: %s (%zu bytes read)", name, what, len);
	die("%s:%zu:%zu: %s", name, p->problem_mark.line + 1, p->problem_mark.column + 1, what);
}

static void
ynul(struct ybuild *b, const yaml_event_t *ev)
{
	if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length) != NULL)
		ydie(b, &ev->start_mark, "NUL byte in a YAML scalar");
}

static cJSON *
yscalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;

	if (ev->data.scalar.plain_implicit && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return plain_scalar(v, ev->data.scalar.length);
	return cJSON_CreateString(v);
}

/* One node event into the tree being built. */
static void
yfeed(struct ybuild *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		push(b, cJSON_CreateObject(), ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		push(b, cJSON_CreateArray(), ev);
		break;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		b->depth--;
		free(b->key[b->depth]);
		b->key[b->depth] = NULL;
		break;
	case YAML_SCALAR_EVENT:
		ynul(b, ev);
		attach(b, yscalar(ev), ev);
		break;
	case YAML_ALIAS_EVENT:
		ydie(b, &ev->start_mark, "YAML aliases are not accepted (kubectl never writes them)");
		break;
	default:
		break;
	}
}

static cJSON *
yaml_parse(const struct input *in)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ybuild b;
	int docs = 0, done = 0;

	memset(&b, 0, sizeof b);
	b.in_name = in->name;
	b.max = 1024;
	if (!yaml_parser_initialize(&p))
		die("out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)in->data, in->len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev))
			ymalformed(&p, in->name, in->len, 1);
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			ydie(&b, &ev.start_mark, "more than one YAML document");
		if (ev.type == YAML_STREAM_END_EVENT)
			done = 1;
		yfeed(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (b.root == NULL)
		die("%s: empty input: expected kubectl JSON or YAML", in->name);
	return b.root;
}

/*
 * YAML, streamed from libyaml's events: a stack of the open collections, the
 * asked-for values built with the same builder as above, the rest only
 * checked as yaml_parse checks it (keys are strings and not repeated, no NUL,
 * no alias, not too deep), so both paths say the same of the same input.
 */
enum { Y_TOP, Y_ITEMS, Y_ITEM, Y_KEEP, Y_SKIP };

struct yframe {
	int role;
	int map;
	int want_key;        /* a mapping waiting for its next key */
	int dup;             /* its pending key was seen before */
	const struct kspec *keep; /* its pending key, if asked for */
	const struct kspec *spec; /* the keys it keeps */
	struct strset *seen;      /* its keys */
	cJSON *obj;               /* Y_TOP, Y_ITEM, Y_KEEP: the kept members */
};

struct ystream {
	const struct stream_cb *cb;
	const struct kspec *top_keys;
	struct yframe f[1024];
	int n;
	struct ybuild cap; /* a kept value being built */
	int capturing;
	int roots;
	cJSON *top;
	size_t items;
};

static void
ydone(struct ystream *y)
{
	struct yframe *f = y->n > 0 ? &y->f[y->n - 1] : NULL;

	if (f != NULL && f->map) {
		f->want_key = 1;
		f->dup = 0;
		f->keep = NULL;
	}
}

static void
ydeliver(struct ystream *y, cJSON *v)
{
	struct yframe *f = y->n > 0 ? &y->f[y->n - 1] : NULL;

	if (f == NULL) {
		cJSON_Delete(v); /* a top level that is not a mapping */
		return;
	}
	if (f->role == Y_ITEMS) {
		y->cb->item(v, y->items++, y->cb->arg);
		cJSON_Delete(v);
		return;
	}
	cJSON_AddItemToObject(f->obj, f->keep->key, v);
	ydone(y);
}

static void
ypush(struct ystream *y, int role, const struct kspec *spec, const yaml_event_t *ev)
{
	struct yframe *f;

	if (y->n >= 1024)
		ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
	f = &y->f[y->n++];
	memset(f, 0, sizeof *f);
	f->role = role;
	f->map = ev->type == YAML_MAPPING_START_EVENT;
	f->want_key = f->map;
	if (f->map)
		f->seen = strset_new();
	f->spec = spec;
	if (spec != NULL)
		f->obj = cJSON_CreateObject();
}

static const struct kspec *
ykeep(const struct kspec *keys, const char *k)
{
	if (keys == NULL)
		return NULL;
	for (; keys->key != NULL; keys++)
		if (strcmp(keys->key, k) == 0)
			return keys;
	return NULL;
}

static void
ystep(struct ystream *y, const yaml_event_t *ev)
{
	struct yframe *f = y->n > 0 ? &y->f[y->n - 1] : NULL;
	int coll = ev->type == YAML_MAPPING_START_EVENT || ev->type == YAML_SEQUENCE_START_EVENT;
	cJSON *v;

	if (y->capturing) {
		yfeed(&y->cap, ev);
		if (y->cap.depth == 0 && y->cap.root != NULL) {
			v = y->cap.root;
			y->cap.root = NULL;
			y->capturing = 0;
			ydeliver(y, v);
		}
		return;
	}
	if (ev->type == YAML_ALIAS_EVENT)
		yfeed(&y->cap, ev); /* dies */
	if (ev->type == YAML_MAPPING_END_EVENT || ev->type == YAML_SEQUENCE_END_EVENT) {
		f = &y->f[--y->n];
		strset_free(f->seen);
		if (f->role == Y_ITEM) {
			y->cb->item(f->obj, y->items++, y->cb->arg);
			cJSON_Delete(f->obj);
		} else if (f->role == Y_TOP) {
			y->top = f->obj;
		} else if (f->role == Y_ITEMS) {
			cJSON_AddItemToObject(y->f[y->n - 1].obj, "items", cJSON_CreateArray());
		} else if (f->role == Y_KEEP) {
			cJSON_AddItemToObject(y->f[y->n - 1].obj, y->f[y->n - 1].keep->key, f->obj);
		}
		ydone(y);
		return;
	}
	if (!coll && ev->type != YAML_SCALAR_EVENT)
		return;
	if (f != NULL && f->want_key) {
		if (coll) {
			if (y->n >= 1024)
				ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
			ydie(&y->cap, &ev->start_mark, "mapping key is not a string");
		}
		ynul(&y->cap, ev);
		v = yscalar(ev);
		if (!cJSON_IsString(v)) {
			cJSON_Delete(v);
			ydie(&y->cap, &ev->start_mark, "mapping key is not a string");
		}
		f->dup = strset_add(f->seen, v->valuestring, 1) != 0;
		f->keep = ykeep(f->spec, v->valuestring);
		f->want_key = 0;
		cJSON_Delete(v);
		return;
	}
	if (f != NULL && f->dup) {
		if (coll && y->n >= 1024)
			ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
		if (!coll)
			ynul(&y->cap, ev);
		ydie(&y->cap, &ev->start_mark, "duplicate mapping key");
	}
	if (f == NULL)
		y->roots++;
	if (f == NULL && ev->type == YAML_MAPPING_START_EVENT) {
		ypush(y, Y_TOP, y->top_keys, ev);
	} else if (f != NULL && f->role == Y_TOP && f->keep != NULL &&
	    strcmp(f->keep->key, "items") == 0 && ev->type == YAML_SEQUENCE_START_EVENT) {
		ypush(y, Y_ITEMS, NULL, ev);
	} else if (f != NULL && f->role == Y_ITEMS && ev->type == YAML_MAPPING_START_EVENT) {
		ypush(y, Y_ITEM, y->cb->keys, ev);
	} else if (f != NULL && f->keep != NULL && f->keep->sub != NULL &&
	    ev->type == YAML_MAPPING_START_EVENT) {
		ypush(y, Y_KEEP, f->keep->sub, ev);
	} else if (f == NULL || f->role == Y_ITEMS || f->keep != NULL) {
		y->cap.max = 1024 - y->n;
		y->capturing = 1;
		ystep(y, ev);
	} else if (coll) {
		ypush(y, Y_SKIP, NULL, ev);
	} else {
		ynul(&y->cap, ev);
		ydone(y);
	}
}

static int
yread(void *data, unsigned char *buf, size_t size, size_t *got)
{
	struct reader *r = data;

	if (r->pos == r->len)
		reader_next(r);
	*got = r->len - r->pos < size ? r->len - r->pos : size;
	memcpy(buf, r->buf + r->pos, *got);
	r->pos += *got;
	return 1;
}

cJSON *
yaml_stream(struct reader *r, const struct stream_cb *cb)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ystream *y = xmalloc(sizeof *y);
	struct kspec top_keys[8];
	int docs = 0, done = 0;
	size_t i;
	cJSON *top;

	memset(y, 0, sizeof *y);
	y->cb = cb;
	for (i = 0; cb->keys[i].key != NULL && i < 6; i++)
		top_keys[i] = cb->keys[i];
	top_keys[i].key = "items";
	top_keys[i++].sub = NULL;
	top_keys[i].key = NULL;
	y->top_keys = top_keys;
	y->cap.in_name = r->name;
	if (!yaml_parser_initialize(&p))
		die("out of memory");
	yaml_parser_set_input(&p, yread, r);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev))
			ymalformed(&p, r->name, r->off + r->len, r->eof);
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			ydie(&y->cap, &ev.start_mark, "more than one YAML document");
		if (ev.type == YAML_STREAM_END_EVENT)
			done = 1;
		ystep(y, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (y->roots == 0)
		die("%s: empty input: expected kubectl JSON or YAML", r->name);
	top = y->top;
	free(y);
	return top;
}

/*
 * A key given twice in one JSON object: cJSON keeps both and finds the
 * first, Go's decoder (the API server's) takes the last.  Either would be a
 * guess, so it is an error, as in YAML.  Iterative: depth is not bounded here.
 */
static void
json_dups(const cJSON *root, const char *name)
{
	const cJSON *stack[1024], *o, *c, *d;
	struct strset *seen;
	int top = 0, n;

	stack[top++] = root;
	while (top > 0) {
		o = stack[--top];
		/* small objects pairwise, large ones through a hash set */
		seen = NULL;
		if (cJSON_IsObject(o) && (n = cJSON_GetArraySize(o)) > 16) {
			seen = strset_new();
			for (c = o->child; c != NULL; c = c->next)
				if (strset_add(seen, c->string, 1) != 0) {
					strset_free(seen);
					die("%s: duplicate key %s", name, qstr(c->string));
				}
			strset_free(seen);
		}
		for (c = o->child; c != NULL; c = c->next) {
			if (cJSON_IsObject(o) && seen == NULL)
				for (d = o->child; d != c; d = d->next)
					if (strcmp(d->string, c->string) == 0)
						die("%s: duplicate key %s", name, qstr(c->string));
			if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && c->child != NULL) {
				if (top == (int)(sizeof stack / sizeof stack[0]))
					die("%s: JSON nested too deep", name);
				stack[top++] = c;
			}
		}
	}
}

cJSON *
doc_parse(const struct input *in)
{
	size_t i;
	cJSON *doc;

	for (i = 0; i < in->len && isspace((unsigned char)in->data[i]); i++)
		;
	if (i == in->len)
		die("%s: empty input: expected kubectl JSON or YAML", in->name);
	if (!is_json(in))
		return yaml_parse(in);
	doc = json_parse(in);
	json_dups(doc, in->name);
	return doc;
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
