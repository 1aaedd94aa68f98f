#!/bin/sh
# kubectl-gpudrv: `kubectl gpudrv SUBCOMMAND` runs the matching command;
# kubectl's --kubeconfig, --context and --request-timeout, before or after
# the subcommand, reach every kubectl call the command makes (those of the
# commands it runs in turn too); -n is the namespace only where the command
# has one; bad flags are exit 2 before any kubectl call.  With the
# sandbox's kubectl, `kubectl plugin list` finds it and `kubectl gpudrv`
# runs it.
. "$(dirname "$0")/lib.sh"

P=$BIN/kubectl-gpudrv
USAGE="usage: kubectl-gpudrv [--kubeconfig file] [--context name] [--request-timeout seconds] [-n namespace] subcommand [args]"
set -- "$USAGE" \
	"subcommands:" \
	"  tag         drv-tag.sh: the precompiled driver image tag one node needs" \
	"  audit       drv-audit.sh: every GPU node's image, against the matrix or a registry" \
	"  states      drv-states.sh: every GPU node's upgrade state, cordon, tag, image, age and what it waits for" \
	"  pdb-check   pdb-check on the cluster's budgets and pods: would a drain of the node get through?" \
	"  upgrade     drv-upgrade.sh: one node's driver, in the safe order" \
	"  rollout     drv-rollout.sh: the fleet, in batches the budgets can absorb" \
	"  kubeconfig  drv-kubeconfig.sh: a kubeconfig for one of gpudrv's service accounts" \
	"run as: kubectl gpudrv SUBCOMMAND ...; 'kubectl gpudrv SUBCOMMAND -h' gives its options; man kubectl-gpudrv for the flags."
printf '%s\n' "$@" >subcommands

t_run dash "$P"
t_rc 0 "alone, under dash"
t_cmp "prints the usage and the subcommands" subcommands out
t_err "nothing on stderr"
t_run "$P" -h
t_rc 0 "-h"
t_cmp "the same" subcommands out
t_run "$P" frob x
t_rc 2 "an unknown subcommand"
{ echo "kubectl-gpudrv: unknown subcommand 'frob'" && cat subcommands; } >expected.err
t_cmp "says so, and lists them on stderr" expected.err err
t_out "nothing on stdout"
t_run "$P" audit -h
t_rc 0 "audit -h: the command's own usage"
t_grep "drv-audit.sh's" out '^usage: drv-audit.sh '
# "here", the directory the commands are found in, is the script's own,
# never one the environment brings.
mkdir -p elsewhere
printf '#!/bin/sh\necho not gpudrv\n' >elsewhere/drv-audit.sh
chmod +x elsewhere/drv-audit.sh
here=$PWD/elsewhere t_run "$P" audit -h
t_rc 0 "audit -h with here=DIR in the environment"
t_grep "still runs the drv-audit.sh beside it" out '^usage: drv-audit.sh '

# Bad flags: exit 2, before any kubectl call.
t_fake_kubectl
FAKE_OUT=$DATA/node-1.json
export FAKE_OUT
while IFS='|' read -r args msg; do
	# shellcheck disable=SC2086 # the arguments, a word each
	t_run "$P" $args
	t_rc 2 "$args"
	t_grep "says: $msg" err "^kubectl-gpudrv: $msg$"
done <<'EOF2'
--request-timeout 0 tag lab-node-1|--request-timeout takes seconds, at least 1 (30, 30s, 2m, 1h), not '0'
tag lab-node-1 --request-timeout=1m30s|--request-timeout takes seconds, at least 1 (30, 30s, 2m, 1h), not '1m30s'
tag lab-node-1 --context|--context takes a value
--kubeconfig= tag lab-node-1|--kubeconfig takes a file name without control characters, not ''
--user x tag lab-node-1|unknown flag --user (kubectl's --kubeconfig, --context, --request-timeout and -n are the ones it takes)
-n team tag lab-node-1|-n/--namespace means nothing to 'tag': nodes have no namespace (it names the driver's for upgrade and rollout, the service account's for kubeconfig)
audit --namespace=team|-n/--namespace means nothing to 'audit': nodes have no namespace (it names the driver's for upgrade and rollout, the service account's for kubeconfig)
EOF2
t_ok "$([ -e kubectl.log ] && echo 1 || echo 0)" "kubectl was never called"

# The stand-ins log every call (t_standin: ./kubectl.log; t_fake_ops:
# ./ops.log); the flags asked for must begin each.
WANT_KC=$PWD/admin.conf
WANT_CTX=ctx-a
# flagged DESC [LOG]: every call in LOG (default kubectl.log) carried the
# flags, --request-timeout=7s first; LOG is then emptied.
flagged() {
	f=${2:-kubectl.log}
	if [ -s "$f" ] && ! grep -v "^--request-timeout=7s --kubeconfig=$WANT_KC --context=$WANT_CTX " "$f" >/dev/null; then
		t_ok 0 "$1: all $(grep -c . "$f") kubectl calls carry the flags"
	else
		t_ok 1 "$1: every kubectl call carries the flags"
		t_diag <"$f"
	fi
	: >"$f"
}
rm -f kubectl.log

t_run "$P" --kubeconfig "$WANT_KC" --context=ctx-a --request-timeout 7s tag lab-node-1
t_rc 0 "tag, the flags before it"
t_out "prints the tag" 535-5.15.0-107-generic-ubuntu22.04
t_run cat kubectl.log
t_out "one call, the flags first" "--request-timeout=7s --kubeconfig=$WANT_KC --context=ctx-a get --raw /api/v1/nodes/lab-node-1"
flagged "tag"
t_run "$P" tag lab-node-1 --context ctx-a --request-timeout=7s --kubeconfig="$WANT_KC"
t_rc 0 "tag, the flags after it"
flagged "tag, the flags after it"
t_run "$P" --context ctx-a tag --request-timeout 7 --kubeconfig "$WANT_KC" -- --context
t_rc 2 "after --, a flag goes to the command as it is"
t_err "drv-tag.sh sees it as the node" "drv-tag.sh: not a node name: '--context'"

FAKE_OUT=$DATA/lab-nodes.json
t_run "$P" --context ctx-a audit -m "$ROOT/lab/support-matrix.csv" --kubeconfig "$WANT_KC" --request-timeout 7s
t_rc 0 "audit"
t_out "audits" OK
flagged "audit"

t_fake_ops
FAKE_OUT=$DATA/lab-nodes.json
KUBECTL=$PWD/ops
t_run "$P" --context ctx-a --kubeconfig "$WANT_KC" --request-timeout 7s states
t_rc 0 "states"
flagged "states (the nodes, and the operator's objects)" ops.log

# upgrade: the whole way, and the audit it runs after.
t_fake_cluster
FAKE_NEW_DRIVER=550.90.07
export FAKE_NEW_DRIVER
t_matrix
t_run "$P" --namespace drivers --context ctx-a --kubeconfig "$WANT_KC" --request-timeout 7s upgrade -m "$PWD/matrix.csv" lab-node-1 550.90.07
t_rc 0 "upgrade"
t_grep "-n is the driver's namespace" kubectl.log " delete pod -n drivers "
t_grep "drv-audit.sh, run by drv-upgrade.sh, calls kubectl too" kubectl.log " get --raw /api/v1/nodes?"
flagged "upgrade"
unset FAKE_NEW_DRIVER

# pdb-check: the two GETs drv-upgrade.sh makes, then the filter.
t_run "$P" pdb-check lab-node-1 --context ctx-a --kubeconfig "$WANT_KC" --request-timeout 7s
t_rc 0 "pdb-check"
t_out "room for the drain" OK
t_run cat kubectl.log
t_out "two GETs, with the flags" \
	"--request-timeout=7s --kubeconfig=$WANT_KC --context=ctx-a get --raw /apis/policy/v1/poddisruptionbudgets" \
	"--request-timeout=7s --kubeconfig=$WANT_KC --context=ctx-a get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dlab-node-1"
flagged "pdb-check"
FAKE_PDB=$DATA/pdb-lab.json
t_run "$P" --context ctx-a --kubeconfig "$WANT_KC" --request-timeout 7s pdb-check -s lab-node-1
t_rc 1 "pdb-check: a budget blocks the drain"
t_grep "says which" out " BLOCKS "
t_err "nothing on stderr"
: >kubectl.log
t_run "$P" pdb-check 'lab-node-1;x'
t_rc 2 "pdb-check: not a node name"
t_err "says so" "kubectl-gpudrv: not a node name: 'lab-node-1?x'"
t_run "$P" pdb-check
t_rc 2 "pdb-check without a node"
t_err "the usage" "usage: kubectl-gpudrv pdb-check [-s] node | -a [-s]"
FAKE_PDB=$DATA/pdb-lab-ok.json
export FAKE_PDB

# rollout's plan: the nodes, budgets and pods, and the API server's name.
t_fake_fleet
t_fleet n1:535.183.06::::True
printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{},"items":[]}\n' >pdbs.json
t_run "$P" --context ctx-a --kubeconfig "$WANT_KC" --request-timeout 7s rollout -D -m "$PWD/matrix.csv" 550.90.07
t_rc 0 "rollout -D"
t_grep "plans n1" out "^start 1 n1 550-5.15.0-107-generic-ubuntu22.04$"
flagged "rollout -D"

# The sandbox's kubectl finds the plugin on PATH and runs it.
K=$ROOT/.sandbox/bin/kubectl
if [ -x "$K" ]; then
	PATH=$BIN:/usr/bin:/bin t_run "$K" plugin list --name-only
	t_grep "kubectl plugin list finds it" out "^kubectl-gpudrv$"
	PATH=$BIN:/usr/bin:/bin t_run "$K" gpudrv
	t_rc 0 "kubectl gpudrv"
	t_cmp "lists the subcommands" subcommands out
	rm -f kubectl.log
	t_fake_kubectl
	FAKE_OUT=$DATA/node-1.json
	PATH=$BIN:/usr/bin:/bin t_run "$K" gpudrv tag lab-node-1 --context ctx-a
	t_rc 0 "kubectl gpudrv tag NODE --context ctx-a"
	t_out "the tag" 535-5.15.0-107-generic-ubuntu22.04
	t_run cat kubectl.log
	t_out "with the context" "--request-timeout=60s --context=ctx-a get --raw /api/v1/nodes/lab-node-1"
	PATH=$BIN:/usr/bin:/bin t_run "$K" --context ctx-a gpudrv tag lab-node-1
	t_rc 1 "kubectl itself refuses a flag before the plugin's name"
	t_err "saying so" "Error: flags cannot be placed before plugin name: --context"
else
	t_skip "no sandbox kubectl at $K (make sandbox builds it): kubectl plugin list not tried"
fi
t_done
