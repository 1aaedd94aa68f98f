#!/bin/sh
# The fault table (t/fault-table.sh says how it is made and judged), part
# two: drv-upgrade.sh.
. "$(dirname "$0")/lib.sh"
. "$T/fault-table.sh"

# drv-upgrade.sh, the whole way (a driver pod restarted, and the new driver
# reported after it, as gpu-feature-discovery would) and with -j.  The
# validation's watch of the node is started again (it says so), and the
# audit after a finished upgrade cannot undo the upgrade: it is said, and
# the upgrade's exit stays 0.  (The stand-in's watches end after their
# first event, as a server may end one: a fault's answer, cut or paged, is
# the whole of one.)
up_except() {
	case $1 in
	*"get --raw /api/v1/nodes?fieldSelector="*"&watch=1&"*) echo go ;;
	*"get --raw /api/v1/nodes?"*) echo 0 ;; # drv-audit.sh, after the upgrade
	esac
}
FAKE_NEW_DRIVER=$NEW
FAKE_WATCH=end
export FAKE_NEW_DRIVER FAKE_WATCH
table drv-upgrade.sh cluster up_except drv-upgrade.sh -m "$M" lab-node-1 "$NEW"
# The cluster's own policy where a pod holds a GPU: evicted, then the
# node's pods looked at until it is gone (a look is a GET of a list too).
gpu_cluster() {
	cluster
	FAKE_PDB=$DATA/pdb-gpu-ok.json
	export FAKE_PDB
}
table "drv-upgrade.sh, a pod that holds a GPU" gpu_cluster up_except drv-upgrade.sh -m "$M" lab-node-1 "$NEW"
FAKE_PDB=$DATA/pdb-lab-ok.json
# The lab's policy: the drain of every pod.
# shellcheck disable=SC2086 # T_DRAIN is words
table "drv-upgrade.sh, the drain" cluster up_except drv-upgrade.sh $T_DRAIN -m "$M" lab-node-1 "$NEW"
unset FAKE_NEW_DRIVER FAKE_WATCH
table "drv-upgrade.sh -j" cluster up_except drv-upgrade.sh -L -N -j job=train -J 5 -m "$M" lab-node-1 "$NEW"

t_done
