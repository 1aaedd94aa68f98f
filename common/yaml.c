/*
 * kubectl YAML, read from libyaml's events and streamed (yaml_stream): of
 * what the keeper (keep.c) keeps, each value built into the tree JSON would
 * give, the rest checked alike (keys are strings and not repeated, no NUL,
 * no alias, not too deep).
 *
 * Scalars are read as kubectl reads them (sigs.k8s.io/yaml, YAML 1.1): see
 * yscalar.  Empty documents (a "---" at the end) are no documents.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "gpudrv.h"

#define DEPTH_MAX 1024
#define YTAG "tag:yaml.org,2002:"

struct ybuild {
	const char *in_name;
	cJSON *root;
	cJSON *stack[DEPTH_MAX];
	char *key[DEPTH_MAX]; /* pending mapping key of each open mapping */
	int depth;
	int max;         /* depth allowed: DEPTH_MAX less the levels above the root */
};

static void
ydie(const struct ybuild *b, const yaml_mark_t *m, const char *what)
{
	die("%s:%zu:%zu: %s", b->in_name, m->line + 1, m->column + 1, what);
}

static const char *const null_words[] = { "", "~", "null", "Null", "NULL", NULL };
static const char *const true_words[] = { "y", "Y", "yes", "Yes", "YES", "true", "True",
	"TRUE", "on", "On", "ON", NULL };
static const char *const false_words[] = { "n", "N", "no", "No", "NO", "false", "False",
	"FALSE", "off", "Off", "OFF", NULL };
static const char *const inf_nan[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
	"-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", NULL };

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? (go-yaml's float) */
static int
float_ok(const char *s)
{
	size_t d = 0;

	if (*s == '-' || *s == '+')
		s++;
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++)
			d++;
		if (d == 0)
			return 0;
	} else {
		for (; isdigit((unsigned char)*s); s++)
			d++;
		if (d == 0)
			return 0;
		if (*s == '.')
			for (s++; isdigit((unsigned char)*s); s++)
				;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		for (d = 0; isdigit((unsigned char)*s); s++)
			d++;
		if (d == 0)
			return 0;
	}
	return *s == '\0';
}

/*
 * Go's strconv.ParseInt(s, 0, 64), or ParseUint: 0x, 0o, 0b, a leading 0
 * octal.  dec: the value in decimal, as JSON would write it.
 */
static int
int_ok(const char *s, double *v, char *dec, size_t decsz)
{
	const char *p = s, *digits = "0123456789";
	int base = 10, neg = 0;
	unsigned long long u;
	char *end;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2, digits = "0123456789abcdefABCDEF";
	else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
		base = 8, p += 2, digits = "01234567";
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		base = 2, p += 2, digits = "01";
	else if (p[0] == '0' && p[1] != '\0')
		base = 8, p += 1, digits = "01234567";
	if (*p == '\0' || strspn(p, digits) != strlen(p))
		return 0;
	errno = 0;
	u = strtoull(p, &end, base);
	if (errno != 0 || (neg && u > 9223372036854775808ULL))
		return 0;
	*v = neg ? -(double)u : (double)u;
	snprintf(dec, decsz, "%s%llu", neg && u > 0 ? "-" : "", u);
	return 1;
}

/*
 * A plain, untagged scalar: null, boolean, number or string, as go-yaml v2
 * resolves it.  A number keeps its literal in valuestring as json.c's do
 * (an integer in decimal, a float as written), so that 1.0 and 1e0 are no
 * more an integer here than in JSON.
 */
static cJSON *
resolve_plain(const struct ybuild *b, const yaml_event_t *ev, const char *s, int keep)
{
	char *plain, *o, dec[32];
	const char *i;
	double v;
	cJSON *num = NULL;

	if (word_in(s, null_words))
		return cJSON_CreateNull();
	if (word_in(s, true_words))
		return cJSON_CreateTrue();
	if (word_in(s, false_words))
		return cJSON_CreateFalse();
	if (word_in(s, inf_nan))
		ydie(b, &ev->start_mark, "YAML infinity or NaN: JSON has no such number");
	if (strcmp(s, "<<") == 0)
		ydie(b, &ev->start_mark, "YAML merge keys are not accepted (kubectl never writes them)");
	if (!keep)
		return NULL; /* checked, and nobody reads it */
	if (strchr("+-.0123456789", s[0]) == NULL)
		return cJSON_CreateString(s);
	/* go-yaml drops underscores from numbers: 1_000 is 1000. */
	plain = xmalloc(strlen(s) + 1);
	for (i = s, o = plain; *i != '\0'; i++)
		if (*i != '_')
			*o++ = *i;
	*o = '\0';
	if (s[0] != '.' && int_ok(plain, &v, dec, sizeof dec)) {
		num = cJSON_CreateNumber(v);
		num->valuestring = xstrndup(dec, strlen(dec));
	} else if (float_ok(plain)) {
		num = cJSON_CreateNumber(strtod(plain, NULL));
		num->valuestring = plain;
		plain = NULL;
	}
	free(plain);
	return num != NULL ? num : cJSON_CreateString(s);
}

/*
 * The one rule for a scalar: quoted, block (| >) and !!str scalars are
 * strings; !!int, !!float, !!bool and !!null must be what they say; a plain
 * untagged scalar resolves as YAML 1.1 does (yes/no/on/off are booleans);
 * any other tag is refused.  keep 0: only checked, and a string not copied
 * (NULL; a value nobody reads may be large): what is returned is the caller's.
 */
static cJSON *
yscalar(const struct ybuild *b, const yaml_event_t *ev, int keep)
{
	const char *v = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	cJSON *r;
	char what[160];

	if (memchr(v, '\0', ev->data.scalar.length) != NULL)
		ydie(b, &ev->start_mark, "NUL byte in a YAML scalar");
	if (tag == NULL && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return resolve_plain(b, ev, v, keep);
	if (tag == NULL || strcmp(tag, "!") == 0 || strcmp(tag, YTAG "str") == 0)
		return keep ? cJSON_CreateString(v) : NULL;
	if (strcmp(tag, YTAG "int") == 0 || strcmp(tag, YTAG "float") == 0 ||
	    strcmp(tag, YTAG "bool") == 0 || strcmp(tag, YTAG "null") == 0) {
		r = resolve_plain(b, ev, v, 1);
		if ((tag[sizeof YTAG - 1] == 'i' && cJSON_IsNumber(r) &&
		    r->valuedouble == (double)(long long)r->valuedouble) ||
		    (tag[sizeof YTAG - 1] == 'f' && cJSON_IsNumber(r)) ||
		    (tag[sizeof YTAG - 1] == 'b' && cJSON_IsBool(r)) ||
		    (tag[sizeof YTAG - 1] == 'n' && cJSON_IsNull(r))) {
			if (keep)
				return r;
			cJSON_Delete(r);
			return NULL;
		}
		cJSON_Delete(r);
		snprintf(what, sizeof what, "%s is not a !!%s", qstr(v), tag + sizeof YTAG - 1);
		ydie(b, &ev->start_mark, what);
	}
	snprintf(what, sizeof what, "YAML tag %s is not one kubectl writes", qstr(tag));
	ydie(b, &ev->start_mark, what);
	return NULL;
}

/* A collection's tag, if any, must be the standard one. */
static void
ytag(const struct ybuild *b, const yaml_event_t *ev)
{
	const char *tag = (const char *)(ev->type == YAML_MAPPING_START_EVENT ?
	    ev->data.mapping_start.tag : ev->data.sequence_start.tag);
	const char *want = ev->type == YAML_MAPPING_START_EVENT ? YTAG "map" : YTAG "seq";
	char what[160];

	if (tag != NULL && strcmp(tag, want) != 0 && strcmp(tag, "!") != 0) {
		snprintf(what, sizeof what, "YAML tag %s is not one kubectl writes", qstr(tag));
		ydie(b, &ev->start_mark, what);
	}
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
	ytag(b, ev);
	attach(b, node, ev);
	b->stack[b->depth] = node;
	b->key[b->depth] = NULL;
	b->depth++;
}

static void
ymalformed(const yaml_parser_t *p, const char *name, size_t len, int eof)
{
	char what[256];

	if (p->error == YAML_MEMORY_ERROR)
		die("out of memory");
	snprintf(what, sizeof what, "malformed YAML: %s%s%s",
	    p->problem ? p->problem : "error",
	    p->context ? " " : "", p->context ? p->context : "");
	if (eof && p->problem_mark.index >= len)
		die("%s: truncated YAML: %s (%zu bytes read)", name, what, len);
	die("%s:%zu:%zu: %s", name, p->problem_mark.line + 1, p->problem_mark.column + 1, what);
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
		attach(b, yscalar(b, ev, 1), ev);
		break;
	case YAML_ALIAS_EVENT:
		ydie(b, &ev->start_mark, "YAML aliases are not accepted (kubectl never writes them)");
		break;
	default:
		break;
	}
}

/* A document that holds nothing: "---" alone, or at the end. */
static int
empty_root(const yaml_event_t *ev)
{
	return ev->type == YAML_SCALAR_EVENT && ev->data.scalar.length == 0 &&
	    ev->data.scalar.tag == NULL && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/*
 * The documents of a stream: calls doc(root event) when a document's root
 * node starts, docs counted; dies on a second one unless many.
 */
struct ydocs {
	size_t docs;
	int many, in_root;
	yaml_mark_t doc_mark;
};

/* 1 when ev starts a document's content (not an empty one). */
static int
yroot(struct ydocs *d, const struct ybuild *b, const yaml_event_t *ev, int depth)
{
	if (ev->type == YAML_DOCUMENT_START_EVENT)
		d->doc_mark = ev->start_mark;
	if (depth > 0 || d->in_root)
		return 0;
	if (ev->type != YAML_SCALAR_EVENT && ev->type != YAML_MAPPING_START_EVENT &&
	    ev->type != YAML_SEQUENCE_START_EVENT && ev->type != YAML_ALIAS_EVENT)
		return 0;
	if (empty_root(ev))
		return 0;
	if (d->docs++ > 0 && !d->many)
		ydie(b, &d->doc_mark, "more than one YAML document");
	d->in_root = 1;
	return 1;
}

/*
 * libyaml hands over a scalar only once it has read it whole, into memory
 * of its own that doubles as it grows: no event comes before, so no way to
 * skip it as it goes, and a 200 MB value nobody reads would cost 256 MiB.
 * So the input is fed to it by yin, which counts what it fed since the last
 * event: more than YAML_GAP_MAX bytes without one is a scalar (or comment)
 * no kubectl output holds (the API server stores no object over 1.5 MiB),
 * and an error, which keeps memory bounded whatever the input.  Both ways
 * (streamed, whole) read through it, so they say the same.
 */
#define YAML_GAP_MAX (8 << 20)

struct yin {
	struct reader *r;
	const char *name;
	size_t fed, at_event;  /* bytes fed in all, and when the last event came */
	yaml_mark_t last;      /* where the last event ended */
};

static int
yread(void *data, unsigned char *buf, size_t size, size_t *got)
{
	struct yin *in = data;
	struct reader *r = in->r;

	if (in->fed - in->at_event > YAML_GAP_MAX)
		die("%s:%zu:%zu: a YAML scalar or comment after this point runs over %d MiB: "
		    "not kubectl output (the API server keeps no object over 1.5 MiB)", in->name,
		    in->last.line + 1, in->last.column + 1, YAML_GAP_MAX >> 20);
	if (r->pos == r->len)
		reader_next(r);
	*got = r->len - r->pos < size ? r->len - r->pos : size;
	memcpy(buf, r->buf + r->pos, *got);
	r->pos += *got;
	in->fed += *got;
	return 1;
}

/* After each event: its end, and what was fed until then. */
static void
yevent(struct yin *in, const yaml_event_t *ev)
{
	in->at_event = in->fed;
	in->last = ev->end_mark;
}

/*
 * Streamed: a stack of the open collections, what the keeper (keep.c) keeps
 * built with the builder above, the rest only checked alike.
 */
enum { Y_TOP, Y_ITEMS, Y_ITEM, Y_KEEP, Y_COUNT, Y_SKIP, Y_EACH };

struct yframe {
	int role;
	int map;
	int want_key;        /* a mapping waiting for its next key */
	int dup;             /* its pending key was seen before */
	double count;        /* Y_COUNT: its members or elements */
	struct strset *seen; /* its keys */
	struct kept k;       /* Y_TOP, Y_ITEM, Y_KEEP: what is kept of it */
	const struct kspec *each; /* Y_EACH: what is kept of each mapping in it */
	cJSON *list;         /* Y_EACH: what was kept of its elements */
};

struct ystream {
	const struct scan *sc;
	struct yframe f[DEPTH_MAX];
	int n;
	struct ybuild cap; /* a kept value being built */
	int capturing;
	cJSON *top;
	size_t items;
	const char *kind; /* the top level's kind when its items began */
};

static void
ydone(struct ystream *y)
{
	struct yframe *f = y->n > 0 ? &y->f[y->n - 1] : NULL;

	if (f != NULL && f->map) {
		f->want_key = 1;
		f->dup = 0;
		f->k.at = NULL;
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
		keep_item(y->sc, v, &y->items, y->kind);
		return;
	}
	if (f->role == Y_EACH) {
		cJSON_AddItemToArray(f->list, v);
		return;
	}
	keep_put(&f->k, v);
	ydone(y);
}

static void
ypush(struct ystream *y, int role, const struct kspec *spec, const yaml_event_t *ev)
{
	struct yframe *f;

	if (y->n >= DEPTH_MAX)
		ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
	ytag(&y->cap, ev);
	f = &y->f[y->n++];
	memset(f, 0, sizeof *f);
	f->role = role;
	f->map = ev->type == YAML_MAPPING_START_EVENT;
	f->want_key = f->map;
	if (f->map)
		f->seen = strset_new();
	if (spec != NULL)
		keep_open(&f->k, spec, role == Y_TOP);
}

/* A collection ends: what it kept goes to its parent, or is the document's. */
static void
yclose(struct ystream *y)
{
	struct yframe *f = &y->f[--y->n], *up = y->n > 0 ? &y->f[y->n - 1] : NULL;

	strset_free(f->seen);
	switch (f->role) {
	case Y_ITEM:
		keep_item(y->sc, f->k.obj, &y->items, y->kind);
		break;
	case Y_TOP:
		y->top = f->k.obj;
		break;
	case Y_ITEMS:
		keep_put(&up->k, cJSON_CreateArray());
		break;
	case Y_KEEP:
		if (up->role == Y_EACH)
			cJSON_AddItemToArray(up->list, f->k.obj);
		else
			keep_put(&up->k, f->k.obj);
		break;
	case Y_EACH:
		keep_put(&up->k, f->list);
		break;
	case Y_COUNT:
		keep_put(&up->k, cJSON_CreateNumber(f->count));
		break;
	}
	ydone(y);
}

static void ystep(struct ystream *y, const yaml_event_t *ev);

/* A value built whole, from this event on (ydeliver hands it over). */
static void
ycapture(struct ystream *y, const yaml_event_t *ev)
{
	y->cap.max = DEPTH_MAX - y->n;
	y->capturing = 1;
	ystep(y, ev);
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
		yclose(y);
		return;
	}
	if (!coll && ev->type != YAML_SCALAR_EVENT)
		return;
	if (f != NULL && f->want_key) {
		if (coll) {
			if (y->n >= DEPTH_MAX)
				ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
			ydie(&y->cap, &ev->start_mark, "mapping key is not a string");
		}
		v = yscalar(&y->cap, ev, 1);
		if (!cJSON_IsString(v)) {
			cJSON_Delete(v);
			ydie(&y->cap, &ev->start_mark, "mapping key is not a string");
		}
		f->dup = strset_add(f->seen, v->valuestring, 1) != 0;
		keep_key(&f->k, v->valuestring, strlen(v->valuestring));
		f->want_key = 0;
		f->count++;
		cJSON_Delete(v);
		return;
	}
	if (f != NULL && f->dup) {
		if (coll && y->n >= DEPTH_MAX)
			ydie(&y->cap, &ev->start_mark, "YAML nested too deep");
		if (!coll)
			cJSON_Delete(yscalar(&y->cap, ev, 0));
		ydie(&y->cap, &ev->start_mark, "duplicate mapping key");
	}
	if (f != NULL && !f->map)
		f->count++;
	if (f != NULL && f->role == Y_EACH) {
		/* an element of a list kept in part: a mapping as each says */
		if (ev->type == YAML_MAPPING_START_EVENT)
			ypush(y, Y_KEEP, f->each, ev);
		else
			ycapture(y, ev);
		return;
	}
	if (f == NULL || f->role == Y_ITEMS) {
		/* the top level, or an item: a mapping kept in part, else whole */
		if (ev->type == YAML_MAPPING_START_EVENT)
			ypush(y, f == NULL ? Y_TOP : Y_ITEM, f == NULL ? y->sc->top : y->sc->item, ev);
		else
			ycapture(y, ev);
		return;
	}
	switch (keep_how(&f->k, ev->type == YAML_MAPPING_START_EVENT,
	    ev->type == YAML_SEQUENCE_START_EVENT, y->cap.in_name)) {
	case KEEP_NONE:
		if (coll) {
			ypush(y, Y_SKIP, NULL, ev);
		} else {
			cJSON_Delete(yscalar(&y->cap, ev, 0)); /* checked; a string not even copied */
			ydone(y);
		}
		break;
	case KEEP_VALUE:
		ycapture(y, ev);
		break;
	case KEEP_COUNT:
		ypush(y, Y_COUNT, NULL, ev);
		break;
	case KEEP_OBJECT:
		ypush(y, Y_KEEP, f->k.at->sub, ev);
		break;
	case KEEP_ITEMS:
		y->kind = j_str(f->k.obj, "kind");
		ypush(y, Y_ITEMS, NULL, ev);
		break;
	case KEEP_EACH:
		ypush(y, Y_EACH, NULL, ev);
		f = &y->f[y->n - 1];
		f->each = keep_each(&y->f[y->n - 2].k);
		f->list = cJSON_CreateArray();
		break;
	}
}

void
yaml_stream(struct reader *r, const struct scan *sc)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ystream *y = xmalloc(sizeof *y);
	struct ydocs d = { 0, sc->many, 0, { 0, 0, 0 } };
	struct yin yi;
	int done = 0;

	memset(&yi, 0, sizeof yi);
	yi.r = r;
	yi.name = r->name;
	memset(y, 0, sizeof *y);
	y->sc = sc;
	y->cap.in_name = r->name;
	if (!yaml_parser_initialize(&p))
		die("out of memory");
	yaml_parser_set_input(&p, yread, &yi);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev))
			ymalformed(&p, r->name, r->off + r->len, r->eof);
		yevent(&yi, &ev);
		if (ev.type == YAML_STREAM_END_EVENT)
			done = 1;
		yroot(&d, &y->cap, &ev, y->n + y->capturing);
		if ((sc->many && ev.type == YAML_DOCUMENT_END_EVENT && d.in_root) ||
		    (!sc->many && ev.type == YAML_STREAM_END_EVENT && d.docs > 0)) {
			d.in_root = 0;
			sc->doc_fn(sc, y->top);
			cJSON_Delete(y->top);
			y->top = NULL;
			y->items = 0;
			y->kind = NULL;
		} else if (ev.type == YAML_DOCUMENT_END_EVENT) {
			d.in_root = 0;
		} else if (!(ev.type == YAML_SCALAR_EVENT && y->n == 0 && !y->capturing &&
		    empty_root(&ev))) {
			ystep(y, &ev);
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (d.docs == 0)
		die("%s: empty input: expected kubectl JSON or YAML", r->name);
	free(y);
}
