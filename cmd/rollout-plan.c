/*
 * rollout-plan: which GPU nodes drv-rollout.sh starts now, and why the
 * others wait; plan.c decides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] =
    "[-D] -v version [-p max-parallel] [-u max-unavailable | -y policies] [-s scope] [-r running [-k held]] [-g gone] facts draws";

int
main(int argc, char **argv)
{
	struct plan_input in;
	struct plan *p;
	const char *par = "1", *maxun = "25%", *pu = NULL;
	char *end;
	int c, dry = 0, rc;

	setprogname(argv[0]);
	memset(&in, 0, sizeof in);
	while ((c = nextopt(argc, argv, "Dg:hk:p:r:s:u:v:y:", usage)) != -1) {
		switch (c) {
		case 'D': dry = 1; break;
		case 'g': in.gone = optarg; break;
		case 'k': in.held = optarg; break;
		case 'p': par = pu = optarg; break;
		case 'r': in.running = optarg; break;
		case 's': in.scope = optarg; break;
		case 'u': maxun = pu = optarg; break;
		case 'y': in.policies = optarg; break;
		case 'v': in.version = optarg; break;
		}
	}
	if (in.version == NULL || argc - optind != 2 || (pu != NULL && in.policies != NULL))
		usage_exit(usage);
	if (!driver_ok(in.version))
		die("-v %s %s", qstr(in.version), DRIVER_WHAT);
	in.par = strtol(par, &end, 10);
	if (*par < '0' || *par > '9' || *end != '\0' || strlen(par) > 7)
		die("-p takes a number of nodes (0: no limit), not %s", qstr(par));
	if (intstr_parse(maxun, &in.maxun) != 0)
		die("-u takes a number of nodes or a percentage up to 100%% (25%%), not %s", qstr(maxun));
	in.facts = argv[optind];
	in.draws = argv[optind + 1];

	p = plan_load(&in);
	plan_print(p, dry, stdout);
	plan_free(p);
	rc = fshut(stdout, "stdout");
	return rc;
}
