#!/bin/sh
# drv-upgrade.sh's arguments are checked before kubectl is called.
# (t/0920 and t/0940 run it against the sandbox.)
. "$(dirname "$0")/lib.sh"

t_fake_kubectl
for v in 550 550.90 550.90.07.1 .550.90.07 550..07 550.90. 550.9x.07 ''; do
	t_run drv-upgrade.sh lab-node-1 "$v"
	t_rc 2 "version '$v'"
	t_err "'$v' is refused as a driver version" \
		"drv-upgrade.sh: not a driver version (branch.minor.rev, e.g. 550.90.07): '$v'"
done
t_run drv-upgrade.sh 'lab-node-1;reboot' 550.90.07
t_rc 2 "a node argument that is not a node name"
t_err "is refused, shown safely" "drv-upgrade.sh: not a node name: 'lab-node-1?reboot'"
t_run drv-upgrade.sh -t 0 lab-node-1 550.90.07
t_rc 2 "a drain timeout of 0"
t_run drv-upgrade.sh -t 5m lab-node-1 550.90.07
t_rc 2 "a drain timeout that is not seconds"
t_grep "says what -t takes" err "drv-upgrade.sh: -t takes a number of seconds, not '5m'"
t_run drv-upgrade.sh lab-node-1
t_rc 2 "no version"
t_grep "prints the usage" err "^usage: drv-upgrade.sh "
t_run cat kubectl.log
t_rc 1 "kubectl was never called"
# kubectl cordon exits 0 even when the API refuses the patch: the node is
# looked at, and the upgrade stops there, saying so.
t_fake_cluster
{ cat "$ROOT/lab/support-matrix.csv"; echo 550,5.15.0-107-generic,ubuntu22.04; } >matrix.csv
FAKE_CORDON_NOOP=1 t_run drv-upgrade.sh -L -m "$PWD/matrix.csv" lab-node-1 550.90.07
t_rc 2 "a cordon that kubectl says was done but the API refused"
t_grep "says the cordon did not take" err "^drv-upgrade.sh: lab-node-1: the cordon did not take: the API left the node schedulable$"
t_grep "and where the node stands" err "^drv-upgrade.sh: lab-node-1: now: unschedulable= state=upgrade-failed$"
t_run grep -c '^--request-timeout=[0-9]*s drain ' kubectl.log
t_out "no drain was started" 0
t_done
