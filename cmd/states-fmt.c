/* states-fmt: what each GPU node's upgrade waits for, from its -F record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-j | -S] [-a audit] [-d draws] [-p pods] [-r revisions] [-n now] [records]";

/* A key's value, by the key: the strset holds index + 1 into vals. */
struct map {
	struct strset *keys;
	char **vals;
	size_t n, cap;
};

static void
map_put(struct map *m, const char *key, const char *val)
{
	if (strset_get(m->keys, key) != 0)
		return; /* the first one counts */
	m->vals = xgrow(m->vals, &m->cap, m->n + 1, 16, sizeof *m->vals);
	m->vals[m->n++] = xstrndup(val, strlen(val));
	strset_add(m->keys, key, m->n);
}

static const char *
map_get(const struct map *m, const char *key)
{
	size_t i = strset_get(m->keys, key);

	return i == 0 ? NULL : m->vals[i - 1];
}

/* The key's value made val, whether it had one or not. */
static void
map_set(struct map *m, const char *key, const char *val)
{
	size_t i = strset_get(m->keys, key);

	if (i == 0) {
		map_put(m, key, val);
		return;
	}
	free(m->vals[i - 1]);
	m->vals[i - 1] = xstrndup(val, strlen(val));
}

static void
map_free(struct map *m)
{
	while (m->n > 0)
		free(m->vals[--m->n]);
	free(m->vals);
	strset_free(m->keys);
}

/* What else is known of the nodes: the inputs beside the records. */
struct known {
	int images;        /* an audit was given: the image column is known */
	struct strset *missing; /* nodes whose image the audit says MISSING */
	struct map held;   /* node: what refuses its pods' removal (pdb-check -a) */
	struct map pods;   /* "role node": "ns/name phase ready restarts" (pdb-check -p) */
	int revisions;     /* revision-drift's lines were given */
	struct map rev;    /* node: its driver pod's revision-drift line, the worst */
};

/* revision-drift's states, the one that restarts the driver first. */
static const char *const rev_rank[] = { "driver", "config", "orphan", "unknown", "current", NULL };

static int
rev_rank_of(const char *line)
{
	size_t n = strcspn(line, " "), i;

	for (i = 0; rev_rank[i] != NULL; i++)
		if (strlen(rev_rank[i]) == n && strncmp(line, rev_rank[i], n) == 0)
			return (int)i;
	return -1;
}

/* "node ns/pod ns/daemonset pod-hash current-hash state image new-image"
 * (revision-drift): a node's worst, kept as "state pod daemonset
 * pod-hash current-hash image new-image". */
static void
read_revisions(const char *path, struct known *k)
{
	struct lines l;
	char *s, *f[9], *val;
	const char *had;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if (split_fields(s, f, 9) != 8)
			die("%s:%zu: not a revision-drift line", l.name, l.lineno);
		val = xsprintf("%s %s %s %s %s %s %s", f[5], f[1], f[2], f[3], f[4], f[6], f[7]);
		if (rev_rank_of(val) < 0)
			die("%s:%zu: %s is not a revision-drift state", l.name, l.lineno, qstr(f[5]));
		had = map_get(&k->rev, f[0]);
		if (strcmp(f[0], "-") != 0 && (had == NULL || rev_rank_of(val) < rev_rank_of(had)))
			map_set(&k->rev, f[0], val);
		free(val);
	}
	lines_close(&l);
}

/* matrix-grep's lines: "node MISSING tag" are the ones that count. */
static void
read_audit(const char *path, struct known *k)
{
	struct lines l;
	char *s, *f[4];

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL)
		if (split_fields(s, f, 4) >= 2 && strcmp(f[1], "MISSING") == 0)
			strset_add(k->missing, f[0], l.lineno);
	lines_close(&l);
}

/* pdb-check -a: "node BUDGET|BLOCKS|... words"; DRAWS lines are counts. */
static void
read_draws(const char *path, struct known *k)
{
	struct lines l;
	char *s, *sp;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if ((sp = strchr(s, ' ')) == NULL)
			die("%s:%zu: not a pdb-check -a line", l.name, l.lineno);
		*sp++ = '\0';
		if (strncmp(sp, "DRAWS ", 6) != 0 && strcmp(sp, "DRAWS") != 0)
			map_put(&k->held, s, sp);
	}
	lines_close(&l);
}

/* "role node ns/name phase ready restarts" (pdb-check -p, a role first). */
static void
read_pods(const char *path, struct known *k)
{
	struct lines l;
	char *s, *f[7], *key, *val;

	lines_open(&l, path);
	while ((s = lines_next(&l, NULL)) != NULL) {
		if (split_fields(s, f, 7) != 6)
			die("%s:%zu: not a role and a pdb-check -p line", l.name, l.lineno);
		if (strcmp(f[1], "-") == 0)
			continue; /* not scheduled */
		key = xsprintf("%s %s", f[0], f[1]);
		val = xsprintf("%s %s %s %s", f[2], f[3], f[4], f[5]);
		map_put(&k->pods, key, val);
		free(key);
		free(val);
	}
	lines_close(&l);
}

static const char *
pod_of(const struct known *k, const char *role, const char *node)
{
	char *key = xsprintf("%s %s", role, node);
	const char *pod = map_get(&k->pods, key);

	free(key);
	return pod;
}

/* A duration for people: 45s, 3m20s, 2h5m, 1d4h. */
static const char *
age(long long s, char *buf, size_t n)
{
	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(buf, n, "%lldd%lldh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, n, "%lldh%lldm", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, n, "%lldm%llds", s / 60, s % 60);
	else
		snprintf(buf, n, "%llds", s);
	return buf;
}

/* "ns/name is Running, Ready, 3 restarts" of a pod's words (free it). */
static char *
pod_words(const char *pod)
{
	char *p = xstrndup(pod, strlen(pod)), *w[5], *end, *s;
	long restarts;

	if (split_fields(p, w, 5) != 4)
		die("a pod's words are not 'ns/name phase ready restarts': %s", qstr(pod));
	restarts = strtol(w[3], &end, 10);
	if (*end != '\0' || end == w[3])
		restarts = 0; /* "-": not known */
	s = xsprintf(restarts > 0 ? "%s is %s, %s, %ld restarts" : "%s is %s, %s", w[0],
	    strcmp(w[1], "-") == 0 ? "not started" : w[1],
	    strcmp(w[2], "True") == 0 ? "Ready" : "not Ready", restarts);
	free(p);
	return s;
}

/* "kubectl -n NS logs NAME" of a pod's words (free it). */
static char *
logs_of(const char *pod)
{
	const char *slash = strchr(pod, '/'), *sp = strchr(pod, ' ');

	if (slash == NULL || sp == NULL || sp < slash)
		die("a pod's words do not start with ns/name: %s", qstr(pod));
	return xsprintf("kubectl -n %.*s logs %.*s", (int)(slash - pod), pod,
	    (int)(sp - slash - 1), slash + 1);
}

/* The states the GPU Operator counts as under way (maxParallelUpgrades). */
static const char *const busy[] = {
	S_CORDON, S_WAIT_JOBS, S_POD_DELETION, S_DRAIN, S_MAINTENANCE, S_POST_MAINTENANCE,
	S_POD_RESTART, S_VALIDATION, S_UNCORDON, NULL
};
/* The summary's order: an upgrade's, then any other state by name. */
static const char *const order[] = {
	"-", S_REQUIRED, S_CORDON, S_WAIT_JOBS, S_POD_DELETION, S_DRAIN, S_MAINTENANCE,
	S_POST_MAINTENANCE, S_POD_RESTART, S_VALIDATION, S_UNCORDON, S_DONE, S_FAILED, NULL
};

static int
is(const char *s, const char *a)
{
	return strcmp(s, a) == 0;
}

/* One node's diagnosis: what it waits for (one word), why and the fix. */
struct why {
	const char *img, *shown; /* the image column ("ok", "MISSING", "-", ...), the tag shown */
	long long since, secs;   /* when its state began, how long ago; -1: not known */
	char from[32];           /* how since is known, or "-" */
	const char *wait;
	char *why, *fix;         /* allocated: a refusal quoted can be long */
};

/* The fleet's counts the slot's words need. */
struct fleet {
	size_t inflight, unavail;
};

static void
diagnose(char **f, const struct known *k, const struct fleet *fl, long long now, struct why *d)
{
	const char *n = f[RF_NODE], *tag = f[RF_TAG], *state = f[RF_STATE];
	const char *ready = f[RF_READY], *by = f[RF_CORDONER];
	const char *who = is(by, "-") ? "someone" : by;
	const char *drv = pod_of(k, "driver", n), *val = pod_of(k, "validator", n);
	int cordoned = is(f[RF_CORDON], "cordoned");
	char *colon, *w1, *w2, buf[32];

	d->since = -1;
	strcpy(d->from, "-");
	if (!is(f[RF_SINCE], "-") && (colon = strchr(f[RF_SINCE], ':')) != NULL) {
		d->since = strtoll(f[RF_SINCE], NULL, 10);
		snprintf(d->from, sizeof d->from, "%s", colon + 1);
	}
	if (strncmp(tag, "UNKNOWN:", 8) == 0) {
		d->img = "UNKNOWN";
		d->shown = "UNKNOWN";
	} else if (strncmp(tag, "SKIP:", 5) == 0) {
		d->img = tag + 5;
		d->shown = "-";
	} else {
		d->img = !k->images ? "-" : strset_get(k->missing, n) != 0 ? "MISSING" : "ok";
		d->shown = tag;
	}
	/* a start in the future (clocks apart) is no time yet */
	d->secs = d->since < 0 ? -1 : now - d->since < 0 ? 0 : now - d->since;
	d->wait = "-";
	d->why = d->fix = NULL;

#define WHY(...) (d->why = xsprintf(__VA_ARGS__))
#define FIX(...) (d->fix = xsprintf(__VA_ARGS__))
	if (is(f[RF_SKIP], "skip")) {
		d->wait = "skip";
		WHY("labelled %s=true: neither the GPU Operator nor gpudrv upgrades it", L_SKIP);
		FIX("kubectl label node %s %s- to let them", n, L_SKIP);
	} else if (is(tag, "UNKNOWN:conflict:nvidiadriver")) {
		d->wait = "labels";
		WHY("two NVIDIADrivers select it (labels2tag names them): the GPU Operator then deploys no driver on it");
		FIX("change their nodeSelectors so that one selects it");
	} else if (is(d->img, "UNKNOWN")) {
		/* UNKNOWN:fault:label */
		const char *fault = tag + 8, *label = strchr(fault, ':');

		label = label != NULL ? label + 1 : "";
		d->wait = "labels";
		WHY("its labels give no tag (%.*s %s)", (int)strcspn(fault, ":"), fault, label);
		FIX("see that %s runs on it", strncmp(label, "nvidia.com/", 11) == 0 ?
		    "gpu-feature-discovery" : "node-feature-discovery");
	} else if (is(d->img, "MISSING") && !is(state, S_DONE) && !is(state, "-") &&
	    !is(state, S_UNCORDON)) {
		d->wait = "image";
		WHY("its driver image %s does not exist: the driver pod cannot pull it", tag);
		FIX("build and push %s (drv-audit.sh prints the matrix row)", tag);
	} else if (!is(ready, "ready") && !is(state, "-") && !is(state, S_DONE)) {
		d->wait = "node";
		WHY("the node is %s: its kubelet does not report; the operator counts it unavailable",
		    is(ready, "not-ready") ? "not Ready" : "of unknown readiness");
		FIX("kubectl describe node %s", n);
	} else if (is(state, "-") || is(state, S_DONE)) {
		if (cordoned) {
			d->wait = "cordon";
			if (is(state, "-"))
				WHY("cordoned by %s, outside any upgrade", who);
			else
				WHY("upgrade done, still cordoned by %s", who);
			FIX("kubectl uncordon %s when nobody needs it so", n);
		} else if (is(d->img, "MISSING")) {
			d->wait = "image";
			WHY("its driver image %s does not exist: its next driver pod cannot pull it", tag);
			FIX("build and push %s before the node restarts its driver", tag);
		}
	} else if (is(state, S_REQUIRED)) {
		d->wait = "slot";
		WHY("waits for an upgrade slot: %zu GPU node(s) under way, %zu unavailable "
		    "(maxParallelUpgrades, maxUnavailable)%s%s%s", fl->inflight, fl->unavail,
		    cordoned ? "; cordoned by " : "", cordoned ? who : "",
		    cordoned ? " before its upgrade, it counts as unavailable" : "");
		FIX("the GPU Operator takes it when a slot frees (autoUpgrade on), or drv-rollout.sh");
	} else if (is(state, S_CORDON) || is(state, S_UNCORDON)) {
		d->wait = "controller";
		WHY("waits for the GPU Operator to %s it on its next pass",
		    is(state, S_CORDON) ? "cordon" : "uncordon");
		FIX("if this lasts, see that the GPU Operator runs: kubectl -n gpu-operator get pods");
	} else if (is(state, S_WAIT_JOBS)) {
		d->wait = "jobs";
		WHY("waits for the pods of waitForCompletion.podSelector on it to finish");
		FIX("they end, or waitForCompletion.timeoutSeconds (0: for ever) moves it on; "
		    "deleting them moves it now");
	} else if (is(state, S_POD_DELETION) || is(state, S_DRAIN)) {
		const char *held = map_get(&k->held, n);

		if (held != NULL) {
			d->wait = "budget";
			WHY("its %s is refused: %s", is(state, S_DRAIN) ? "drain" : "pod deletion", held);
			FIX("as pdb-check says; the operator fails it at drain.timeoutSeconds");
		} else {
			d->wait = is(state, S_DRAIN) ? "drain" : "pods";
			WHY("%s, no budget refusing: pods are still terminating",
			    is(state, S_DRAIN) ? "drained" : "its GPU pods deleted");
			FIX("kubectl get pods -A --field-selector spec.nodeName=%s", n);
		}
	} else if (is(state, S_MAINTENANCE)) {
		d->wait = "maintenance";
		WHY("waits for the maintenance operator to cordon and drain it (a NodeMaintenance, requestor mode)");
		FIX("kubectl get nodemaintenances -A");
	} else if (is(state, S_POD_RESTART) || is(state, S_POST_MAINTENANCE)) {
		d->wait = "driver-pod";
		if (drv == NULL) {
			WHY("waits for a driver pod on it: there is none (app.kubernetes.io/component=nvidia-driver)");
			FIX("kubectl -n gpu-operator get daemonsets: is the driver scheduled there?");
		} else {
			w1 = pod_words(drv);
			w2 = logs_of(drv);
			WHY("waits for the new driver pod: %s", w1);
			FIX("%s (past 10 restarts the operator fails it)", w2);
			free(w1);
			free(w2);
		}
	} else if (is(state, S_VALIDATION)) {
		d->wait = "validator";
		w2 = !is(d->from, "validation") ? xstrndup("", 0) :
		    xsprintf("; the operator fails it 600 s after its start, %s%s", d->secs >= 600 ? "past" : "in ",
			d->secs >= 600 ? "" : age(600 - d->secs, buf, sizeof buf));
		if (val == NULL) {
			WHY("waits for a validator pod on it: there is none (app=nvidia-operator-validator)%s", w2);
			FIX("kubectl -n gpu-operator get daemonsets: is the validator scheduled there?");
		} else {
			w1 = pod_words(val);
			WHY("waits for the validator: %s%s", w1, w2);
			free(w1);
			FIX("%s", w1 = logs_of(val));
			free(w1);
		}
		free(w2);
	} else if (is(state, S_FAILED)) {
		d->wait = "failed";
		w1 = drv == NULL ? xsprintf("none on it") : pod_words(drv);
		WHY("its upgrade failed; the operator moves it on once its driver pod is Ready and current (%s)", w1);
		free(w1);
		FIX("find why (kubectl describe node %s; the driver pod), then: kubectl label node %s %s=%s --overwrite",
		    n, n, L_STATE, S_REQUIRED);
	} else {
		d->wait = "unknown";
		WHY("a state neither the GPU Operator nor gpudrv writes");
		FIX("kubectl label node %s %s- to forget it", n, L_STATE);
	}
#undef WHY
#undef FIX
}

/* "-" (or nothing) is JSON's null, else the string. */
static void
add_str(cJSON *o, const char *key, const char *s)
{
	if (s == NULL || *s == '\0' || is(s, "-"))
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddStringToObject(o, key, s);
}

static void
add_num(cJSON *o, const char *key, long long v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, (double)v);
}

/* One node as a JSON object, on a line of its own. */
/* revision-drift's word on the node's driver pod, as JSON (null: no pod). */
static void
add_revision(cJSON *o, const char *line)
{
	static const char *const keys[] = { "state", "pod", "daemonset", "podHash", "currentHash",
		"image", "newImage" };
	char *copy, *f[8];
	cJSON *r;
	size_t i;

	if (line == NULL) {
		cJSON_AddNullToObject(o, "revision");
		return;
	}
	copy = xstrndup(line, strlen(line));
	split_fields(copy, f, 8);
	r = cJSON_AddObjectToObject(o, "revision");
	for (i = 0; i < 7; i++)
		add_str(r, keys[i], f[i]);
	free(copy);
}

static void
print_json(char **f, const struct why *d, const struct known *k, size_t i)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "node", f[RF_NODE]);
	add_str(o, "state", f[RF_STATE]);
	cJSON_AddBoolToObject(o, "cordoned", is(f[RF_CORDON], "cordoned"));
	cJSON_AddStringToObject(o, "ready", f[RF_READY]);
	add_str(o, "tag", d->shown);
	cJSON_AddStringToObject(o, "image", d->img);
	add_num(o, "since", d->since);
	add_str(o, "sinceFrom", d->from);
	add_num(o, "seconds", d->secs);
	add_str(o, "cordonedBy", f[RF_CORDONER]);
	add_str(o, "waiting", d->wait);
	add_str(o, "why", d->why);
	add_str(o, "fix", d->fix);
	if (k->revisions)
		add_revision(o, map_get(&k->rev, f[RF_NODE]));
	s = cJSON_PrintUnformatted(o);
	printf("%s\n%s", i > 0 ? "," : "", s);
	free(s);
	cJSON_Delete(o);
}

/* The summary: each state once, its count, its longest wait. */
struct tally {
	const char *state;
	size_t count;
	long long longest;
	const char *node, *wait;
};

static int
by_state(const void *a, const void *b)
{
	return strcmp(((const struct tally *)a)->state, ((const struct tally *)b)->state);
}

static void
print_tally(const struct tally *t)
{
	char buf[32];

	printf("%s %zu %s %s %s\n", t->state, t->count, t->longest < 0 ? "-" :
	    age(t->longest, buf, sizeof buf), t->node, t->wait);
}

static void
print_summary(struct tally *t, size_t nt)
{
	size_t i, j, others = 0;

	/* the upgrade's order first, then the others by name */
	for (j = 0; order[j] != NULL; j++)
		for (i = 0; i < nt; i++)
			if (is(t[i].state, order[j]))
				print_tally(&t[i]);
	for (i = 0; i < nt; i++)
		if (!word_in(t[i].state, order))
			t[others++] = t[i];
	qsort(t, others, sizeof *t, by_state);
	for (i = 0; i < others; i++)
		print_tally(&t[i]);
}

/* -S -r: the nodes whose driver pod the operator will restart, by why:
 * "revision STATE COUNT", driver, config, orphan, unknown, each that has
 * any.  (The records are split in place: their node is their first word.) */
static void
print_revisions(const struct known *k, char **recs, size_t nrec)
{
	size_t i, j, n[5] = { 0 };
	const char *r;
	int rank;

	for (i = 0; i < nrec; i++)
		if ((r = map_get(&k->rev, recs[i])) != NULL && (rank = rev_rank_of(r)) >= 0)
			n[rank]++;
	for (j = 0; j < 4; j++)
		if (n[j] > 0)
			printf("revision %s %zu\n", rev_rank[j], n[j]);
}

int
main(int argc, char **argv)
{
	const char *audit = NULL, *draws = NULL, *pods = NULL, *revs = NULL;
	struct known k = { 0 };
	struct fleet fl = { 0 };
	struct lines l;
	struct why d;
	struct tally *t = NULL;
	size_t nrec = 0, rcap = 0, nt = 0, tcap = 0, i, j;
	char **recs = NULL, *s, *f[RF_COUNT + 1], buf[32], *end;
	long long now = (long long)time(NULL);
	int ch, json = 0, summary = 0;

	setprogname(argv[0]);
	while ((ch = nextopt(argc, argv, "a:d:jn:p:r:Sh", usage)) != -1) {
		switch (ch) {
		case 'a': audit = optarg; break;
		case 'd': draws = optarg; break;
		case 'j': json = 1; break;
		case 'n':
			now = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || now < 0)
				die("-n takes the time now in Unix seconds, not %s", qstr(optarg));
			break;
		case 'p': pods = optarg; break;
		case 'r': revs = optarg; break;
		case 'S': summary = 1; break;
		}
	}
	if (argc - optind > 1 || (json && summary))
		usage_exit(usage);

	k.missing = strset_new();
	k.held.keys = strset_new();
	k.pods.keys = strset_new();
	k.rev.keys = strset_new();
	if (audit != NULL) {
		k.images = 1;
		read_audit(audit, &k);
	}
	if (draws != NULL)
		read_draws(draws, &k);
	if (pods != NULL)
		read_pods(pods, &k);
	if (revs != NULL) {
		k.revisions = 1;
		read_revisions(revs, &k);
	}

	/* Every record read and checked before the first line is printed. */
	lines_open(&l, argv[optind]);
	while ((s = lines_next(&l, NULL)) != NULL) {
		char *copy = xstrndup(s, strlen(s));

		if (record_split(s, f) != 0)
			die("%s:%zu: not a labels2tag -F record (%s)", l.name, l.lineno,
			    "node tag driver state skip cordon ready initial since cordoner uid");
		if (word_in(f[RF_STATE], busy))
			fl.inflight++;
		if (is(f[RF_CORDON], "cordoned") || !is(f[RF_READY], "ready"))
			fl.unavail++;
		recs = xgrow(recs, &rcap, nrec + 1, 64, sizeof *recs);
		recs[nrec++] = copy;
	}
	lines_close(&l);

	if (json)
		printf("[");
	for (i = 0; i < nrec; i++) {
		record_split(recs[i], f);
		diagnose(f, &k, &fl, now, &d);
		if (json) {
			print_json(f, &d, &k, i);
		} else if (summary) {
			for (j = 0; j < nt && !is(t[j].state, f[RF_STATE]); j++)
				;
			if (j == nt) {
				t = xgrow(t, &tcap, nt + 1, 16, sizeof *t);
				t[nt++] = (struct tally){ f[RF_STATE], 0, d.secs, f[RF_NODE], d.wait };
			} else if (d.secs > t[j].longest) {
				t[j].longest = d.secs;
				t[j].node = f[RF_NODE];
				t[j].wait = d.wait;
			}
			t[j].count++;
		} else {
			printf("%s %s %s %s %s %s", f[RF_NODE], f[RF_STATE], f[RF_CORDON], d.shown,
			    d.img, d.secs < 0 ? "-" : age(d.secs, buf, sizeof buf));
			if (k.revisions) {
				const char *r = map_get(&k.rev, f[RF_NODE]);
				printf(" %.*s", r != NULL ? (int)strcspn(r, " ") : 1, r != NULL ? r : "-");
			}
			printf(" %s", d.wait);
			if (d.why != NULL)
				printf(" %s; fix: %s", d.why, d.fix);
			putchar('\n');
		}
		free(d.why);
		free(d.fix);
	}
	if (json)
		printf("\n]\n");
	if (summary)
		print_summary(t, nt);
	if (summary && k.revisions)
		print_revisions(&k, recs, nrec);

	for (i = 0; i < nrec; i++)
		free(recs[i]);
	free(recs);
	free(t);
	strset_free(k.missing);
	map_free(&k.held);
	map_free(&k.pods);
	map_free(&k.rev);
	return fshut(stdout, "stdout");
}
