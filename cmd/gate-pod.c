/*
 * gate-pod: the health gate's pod of a node, made from a pod manifest the
 * user gives (a CUDA sample, dcgmi diag): pinned to the node, through the
 * cordon an upgrade leaves on it; and, read back (-r), how it ended.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "-n namespace node manifest | -r [pod]";

/* The cordon's taint, which the pod tolerates (it runs on a cordoned node). */
#define T_UNSCHED "node.kubernetes.io/unschedulable"
#define MSG_LINES 20

static const struct kspec whole[] = { { "apiVersion", NULL }, { "kind", NULL },
	{ "metadata", NULL }, { "spec", NULL }, { "status", NULL }, { NULL, NULL } };
static const char *const kinds[] = { "Pod", NULL };
static const char *const lists[] = { "PodList", NULL };

struct got {
	cJSON *pod;  /* a copy of the one Pod read */
	size_t n;
	const char *name;
};

static void
one(const struct item *it, void *arg)
{
	struct got *g = arg;

	if (it->in_list)
		die("%s: a list of pods: give one Pod", g->name);
	if (g->n++ == 0)
		g->pod = cJSON_Duplicate(it->obj, 1);
}

static void
end(int ok, void *arg)
{
	(void)ok;
	(void)arg;
}

/* The one Pod in path, or die. */
static cJSON *
read_pod(const char *path)
{
	struct got g = { NULL, 0, path == NULL || strcmp(path, "-") == 0 ? "<stdin>" : path };
	struct doc_reader dr = { kinds, lists, "a Pod", NULL, 1, 0, whole, one, end, NULL, 0, NULL, 0 };

	dr.arg = &g;
	if (doc_each(path, &dr) != EXIT_CLEAN || g.pod == NULL)
		die("%s: no Pod", g.name);
	return g.pod;
}

/* obj.key, an object: made if absent or null; dies if it is something else. */
static cJSON *
member_obj(cJSON *obj, const char *key, const char *path)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v != NULL && !cJSON_IsNull(v) && !cJSON_IsObject(v))
		die("the manifest's %s is %s, not an object", path, j_type(v));
	if (v == NULL || cJSON_IsNull(v)) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
		v = cJSON_AddObjectToObject(obj, key);
	}
	return v;
}

static void
set_str(cJSON *obj, const char *key, const char *val)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddStringToObject(obj, key, val);
}

/* Each container, init ones too, says why it failed with its log's last lines. */
static void
fallback_to_logs(cJSON *spec, const char *key, int required)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, key), *c;

	if ((list == NULL || cJSON_IsNull(list)) && !required)
		return;
	if (!cJSON_IsArray(list) || (required && cJSON_GetArraySize(list) == 0))
		die("the manifest's spec.%s is %s, not a list of containers", key,
		    list == NULL ? "missing" : cJSON_IsArray(list) ? "empty" : j_type(list));
	cJSON_ArrayForEach(c, list) {
		if (!cJSON_IsObject(c))
			die("the manifest's spec.%s holds %s, not a container", key, j_type(c));
		if (!j_has(c, "terminationMessagePolicy"))
			set_str(c, "terminationMessagePolicy", "FallbackToLogsOnError");
	}
}

static int
make(const char *ns, const char *node, const char *manifest)
{
	cJSON *pod = read_pod(manifest), *meta, *spec, *labels, *tol, *t, *whole;
	const char *rp;
	char gen[128], *out;
	size_t cut;
	int have = 0;

	if (!dns_subdomain_ok(node))
		die("node %s is not a valid node name", qstr(node));
	if (!dns_subdomain_ok(ns) || strchr(ns, '.') != NULL || strlen(ns) > 63)
		die("namespace %s is not a valid namespace", qstr(ns));
	/* The object as gpudrv creates it: its own name, the node's namespace of gates. */
	meta = member_obj(pod, "metadata", "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "ownerReferences");
	snprintf(gen, sizeof gen, "gpudrv-gate-%.60s-", node);
	set_str(meta, "generateName", gen);
	set_str(meta, "namespace", ns);
	labels = member_obj(meta, "labels", "metadata.labels");
	set_str(labels, "app.kubernetes.io/part-of", "gpudrv");
	/* a label value: 63 characters at most, ending in one alphanumeric (a
	 * node name is a DNS subdomain; spec.nodeName is the whole of it) */
	snprintf(gen, sizeof gen, "%.63s", node);
	for (cut = strlen(gen); cut > 0 && !isalnum((unsigned char)gen[cut - 1]); cut--)
		gen[cut - 1] = '\0';
	set_str(labels, "gpudrv/gate", gen);

	spec = member_obj(pod, "spec", "spec");
	fallback_to_logs(spec, "containers", 1);
	fallback_to_logs(spec, "initContainers", 0);
	/* Bound to the node: the scheduler, which a cordon turns away, is not asked. */
	set_str(spec, "nodeName", node);
	rp = j_str(spec, "restartPolicy");
	if (rp != NULL && strcmp(rp, "Always") == 0)
		die("the manifest's restartPolicy is Always: the pod would never end; use Never "
		    "(or OnFailure, retried until the gate's timeout)");
	if (rp == NULL)
		set_str(spec, "restartPolicy", "Never");
	tol = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");
	if (tol != NULL && !cJSON_IsNull(tol) && !cJSON_IsArray(tol))
		die("the manifest's spec.tolerations is %s, not a list", j_type(tol));
	if (tol == NULL || cJSON_IsNull(tol)) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "tolerations");
		tol = cJSON_AddArrayToObject(spec, "tolerations");
	}
	cJSON_ArrayForEach(t, tol)
		if (cJSON_IsObject(t) && j_str(t, "key") != NULL && strcmp(j_str(t, "key"), T_UNSCHED) == 0)
			have = 1;
	if (!have) {
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "key", T_UNSCHED);
		cJSON_AddStringToObject(t, "operator", "Exists");
		cJSON_AddStringToObject(t, "effect", "NoSchedule");
		cJSON_AddItemToArray(tol, t);
	}
	/* apiVersion and kind first, as a person writes them */
	whole = cJSON_CreateObject();
	cJSON_AddStringToObject(whole, "apiVersion", "v1");
	cJSON_AddStringToObject(whole, "kind", "Pod");
	cJSON_AddItemToObject(whole, "metadata", cJSON_DetachItemFromObjectCaseSensitive(pod, "metadata"));
	cJSON_AddItemToObject(whole, "spec", cJSON_DetachItemFromObjectCaseSensitive(pod, "spec"));
	if ((out = cJSON_PrintUnformatted(whole)) == NULL)
		die("out of memory");
	puts(out);
	free(out);
	cJSON_Delete(whole);
	cJSON_Delete(pod);
	return fshut(stdout, "stdout");
}

/* A word of the API's own (a phase, a reason), or "-"; anything else shown safe. */
static const char *
word(const char *s)
{
	static char buf[4][80];
	static int k;
	size_t i;
	char *b;

	if (s == NULL || *s == '\0')
		return "-";
	b = buf[k++ % 4];
	for (i = 0; s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
		b[i] = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ? s[i] : '?';
	b[i] = '\0';
	return b;
}

/* A container's words (a log's last lines): printable ASCII (any other byte,
 * a terminal's escape or a byte of UTF-8, shown as '?'), MSG_LINES lines at
 * most. */
static void
quote(const char *msg)
{
	size_t n = 0, lines = 0, i;
	const char *p;

	for (p = msg; *p != '\0'; p++)
		if (*p == '\n' && p[1] != '\0')
			lines++;
	/* the last MSG_LINES lines */
	for (p = msg; lines >= MSG_LINES && *p != '\0'; p++)
		if (*p == '\n')
			lines--;
	for (i = 0; p[i] != '\0' && n < 4096; i++, n++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\n') {
			putchar('\n');
			continue;
		}
		putchar(c < 0x20 || c >= 0x7f ? '?' : c);
	}
	if (n > 0 && p[i - 1] != '\n')
		putchar('\n');
}

/*
 * How the pod stands: "name phase reason exit" (the container that ended worst:
 * a non-zero exit first, else the first one that ended; else why one
 * waits), then its termination message: the log's last lines where it
 * failed (FallbackToLogsOnError).
 */
static int
outcome(const char *path)
{
	cJSON *pod = read_pod(path);
	const cJSON *st = j_get(pod, "status"), *c, *worst = NULL, *term, *wait;
	const char *lists[] = { "initContainerStatuses", "containerStatuses" };
	char exitbuf[24] = "-";
	const char *reason = NULL, *msg = NULL, *name;
	long code, worst_code = 0;
	size_t i;

	for (i = 0; i < 2; i++) {
		c = NULL;
		while ((c = j_next(j_get(st, lists[i]), c)) != NULL) {
			term = j_get(j_get(c, "state"), "terminated");
			wait = j_get(j_get(c, "state"), "waiting");
			if (term == NULL && reason == NULL && worst == NULL && j_str(wait, "reason"))
				reason = j_str(wait, "reason");
			if (term == NULL || !j_int(term, "exitCode", &code))
				continue;
			if (worst == NULL || (worst_code == 0 && code != 0)) {
				worst = term;
				worst_code = code;
			}
		}
	}
	if (worst != NULL) {
		snprintf(exitbuf, sizeof exitbuf, "%ld", worst_code);
		reason = j_str(worst, "reason");
		msg = j_str(worst, "message");
	}
	if (j_str(st, "reason") != NULL) { /* the pod's own: Evicted, DeadlineExceeded */
		reason = j_str(st, "reason");
		if (msg == NULL)
			msg = j_str(st, "message");
	}
	name = j_str(j_get(pod, "metadata"), "name");
	if (name == NULL || !dns_subdomain_ok(name))
		die("%s: the pod has no valid metadata.name", path ? path : "<stdin>");
	printf("%s %s %s %s\n", name, word(j_str(st, "phase")), word(reason), exitbuf);
	if (msg != NULL)
		quote(msg);
	cJSON_Delete(pod);
	return fshut(stdout, "stdout");
}

int
main(int argc, char **argv)
{
	const char *ns = NULL;
	int c, read = 0;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "hn:r", usage)) != -1) {
		switch (c) {
		case 'n': ns = optarg; break;
		case 'r': read = 1; break;
		}
	}
	if (read) {
		if (ns != NULL || argc - optind > 1)
			usage_exit(usage);
		return outcome(argv[optind]);
	}
	if (ns == NULL || argc - optind != 2)
		usage_exit(usage);
	return make(ns, argv[optind], argv[optind + 1]);
}
