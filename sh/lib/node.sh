# node.sh: the node contract, as the scripts spell it (POSIX sh; sourced
# after runtime.sh): the labels and annotations read and written, the
# GPU Operator's upgrade states, the fields of labels2tag -F's record, and
# the one list of the GPU nodes.  common/gpudrv.h defines the same for the
# filters; t/0010-house.t checks that the two agree.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

L_PRESENT=nvidia.com/gpu.present
L_MAJOR=nvidia.com/cuda.driver.major
L_MINOR=nvidia.com/cuda.driver.minor
L_REV=nvidia.com/cuda.driver.rev
L_KERNEL=feature.node.kubernetes.io/kernel-version.full
L_OSID=feature.node.kubernetes.io/system-os_release.ID
L_OSVER=feature.node.kubernetes.io/system-os_release.VERSION_ID
L_STATE=nvidia.com/gpu-driver-upgrade-state
L_SKIP=nvidia.com/gpu-driver-upgrade.skip
A_INITIAL=nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable
A_CORDONED=gpudrv/cordoned

# The values of $L_STATE, in the order an upgrade goes through them (the
# GPU Operator's upgrade library, pkg/upgrade/consts.go); "-" in a record
# is a node without the label.
S_REQUIRED=upgrade-required
S_CORDON=cordon-required
S_WAIT_JOBS=wait-for-jobs-required
S_POD_DELETION=pod-deletion-required
S_DRAIN=drain-required
S_MAINTENANCE=node-maintenance-required
S_POST_MAINTENANCE=post-maintenance-required
S_POD_RESTART=pod-restart-required
S_VALIDATION=validation-required
S_UNCORDON=uncordon-required
S_DONE=upgrade-done
S_FAILED=upgrade-failed

# labels2tag -F's record, a line a node: its fields in order, by name.
# Scripts take them by name only: record_read for one record, record_awk
# for an awk program over many.
record_fields='node tag driver state skip cordon ready initial since cordoner uid'
awk_columns f "$record_fields"
gpudrv_rv=$awk_columns

# Each S_ name above as an awk variable, "-v S_DONE=upgrade-done", read
# from the shell's own variables: the states are listed once, above.
gpudrv_sv=$(set | LC_ALL=C sed -n "s/^\(S_[A-Z_]*\)='*\([a-z-]*\)'*\$/-v \1=\2/p")

# record_awk ARGS...: awk ARGS (LC_ALL=C: bytes), its program given each
# field's number as f_NAME ($f_state is the upgrade state) and each upgrade
# state by its name (S_DONE), as awk variables.
record_awk() {
	# shellcheck disable=SC2086 # the -v words
	LC_ALL=C awk $gpudrv_rv $gpudrv_sv "$@"
}

# record_read FILE: the first record of FILE into r_node, r_tag, ... (r_
# and each name of $record_fields, in its order: t/0010-house.t checks
# it); status 1 when there is none.
record_read() {
	read -r r_node r_tag r_driver r_state r_skip r_cordon r_ready r_initial r_since r_cordoner r_uid _ <"$1"
}

# gpu_nodes FILE [SELECTOR]: the GPU nodes ($L_PRESENT=true, and SELECTOR,
# a label selector) into FILE, the API server's own JSON: one GET of
# /api/v1/nodes (--raw: not pages of 500, and kubectl's printer takes 8x as
# long to re-encode 1,000 nodes; bench/README.md), whose failure never
# reads as an empty fleet; status 2, saying why.  $gpu_nodes_path is the
# path asked, for messages.  A selector that cannot be encoded (awk broken)
# is the unexpected error it is, never a list of every node: called after
# ||, set -e would not stop at it.
gpu_nodes() {
	gpudrv_q=$(urlencode "$L_PRESENT=true${2:+,$2}") || exit "$?"
	gpu_nodes_path="/api/v1/nodes?labelSelector=$gpudrv_q"
	get_list "$1" "$gpu_nodes_path" "the GPU nodes"
}
