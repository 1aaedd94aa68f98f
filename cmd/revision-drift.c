/*
 * revision-drift: which driver pods are from an older revision of their
 * DaemonSet than its newest, so that the GPU Operator's upgrade controller
 * will restart them, and whether the driver's image changes with it.  The
 * rule is k8s-operator-libs' (pkg/upgrade: podInSyncWithDS,
 * GetDaemonsetControllerRevisionHash).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "daemonsets revisions pods";

/* The GPU Operator's driver container; else a pod's first. */
#define DRIVER_CTR "nvidia-driver-ctr"

struct list {
	struct input in;
	cJSON *doc;
	const cJSON *items;
};

struct ds {
	const char *ns, *name, *uid;
	const cJSON *match; /* spec.selector.matchLabels */
	const cJSON *cur;   /* its newest ControllerRevision, or NULL */
	long rev;
};

/* The list at path, whole and of the kind asked for, read in memory. */
static void
list_read(struct list *l, const char *path, const char *kind)
{
	char why[512];

	if (doc_is_list(path, kind, why, sizeof why) != 0)
		die("%s: not a whole %s: %s", path, kind, why);
	input_read(&l->in, path);
	l->doc = doc_parse(&l->in);
	l->items = j_get(l->doc, "items");
	if (!cJSON_IsArray(l->items))
		die("%s: items is %s, not a list", path, j_type(l->items));
}

/* The image of the driver container of a list of containers, or NULL. */
static const char *
driver_image(const cJSON *containers)
{
	const cJSON *c = NULL, *first = NULL;
	const char *name;

	while ((c = j_next(containers, c)) != NULL) {
		if (first == NULL)
			first = c;
		name = j_str(c, "name");
		if (name != NULL && strcmp(name, DRIVER_CTR) == 0)
			return j_str(c, "image");
	}
	return first != NULL ? j_str(first, "image") : NULL;
}

/* The uid of the DaemonSet in ownerReferences, or NULL. */
static const char *
owner_uid(const cJSON *refs)
{
	const cJSON *r = NULL;
	const char *kind;

	while ((r = j_next(refs, r)) != NULL)
		if ((kind = j_str(r, "kind")) != NULL && strcmp(kind, "DaemonSet") == 0 && j_str(r, "uid") != NULL)
			return j_str(r, "uid");
	return NULL;
}

/* Whether every member of match is in labels, with its value. */
static int
labels_match(const cJSON *match, const cJSON *labels)
{
	const cJSON *m = NULL;
	const char *v;

	while ((m = j_next(match, m)) != NULL) {
		v = labels != NULL ? j_str(labels, m->string) : NULL;
		if (v == NULL || !cJSON_IsString(m) || strcmp(v, m->valuestring) != 0)
			return 0;
	}
	return 1;
}

static const char *
word(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "-";
}

int
main(int argc, char **argv)
{
	struct list dsl, crl, pods;
	struct ds *ds = NULL;
	size_t nds = 0, cap = 0, i;
	const cJSON *it = NULL, *labels, *data;
	const char *name, *ns, *hash, *node, *old, *new, *state, *owner;
	char where[160], cur_hash[256];
	long rev;
	int c, k, drift = 0, rc;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "h", usage)) != -1)
		;
	if (argc - optind != 3)
		usage_exit(usage);
	list_read(&dsl, argv[optind], "DaemonSetList");
	list_read(&crl, argv[optind + 1], "ControllerRevisionList");
	list_read(&pods, argv[optind + 2], "PodList");

	k = 0;
	while ((it = j_next(dsl.items, it)) != NULL) {
		snprintf(where, sizeof where, "%s: items[%d]", dsl.in.name, k++);
		ds = xgrow(ds, &cap, nds, 8, sizeof *ds);
		ds[nds].ns = need_str(it, "metadata.namespace", where);
		ds[nds].name = need_str(it, "metadata.name", where);
		ds[nds].uid = need_str(it, "metadata.uid", where);
		ds[nds].match = opt_strmap(j_path(it, "spec.selector"), "matchLabels",
		    "spec.selector.matchLabels", "label", where);
		ds[nds].cur = NULL;
		ds[nds].rev = -1;
		nds++;
	}
	/* Each DaemonSet's newest revision, the greatest .revision of its own:
	 * those its ownerReferences give it, or, with none, those in its
	 * namespace named after it with its selector's labels (the operator's
	 * rule, which alone can take another DaemonSet's whose name begins
	 * with this one's). */
	k = 0;
	while ((it = j_next(crl.items, it)) != NULL) {
		snprintf(where, sizeof where, "%s: items[%d]", crl.in.name, k++);
		ns = need_str(it, "metadata.namespace", where);
		name = need_str(it, "metadata.name", where);
		labels = opt_strmap(j_get(it, "metadata"), "labels", "metadata.labels", "label", where);
		if (!j_int(it, "revision", &rev))
			die("%s: revision is %s, not an integer", where, j_type(j_get(it, "revision")));
		owner = owner_uid(j_path(it, "metadata.ownerReferences"));
		for (i = 0; i < nds; i++) {
			size_t n = strlen(ds[i].name);
			if (strcmp(ns, ds[i].ns) != 0 || strncmp(name, ds[i].name, n) != 0 ||
			    name[n] != '-' || rev <= ds[i].rev)
				continue;
			if (owner != NULL ? strcmp(owner, ds[i].uid) != 0 : !labels_match(ds[i].match, labels))
				continue;
			ds[i].rev = rev;
			ds[i].cur = it;
		}
	}

	k = 0;
	while ((it = j_next(pods.items, it)) != NULL) {
		struct ds *d = NULL;

		snprintf(where, sizeof where, "%s: items[%d]", pods.in.name, k++);
		ns = need_str(it, "metadata.namespace", where);
		name = need_str(it, "metadata.name", where);
		node = str_if_present(j_get(it, "spec"), "nodeName", "spec.nodeName", where);
		labels = opt_strmap(j_get(it, "metadata"), "labels", "metadata.labels", "label", where);
		hash = labels != NULL ? j_str(labels, "controller-revision-hash") : NULL;
		old = driver_image(j_path(it, "spec.containers"));
		owner = owner_uid(j_path(it, "metadata.ownerReferences"));
		for (i = 0; owner != NULL && i < nds && d == NULL; i++)
			if (strcmp(ds[i].uid, owner) == 0 && strcmp(ds[i].ns, ns) == 0)
				d = &ds[i];
		if (d == NULL) {
			printf("%s %s/%s - %s - orphan %s -\n", word(node), ns, name, word(hash), word(old));
			drift = 1;
			continue;
		}
		if (d->cur == NULL || hash == NULL) {
			printf("%s %s/%s %s/%s %s - unknown %s -\n", word(node), ns, name, d->ns, d->name,
			    word(hash), word(old));
			drift = 1;
			continue;
		}
		/* The hash is the revision's name past "<daemonset>-". */
		snprintf(cur_hash, sizeof cur_hash, "%s",
		    j_str(j_get(d->cur, "metadata"), "name") + strlen(d->name) + 1);
		data = j_path(d->cur, "data.spec.template.spec.containers");
		new = driver_image(data);
		if (strcmp(hash, cur_hash) == 0)
			state = "current";
		else if (old != NULL && new != NULL && strcmp(old, new) != 0)
			state = "driver";
		else
			state = "config";
		if (strcmp(state, "current") != 0)
			drift = 1;
		printf("%s %s/%s %s/%s %s %s %s %s %s\n", word(node), ns, name, d->ns, d->name, hash,
		    cur_hash, state, word(old), word(new));
	}
	free(ds);
	cJSON_Delete(dsl.doc);
	cJSON_Delete(crl.doc);
	cJSON_Delete(pods.doc);
	input_free(&dsl.in);
	input_free(&crl.in);
	input_free(&pods.in);
	rc = fshut(stdout, "stdout");
	return rc != 0 ? rc : drift ? EXIT_FINDINGS : EXIT_CLEAN;
}
