/*
 * kubectl documents, item by item: which kinds a command reads, how a list's
 * items get their kind, watch events, and a Status named as such, above the
 * two streaming scanners (json.c, yaml.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

static void
checked(const struct scan *sc, const cJSON *top)
{
	(void)sc;
	(void)top;
}

/*
 * Every byte checked by the scanner, keeping nothing (so no value is too
 * long: a registry's tag list runs to megabytes), then the document parsed
 * whole by cJSON, and a key given twice anywhere an error.
 */
cJSON *
doc_parse(const struct input *in)
{
	/* the bytes already read, as a reader that has reached its end */
	struct reader r = { .fd = -1, .name = in->name, .buf = in->data, .len = in->len,
		.cap = in->len, .eof = 1 };
	struct scan sc = { NULL, NULL, 0, NULL, checked, NULL };
	size_t at = text_start(in->data, in->len);
	cJSON *doc;

	if (!text_is_json(in->data, in->len, in->name))
		die("%s: not JSON", in->name);
	json_stream(&r, &sc);
	if ((doc = cJSON_ParseWithLength(in->data + at, in->len - at)) == NULL)
		die("%s: JSON that cJSON does not read", in->name);
	tree_dups(doc, in->name);
	return doc;
}

/*
 * The dispatcher.  A list's kind may come after its items (kubectl sorts
 * keys), so an item without a kind may be read as the typed list's one kind
 * before it is known that the list is one, and a fault may depend on what
 * the list turns out to be: the first fault is kept for each case (a plain
 * List, the typed list) and the right one reported at the end.  A fault is
 * never reported before the document has been read whole, so a document
 * broken further on is reported as broken, as the whole-tree way does; a
 * command's own die() while it handles an item is kept the same way.  Once
 * there is a fault, no more items are given.
 */
enum { H_LIST, H_TYPED };

struct dstate {
	const struct doc_reader *dr;
	const char *name;
	char what[160];      /* what an item must be (noun), made once */
	char fault[2][1024]; /* the first fault if the list is a List, a typed list; "" none */
	size_t given;        /* items given for this document */
	int trouble;         /* a watch reported an error */
};

static int
one_of(const char *s, const char *const *set)
{
	int i;

	for (i = 0; s != NULL && set[i] != NULL; i++)
		if (strcmp(s, set[i]) == 0)
			return i;
	return -1;
}

static size_t
count(const char *const *set)
{
	size_t n = 0;

	while (set[n] != NULL)
		n++;
	return n;
}

/* "a Node" or "a PodDisruptionBudget or Pod": what an item must be. */
static void
noun(const struct doc_reader *dr, char *out, size_t outsz)
{
	size_t i, n = count(dr->kinds), len = 0;

	out[0] = '\0';
	for (i = 0; i < n && len < outsz; i++)
		len += (size_t)snprintf(out + len, outsz - len, "%s%s", i == 0 ? "a " :
		    i + 1 == n ? " or " : ", ", dr->kinds[i]);
}

/* Keeps msg as the fault of each case that has none yet (only_list: a List's). */
static void
keep_fault(struct dstate *st, int only_list, const char *msg)
{
	int h;

	for (h = H_LIST; h <= (only_list ? H_LIST : H_TYPED); h++)
		if (st->fault[h][0] == '\0')
			snprintf(st->fault[h], sizeof st->fault[h], "%s", msg);
}

static void
fault(struct dstate *st, int only_list, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fault(struct dstate *st, int only_list, const char *fmt, ...)
{
	char msg[1024];
	int n;
	va_list ap;

	n = snprintf(msg, sizeof msg, "%s: ", st->name);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	keep_fault(st, only_list, msg);
}

/* The command's item(), its die() kept as a fault of the document. */
static void
give(struct dstate *st, const struct item *item)
{
	static jmp_buf jb;
	static char msg[1024];

	if (setjmp(jb) != 0) {
		keep_fault(st, 0, msg);
		return;
	}
	die_defer(&jb, msg, sizeof msg);
	st->dr->item(item, st->dr->arg);
	die_defer(NULL, NULL, 0);
}

static void
on_item(const struct scan *sc, const cJSON *it, size_t i, const char *listkind)
{
	struct dstate *st = sc->arg;
	const struct doc_reader *dr = st->dr;
	const cJSON *km = j_get(it, "kind");
	const char *k = j_str(it, "kind");
	int typed = listkind != NULL ? one_of(listkind, dr->lists) : -1;
	struct item item = { NULL, NULL, 0, 1, NULL };
	const char *what = st->what;

	/* a single object's or a wrong kind's "items" are not items */
	if (listkind != NULL && typed < 0 && strcmp(listkind, "List") != 0)
		return;
	if (st->fault[H_TYPED][0] != '\0')
		return;
	if (!cJSON_IsObject(it)) {
		fault(st, 0, "item %zu is %s, not %s", i, j_type(it), what);
		return;
	}
	if (k != NULL && one_of(k, dr->kinds) < 0) {
		fault(st, 0, "item %zu is a %s, not %s%s", i, qstr(k), what, dr->hint ? dr->hint : "");
		return;
	}
	if (k == NULL && km == NULL && typed >= 0) {
		k = dr->kinds[typed];
	} else if (k == NULL && km == NULL && listkind == NULL && count(dr->lists) == 1) {
		/* a NodeList's kindless item, if the list turns out to be one */
		fault(st, 1, "item %zu has no kind, so it is not %s", i, what);
		k = dr->kinds[0];
	} else if (k == NULL && km == NULL && listkind == NULL) {
		fault(st, 0, "item %zu has no kind, and the list's kind comes after its items, "
		    "so it could be %s", i, what);
		return;
	} else if (k == NULL) {
		fault(st, 0, "item %zu has no kind, so it is not %s", i, what);
		return;
	}
	st->given++;
	item.obj = it;
	item.kind = k;
	item.index = i;
	give(st, &item);
}

/* A Status where data was expected: what the API server said, and no guess. */
static void
status_die(const struct dstate *st, const cJSON *s, const char *what)
{
	const char *msg = j_str(s, "message"), *reason = j_str(s, "reason");
	long code = 0;

	j_int(s, "code", &code);
	die("%s: a Kubernetes Status, not %s: %s (reason %s, code %ld)", st->name, what,
	    msg ? qmsg(msg) : "no message", reason ? qstr(reason) : "none", code);
}

/*
 * A watch event where a list was asked for: whatever its type (an ERROR, a
 * BOOKMARK, an ADDED), the list was not read, so nothing can be said of it.
 */
static void
not_watched(const struct dstate *st, const cJSON *top, const char *type)
{
	const cJSON *obj = j_get(top, "object");
	const char *k = j_str(obj, "kind"), *msg = j_str(obj, "message");
	const struct doc_reader *dr = st->dr;
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR",
		NULL };
	const char *t = one_of(type, types) >= 0 ? type : qstr(type);

	if (strcmp(type, "ERROR") == 0 || (k != NULL && strcmp(k, "Status") == 0))
		die("%s: a watch event (%s: %s), not %s%s", st->name, t,
		    msg ? qmsg(msg) : "no message", dr->what, dr->hint ? dr->hint : "");
	die("%s: a watch event (%s), not %s%s", st->name, t, dr->what, dr->hint ? dr->hint : "");
}

/* A watch event: {"type": ..., "object": ...} (kubectl get -w --output-watch-events). */
static void
on_event(struct dstate *st, const cJSON *top, const char *type)
{
	const struct doc_reader *dr = st->dr;
	const cJSON *obj = j_get(top, "object");
	const char *k = j_str(obj, "kind");
	struct item item = { obj, k, 0, 0, type };

	if (strcmp(type, "BOOKMARK") == 0)
		return;
	if (strcmp(type, "ERROR") == 0 || (k != NULL && strcmp(k, "Status") == 0)) {
		long code = 0;
		const char *reason = j_str(obj, "reason");

		j_int(obj, "code", &code);
		warnf("%s: the watch reported an error: %s (reason %s, code %ld)", st->name,
		    j_str(obj, "message") ? qmsg(j_str(obj, "message")) : "no message",
		    reason ? qstr(reason) : "none", code);
		st->trouble = 1;
		return;
	}
	if (strcmp(type, "ADDED") != 0 && strcmp(type, "MODIFIED") != 0 &&
	    strcmp(type, "DELETED") != 0)
		die("%s: a watch event of type %s (ADDED, MODIFIED, DELETED, BOOKMARK or ERROR "
		    "expected)", st->name, qstr(type));
	if (!cJSON_IsObject(obj))
		die("%s: a watch event (%s) whose object is %s", st->name, type, j_type(obj));
	if (one_of(k, dr->kinds) < 0)
		die("%s: a watch event (%s) of %s, not %s", st->name, type,
		    k ? qstr(k) : "an object with no kind", st->what);
	give(st, &item);
	if (st->fault[H_LIST][0] != '\0')
		die("%s", st->fault[H_LIST]);
	dr->end(1, dr->arg);
}

/*
 * A list the server cut into pages (the request had a limit, or a proxy
 * sent one): metadata.continue or remainingItemCount says more is left
 * (which of them, or NULL).  Never read as the whole list.
 */
static const char *
page_of(const cJSON *top)
{
	const cJSON *m = j_get(top, "metadata"), *c, *rem;

	if (!cJSON_IsObject(m))
		return NULL;
	c = j_get(m, "continue");
	rem = j_get(m, "remainingItemCount");
	if (c != NULL && !cJSON_IsNull(c) && !(cJSON_IsString(c) && c->valuestring[0] == '\0'))
		return "continue";
	if (rem != NULL && !cJSON_IsNull(rem) && !(cJSON_IsNumber(rem) && rem->valuedouble == 0))
		return "remainingItemCount";
	return NULL;
}

static void
page_die(const struct dstate *st, const cJSON *top, const char *kind)
{
	const char *set = page_of(top);

	if (set != NULL)
		die("%s: this %s is one page of a longer list (metadata.%s is set: "
		    "the request had a limit), not the whole list", st->name, kind, set);
}

static void
on_doc(const struct scan *sc, const cJSON *top)
{
	struct dstate *st = sc->arg;
	const struct doc_reader *dr = st->dr;
	const char *kind = j_str(top, "kind"), *type = j_str(top, "type");
	const cJSON *items = j_get(top, "items");
	struct item one = { top, kind, 0, 0, NULL };
	int h;

	if (kind != NULL && strcmp(kind, "Status") == 0)
		status_die(st, top, dr->what);
	if (kind == NULL && type != NULL && j_get(top, "object") != NULL) {
		if (!dr->watch)
			not_watched(st, top, type);
		on_event(st, top, type);
	} else if (kind != NULL && dr->single && one_of(kind, dr->kinds) >= 0) {
		if (st->given > 0)
			dr->end(0, dr->arg);
		st->fault[H_LIST][0] = '\0';
		give(st, &one);
		if (st->fault[H_LIST][0] != '\0')
			die("%s", st->fault[H_LIST]);
		dr->end(1, dr->arg);
	} else {
		h = kind != NULL && strcmp(kind, "List") == 0 ? H_LIST : H_TYPED;
		if (kind == NULL || (h == H_TYPED && one_of(kind, dr->lists) < 0))
			die("%s: not %s (kind is %s)%s", st->name, dr->what,
			    kind ? qstr(kind) : j_type(j_get(top, "kind")), dr->hint ? dr->hint : "");
		if (!cJSON_IsArray(items) && !cJSON_IsNull(items))
			die("%s: %s has no items list", st->name, kind);
		if (st->fault[h][0] != '\0')
			die("%s", st->fault[h]);
		page_die(st, top, kind);
		dr->end(1, dr->arg);
		if (dr->listed != NULL)
			dr->listed(kind, top, dr->arg);
	}
	st->given = 0;
	st->fault[H_LIST][0] = st->fault[H_TYPED][0] = '\0';
}

int
doc_each(const char *path, const struct doc_reader *dr)
{
	struct dstate st;
	struct kspec top[16], obj[16], meta[24];
	struct scan sc = { top, dr->keys, dr->many, on_item, on_doc, &st };
	static const char *const extra[] = { "items", "type", "object", "message", "reason",
		"code", NULL };
	static const struct kspec page[] = { { "continue", NULL }, { "remainingItemCount", NULL },
		{ NULL, NULL } };
	struct reader r;
	size_t nt, no, nm, i;
	int has_meta = 0;

	memset(&st, 0, sizeof st);
	st.dr = dr;
	noun(dr, st.what, sizeof st.what);
	/* The top level keeps what an item keeps (it may be one), with a list's
	 * paging members in its metadata, and what lists, watch events and a
	 * Status have; an event's object, what an item keeps and what a Status
	 * has. */
	for (i = 0; dr->keys[i].key != NULL && i < 8; i++) {
		top[i] = obj[i] = dr->keys[i];
		if (strcmp(dr->keys[i].key, "metadata") != 0)
			continue;
		has_meta = 1;
		if (dr->keys[i].sub == NULL || dr->keys[i].sub == KS_COUNT)
			continue; /* all of it kept, or none */
		for (nm = 0; dr->keys[i].sub[nm].key != NULL && nm < 20; nm++)
			meta[nm] = dr->keys[i].sub[nm];
		meta[nm++] = page[0];
		meta[nm++] = page[1];
		meta[nm].key = NULL;
		top[i].sub = meta;
	}
	nt = no = i;
	if (!has_meta) {
		top[nt].key = "metadata";
		top[nt++].sub = page;
	}
	for (i = 0; extra[i] != NULL; i++) {
		top[nt].key = extra[i];
		top[nt++].sub = strcmp(extra[i], "object") == 0 ? obj : NULL;
		if (i >= 3)
			obj[no++] = top[nt - 1];
	}
	top[nt].key = obj[no].key = NULL;
	if (dr->empty_ok) {
		if (!reader_try(&r, path)) {
			reader_close(&r);
			return EXIT_CLEAN;
		}
	} else {
		reader_open(&r, path);
	}
	st.name = r.name;
	if (r.json)
		json_stream(&r, &sc);
	else
		yaml_stream(&r, &sc);
	reader_close(&r);
	return st.trouble ? EXIT_TROUBLE : EXIT_CLEAN;
}

/*
 * doc_is_list: a member of the top level as it is written: a string's JSON
 * text without its quotes (a quote, a backslash and control characters
 * escaped, so that what is printed stays one line), another scalar's, or ""
 * for an object, a list or nothing.
 */
static void
as_written(const cJSON *v, char *out, size_t outsz)
{
	char *txt;
	size_t n;

	out[0] = '\0';
	if (v == NULL || cJSON_IsObject(v) || cJSON_IsArray(v))
		return;
	if ((txt = cJSON_PrintUnformatted(v)) == NULL)
		die("out of memory");
	n = strlen(txt);
	if (cJSON_IsString(v) && n >= 2)
		snprintf(out, outsz, "%.*s", (int)(n - 2), txt + 1);
	else
		snprintf(out, outsz, "%s", txt);
	free(txt);
}

/* Every byte through the scanner, keeping nothing: 1 if it found a fault. */
static int
scan_faults(struct reader *r, const struct scan *sc)
{
	static jmp_buf jb;
	static char msg[1024];

	if (setjmp(jb) != 0)
		return 1;
	die_defer(&jb, msg, sizeof msg);
	json_stream(r, sc);
	die_defer(NULL, NULL, 0);
	return 0;
}

/* The first member of obj whose key an earlier one had, or NULL. */
static const cJSON *
twice(const cJSON *obj)
{
	struct strset *seen = strset_new();
	const cJSON *c;

	for (c = obj->child; c != NULL; c = c->next)
		if (strset_add(seen, c->string, 1) != 0)
			break;
	strset_free(seen);
	return c;
}

/*
 * Read whole: an answer it checks is one list of the GPU Operator's objects,
 * small.  The scanner tells a body cut short (it asked for more than there
 * was) from one that is not JSON; cJSON then gives the top level whole, so
 * that a key given twice there is found whatever it is.
 */
int
doc_is_list(const char *path, const char *list, char *why, size_t whysz)
{
	struct input in;
	struct reader r;
	struct scan sc = { NULL, NULL, 0, NULL, checked, NULL };
	size_t at = 0;
	cJSON *doc = NULL, *key;
	const cJSON *dup;
	const char *kind, *more;
	char code[64], reason[256], msg[1024], k[256];

	input_read(&in, path);
	while (at < in.len && in.data[at] != '\0' && strchr(" \t\r\n", in.data[at]) != NULL)
		at++;
	r = (struct reader){ .fd = -1, .name = in.name, .buf = in.data, .len = in.len,
		.cap = in.len, .eof = 1 };
	why[0] = '\0';
	if (at == in.len) {
		snprintf(why, whysz, "an empty body");
	} else if (in.data[at] != '{') {
		snprintf(why, whysz, "a body that is not one JSON object");
	} else if (scan_faults(&r, &sc)) {
		snprintf(why, whysz, "%s", r.len == 0 ?
		    "a body cut short (not one whole JSON object)" : "a body that is not one JSON object");
	} else if ((doc = cJSON_ParseWithLength(in.data + at, in.len - at)) == NULL) {
		snprintf(why, whysz, "a body that is not one JSON object");
	} else if ((dup = twice(doc)) != NULL) {
		key = cJSON_CreateString(dup->string);
		as_written(key, k, sizeof k);
		cJSON_Delete(key);
		snprintf(why, whysz, "an object that has the member \"%s\" twice", k);
	} else if ((kind = j_str(doc, "kind")) == NULL) {
		snprintf(why, whysz, "an object that has no kind");
	} else if (strcmp(kind, "Status") == 0) {
		as_written(j_get(doc, "code"), code, sizeof code);
		as_written(j_get(doc, "reason"), reason, sizeof reason);
		as_written(j_get(doc, "message"), msg, sizeof msg);
		snprintf(why, whysz, "a Status (%s %s: %s)", code, reason, msg);
	} else {
		as_written(j_get(doc, "kind"), k, sizeof k);
		if (strcmp(kind, list) != 0)
			snprintf(why, whysz, "kind %s", k);
		else if (!cJSON_IsArray(j_get(doc, "items")))
			snprintf(why, whysz, "kind %s but no items list", k);
		else if ((more = page_of(doc)) != NULL)
			snprintf(why, whysz, "one page of a longer list (metadata.%s is set: the request had a limit)", more);
	}
	cJSON_Delete(doc);
	input_free(&in);
	return why[0] != '\0';
}
