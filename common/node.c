/* Nodes: their names, labels and tag, and walking a Node or a list of them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

const char *const tag_faults[] = { "missing", "empty", "not-a-string", "invalid", "conflict",
	NULL };

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
		f->kind = tag_faults[TF_INVALID];
		f->detail = cJSON_IsString(labels) ? "is a string, not an object" :
		    cJSON_IsArray(labels) ? "is a list, not an object" :
		    cJSON_IsNumber(labels) ? "is a number, not an object" : "is a boolean, not an object";
		return -1;
	}
	f->label = key;
	if (v == NULL) {
		f->kind = tag_faults[TF_MISSING];
		f->detail = "is missing";
		return -1;
	}
	if (!cJSON_IsString(v)) {
		f->kind = tag_faults[TF_NOT_STRING];
		f->detail = "is not a string";
		return -1;
	}
	if (v->valuestring[0] == '\0') {
		f->kind = tag_faults[TF_EMPTY];
		f->detail = "is present but empty";
		return -1;
	}
	if (!label_value_ok(v->valuestring)) {
		f->kind = tag_faults[TF_INVALID];
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
	f->kind = tag_faults[TF_INVALID];
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
	f->kind = tag_faults[TF_INVALID];
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

/*
 * Unix seconds of a time as the API server writes a metav1.Time, RFC 3339
 * in UTC to the second ("2026-12-01T19:09:12Z"), into *out: 0, or -1 for
 * anything else.
 */
static int
api_time(const char *s, long long *out)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long long y, era, yoe, doy, doe;
	int mo, d, h, mi, sec, i;

	if (s == NULL || strlen(s) != sizeof shape - 1)
		return -1;
	for (i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return -1;
	y = atoi(s);
	mo = atoi(s + 5), d = atoi(s + 8), h = atoi(s + 11), mi = atoi(s + 14), sec = atoi(s + 17);
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))) ||
	    h > 23 || mi > 59 || sec > 59)
		return -1;
	/* Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
	 * days_from_civil; y - 1 for January and February of year 0 floored). */
	y -= mo <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	*out = ((era * 146097 + doe - 719468) * 24 + h) * 3600LL + mi * 60 + sec;
	return 0;
}

/*
 * The metadata.managedFields entry that last changed the field at path (its
 * fieldsV1 keys, "f:metadata" "f:labels" "f:<key>"): 1 with its time in
 * *when and its manager, shown safe, in who; 0 if no entry with a time owns
 * it (kubectl get -o json leaves managedFields out; get --raw has them); -1
 * with f set on entries the API server would not have written.
 */
static int
owner_of(const cJSON *node, const char *const *path, long long *when, char *who,
         size_t whosz, struct tagfault *f)
{
	const cJSON *mf = j_get(j_get(node, "metadata"), "managedFields"), *e = NULL, *v;
	const char *t, *m;
	long long at;
	size_t i;
	int found = 0;

	f->label = "metadata.managedFields";
	f->kind = tag_faults[TF_INVALID];
	if (mf != NULL && !cJSON_IsArray(mf) && !cJSON_IsNull(mf)) {
		f->detail = "is not a list";
		return -1;
	}
	while ((e = j_next(mf, e)) != NULL) {
		if (!cJSON_IsObject(e)) {
			f->detail = "has an item that is not an object";
			return -1;
		}
		for (v = j_get(e, "fieldsV1"), i = 0; path[i] != NULL && cJSON_IsObject(v); i++)
			v = j_get(v, path[i]);
		if (path[i] != NULL || v == NULL || (t = j_str(e, "time")) == NULL)
			continue;
		if (api_time(t, &at) != 0) {
			static char why[160];

			snprintf(why, sizeof why, "has a time %s that is not RFC 3339 in UTC "
			    "(2026-12-01T19:09:12Z)", qstr(t));
			f->detail = why;
			return -1;
		}
		if (found && at < *when)
			continue;
		found = 1;
		*when = at;
		m = j_str(e, "manager");
		for (i = 0; m != NULL && m[i] != '\0' && i + 1 < whosz; i++)
			who[i] = isalnum((unsigned char)m[i]) || strchr("_.:/-", m[i]) ? m[i] : '?';
		who[i] = '\0';
		if (i == 0)
			snprintf(who, whosz, "?");
	}
	return found;
}

/* A start-time annotation of the GPU Operator's: Unix seconds, or -1. */
static long long
ann_time(const cJSON *ann, const char *key)
{
	const char *v = j_str(ann, key);
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n > 18 || strspn(v, "0123456789") != n)
		return -1;
	return strtoll(v, NULL, 10);
}

int
node_facts(const cJSON *node, struct node_facts *nf, struct tagfault *f)
{
	static const char *const state_path[] = { "f:metadata", "f:labels", "f:" L_STATE, NULL };
	static const char *const cordon_path[] = { "f:spec", "f:unschedulable", NULL };
	char who[sizeof nf->cordoner];
	long long at;
	int r, initial, ours;
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
		if (f->kind == tag_faults[TF_EMPTY])
			nf->state = "-";
		else
			return -1;
	}
	v = j_get(labels, L_SKIP);
	if (v != NULL && !cJSON_IsString(v)) {
		f->label = L_SKIP;
		f->kind = tag_faults[TF_NOT_STRING];
		f->detail = "is not a string";
		return -1;
	}
	nf->skip = v != NULL && strcmp(v->valuestring, "true") == 0;
	if (unsched != NULL && !cJSON_IsBool(unsched) && !cJSON_IsNull(unsched)) {
		f->label = "spec.unschedulable";
		f->kind = tag_faults[TF_INVALID];
		f->detail = cJSON_IsString(unsched) ? "is a string, not a boolean" :
		    "is not a boolean";
		return -1;
	}
	nf->cordoned = cJSON_IsTrue(unsched);
	if ((nf->ready = ready_word(j_get(j_get(node, "status"), "conditions"), f)) == NULL)
		return -1;
	if (ann != NULL && !cJSON_IsObject(ann) && !cJSON_IsNull(ann)) {
		f->label = "metadata.annotations";
		f->kind = tag_faults[TF_INVALID];
		f->detail = "is not an object";
		return -1;
	}
	v = j_get(ann, A_INITIAL);
	initial = cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
	v = j_get(ann, A_CORDONED);
	ours = cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
	/* The uid the node's Events name it by (a UUID: printable, no blank). */
	v = j_get(j_get(node, "metadata"), "uid");
	nf->uid = "-";
	if (cJSON_IsString(v) && *v->valuestring != '\0') {
		if (strlen(v->valuestring) > 64 || strspn(v->valuestring,
		    "0123456789abcdefABCDEF-") != strlen(v->valuestring)) {
			f->label = "metadata.uid";
			f->kind = tag_faults[TF_INVALID];
			f->detail = "is not a UID";
			return -1;
		}
		nf->uid = v->valuestring;
	}
	/* Since when: the operator's own start time of the wait it is in,
	 * else the last change of the state label. */
	nf->since = -1;
	snprintf(nf->cordoner, sizeof nf->cordoner, "-");
	if (strcmp(nf->state, S_VALIDATION) == 0 && (at = ann_time(ann, A_VALIDATION)) >= 0)
		nf->since = at, nf->since_from = "validation";
	else if (strcmp(nf->state, S_WAIT_JOBS) == 0 && (at = ann_time(ann, A_JOBS)) >= 0)
		nf->since = at, nf->since_from = "jobs";
	if ((r = owner_of(node, state_path, &at, who, sizeof who, f)) < 0)
		return -1;
	if (r == 1 && nf->since < 0 && strcmp(nf->state, "-") != 0)
		nf->since = at, nf->since_from = "label";
	if ((r = owner_of(node, cordon_path, &at, who, sizeof who, f)) < 0)
		return -1;
	if (r == 1 && nf->cordoned)
		snprintf(nf->cordoner, sizeof nf->cordoner, "%s", who);
	/* Whose cordon.  A record says something of the cordon there is now
	 * only: gpudrv's while no other manager of spec.unschedulable is
	 * known (one left behind by a cordon since lifted says nothing of
	 * someone's later one), the operator's record of a cordon from before
	 * the upgrade while the node is cordoned. */
	nf->ours = ours && nf->cordoned &&
	    (strcmp(nf->cordoner, "-") == 0 || strcmp(nf->cordoner, "gpudrv") == 0);
	nf->initial = initial && nf->cordoned && !nf->ours;
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
static const struct kspec annotations[] = { { A_INITIAL, NULL }, { A_VALIDATION, NULL },
	{ A_JOBS, NULL }, { A_CORDONED, NULL }, { NULL, NULL } };
static const struct kspec meta_facts[] = { { "name", NULL }, { "uid", NULL }, { "labels", labels },
	{ "annotations", annotations }, { "managedFields", NULL }, { NULL, NULL } };
static const struct kspec meta_facts_all[] = { { "name", NULL }, { "uid", NULL },
	{ "labels", NULL }, { "annotations", annotations }, { "managedFields", NULL },
	{ NULL, NULL } };
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
		NULL, nr->watch, NULL, 0 };

	dr.arg = (void *)nr;
	return doc_each(path, &dr);
}

/* The words each field of a record may be. */
static const char *const skips[] = { "skip", "-", NULL };
static const char *const cordons[] = { "cordoned", "schedulable", NULL };
static const char *const readies[] = { "ready", "not-ready", "unknown", NULL };
static const char *const initials[] = { "was-cordoned", "gpudrv", "-", NULL };

/*
 * A labels2tag -F record (enum rec_field), split in place on its single
 * spaces into f (RF_COUNT + 1 slots): 0 when it is one, each field a word of
 * its kind, else -1.
 */
int
record_split(char *line, char **f)
{
	int i;

	if (split_fields(line, f, RF_COUNT + 1) != RF_COUNT)
		return -1;
	for (i = 0; i < RF_COUNT; i++)
		if (*f[i] == '\0')
			return -1;
	/* the state: any label value (a state of no one's is shown as such) */
	return strspn(f[RF_STATE], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
	    strlen(f[RF_STATE]) &&
	    word_in(f[RF_SKIP], skips) && word_in(f[RF_CORDON], cordons) &&
	    word_in(f[RF_READY], readies) && word_in(f[RF_INITIAL], initials) ? 0 : -1;
}
