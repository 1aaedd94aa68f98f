/*
 * The GPU Operator's upgradePolicy in force for a node, read as
 * k8s-operator-libs (api/upgrade/v1alpha1 DriverUpgradePolicySpec) and
 * gpu-operator (controllers/upgrade_controller.go, NVIDIADriverSpec
 * GetUpgradePolicyWithDefaults) read it: the upgradePolicy of the object
 * that owns the node (an NVIDIADriver's spec.upgradePolicy, else the
 * ClusterPolicy's spec.driver.upgradePolicy), every field it leaves out at
 * its documented default (the CRDs' kubebuilder defaults; an NVIDIADriver
 * with no upgradePolicy at all is autoUpgrade true), then the flags
 * (FIELD=VALUE) over both, field by field.  Each value is kept as text with
 * where it came from: the policies file (upgrade-policy(1)) is that, and
 * pdb-check and rollout-plan read it back here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

enum { PK_BOOL, PK_COUNT, PK_INTSTR, PK_SELECTOR, PK_FILTER };

static const struct {
	const char *name; /* as the object spells it, dotted */
	int kind;
	const char *def;  /* the default (an NVIDIADriver's autoUpgrade aside) */
} fields[PF_N] = {
	{ "autoUpgrade", PK_BOOL, "false" },
	{ "maxParallelUpgrades", PK_COUNT, "1" },
	{ "maxUnavailable", PK_INTSTR, "25%" },
	{ "waitForCompletion.podSelector", PK_SELECTOR, "" },
	{ "waitForCompletion.timeoutSeconds", PK_COUNT, "0" },
	{ "podDeletion.force", PK_BOOL, "false" },
	{ "podDeletion.timeoutSeconds", PK_COUNT, "300" },
	{ "podDeletion.deleteEmptyDir", PK_BOOL, "false" },
	{ "drain.enable", PK_BOOL, "false" },
	{ "drain.force", PK_BOOL, "false" },
	{ "drain.podSelector", PK_SELECTOR, "" },
	{ "drain.timeoutSeconds", PK_COUNT, "300" },
	{ "drain.deleteEmptyDir", PK_BOOL, "false" },
	/* gpudrv's own: which pods the pod deletion takes (the GPU Operator's
	 * filter, or none: k8s-operator-libs with no filter, the drain alone) */
	{ "podDeletionFilter", PK_FILTER, "gpu" },
};

const char *const policy_sources[] = { "default", "object", "flag", NULL };

/* The members of upgradePolicy and of its three objects the operator reads. */
static const char *const top_keys[] = { "autoUpgrade", "maxParallelUpgrades", "maxUnavailable",
	"podDeletion", "waitForCompletion", "drain", NULL };
static const char *const pd_keys[] = { "force", "timeoutSeconds", "deleteEmptyDir", NULL };
static const char *const wfc_keys[] = { "podSelector", "timeoutSeconds", NULL };
static const char *const drain_keys[] = { "enable", "force", "podSelector", "timeoutSeconds",
	"deleteEmptyDir", NULL };

int
policy_field(const char *name)
{
	int f;

	for (f = 0; f < PF_N; f++)
		if (strcmp(fields[f].name, name) == 0)
			return f;
	return -1;
}

const char *
policy_field_name(int f)
{
	return fields[f].name;
}

static int
known(const char *const *keys, const char *k)
{
	for (; *keys != NULL; keys++)
		if (strcmp(*keys, k) == 0)
			return 1;
	return 0;
}

/* A member the operator does not read is said once: a CRD that prunes
 * nothing (or a copy of the chart's values: gpuPodDeletion) keeps it. */
static void
unknown_keys(const cJSON *obj, const char *const *keys, const char *path, const char *owner)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, obj)
		if (!known(keys, m->string))
			warnf("%s: %s.%s is not a field of the upgradePolicy the operator reads%s: "
			    "left out", owner, path, qstr(m->string),
			    strcmp(m->string, "gpuPodDeletion") == 0 ?
			    " (the Helm chart's gpuPodDeletion is podDeletion in the object)" : "");
}

/* value checked as field f takes it: 0, or -1 with *why. */
static int
value_ok(int f, const char *v, const char **why)
{
	static char buf[320];
	struct intstr is;
	cJSON *sel;
	size_t n = strlen(v);

	switch (fields[f].kind) {
	case PK_BOOL:
		if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
			return 0;
		*why = "takes true or false";
		return -1;
	case PK_COUNT:
		/* the CRD's int32: 0 to 2147483647, as an object may say */
		if (n > 0 && strspn(v, "0123456789") == n && (n < 10 || (n == 10 && strcmp(v, "2147483647") <= 0)))
			return 0;
		*why = "takes a whole number from 0 to 2147483647";
		return -1;
	case PK_INTSTR:
		if (intstr_parse(v, &is) == 0)
			return 0;
		*why = "takes a number of nodes or a percentage up to 100% (25%)";
		return -1;
	case PK_SELECTOR:
		if (strchr(v, '\n') != NULL || strchr(v, '\r') != NULL) {
			*why = "is a label selector: no line breaks";
			return -1;
		}
		if ((sel = selector_parse(v, buf, sizeof buf)) == NULL) {
			*why = buf;
			return -1;
		}
		cJSON_Delete(sel);
		return 0;
	default:
		if (strcmp(v, "gpu") == 0 || strcmp(v, "none") == 0)
			return 0;
		*why = "takes gpu (the GPU Operator's: pods that hold a GPU) or none";
		return -1;
	}
}

static void
put(struct policy *p, int f, const char *v, int src)
{
	free(p->value[f]);
	p->value[f] = xstrndup(v, strlen(v));
	p->source[f] = policy_sources[src];
}

/* The member key of obj as field f's text, if it is there; dies naming where. */
static void
from_object(struct policy *p, int f, const cJSON *obj, const char *key, const char *owner)
{
	char path[96], num[24], where[400];
	const char *s, *why;
	long n;
	int kind;

	snprintf(path, sizeof path, "upgradePolicy.%s", fields[f].name);
	snprintf(where, sizeof where, "%s", owner);
	if (!j_has(obj, key))
		return;
	switch (fields[f].kind) {
	case PK_BOOL:
		put(p, f, opt_bool(obj, key, path, 0, where) ? "true" : "false", 1);
		return;
	case PK_COUNT:
		opt_int32(obj, key, path, &n, where);
		if (n < 0)
			die("%s: %s is %ld: the CRD's minimum is 0", owner, path, n);
		snprintf(num, sizeof num, "%ld", n);
		put(p, f, num, 1);
		return;
	case PK_INTSTR:
		kind = opt_intstr(obj, key, path, &n, &s, where);
		if (kind == 1) {
			if (n < 0)
				die("%s: %s is %ld: a count is never negative", owner, path, n);
			snprintf(num, sizeof num, "%ld", n);
			s = num;
		} else if (s[0] == '\0' || s[strlen(s) - 1] != '%') {
			die("%s: %s %s is a string but not a percentage (the operator cannot "
			    "scale it)", owner, path, qstr(s));
		}
		if (value_ok(f, s, &why) != 0)
			die("%s: %s %s %s", owner, path, qstr(s), why);
		put(p, f, s, 1);
		return;
	default:
		s = str_if_present(obj, key, path, where);
		if (value_ok(f, s, &why) != 0)
			die("%s: %s %s: %s", owner, path, qstr(s), why);
		put(p, f, s, 1);
		return;
	}
}

void
policy_from(struct policy *p, const char *owner, const cJSON *up, int nvd)
{
	static const struct { const char *obj; const char *const *keys; int f0, f1; } subs[] = {
		{ "waitForCompletion", wfc_keys, PF_WFC_SEL, PF_WFC_TIMEOUT },
		{ "podDeletion", pd_keys, PF_PD_FORCE, PF_PD_EMPTYDIR },
		{ "drain", drain_keys, PF_DR_ENABLE, PF_DR_EMPTYDIR },
	};
	char path[64];
	const cJSON *o;
	size_t i;
	int f;

	memset(p, 0, sizeof *p);
	p->owner = xstrndup(owner, strlen(owner));
	for (f = 0; f < PF_N; f++)
		put(p, f, fields[f].def, 0);
	/* GetUpgradePolicyWithDefaults: an NVIDIADriver's upgrades are on
	 * unless its upgradePolicy says otherwise (the CRD's default). */
	if (nvd)
		put(p, PF_AUTO, "true", 0);
	if (up == NULL || cJSON_IsNull(up))
		return;
	if (!cJSON_IsObject(up))
		die("%s: upgradePolicy is %s, not an object", owner, j_type(up));
	unknown_keys(up, top_keys, "upgradePolicy", owner);
	from_object(p, PF_AUTO, up, "autoUpgrade", owner);
	from_object(p, PF_PAR, up, "maxParallelUpgrades", owner);
	from_object(p, PF_MAXUN, up, "maxUnavailable", owner);
	for (i = 0; i < sizeof subs / sizeof subs[0]; i++) {
		snprintf(path, sizeof path, "upgradePolicy.%s", subs[i].obj);
		if ((o = opt_obj(up, subs[i].obj, path, owner)) == NULL)
			continue;
		unknown_keys(o, subs[i].keys, path, owner);
		for (f = subs[i].f0; f <= subs[i].f1; f++)
			from_object(p, f, o, strchr(fields[f].name, '.') + 1, owner);
	}
}

int
policy_set(struct policy *p, const char *assign, const char **why)
{
	const char *eq = strchr(assign, '=');
	char name[64];
	int f;

	if (eq == NULL || (size_t)(eq - assign) >= sizeof name) {
		*why = "is not FIELD=VALUE";
		return -1;
	}
	memcpy(name, assign, (size_t)(eq - assign));
	name[eq - assign] = '\0';
	if ((f = policy_field(name)) < 0) {
		*why = "names no field of the upgradePolicy (upgrade-policy(1) lists them)";
		return -1;
	}
	if (value_ok(f, eq + 1, why) != 0)
		return -1;
	put(p, f, eq + 1, 2);
	return 0;
}

void
policy_free(struct policy *p)
{
	int f;

	for (f = 0; f < PF_N; f++)
		free(p->value[f]);
	free(p->owner);
	memset(p, 0, sizeof *p);
}

int
policy_bool(const struct policy *p, int f)
{
	return strcmp(p->value[f], "true") == 0;
}

long
policy_count(const struct policy *p, int f)
{
	return strtol(p->value[f], NULL, 10);
}

/*
 * The selector of the pods the drain takes: the policy's podSelector and,
 * as the operator adds it to every drain it runs, pods not labelled
 * nvidia.com/gpu-driver-upgrade-drain.skip=true.
 */
char *
policy_drain_selector(const struct policy *p)
{
	const char *s = p->value[PF_DR_SEL];
	char *out = xmalloc(strlen(s) + sizeof "," L_DRAIN_SKIP "!=true");

	sprintf(out, "%s%s%s!=true", s, *s ? "," : "", L_DRAIN_SKIP);
	return out;
}

/* ---- the policies file: "node NAME OWNER", "policy OWNER FIELD SOURCE VALUE" ---- */

struct policies {
	struct policy *p;
	size_t np, cap;
	struct strset *owners; /* owner -> 1 + its index */
	struct strset *nodes;  /* node -> 1 + its owner's index */
};

static size_t
owner_index(struct policies *ps, const char *owner)
{
	size_t i = strset_get(ps->owners, owner);
	int f;

	if (i != 0)
		return i - 1;
	ps->p = xgrow(ps->p, &ps->cap, ps->np, 4, sizeof *ps->p);
	memset(&ps->p[ps->np], 0, sizeof *ps->p);
	ps->p[ps->np].owner = xstrndup(owner, strlen(owner));
	for (f = 0; f < PF_N; f++)
		ps->p[ps->np].value[f] = NULL;
	strset_add(ps->owners, owner, ps->np + 1);
	return ps->np++;
}

/* An owner: "-", or clusterpolicy/NAME or nvidiadriver/NAME. */
static int
owner_ok(const char *s)
{
	const char *slash = strchr(s, '/');

	if (strcmp(s, "-") == 0)
		return 1;
	if (slash == NULL || !dns_subdomain_ok(slash + 1))
		return 0;
	return (slash - s == 13 && strncmp(s, "clusterpolicy", 13) == 0) ||
	    (slash - s == 12 && strncmp(s, "nvidiadriver", 12) == 0);
}

struct policies *
policies_read(const char *path)
{
	struct policies *ps = xmalloc(sizeof *ps);
	struct lines l;
	char *s, *f[5], *value, *owner;
	const char *why;
	size_t i, n, o;
	int fi, src;

	memset(ps, 0, sizeof *ps);
	ps->owners = strset_new();
	ps->nodes = strset_new();
	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if (strncmp(s, "node ", 5) == 0) {
			if (split_fields(s, f, 4) != 3 || !dns_subdomain_ok(f[1]) || !owner_ok(f[2]))
				die("%s:%zu: not a \"node NAME OWNER\" line", l.name, l.lineno);
			o = owner_index(ps, f[2]);
			if ((i = strset_add(ps->nodes, f[1], o + 1)) != 0)
				die("%s:%zu: node %s again", l.name, l.lineno, f[1]);
			continue;
		}
		/* "policy OWNER FIELD SOURCE VALUE": VALUE is the rest, blanks and all */
		value = NULL;
		for (n = 0, i = 0; s[i] != '\0' && n < 4; i++)
			if (s[i] == ' ')
				n++;
		if (n == 4) {
			value = s + i;
			s[i - 1] = '\0';
		}
		if (value == NULL || strncmp(s, "policy ", 7) != 0 || split_fields(s, f, 5) != 4 ||
		    !owner_ok(f[1]))
			die("%s:%zu: not a \"policy OWNER FIELD SOURCE VALUE\" line (upgrade-policy(1))",
			    l.name, l.lineno);
		if ((fi = policy_field(f[2])) < 0)
			die("%s:%zu: %s is not a field of the upgradePolicy", l.name, l.lineno, qstr(f[2]));
		for (src = 0; policy_sources[src] != NULL && strcmp(policy_sources[src], f[3]) != 0; src++)
			;
		if (policy_sources[src] == NULL)
			die("%s:%zu: %s is not default, object or flag", l.name, l.lineno, qstr(f[3]));
		if (value_ok(fi, value, &why) != 0)
			die("%s:%zu: %s %s %s", l.name, l.lineno, f[2], qstr(value), why);
		owner = f[1];
		o = owner_index(ps, owner);
		if (ps->p[o].value[fi] != NULL)
			die("%s:%zu: %s of %s again", l.name, l.lineno, f[2], owner);
		put(&ps->p[o], fi, value, src);
	}
	for (o = 0; o < ps->np; o++)
		for (fi = 0; fi < PF_N; fi++)
			if (ps->p[o].value[fi] == NULL)
				die("%s: %s has no policy line for %s: not the whole of upgrade-policy's output",
				    l.name, ps->p[o].owner, fields[fi].name);
	lines_close(&l);
	return ps;
}

const struct policy *
policies_node(const struct policies *ps, const char *node)
{
	size_t i = strset_get(ps->nodes, node);

	return i == 0 ? NULL : &ps->p[i - 1];
}

size_t
policies_count(const struct policies *ps)
{
	return ps->np;
}

const struct policy *
policies_at(const struct policies *ps, size_t i)
{
	return &ps->p[i];
}

void
policies_free(struct policies *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->np; i++)
		policy_free(&ps->p[i]);
	free(ps->p);
	strset_free(ps->owners);
	strset_free(ps->nodes);
	free(ps);
}
