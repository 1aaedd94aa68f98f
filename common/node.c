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

/* A Ready condition's status (True, False, Unknown), as "ready" ... */
static const char *
ready_word(const cJSON *conds, struct tagfault *f)
{
	const cJSON *c;
	const char *type, *st;

	f->label = "status.conditions";
	f->kind = "invalid";
	if (conds == NULL || cJSON_IsNull(conds))
		return "unknown";
	if (!cJSON_IsArray(conds)) {
		f->detail = "is not a list";
		return NULL;
	}
	cJSON_ArrayForEach(c, conds) {
		type = j_str(c, "type");
		if (!cJSON_IsObject(c) || type == NULL) {
			f->detail = "has an item that is not a condition with a type";
			return NULL;
		}
		if (strcmp(type, "Ready") != 0)
			continue;
		st = j_str(c, "status");
		if (st != NULL && strcmp(st, "True") == 0)
			return "ready";
		if (st != NULL && strcmp(st, "False") == 0)
			return "not-ready";
		if (st != NULL && strcmp(st, "Unknown") == 0)
			return "unknown";
		f->label = "status.conditions[Ready].status";
		f->detail = "is not True, False or Unknown";
		return NULL;
	}
	return "unknown";
}

int
node_facts(const cJSON *node, struct node_facts *nf, struct tagfault *f)
{
	const cJSON *labels = node_labels(node), *v;
	const cJSON *unsched = j_get(j_get(node, "spec"), "unschedulable");
	const cJSON *ann = j_get(j_get(node, "metadata"), "annotations");
	const char *part[3], *keys[3] = { L_MAJOR, L_MINOR, L_REV };
	struct tagfault ignored;
	int i;

	memset(nf, 0, sizeof *nf);
	/* The driver: all three labels, digits, or none ("-": not known yet). */
	snprintf(nf->driver, sizeof nf->driver, "-");
	for (i = 0; i < 3; i++)
		if (node_label(node, keys[i], &part[i], &ignored) != 0 ||
		    strspn(part[i], "0123456789") != strlen(part[i]))
			break;
	if (i == 3)
		snprintf(nf->driver, sizeof nf->driver, "%s.%s.%s", part[0], part[1], part[2]);
	/* The state and the skip label: absent is "-"; a value the API server
	 * would refuse is not a state to act on. */
	nf->state = "-";
	if (j_get(labels, L_STATE) != NULL && node_label(node, L_STATE, &nf->state, f) != 0) {
		if (strcmp(f->kind, "empty") == 0)
			nf->state = "-";
		else
			return -1;
	}
	v = j_get(labels, L_SKIP);
	if (v != NULL && !cJSON_IsString(v)) {
		f->label = L_SKIP;
		f->kind = "not-a-string";
		f->detail = "is not a string";
		return -1;
	}
	nf->skip = v != NULL && strcmp(v->valuestring, "true") == 0;
	if (unsched != NULL && !cJSON_IsBool(unsched) && !cJSON_IsNull(unsched)) {
		f->label = "spec.unschedulable";
		f->kind = "invalid";
		f->detail = cJSON_IsString(unsched) ? "is a string, not a boolean" :
		    "is not a boolean";
		return -1;
	}
	nf->cordoned = cJSON_IsTrue(unsched);
	if ((nf->ready = ready_word(j_get(j_get(node, "status"), "conditions"), f)) == NULL)
		return -1;
	if (ann != NULL && !cJSON_IsObject(ann) && !cJSON_IsNull(ann)) {
		f->label = "metadata.annotations";
		f->kind = "invalid";
		f->detail = "is not an object";
		return -1;
	}
	v = j_get(ann, A_INITIAL);
	nf->initial = cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
	return 0;
}

/* What gpudrv reads of a Node: all the streaming way keeps of one. */
static const struct kspec labels[] = { { L_MAJOR, NULL }, { L_MINOR, NULL },
	{ L_REV, NULL }, { L_KERNEL, NULL }, { L_OSID, NULL }, { L_OSVER, NULL },
	{ L_STATE, NULL }, { L_SKIP, NULL }, { L_PRESENT, NULL }, { NULL, NULL } };
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
static const struct kspec annotations[] = { { A_INITIAL, NULL }, { NULL, NULL } };
static const struct kspec meta_facts[] = { { "name", NULL }, { "labels", labels },
	{ "annotations", annotations }, { NULL, NULL } };
static const struct kspec meta_facts_all[] = { { "name", NULL }, { "labels", NULL },
	{ "annotations", annotations }, { NULL, NULL } };
static const struct kspec status[] = { { "conditions", NULL }, { NULL, NULL } };
static const struct kspec keys_facts[] = { { "kind", NULL }, { "metadata", meta_facts },
	{ "spec", spec }, { "status", status }, { NULL, NULL } };
static const struct kspec keys_facts_all[] = { { "kind", NULL },
	{ "metadata", meta_facts_all }, { "spec", spec }, { "status", status }, { NULL, NULL } };
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
		1, nr->many, nr->want_facts ? (nr->all_labels ? keys_facts_all : keys_facts) :
		nr->all_labels ? keys_all : nr->want_spec ? keys : nospec, node_item, node_end,
		NULL, nr->watch, NULL };

	dr.arg = (void *)nr;
	return doc_each(path, &dr);
}
