#!/bin/sh
# states-fmt: each wait drv-states.sh names, from labels2tag -F records and
# the audit, the budgets' refusals and the GPU Operator's pods beside them
# (t/data/states: a node a branch, long lines, and the outputs drv-states.sh's
# own awk printed before states-fmt took its place); JSON a reader parses;
# bad input refused, exit 2, nothing printed.
. "$(dirname "$0")/lib.sh"

S=$DATA/states
set -- -n 1764790000 -a "$S/audit" -d "$S/draws" -p "$S/pods"
t_run states-fmt "$@" "$S/rec"
t_rc 0 "a node of each kind"
t_cmp "each with its wait, why and fix" "$S/text.out" out
t_run states-fmt "$@" <"$S/rec"
t_cmp "the records on standard input" "$S/text.out" out
t_run states-fmt "$@" -S "$S/rec"
t_rc 0 "-S"
t_cmp "the summary: the upgrade's order, then the others by name" "$S/summary.out" out
t_run states-fmt "$@" -j "$S/rec"
t_rc 0 "-j"
t_cmp "JSON, a node a line" "$S/json.out" out
t_whole
t_run ./whole "$S/json.out"
t_rc 0 "which a JSON reader reads"
cp out whole.out
t_run sh -c "grep -o '\"node\":\"[^\"]*\"' whole.out | wc -l"
t_out "every node in it" 16

# A refusal of 2.6 KB (80 pods a budget holds) and a pod whose phase is
# 340 letters are quoted whole.
t_run states-fmt -n 1764790000 -a "$S/audit" -d "$S/longdraws" -p "$S/longpods" "$S/rec"
t_rc 0 "long lines"
t_cmp "quoted whole, as drv-states.sh's awk quoted them" "$S/long.out" out

# Without -a no image is known; without -d nothing refuses; without -p no pod.
t_run states-fmt -n 1764790000 "$S/rec"
t_rc 0 "the records alone"
t_grep "the image column is -" out '^n-skip upgrade-required schedulable 550-5.15.0-1-generic-ubuntu22.04 - - skip '
t_grep "a removal with no refusal is pods still terminating" out '^n-held .* pods its GPU pods deleted, no budget refusing: pods are still terminating;'
t_grep "no driver pod is none" out '^n-pod .* driver-pod waits for a driver pod on it: there is none '
printf '' | t_run states-fmt -j
t_out "no records: an empty array" "[" "]"

# A node done (or never upgraded), schedulable, whose image the audit
# found missing: its next driver pod could not pull it.
printf 'n-done MISSING 550-5.15.0-2-generic-ubuntu22.04\nn-none MISSING 550-5.15.0-2-generic-ubuntu22.04\n' >miss.audit
printf 'n-%s 550-5.15.0-2-generic-ubuntu22.04 550.90.07 %s - schedulable ready - - - u\n' done upgrade-done none - >miss.rec
t_run states-fmt -n 1764790000 -a miss.audit miss.rec
t_rc 0 "a node done and a node never upgraded, their image missing"
t_out "each waits for its image" \
	"n-done upgrade-done schedulable 550-5.15.0-2-generic-ubuntu22.04 MISSING - image its driver image 550-5.15.0-2-generic-ubuntu22.04 does not exist: its next driver pod cannot pull it; fix: build and push 550-5.15.0-2-generic-ubuntu22.04 before the node restarts its driver" \
	"n-none - schedulable 550-5.15.0-2-generic-ubuntu22.04 MISSING - image its driver image 550-5.15.0-2-generic-ubuntu22.04 does not exist: its next driver pod cannot pull it; fix: build and push 550-5.15.0-2-generic-ubuntu22.04 before the node restarts its driver"

# An age to the second, the minute, the hour and the day.
for a in 59:59s 61:1m1s 3601:1h0m 90061:1d1h; do
	printf 'n 550-5.15.0-1-generic-ubuntu22.04 535.1.1 upgrade-required - schedulable ready - %s:label - u\n' \
		$((1764790000 - ${a%%:*})) >age
	t_run states-fmt -n 1764790000 age
	t_grep "${a%%:*} s is ${a#*:}" out "^n upgrade-required schedulable [^ ]* - ${a#*:} slot "
done

# Bad input: named, exit 2, nothing on standard output.
printf 'n-a tag 1.2.3 - - schedulable ready - - - u\nn-b tag\n' >bad
t_run states-fmt bad
t_rc 2 "a line that is not a record"
t_out "prints nothing"
t_err "names the file and the line" "states-fmt: bad:2: not a labels2tag -F record (node tag driver state skip cordon ready initial since cordoner uid)"
sed 's/ schedulable / maybe /' "$S/rec" >bad
t_run states-fmt bad
t_rc 2 "a field that is not a word of its kind"
t_run states-fmt -n soon "$S/rec"
t_rc 2 "-n that is not a time"
t_err "says so" "states-fmt: -n takes the time now in Unix seconds, not \"soon\""
printf 'driver n-pod ns/p Running\n' >badpods
t_run states-fmt -p badpods "$S/rec"
t_rc 2 "a pod line short of its words"
t_err "names it" "states-fmt: badpods:1: not a role and a pdb-check -p line"
t_run states-fmt -j -S "$S/rec"
t_rc 2 "-j and -S"
t_err "the usage" "usage: states-fmt [-j | -S] [-a audit] [-d draws] [-p pods] [-r revisions] [-n now] [records]"
t_run states-fmt "$S/rec" "$S/rec"
t_rc 2 "two record files"
t_run states-fmt nosuch
t_rc 2 "a file that cannot be read"
t_out "prints nothing"
t_done
