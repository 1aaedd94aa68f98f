#!/bin/sh
# End to end: the Debian package, installed into a scratch root (as
# t/0025 does), audits the sandbox from its installed paths: drv-audit.sh
# and drv-states.sh directly, and through kubectl-gpudrv with the sandbox's
# kubectl finding the plugin on PATH.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"

t_builds "the Debian package on the sandbox" "dpkg --root installs as root" dpkg-buildpackage dh lintian dpkg git
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_facts

V=$(cd "$ROOT" && dpkg-parsechangelog -S Version)
A=$(dpkg --print-architecture)
# (made once for the tests that take it: t_deb)
t_deb
t_ok "$T_DEB_RC" "make deb"
[ "$T_DEB_RC" = 0 ] || t_diag <"$T_DEB_LOG"
R=$SCRATCH/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
t_run dpkg --root="$R" --force-script-chrootless --force-depends -i "$T_DEB/gpudrv_${V}_$A.deb"
t_rc 0 "installed into a scratch root"

# The installed commands and the sandbox's kubectl only: the tree's bin/ is
# not on PATH.
K=$(dirname "$(command -v kubectl)")
P=$R/usr/bin:$K:/usr/bin:/bin
M=$ROOT/lab/support-matrix.csv
PATH=$P t_run "$R/usr/bin/drv-audit.sh" -m "$M"
t_rc 0 "the installed drv-audit.sh, the lab's matrix, the sandbox"
t_out "OK" OK
PATH=$P t_run "$R/usr/bin/drv-audit.sh" -m "$R/etc/gpudrv/support-matrix.csv"
t_rc 1 "the installed drv-audit.sh, the package's empty matrix"
t_out "every lab node's image MISSING" \
	"lab-node-0 MISSING 550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 MISSING 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04"
PATH=$P t_run "$R/usr/bin/drv-states.sh" -m "$M"
t_rc 0 "the installed drv-states.sh"
t_grep "lists lab-node-1" out "^lab-node-1 "

# The plugin, as kubectl runs it, with kubectl's own flags.
ctx=$(kubectl config current-context)
PATH=$P t_run kubectl plugin list
t_grep "kubectl plugin list finds the installed kubectl-gpudrv" out "^$R/usr/bin/kubectl-gpudrv\$"
PATH=$P t_run kubectl gpudrv audit --context "$ctx" -m "$M"
t_rc 0 "kubectl gpudrv audit --context, installed"
t_out "OK" OK
PATH=$P t_run kubectl gpudrv tag lab-node-1 --context no-such-context
t_rc 2 "a context the kubeconfig lacks reaches kubectl"
t_grep "and kubectl's words are said" err "no-such-context"
t_done
