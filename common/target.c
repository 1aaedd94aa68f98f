/*
 * The driver the GPU Operator will deploy on a node, from its ClusterPolicy
 * and NVIDIADriver objects, by the rules of GPU Operator v26.7.0
 * (controllers/active_config.go, nodelabeling_controller.go,
 * internal/nvidiadriver/nvidiadriver.go, internal/state/driver.go):
 *  - the oldest ClusterPolicy (creationTimestamp, then name) or a GPUCluster,
 *    not both and not neither (no node is labelled then);
 *  - the ClusterPolicy's spec.driver decides (enabled, usePrecompiled,
 *    version; with no repository and no version, the tag in image) unless
 *    spec.driver.useNvidiaDriverCRD is true or a GPUCluster is there;
 *  - then the NVIDIADriver objects do: a node is owned by the one
 *    non-default NVIDIADriver whose spec.nodeSelector (a label map; absent:
 *    nvidia.com/gpu.present=true) selects it, else by the default one
 *    (spec.default); objects being deleted own nothing; two that select one
 *    node, or two defaults, and the operator assigns no node at all;
 *  - a node labelled nvidia.com/gpu.deploy.driver=false or
 *    nvidia.com/gpu.deploy.operands=false gets no driver;
 *  - the image is repository/image:<version>-<kernel>-<os-tag>, or with no
 *    repository and no version, image-<kernel>-<os-tag> (image holding its
 *    tag): internal/image ImagePath, controllers/object_controls.go
 *    resolveDriverTag, NVIDIADriverSpec GetPrecompiledImagePath.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

const char *const target_skips[] = { "not-precompiled", "driver-disabled", "no-owner", NULL };

#define L_DEPLOY "nvidia.com/gpu.deploy.driver"
#define L_OPERANDS "nvidia.com/gpu.deploy.operands"

struct driver {
	char *name;      /* "nvidiadriver/NAME" */
	cJSON *policy;   /* its spec.upgradePolicy, a copy, or NULL */
	cJSON *selector; /* {"matchLabels": nodeSelector} */
	char *version;   /* NULL when not precompiled */
	char *repo;      /* its image's repository, or NULL (repo_of) */
	int precompiled, is_default;
};

struct targets {
	char *policy;             /* "clusterpolicy/NAME", or NULL */
	char *created;            /* its creationTimestamp ("" if none) */
	char *gpucluster;         /* "gpucluster/NAME", or NULL */
	cJSON *driver;            /* its spec.driver, a copy, or NULL */
	int use_crd, enabled, precompiled;
	char *version;            /* the ClusterPolicy's, if it decides */
	char *repo;               /* its image's repository, or NULL */
	struct driver *drv;
	size_t ndrv;
	char *where;              /* the file, for messages */
	size_t npolicies;
	char *policies;           /* their names, for the message */
};

static const struct kspec meta[] = { { "name", NULL }, { "deletionTimestamp", NULL },
	{ "creationTimestamp", NULL }, { NULL, NULL } };
static const struct kspec keys[] = { { "kind", NULL }, { "metadata", meta }, { "spec", NULL },
	{ NULL, NULL } };
static const char *const kinds[] = { "ClusterPolicy", "NVIDIADriver", "GPUCluster", NULL };
static const char *const lists[] = { "ClusterPolicyList", "NVIDIADriverList", "GPUClusterList",
	NULL };

/*
 * The driver part of the image the operator will pull: the version, or with
 * no repository and no version, the tag of the image (the operator appends
 * "-<kernel>-<os-tag>" to that image as written: internal/image ImagePath).
 */
static char *
version_of(const cJSON *spec, const char *what)
{
	const char *v = opt_str(spec, "version", "version", what), *img, *colon, *slash;

	if (v == NULL && opt_str(spec, "repository", "repository", what) == NULL &&
	    (img = opt_str(spec, "image", "image", what)) != NULL) {
		colon = strrchr(img, ':');
		slash = strrchr(img, '/');
		if (colon != NULL && (slash == NULL || colon > slash))
			v = colon + 1;
	}
	if (v == NULL)
		die("%s: usePrecompiled is true but there is no version (the operator cannot "
		    "name an image either)", what);
	if (!driver_ok(v))
		die("%s: version %s %s", what, qstr(v), DRIVER_WHAT);
	return xstrndup(v, strlen(v));
}

/*
 * The repository of the image, as ImagePath names it: repository/image when
 * a version is set (the operator refuses, or names no image it can pull,
 * when either is missing: NULL), else image up to its tag.  Taken as
 * written; image.c checks it where a reference is made of it.
 */
static char *
repo_of(const cJSON *spec, const char *what)
{
	const char *r = opt_str(spec, "repository", "repository", what);
	const char *img = opt_str(spec, "image", "image", what), *colon, *slash;
	const char *v = opt_str(spec, "version", "version", what);
	char *out;

	if (img == NULL)
		return NULL;
	if (r == NULL && v == NULL) {
		colon = strrchr(img, ':');
		slash = strrchr(img, '/');
		if (colon == NULL || (slash != NULL && colon < slash))
			return NULL;
		return xstrndup(img, (size_t)(colon - img));
	}
	if (r == NULL || v == NULL)
		return NULL;
	out = xmalloc(strlen(r) + strlen(img) + 2);
	sprintf(out, "%s/%s", r, img);
	return out;
}

static char *
named(const char *kind, const cJSON *obj, const char *where, size_t index)
{
	const char *name = j_str(j_get(obj, "metadata"), "name");
	char buf[320];

	if (name == NULL || !dns_subdomain_ok(name))
		die("%s: item %zu: a %s without a valid metadata.name", where, index, kind);
	snprintf(buf, sizeof buf, "%s/%s", strcmp(kind, "ClusterPolicy") == 0 ?
	    "clusterpolicy" : strcmp(kind, "GPUCluster") == 0 ? "gpucluster" : "nvidiadriver", name);
	return xstrndup(buf, strlen(buf));
}

static void
one(const struct item *it, void *arg)
{
	struct targets *t = arg;
	const cJSON *spec = j_get(it->obj, "spec"), *drv, *sel, *m;
	cJSON *ml;
	char *name = named(it->kind, it->obj, t->where, it->index);
	struct driver *d;
	size_t n;

	if (spec != NULL && !cJSON_IsObject(spec))
		die("%s: spec is %s, not an object", name, j_type(spec));
	if (strcmp(it->kind, "GPUCluster") == 0) {
		if (t->gpucluster == NULL)
			t->gpucluster = name; /* the operator takes the first listed */
		else
			free(name);
		return;
	}
	if (strcmp(it->kind, "ClusterPolicy") == 0) {
		const char *ts = j_str(j_get(it->obj, "metadata"), "creationTimestamp");

		n = t->policies ? strlen(t->policies) : 0;
		t->policies = xrealloc(t->policies, n + strlen(name) + 3);
		snprintf(t->policies + n, strlen(name) + 3, "%s%s", n ? ", " : "", name);
		t->npolicies++;
		if (ts == NULL)
			ts = "";
		/* The oldest is the one in force; RFC 3339 UTC compares as text. */
		if (t->policy != NULL && (strcmp(ts, t->created) > 0 ||
		    (strcmp(ts, t->created) == 0 && strcmp(name, t->policy) > 0))) {
			free(name);
			return;
		}
		free(t->policy);
		free(t->created);
		t->policy = name;
		t->created = xstrndup(ts, strlen(ts));
		/* Read once it is known to be the one in force. */
		drv = opt_obj(spec, "driver", "spec.driver", name);
		cJSON_Delete(t->driver);
		t->driver = drv ? cJSON_Duplicate(drv, 1) : NULL;
		return;
	}
	m = j_get(j_get(it->obj, "metadata"), "deletionTimestamp");
	if (m != NULL && !cJSON_IsNull(m)) {
		free(name);
		return;
	}
	t->drv = xrealloc(t->drv, (t->ndrv + 1) * sizeof *t->drv);
	d = &t->drv[t->ndrv++];
	memset(d, 0, sizeof *d);
	d->name = name;
	d->is_default = opt_bool(spec, "default", "default", 0, name);
	m = opt_obj(spec, "upgradePolicy", "spec.upgradePolicy", name);
	d->policy = m ? cJSON_Duplicate(m, 1) : NULL;
	/* internal/state/driver.go getDriverImagePath: usePrecompiled decides,
	 * whatever the driverType. */
	d->precompiled = opt_bool(spec, "usePrecompiled", "usePrecompiled", 0, name);
	if (d->precompiled) {
		d->version = version_of(spec, name);
		d->repo = repo_of(spec, name);
	}
	sel = opt_obj(spec, "nodeSelector", "spec.nodeSelector", name);
	cJSON_ArrayForEach(m, sel)
		if (!cJSON_IsString(m))
			die("%s: spec.nodeSelector %s is %s, not a string", name, qstr(m->string),
			    j_type(m));
	ml = sel ? cJSON_Duplicate(sel, 1) : cJSON_CreateObject();
	if (sel == NULL)
		cJSON_AddStringToObject(ml, L_PRESENT, "true");
	d->selector = cJSON_CreateObject();
	cJSON_AddItemToObject(d->selector, "matchLabels", ml);
	if (d->is_default && cJSON_GetArraySize(sel) > 0)
		die("%s: a default NVIDIADriver must not have a nodeSelector", name);
}

static void
end(int ok, void *arg)
{
	(void)ok;
	(void)arg;
}

struct targets *
targets_load(const char *path, int any)
{
	struct targets *t = xmalloc(sizeof *t);
	struct doc_reader dr = { kinds, lists, "a ClusterPolicy, an NVIDIADriver nor a list of them",
		NULL, 1, 1, keys, one, end, NULL, 0, NULL, 0 };
	size_t i, ndefault = 0;

	memset(t, 0, sizeof *t);
	t->where = xstrndup(path ? path : "<stdin>", strlen(path ? path : "<stdin>"));
	dr.arg = t;
	/* Lists back to back, never watch events (an ERROR or a BOOKMARK where
	 * the objects were asked for dies, naming it); a status that is not
	 * clean is the reader's, which has said why. */
	if (doc_each(path, &dr) != EXIT_CLEAN)
		exit(EXIT_TROUBLE);
	if (t->policy == NULL && t->gpucluster == NULL && !any)
		die("%s: neither a ClusterPolicy nor a GPUCluster: the GPU Operator labels no "
		    "node and deploys no driver (-b names the version to check)", t->where);
	if (t->policy != NULL && t->gpucluster != NULL)
		die("%s: both %s and %s: the GPU Operator refuses a ClusterPolicy and a "
		    "GPUCluster at once", t->where, t->policy, t->gpucluster);
	if (t->npolicies > 1)
		warnf("%s: %zu ClusterPolicies (%s): the GPU Operator uses the oldest, %s",
		    t->where, t->npolicies, t->policies, t->policy);
	if (t->policy != NULL) {
		t->use_crd = opt_bool(t->driver, "useNvidiaDriverCRD", "useNvidiaDriverCRD", 0,
		    t->policy);
		t->enabled = opt_bool(t->driver, "enabled", "enabled", 1, t->policy);
		t->precompiled = opt_bool(t->driver, "usePrecompiled", "usePrecompiled", 0, t->policy);
		if (!t->use_crd && t->enabled && t->precompiled) {
			t->version = version_of(t->driver, t->policy);
			t->repo = repo_of(t->driver, t->policy);
		}
	}
	if (t->gpucluster != NULL || (t->policy == NULL && t->ndrv > 0))
		t->use_crd = 1;
	for (i = 0; i < t->ndrv; i++)
		ndefault += t->drv[i].is_default;
	if (t->use_crd && ndefault > 1)
		die("%s: %zu default NVIDIADrivers: the GPU Operator assigns no node while "
		    "that lasts", t->where, ndefault);
	if (!t->use_crd && t->ndrv > 0)
		warnf("%s: %zu NVIDIADriver objects are not used: %s does not set "
		    "spec.driver.useNvidiaDriverCRD", t->where, t->ndrv, t->policy);
	return t;
}

/* 1 when the ClusterPolicy alone decides: one OS tag for every node. */
int
targets_one_ostag(const struct targets *t)
{
	return !t->use_crd && t->enabled && t->precompiled;
}

int
target_of(const struct targets *t, const cJSON *node, struct target *out)
{
	const cJSON *labels = node_labels(node);
	const struct driver *own = NULL, *def = NULL, *two = NULL;
	const char *deploy = j_str(labels, L_DEPLOY);
	size_t i;

	memset(out, 0, sizeof *out);
	out->owner = "-";
	if (deploy != NULL && strcmp(deploy, "false") == 0) {
		out->skip = target_skips[TS_DRIVER_DISABLED];
		out->source = L_DEPLOY;
		return 1;
	}
	deploy = j_str(labels, L_OPERANDS);
	if (deploy != NULL && strcmp(deploy, "false") == 0) {
		out->skip = target_skips[TS_DRIVER_DISABLED];
		out->source = L_OPERANDS;
		return 1;
	}
	if (!t->use_crd && t->policy == NULL) {
		out->skip = target_skips[TS_NO_OWNER];
		out->source = "clusterpolicy";
		return 1;
	}
	if (!t->use_crd) {
		out->source = t->policy;
		out->owner = t->policy;
		out->policy = j_get(t->driver, "upgradePolicy");
		out->skip = !t->enabled ? target_skips[TS_DRIVER_DISABLED] : !t->precompiled ?
		    target_skips[TS_NOT_PRECOMPILED] : NULL;
		out->version = t->version;
		out->repository = t->repo;
		return out->skip ? 1 : 0;
	}
	for (i = 0; i < t->ndrv; i++) {
		if (t->drv[i].is_default)
			def = &t->drv[i];
		else if (selector_matches(t->drv[i].selector, labels)) {
			if (own != NULL && two == NULL)
				two = &t->drv[i];
			else if (own == NULL)
				own = &t->drv[i];
		}
	}
	if (two != NULL) {
		out->source = own->name;
		out->other = two->name;
		return -1;
	}
	if (own == NULL)
		own = def;
	if (own == NULL) {
		out->skip = target_skips[TS_NO_OWNER];
		out->source = "nvidiadriver";
		return 1;
	}
	out->source = own->name;
	out->owner = own->name;
	out->policy = own->policy;
	out->nvd = 1;
	out->version = own->version;
	out->repository = own->repo;
	out->skip = own->precompiled ? NULL : target_skips[TS_NOT_PRECOMPILED];
	return out->skip ? 1 : 0;
}

void
targets_owners(const struct targets *t, void (*fn)(const char *owner, const cJSON *policy,
    int nvd, void *arg), void *arg)
{
	size_t i;

	if (!t->use_crd && t->policy != NULL)
		fn(t->policy, j_get(t->driver, "upgradePolicy"), 0, arg);
	for (i = 0; t->use_crd && i < t->ndrv; i++)
		fn(t->drv[i].name, t->drv[i].policy, 1, arg);
}

void
targets_free(struct targets *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->ndrv; i++) {
		free(t->drv[i].name);
		free(t->drv[i].version);
		free(t->drv[i].repo);
		cJSON_Delete(t->drv[i].selector);
		cJSON_Delete(t->drv[i].policy);
	}
	free(t->drv);
	free(t->policy);
	free(t->created);
	free(t->gpucluster);
	cJSON_Delete(t->driver);
	free(t->version);
	free(t->repo);
	free(t->where);
	free(t->policies);
	free(t);
}
