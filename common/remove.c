/*
 * Which of a node's pods an upgrade removes, and how, as the node's
 * upgradePolicy has k8s-operator-libs (pkg/upgrade) and gpu-operator remove
 * them:
 *  - the pod deletion (pod_manager.go SchedulePodEviction, with the GPU
 *    Operator's filter, cmd/gpu-operator gpuPodSpecFilter): kubectl drain's
 *    filters (kubectl/pkg/drain/filters.go) with podDeletion's force and
 *    deleteEmptyDir, then the filter: a pod Running or Pending whose
 *    containers ask for nvidia.com/gpu* or nvidia.com/mig-*.  It removes the
 *    pods that pass all of them, and only when every pod the filter selects
 *    passes: else it fails, and nothing is removed;
 *  - the drain (drain_manager.go), drain.enable: kubectl drain of the pods
 *    its podSelector selects, with drain.force and drain.deleteEmptyDir;
 *    any pod a filter refuses and it fails, nothing removed.  In the GPU
 *    Operator it runs only where the pod deletion would fail (every node has
 *    the pod deletion: its filter is always set);
 *  - with no pod deletion (podDeletionFilter none: k8s-operator-libs as
 *    operators of other drivers run it), the drain, if enabled, else nothing.
 * Without a policy the removal is pdb-check's own question: kubectl drain
 * --ignore-daemonsets --delete-emptydir-data of every pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

const char *const removal_methods[] = { "none", "pod-deletion", "drain", NULL };

void
removal_plain(struct removal *rm)
{
	memset(rm, 0, sizeof *rm);
	rm->drain = 1;
	rm->drain_emptydir = 1;
}

int
removal_from(struct removal *rm, const struct policy *p, char *why, size_t whysz)
{
	memset(rm, 0, sizeof *rm);
	rm->policy = 1;
	rm->deletion = strcmp(p->value[PF_FILTER], "gpu") == 0;
	rm->del_force = policy_bool(p, PF_PD_FORCE);
	rm->del_emptydir = policy_bool(p, PF_PD_EMPTYDIR);
	rm->drain = policy_bool(p, PF_DR_ENABLE);
	rm->drain_force = policy_bool(p, PF_DR_FORCE);
	rm->drain_emptydir = policy_bool(p, PF_DR_EMPTYDIR);
	if ((rm->drain_sel = selector_parse(p->value[PF_DR_SEL], why, whysz)) == NULL)
		return -1;
	return 0;
}

void
removal_free(struct removal *rm)
{
	cJSON_Delete(rm->drain_sel);
	rm->drain_sel = NULL;
}

/*
 * kubectl drain's filters, in its order, for one pod: 1 it is taken, 0 it
 * is left (a DaemonSet's, a mirror pod), -1 it is refused (*kind says why:
 * local storage, no controller).  (skipDeletedFilter takes every pod: the
 * operator sets no SkipWaitForDeleteTimeoutSeconds.)
 */
static int
filters(const struct pod *p, int force, int emptydir, const char **kind)
{
	if (p->daemonset && !p->finished)
		return 0;
	if (p->mirror)
		return 0;
	if (p->local && !p->finished && !emptydir) {
		*kind = RF_LOCAL;
		return -1;
	}
	if (p->nocontroller && !force) {
		*kind = RF_UNMANAGED;
		return -1;
	}
	return 1;
}

/* The drain of the node: each pod its selector selects, through the filters. */
static int
drain_pods(const struct removal *rm, struct pod *pods, size_t np)
{
	const char *kind;
	size_t i;
	int ok = 1, r;

	for (i = 0; i < np; i++) {
		struct pod *p = &pods[i];

		p->go = 0;
		p->refused = NULL;
		if (rm->drain_sel != NULL && !selector_matches(rm->drain_sel, p->labels))
			continue;
		if ((r = filters(p, rm->drain_force, rm->drain_emptydir, &kind)) < 0) {
			p->refused = kind;
			ok = 0;
		}
		p->go = r > 0;
	}
	return ok;
}

int
removal_plan(const struct removal *rm, struct pod *pods, size_t np, const struct pod **fell,
    const char **fell_why)
{
	const char *kind;
	size_t i;
	int ok = 1, r;

	*fell = NULL;
	*fell_why = NULL;
	if (rm->deletion) {
		for (i = 0; i < np; i++) {
			struct pod *p = &pods[i];

			p->go = 0;
			p->refused = NULL;
			if (!p->gpu)
				continue;
			/* the filter comes last: a GPU pod another filter leaves or
			 * refuses is one the pod deletion cannot take */
			r = filters(p, rm->del_force, rm->del_emptydir, &kind);
			if (r == 0)
				kind = RF_UNDELETABLE;
			if (r <= 0) {
				p->refused = kind;
				if (ok) {
					*fell = p;
					*fell_why = kind;
				}
				ok = 0;
			}
			p->go = r > 0;
		}
		if (ok || !rm->drain) {
			*fell = NULL;
			return RM_DELETION;
		}
		/* updateNodeToDrainOrFailed: drain.enable, so the drain instead */
	}
	if (!rm->drain) {
		for (i = 0; i < np; i++) {
			pods[i].go = 0;
			pods[i].refused = NULL;
		}
		return RM_NONE;
	}
	drain_pods(rm, pods, np);
	return RM_DRAIN;
}
