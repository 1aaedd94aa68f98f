#!/bin/sh
# What the scripts write, and what they do when they cannot: standard output
# is written last and checked (a full disk is exit 2, with a message, never
# a stray 1), the files named on the command line are checked before any
# work, nothing says OK when the exit is 2, and any exit not taken on
# purpose (set -e stopping at a failed command) is exit 2, saying so.
. "$(dirname "$0")/lib.sh"

t_fake_cluster
t_matrix
printf '%s\n' driver_branch,kernel,os_tag 550,5.15.0-119-generic,ubuntu22.04 >two.csv
S=nvidia.com/gpu-driver-upgrade-state
full="No space left on device"
# to_full CMD...: CMD with its standard output on /dev/full (stderr in ./err).
to_full() {
	t_run sh -c '"$@" >/dev/full' sh "$@"
}

# Standard output on a full disk.
to_full drv-tag.sh lab-node-1
t_rc 2 "drv-tag.sh >/dev/full"
t_err "says it cannot write its output" "drv-tag.sh: cannot write to standard output: $full"
to_full drv-tag.sh -h
t_rc 2 "drv-tag.sh -h >/dev/full"
t_err "says so" "drv-tag.sh: cannot write to standard output"
to_full drv-audit.sh -m "$M"
t_rc 2 "drv-audit.sh >/dev/full on a clean fleet: not 1, which means missing images"
t_err "says it cannot write its output" "drv-audit.sh: cannot write to standard output: $full"
to_full drv-audit.sh -m two.csv
t_rc 2 "drv-audit.sh >/dev/full with missing images"
to_full drv-audit.sh -m "$M" -p audit.prom
t_rc 2 "drv-audit.sh -p >/dev/full"
t_err "says it cannot write its output" "drv-audit.sh: cannot write to standard output: $full"
t_grep "the textfile is written, with the failed run's status" audit.prom '^gpudrv_audit_exit_status 2$'
t_grep "and the fleet it saw" audit.prom '^gpudrv_audit_gpu_nodes 3$'
t_grep "and the time of that sight" audit.prom "^gpudrv_audit_last_success_timestamp_seconds $(date +%s | cut -c1-8)"
to_full drv-states.sh -m "$M"
t_rc 2 "drv-states.sh >/dev/full"
t_err "says it cannot write its output" "drv-states.sh: cannot write to standard output: $full"
to_full drv-states.sh -m two.csv
t_rc 2 "drv-states.sh >/dev/full with missing images"
to_full drv-states.sh -h
t_rc 2 "drv-states.sh -h >/dev/full"

to_full drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh >/dev/full: the upgrade done, its result unwritten"
t_grep "says so" err "^drv-upgrade.sh: lab-node-1: cannot write to standard output: $full\$"
t_grep "and where the node stands" err \
	"^drv-upgrade.sh: lab-node-1: upgraded: driver 550.90.07, the node as it was before; $S=upgrade-done\$"
t_grep "as the API says" err "^drv-upgrade.sh: lab-node-1: now: unschedulable= state=upgrade-done$"
t_run t_fake_state
t_out "and as the node is" "unschedulable= state=upgrade-done"
to_full drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh >/dev/full, already done"
t_fake_cluster
to_full drv-upgrade.sh -L $T_DRAIN -m two.csv lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh >/dev/full, refused for the image: not 1, as the row to add is lost"
t_grep "says nothing was changed" err "^drv-upgrade.sh: lab-node-1: nothing was changed$"
t_run t_fake_state
t_out "and nothing was" "unschedulable= state="

# -P's records with standard output closed: refused before anything is
# done (it was "an unexpected error" when the script kept a copy of it).
t_fake_cluster
t_run sh -c '"$@" >&-' sh drv-upgrade.sh -P -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh -P with standard output closed"
t_err "says so, and that nothing was changed" \
	"drv-upgrade.sh: lab-node-1: standard output is closed: -P has nowhere to write its records; nothing was changed"
t_run t_fake_state
t_out "and nothing was" "unschedulable= state="

# The files named on the command line, checked before any work.
t_fake_cluster
: >afile
mkdir adir
for p in /nonexistent/x.prom:"no directory /nonexistent" afile/x.prom:"no directory afile" \
	/proc/x.prom:"cannot create a file in /proc" adir:"it is a directory"; do
	t_run drv-audit.sh -m "$M" -p "${p%%:*}"
	t_rc 2 "drv-audit.sh -p ${p%%:*}"
	t_out "prints nothing, not OK"
	t_err "says why, before any audit" "drv-audit.sh: cannot write ${p%%:*} (-p): ${p#*:}; no audit was made"
	t_run drv-upgrade.sh -L $T_DRAIN -d "${p%%:*}" -m "$M" lab-node-1 550.90.07
	t_rc 2 "drv-upgrade.sh -d ${p%%:*}"
	t_err "says why, before anything is done" \
		"drv-upgrade.sh: cannot write the drain log ${p%%:*} (-d): ${p#*:}; nothing was changed"
done
t_run cat kubectl.log
t_out "kubectl was never called"
t_run ls -A adir
t_out "and no file was left behind"
t_run drv-upgrade.sh -L $T_DRAIN -d drain.log -m "$M" lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh -d drain.log"
t_grep "stderr has kubectl drain's words, indented, as they come" err "^    node/lab-node-1 drained$"
t_run cat drain.log
t_out "and so has the drain log" "node/lab-node-1 already cordoned" "node/lab-node-1 drained"
# A link planted where the drain log goes is replaced, never written
# through.
t_fake_cluster
echo precious >victim
ln -s "$PWD/victim" planted.log
t_run drv-upgrade.sh -L $T_DRAIN -d planted.log -m "$M" lab-node-1 550.90.07
t_rc 0 "drv-upgrade.sh -d, a link planted there"
t_run cat victim
t_out "the file it led to is untouched" precious
t_ok "$([ -f planted.log ] && ! [ -h planted.log ]; echo $?)" "the drain log is a file of its own"
t_run cat planted.log
t_out "with the drain's words" "node/lab-node-1 already cordoned" "node/lab-node-1 drained"

# An exit not taken on purpose: a command that fails where none should.
mkdir broken
printf '#!/bin/sh\necho "%s: boom" >&2\nexit 1\n' awk >broken/awk
printf '#!/bin/sh\necho "%s: boom" >&2\nexit 1\n' mkfifo >broken/mkfifo
chmod +x broken/*
t_fake_cluster
PATH=$PWD/broken:$PATH t_run drv-states.sh -m "$M"
t_rc 2 "drv-states.sh whose awk fails: not 1"
t_out "prints nothing"
t_err "says it stopped, and awk's words stay" "awk: boom" \
	"drv-states.sh: stopped by an unexpected error (status 1; see the messages above)"
: >kubectl.log
PATH=$PWD/broken:$PATH t_run drv-audit.sh -m "$M" -p audit.prom
t_rc 2 "drv-audit.sh whose awk fails"
t_out "prints nothing, not OK"
t_err "says it stopped" "awk: boom" "drv-audit.sh: stopped by an unexpected error (status 1; see the messages above)"
t_grep "records the failed run" audit.prom '^gpudrv_audit_exit_status 2$'
t_run cat kubectl.log
t_out "and never listed the nodes with a broken selector"
PATH=$PWD/broken:$PATH t_run drv-upgrade.sh -L $T_DRAIN -m "$M" lab-node-1 550.90.07
t_rc 2 "drv-upgrade.sh stopped by a failure after the cordon"
t_grep "says it stopped" err "^drv-upgrade.sh: lab-node-1: stopped by an unexpected error (status 1; see the messages above)$"
t_grep "and puts the node back, saying so" err \
	"^drv-upgrade.sh: lab-node-1: driver unchanged; the node is schedulable again (uncordoned); $S=upgrade-failed\$"
t_run t_fake_state
t_out "and the node is so" "unschedulable= state=upgrade-failed"
TMPDIR=$PWD/nonexistent t_run drv-tag.sh lab-node-1
t_rc 2 "no temporary directory"
t_grep "says where it could not make one" err "^drv-tag.sh: cannot create a temporary directory in $PWD/nonexistent$"
t_done
