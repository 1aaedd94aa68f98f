/* Nodes: their names, labels and tag, and walking a Node or a list of them. */
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

/*
 * Every item is checked to be a Node before the first is handed to fn, so a
 * bad list prints nothing.  `kubectl get --raw` NodeLists carry no item kind.
 */
size_t
nodes_each(const cJSON *doc, const char *docname, int *was_list, node_fn fn, void *arg)
{
	const char *kind = j_str(doc, "kind");
	const cJSON *items, *it;
	size_t i;

	*was_list = 0;
	if (kind != NULL && strcmp(kind, "Node") == 0) {
		fn(doc, 0, arg);
		return 1;
	}
	if (kind == NULL || (strcmp(kind, "List") != 0 && strcmp(kind, "NodeList") != 0))
		die("%s: not a Node nor a list of Nodes (kind is %s)", docname,
		    kind ? qstr(kind) : j_type(j_get(doc, "kind")));
	items = j_get(doc, "items");
	if (!cJSON_IsArray(items) && !cJSON_IsNull(items))
		die("%s: %s has no items list", docname, kind);
	*was_list = 1;
	i = 0;
	cJSON_ArrayForEach(it, items) {
		const char *k = j_str(it, "kind");

		if (!cJSON_IsObject(it))
			die("%s: item %zu is %s, not a Node", docname, i, j_type(it));
		if (k == NULL && !(strcmp(kind, "NodeList") == 0 && j_get(it, "kind") == NULL))
			die("%s: item %zu has no kind, so it is not a Node", docname, i);
		if (k != NULL && strcmp(k, "Node") != 0)
			die("%s: item %zu is a %s, not a Node", docname, i, qstr(k));
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(it, items)
		fn(it, i++, arg);
	return i;
}
