/*
 * alert-gate: the Prometheus alerts that hold a rollout back, from the
 * answer of Prometheus's /api/v1/alerts, with kured's filters.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-F] [-r regexp [-m]] [file]";

/* A name as it is when it is a plain word, else quoted and escaped. */
static const char *
word(const char *s)
{
	if (s[0] != '\0' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_:.-+") == strlen(s))
		return s;
	return qstr(s);
}

int
main(int argc, char **argv)
{
	struct input in;
	cJSON *doc;
	const cJSON *data, *alerts, *a = NULL, *labels;
	const char *re = NULL, *status, *name, *state, *since;
	char where[64], ebuf[256];
	regex_t rx;
	char **out = NULL;
	size_t held = 0, cap = 0, k;
	int c, firing_only = 0, match_only = 0, i = 0, m, rc;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "Fhmr:", usage)) != -1) {
		switch (c) {
		case 'F': firing_only = 1; break;
		case 'm': match_only = 1; break;
		case 'r': re = optarg; break;
		}
	}
	if (argc - optind > 1 || (match_only && re == NULL))
		usage_exit(usage);
	if (re != NULL && (rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &rx, ebuf, sizeof ebuf);
		die("-r %s: %s", qstr(re), ebuf);
	}

	input_read(&in, argv[optind]);
	doc = doc_parse(&in);
	if (!cJSON_IsObject(doc))
		die("%s: %s, not the answer of Prometheus's /api/v1/alerts", in.name, j_type(doc));
	status = j_str(doc, "status");
	if (status != NULL && strcmp(status, "error") == 0)
		die("%s: Prometheus answered with an error: %s: %s", in.name,
		    qmsg(j_str(doc, "errorType") ? j_str(doc, "errorType") : "-"),
		    qmsg(j_str(doc, "error") ? j_str(doc, "error") : "-"));
	if (status == NULL || strcmp(status, "success") != 0)
		die("%s: status is %s, not \"success\": not the answer of Prometheus's /api/v1/alerts",
		    in.name, status ? qstr(status) : "missing");
	data = j_get(doc, "data");
	alerts = data != NULL ? j_get(data, "alerts") : NULL;
	if (!cJSON_IsArray(alerts))
		die("%s: no data.alerts list: not the answer of Prometheus's /api/v1/alerts", in.name);

	while ((a = j_next(alerts, a)) != NULL) {
		snprintf(where, sizeof where, "%s: data.alerts[%d]", in.name, i++);
		if (!cJSON_IsObject(a))
			die("%s is %s, not an alert", where, j_type(a));
		labels = opt_strmap(a, "labels", "labels", "label", where);
		name = labels != NULL ? j_str(labels, "alertname") : NULL;
		if (name == NULL)
			die("%s: no labels.alertname", where);
		state = need_str(a, "state", where);
		since = opt_str(a, "activeAt", "activeAt", where);
		if (strcmp(state, "firing") != 0 && strcmp(state, "pending") != 0) {
			if (strcmp(state, "inactive") == 0)
				continue;
			die("%s: state is %s, not firing, pending or inactive", where, qstr(state));
		}
		if (firing_only && strcmp(state, "firing") != 0)
			continue;
		if (re != NULL) {
			m = regexec(&rx, name, 0, NULL, 0) == 0;
			if (m != match_only)
				continue;
		}
		/* printed once every alert is known good: an answer broken
		 * further on prints nothing */
		out = xgrow(out, &cap, held, 8, sizeof *out);
		out[held++] = xsprintf("%s %s %s", word(name), state, since != NULL ? word(since) : "-");
	}
	for (k = 0; k < held; k++) {
		printf("%s\n", out[k]);
		free(out[k]);
	}
	free(out);
	if (re != NULL)
		regfree(&rx);
	cJSON_Delete(doc);
	input_free(&in);
	if (fshut(stdout, "stdout") != 0)
		return EXIT_TROUBLE;
	return held > 0 ? EXIT_FINDINGS : EXIT_CLEAN;
}
