/* Nodes: their names, labels and tag, and walking a Node or a list of them. */
#include <ctype.h>
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

/*
 * A label value the API server accepts: at most 63 characters, empty or
 * beginning and ending with a letter or digit, with '-', '_' and '.' between
 * (k8s.io/apimachinery validation.IsValidLabelValue).
 */
static int
label_value_ok(const char *s)
{
	size_t n = strlen(s);

	return n <= 63 && (n == 0 || (isalnum((unsigned char)s[0]) &&
	    isalnum((unsigned char)s[n - 1]) && tag_charset_ok(s)));
}

/* 0 and *val set, or -1 with f saying why. */
int
node_label(const cJSON *node, const char *key, const char **val, struct tagfault *f)
{
	const cJSON *labels = j_get(j_get(node, "metadata"), "labels");
	const cJSON *v = j_get(labels, key);

	if (labels != NULL && !cJSON_IsObject(labels) && !cJSON_IsNull(labels)) {
		f->label = "metadata.labels";
		f->kind = "invalid";
		f->detail = cJSON_IsString(labels) ? "is a string, not an object" :
		    cJSON_IsArray(labels) ? "is a list, not an object" :
		    cJSON_IsNumber(labels) ? "is a number, not an object" : "is a boolean, not an object";
		return -1;
	}
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
	if (!label_value_ok(v->valuestring)) {
		f->kind = "invalid";
		f->detail = "is not a valid label value (at most 63 of [A-Za-z0-9_.-], a letter "
		    "or digit at each end)";
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
	if ((bad = ostag_build(ostag, sizeof ostag, id, ver, ov ? ov->rule : RULE_2607, &why)) != 0) {
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

/* What gpudrv reads of a Node: all the streaming way keeps of one. */
static const struct kspec labels[] = { { L_MAJOR, NULL }, { L_KERNEL, NULL },
	{ L_OSID, NULL }, { L_OSVER, NULL }, { L_STATE, NULL }, { L_PRESENT, NULL },
	{ NULL, NULL } };
static const struct kspec meta[] = { { "name", NULL }, { "labels", labels },
	{ NULL, NULL } };
static const struct kspec meta_all[] = { { "name", NULL }, { "labels", NULL },
	{ NULL, NULL } };
static const struct kspec spec[] = { { "unschedulable", NULL }, { NULL, NULL } };
static const struct kspec keys[] = { { "kind", NULL }, { "metadata", meta },
	{ "spec", spec }, { NULL, NULL } };
static const struct kspec nospec[] = { { "kind", NULL }, { "metadata", meta },
	{ NULL, NULL } };
static const struct kspec keys_all[] = { { "kind", NULL }, { "metadata", meta_all },
	{ "spec", spec }, { NULL, NULL } };
static const char *const node_kinds[] = { "Node", NULL };
static const char *const node_lists[] = { "NodeList", NULL };

static void
node_item(const struct item *it, void *arg)
{
	const struct node_reader *nr = arg;

	nr->fn(it, nr->arg);
}

static void
node_end(int ok, void *arg)
{
	const struct node_reader *nr = arg;

	nr->end(ok, nr->arg);
}

int
nodes_read(const char *path, const struct node_reader *nr)
{
	struct doc_reader dr = { node_kinds, node_lists, "a Node nor a list of Nodes", NULL,
		1, nr->many, nr->all_labels ? keys_all :
		nr->want_spec ? keys : nospec, node_item, node_end, NULL };

	dr.arg = (void *)nr;
	return doc_each(path, &dr);
}
