/* Nodes: their names, labels and tag, and walking a Node or a list of them. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpudrv.h"

/* RFC 1123 subdomain, as the API server requires of a node name. */
int
dns_subdomain_ok(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return 0;
		if ((c == '-' || c == '.') && (i == 0 || i == n - 1))
			return 0;
	}
	return 1;
}

const char *
node_name(const cJSON *node)
{
	const char *name = j_str(j_get(node, "metadata"), "name");

	return dns_subdomain_ok(name) ? name : NULL;
}

const cJSON *
node_labels(const cJSON *node)
{
	return j_get(j_get(node, "metadata"), "labels");
}

/* 0 and *val set, or -1 with f saying why. */
int
node_label(const cJSON *node, const char *key, const char **val, struct tagfault *f)
{
	const cJSON *v = j_get(node_labels(node), key);

	f->label = key;
	if (v == NULL) {
		f->kind = "missing";
		f->detail = "is missing";
		return -1;
	}
	if (!cJSON_IsString(v)) {
		f->kind = "not-a-string";
		f->detail = "is not a string";
		return -1;
	}
	if (v->valuestring[0] == '\0') {
		f->kind = "empty";
		f->detail = "is present but empty";
		return -1;
	}
	*val = v->valuestring;
	return 0;
}

int
node_tag(const cJSON *node, const struct tag_override *ov, char *out, size_t outsz,
         char *row, size_t rowsz, struct tagfault *f)
{
	const char *branch, *kernel, *id, *ver, *why;
	char ostag[TAG_MAX + 1];
	int bad;

	branch = ov ? ov->branch : NULL;
	kernel = ov ? ov->kernel : NULL;
	if ((branch == NULL && node_label(node, L_MAJOR, &branch, f) != 0) ||
	    (kernel == NULL && node_label(node, L_KERNEL, &kernel, f) != 0) ||
	    node_label(node, L_OSID, &id, f) != 0 ||
	    node_label(node, L_OSVER, &ver, f) != 0)
		return -1;
	f->kind = "invalid";
	if ((bad = ostag_build(ostag, sizeof ostag, id, ver, &why)) != 0) {
		f->label = bad == 1 ? L_OSID : L_OSVER;
		f->detail = why;
		return -1;
	}
	if ((bad = tag_build(out, outsz, branch, kernel, ostag, &why)) != 0) {
		f->label = bad == 1 ? L_MAJOR : bad == 2 ? L_KERNEL : L_OSVER;
		f->detail = why;
		return -1;
	}
	if (row != NULL)
		snprintf(row, rowsz, "%s,%s,%s", branch, kernel, ostag);
	return 0;
}

int
node_unschedulable(const cJSON *node)
{
	return cJSON_IsTrue(j_get(j_get(node, "spec"), "unschedulable"));
}

/* What gpudrv reads of a Node: all the streaming path keeps of one. */
static const struct kspec labels[] = { { L_MAJOR, NULL }, { L_KERNEL, NULL },
	{ L_OSID, NULL }, { L_OSVER, NULL }, { L_STATE, NULL }, { L_PRESENT, NULL },
	{ NULL, NULL } };
static const struct kspec meta[] = { { "name", NULL }, { "labels", labels },
	{ NULL, NULL } };
static const struct kspec spec[] = { { "unschedulable", NULL }, { NULL, NULL } };
static const struct kspec keys[] = { { "kind", NULL }, { "metadata", meta },
	{ "spec", spec }, { NULL, NULL } };
static const struct kspec nospec[] = { { "kind", NULL }, { "metadata", meta },
	{ NULL, NULL } };

/* Why item i of a list of this kind is not a Node, into why; 0 if it is one. */
static int
item_fault(const cJSON *it, const char *kind, size_t i, char *why, size_t whysz)
{
	const char *k = j_str(it, "kind");

	if (!cJSON_IsObject(it))
		snprintf(why, whysz, "item %zu is %s, not a Node", i, j_type(it));
	else if (k == NULL && !(strcmp(kind, "NodeList") == 0 && j_get(it, "kind") == NULL))
		snprintf(why, whysz, "item %zu has no kind, so it is not a Node", i);
	else if (k != NULL && strcmp(k, "Node") != 0)
		snprintf(why, whysz, "item %zu is a %s, not a Node", i, qstr(k));
	else
		return 0;
	return 1;
}

/* The kind of a Node, NodeList or List document; dies on any other. */
static const char *
doc_kind(const cJSON *doc, const char *docname)
{
	const char *kind = j_str(doc, "kind");
	const cJSON *items;

	if (kind != NULL && strcmp(kind, "Node") == 0)
		return kind;
	if (kind == NULL || (strcmp(kind, "List") != 0 && strcmp(kind, "NodeList") != 0))
		die("%s: not a Node nor a list of Nodes (kind is %s)", docname,
		    kind ? qstr(kind) : j_type(j_get(doc, "kind")));
	items = j_get(doc, "items");
	if (!cJSON_IsArray(items) && !cJSON_IsNull(items))
		die("%s: %s has no items list", docname, kind);
	return kind;
}

/*
 * Every item is checked to be a Node before the first is handed to fn, so a
 * bad list prints nothing.  `kubectl get --raw` NodeLists carry no item kind.
 */
size_t
nodes_each(const cJSON *doc, const char *docname, int *was_list, node_fn fn, void *arg)
{
	const char *kind;
	const cJSON *it;
	char why[256];
	size_t i;

	kind = doc_kind(doc, docname);
	*was_list = 0;
	if (strcmp(kind, "Node") == 0) {
		fn(doc, 0, arg);
		return 1;
	}
	*was_list = 1;
	i = 0;
	cJSON_ArrayForEach(it, j_get(doc, "items")) {
		if (item_fault(it, kind, i, why, sizeof why))
			die("%s: %s", docname, why);
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(it, j_get(doc, "items"))
		fn(it, i++, arg);
	return i;
}

/*
 * The list's kind comes after its items (kubectl sorts keys), so each item is
 * checked both as a List's and as a NodeList's, and the first fault of each
 * kept for the end.  fn gets the items up to the first fault either way.
 */
struct streamed {
	const struct node_stream *ns;
	size_t bad[2]; /* first bad item as a List's, as a NodeList's; SIZE_MAX none */
	char why[2][256];
	size_t n;
};

static void
streamed_item(cJSON *it, size_t i, void *arg)
{
	struct streamed *st = arg;

	if (st->bad[0] == SIZE_MAX && item_fault(it, "List", i, st->why[0], sizeof st->why[0]))
		st->bad[0] = i;
	if (st->bad[1] == SIZE_MAX && item_fault(it, "NodeList", i, st->why[1], sizeof st->why[1]))
		st->bad[1] = i;
	if (st->bad[1] == SIZE_MAX) {
		st->ns->fn(it, i, st->ns->arg);
		st->n++;
	}
}

size_t
nodes_stream(const char *path, const struct node_stream *ns, int *was_list)
{
	struct streamed st = { ns, { SIZE_MAX, SIZE_MAX }, { "", "" }, 0 };
	struct stream_cb cb = { ns->want_spec ? keys : nospec, streamed_item, &st };
	struct reader r;
	cJSON *top;
	const char *kind;
	size_t n;
	int nodelist;

	reader_open(&r, path);
	*was_list = 1; /* what fn is given as items come is a list's */
	top = reader_is_json(&r) ? json_stream(&r, &cb) : yaml_stream(&r, &cb);
	kind = doc_kind(top, r.name);
	if (strcmp(kind, "Node") == 0) {
		if (st.n > 0 && ns->discard != NULL)
			ns->discard(ns->arg);
		*was_list = 0;
		ns->fn(top, 0, ns->arg);
		n = 1;
	} else {
		nodelist = strcmp(kind, "NodeList") == 0;
		if (st.bad[nodelist] != SIZE_MAX)
			die("%s: %s", r.name, st.why[nodelist]);
		n = st.n;
	}
	cJSON_Delete(top);
	reader_close(&r);
	return n;
}
