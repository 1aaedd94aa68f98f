#!/bin/sh
# drv-rollout.sh running its nodes in rolling slots, each node's drv-upgrade.sh played by a
# stand-in beside it (it says the states drv-upgrade.sh says, changes the
# fake API's node, and ends as the test tells it): progress lines, failures,
# refusals, a lost API, the deadline and signals, checked by what the run
# prints and what it leaves running.  t/0980 does it all on the sandbox.
. "$(dirname "$0")/lib.sh"

S=nvidia.com/gpu-driver-upgrade-state
NEW=550.90.07
TAG=550-5.15.0-107-generic-ubuntu22.04
t_matrix
t_rollout_tree
D=$PWD

# The API (t_fake_fleet): the GPU nodes, no budget, no pod.
t_fake_fleet
GPUDRV_LOCK_DIR=$PWD
export GPUDRV_LOCK_DIR

# The stand-in of drv-upgrade.sh: t/fake-upgrade.sh.
cp "$T/fake-upgrade.sh" x/bin/drv-upgrade.sh
chmod +x x/bin/drv-upgrade.sh

# cluster NODE...: GPU nodes on 535, schedulable, Ready, every one ok.
cluster() {
	rm -f down act.* hung.* up.log kubectl.log kubectl.pids pdbs.watches pdbs.expired
	for n; do set -- "$@" "$n:535.183.06::::True"; shift; done
	t_fleet "$@"
}
states() { # states NODE: the node's state lines of out, the states only
	sed -n "s/^$1 \([a-z-]*-[a-z]*\)$/\1/p" out
}
last_line() { # last_line DESC LINE: the last line of out is LINE
	tail -n 1 out >last.out
	printf '%s\n' "$2" >last.expected
	t_cmp "$1" last.expected last.out
}
lab_states='drain-required validation-required upgrade-done'

# 1. Two nodes at once: each node's states, one line each, the summary.
cluster n1 n2
t_run "$R" $T_DRAIN -L -p 2 -u 100% -t 60 -m "$M" "$NEW"
t_rc 0 "two nodes at once"
t_grep "the start line of n1" out "^start 1 n1 $TAG$"
t_grep "the start line of n2" out "^start 2 n2 $TAG$"
t_is "n1's states, in order" "$(states n1 | tr '\n' ' ')" "$lab_states "
t_is "n2's states, in order" "$(states n2 | tr '\n' ' ')" "$lab_states "
last_line "the summary last" "done 2 failed 0 skipped 0 left 0"
# n1's run, whichever of the two started first.
t_run sed -n -e 's|-b [^ ]*/judged\.n1 |-b JUDGED |' -e 's|-O [^ ]*/objects |-O OBJECTS |' -e "/ n1 $NEW\$/p" up.log
t_out "drv-upgrade.sh gets -R, -N, -P, -b (what the plan judged n1 on), -O (the objects read) and the options passed on" \
	"-R -N -P -L -b JUDGED -O OBJECTS -m $M -t 60 -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true n1 $NEW"

# 1b. Rolling slots: at -p 2, n1 held in its drain does not hold the others:
# n2, n3 and n4 take the other slot in turn and end while n1 waits; then n1
# ends.
cluster n1 n2 n3 n4
echo gate >act.n1
mkdir -p textfile
t_bg "$R" $T_DRAIN -L -p 2 -u 100% -M "$D/textfile/rollout.prom" -m "$M" "$NEW"
t_until 30 grep -q '^n4 upgrade-done$' out
t_ok $? "n2, n3 and n4 are done while n1 is held"
t_is "n1 is still under way" "$(grep -c '^n1 upgrade-done$' out)" 0
# -M: the textfile as the run goes (written when its counts change).
t_until 10 grep -q '^gpudrv_rollout_nodes_upgrades_done 3$' textfile/rollout.prom
t_ok $? "-M: the textfile counts the three done"
# (t_run would write over out, which the run writes: plain commands here)
cp textfile/rollout.prom mid.prom
grep '^gpudrv_rollout_nodes' mid.prom >mid.counts
printf '%s\n' "gpudrv_rollout_nodes_upgrades_in_progress 1" "gpudrv_rollout_nodes_upgrades_done 3" \
	"gpudrv_rollout_nodes_upgrades_failed 0" "gpudrv_rollout_nodes_upgrades_pending 0" \
	"gpudrv_rollout_nodes_upgrades_available 0" >mid.expected
t_cmp "one under way (n1), three done, none failed or pending, no start possible" mid.expected mid.counts
t_grep "and when a node last moved" mid.prom "^gpudrv_rollout_last_progress_timestamp_seconds [0-9]*$"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <mid.prom >/dev/null 2>&1
	t_ok $? "promtool accepts it"
else
	t_skip "promtool check metrics: no promtool on this machine"
fi
t_is "nothing but the textfile in its directory (replaced whole)" "$(ls -A textfile)" rollout.prom
: >go.n1
t_wait 30
t_rc 0 "then n1 ends too"
last_line "the summary" "done 4 failed 0 skipped 0 left 0"
cp out roll.out
t_run grep '^start ' roll.out
t_out "four starts, in order" "start 1 n1 $TAG" "start 2 n2 $TAG" "start 3 n3 $TAG" "start 4 n4 $TAG"
t_run awk '$1 == "start" { if (++u > 2) print "three under way at", $0 } $2 == "upgrade-done" { u-- }' roll.out
t_out "never more than two under way"
t_run awk '$2 == "upgrade-done" { print $1 }' roll.out
t_out "n1 ends last" n2 n3 n4 n1
t_run grep '^gpudrv_rollout_nodes_upgrades_[a-z_]* [0-9]*$' textfile/rollout.prom
t_out "-M at the end: four done" \
	"gpudrv_rollout_nodes_upgrades_in_progress 0" "gpudrv_rollout_nodes_upgrades_done 4" \
	"gpudrv_rollout_nodes_upgrades_failed 0" "gpudrv_rollout_nodes_upgrades_pending 0" \
	"gpudrv_rollout_nodes_upgrades_available 0"
t_run stat -c %a textfile/rollout.prom
t_out "mode 0644, for node_exporter" 644
rm -f kubectl.log
: >notadir
t_run "$R" $T_DRAIN -L -M "$D/notadir/x.prom" -m "$M" "$NEW"
t_rc 2 "-M in a directory that is not one"
t_grep "says so" err "^drv-rollout.sh: cannot write $D/notadir/x.prom (-M): .*; nothing was changed$"
t_is "before any request" "$(cat kubectl.log 2>/dev/null | grep -c .)" 0

# 2. A failure: no node starts after it, the ones under way end; the node
# is named.
cluster n1 n2 n3
echo fail >act.n1
t_run "$R" $T_DRAIN -p 2 -u 100% -m "$M" "$NEW"
t_rc 1 "n1 fails"
t_grep "says n1 failed and its last words" err "^drv-rollout.sh: n1: the upgrade failed (drv-upgrade.sh exit 1); its last words:$"
t_grep "with them" err "^    drv-upgrade.sh: n1: drain failed (exit 1): see kubectl's words above$"
t_grep "and that it stopped" err "^drv-rollout.sh: stopped: n1 failed (-k 1); the nodes not started are left as they are$"
t_grep "and the command that resumes" err "^drv-rollout.sh: see why (drv-states.sh, the nodes' logs), then resume, past the failed: drv-rollout.sh -c -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true -p 2 -u 100% -m $M $NEW$"
t_grep "names n1, cordoned" err "^drv-rollout.sh: n1 is CORDONED and $S=upgrade-failed: see its messages; to return it to service: kubectl uncordon n1$"
t_grep "n1's last state on stdout" out "^n1 upgrade-failed$"
cp err run.err
last_line "the summary: n3 left" "done 1 failed 1 skipped 0 left 1"
t_run grep -c ' n3 ' up.log
t_out "n3 was never started" 0
# -c: on past it, by the command it printed.
resume=$(sed -n "s/^drv-rollout.sh: see why .*, then resume, past the failed: drv-rollout.sh //p" run.err)
eval "set -- $resume"
t_run "$R" "$@"
t_rc 1 "-c: n3 done, n1 still failed"
last_line "the summary" "done 2 failed 1 skipped 0 left 0"

# 2b. What a server says cannot forge a node's progress: a failed node whose
# messages hold lines like its state lines is reported failed, as its
# records (stdout) and the API say, never upgrade-done.
cluster n1
echo forge >act.n1
t_run "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_rc 1 "n1 fails with a forged state line in its messages"
t_is "n1's states are its records, upgrade-done never among them" "$(states n1 | tr '\n' ' ')" \
	"drain-required upgrade-failed "
last_line "the summary counts it failed" "done 0 failed 1 skipped 0 left 0"
t_grep "and names it cordoned, upgrade-failed" err "^drv-rollout.sh: n1 is CORDONED and $S=upgrade-failed: see its messages"

# 3. A refusal (nothing changed) is not a failure: the node is judged again
# at the next decision, and skipped when refused a second time; the
# rollout goes on.
cluster n1 n2
echo refuse >act.n1
t_run "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_rc 1 "n1 refused twice"
t_grep "says so" err "^drv-rollout.sh: n1: drv-upgrade.sh refused (exit 1); nothing was changed; judged again; its last words:$"
t_grep "then skips it" err "^drv-rollout.sh: n1: drv-upgrade.sh refused (exit 1) again; nothing was changed; skipped; its last words:$"
last_line "the summary" "done 1 failed 0 skipped 1 left 0"
cp out run.out
t_run grep '^start ' run.out
t_out "n1 started twice, then n2" "start 1 n1 $TAG" "start 2 n1 $TAG" "start 3 n2 $TAG"
# A canary (-C) that does not go through, n1 refused twice and skipped,
# stops the rollout as one that fails does: n2 is left as it is.
cluster n1 n2
echo refuse >act.n1
t_run "$R" $T_DRAIN -C 1 -p 1 -u 100% -m "$M" "$NEW"
t_rc 1 "a canary skipped"
t_grep "names the canary" err "^drv-rollout.sh: canary: n1 alone first; the other nodes only once each of them is done$"
t_grep "says it did not go through" err "^drv-rollout.sh: stopped: the canary did not go through: n1 not DONE (skipped or left); the other nodes are left as they are$"
t_grep "and how to run it again" err "^drv-rollout.sh: see why (pdb-check -s, drv-states.sh), then run it again: drv-rollout.sh -U podDeletionFilter=none -U drain.enable=true -U drain.deleteEmptyDir=true -C 1 -p 1 -u 100% -m $M $NEW$"
last_line "the summary" "done 0 failed 0 skipped 1 left 1"
cp out run.out
t_run grep -c 'canary passed' err
t_out "never that it passed" 0
t_run grep '^start ' run.out
t_out "n2 never started" "start 1 n1 $TAG" "start 2 n1 $TAG"
cluster n1 n2
echo refuse-once >act.n1
t_run "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_rc 0 "n1 refused once, then taken"
t_grep "says it is judged again" err "^drv-rollout.sh: n1: drv-upgrade.sh refused (exit 1); nothing was changed; judged again; its last words:$"
last_line "the summary: both done" "done 2 failed 0 skipped 0 left 0"
cp out run.out
t_run grep '^start ' run.out
t_out "n1 started again, then n2" "start 1 n1 $TAG" "start 2 n1 $TAG" "start 3 n2 $TAG"

# 3b. Each decision judges the nodes it acts on by their pods as they are
# then, not as the first list showed them: n1's pod of budget web lands on
# n2 while n1 upgrades, and web allows none until it is Ready.  n2, free of
# pods in the first list, is found blocked, not started.  Every pod is
# listed once; after that only the pods of the node started or blocked.
# web_budget: pdbs.json, budget web of app=web in team, allowing one;
# web_pods NAME:NODE...: pods.json, web's pods (an item a line).
web_budget() {
	printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{},"items":[%s]}\n' \
		'{"metadata":{"name":"web","namespace":"team","generation":1},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":1,"currentHealthy":2,"desiredHealthy":1,"disruptionsAllowed":1,"expectedPods":2}}' >pdbs.json
}
web_pods() {
	{
		echo '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":['
		sep=
		for p; do
			printf '%s{"metadata":{"name":"%s","namespace":"team","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-rs","uid":"u","controller":true}]},"spec":{"nodeName":"%s"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}\n' \
				"$sep" "${p%%:*}" "${p#*:}"
			sep=,
		done
		echo ']}'
	} >pods.json
}
cluster n1 n2
echo move >act.n1
web_budget
web_pods w-1:n1 w-2:n3
t_run "$R" $T_DRAIN -p 1 -u 100% -w 0 -m "$M" "$NEW"
t_rc 1 "n2 blocked by the pod that landed on it"
t_grep "with pdb-check's words" err "^drv-rollout.sh: n2: its drain would be refused by the budget(s) below; the node is left as it is:$"
cp out run.out
t_run grep -e '^start ' -e ' skipped budget$' run.out
t_out "n1 started, n2 skipped for web" "start 1 n1 $TAG" "n2 skipped budget"
t_run sed -n 's/^.* get --raw \/api\/v1\/pods?fieldSelector=//p' kubectl.log
t_out "every pod once, then n1's and n2's" 'spec.nodeName%21%3D' 'spec.nodeName%3Dn1' 'spec.nodeName%3Dn2'
t_run grep -e '-b [^ ]*/judged\.n1 ' up.log
t_rc 0 "n1's run got the budgets and pods it was judged on (-b)"

# 3b'. A pod the policy does not let go (no controller, drain.force false)
# is no budget's: no wait lifts it, so -w does not hold the node.
cluster n1 n2
echo ok >act.n1
printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{},"items":[]}\n' >pdbs.json
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[\n%s\n]}\n' \
	'{"metadata":{"name":"debug","namespace":"team"},"spec":{"nodeName":"n2"},"status":{"phase":"Running"}}' >pods.json
t0=$(date +%s)
t_run "$R" $T_DRAIN -p 1 -u 100% -w 60 -m "$M" "$NEW"
t_rc 1 "n2 refused for a pod without a controller, -w 60"
t_ok "$([ $(($(date +%s) - t0)) -lt 50 ] && echo 0 || echo 1)" "skipped at once, not after -w's 60 s"
t_grep "says what refuses, not a budget" err "^drv-rollout.sh: n2: the removal of its pods would be refused by what is below; the node is left as it is:$"
t_grep "with pdb-check's words" err "^    n2 team/debug NO-CONTROLLER: "
t_grep "n2 skipped" out "^n2 skipped budget$"
rm -f pods.json pdbs.json

# web_pair ACT: n1 (t/fake-upgrade.sh's ACT) and n2 share web, which
# allows one; their rollout, -L -p 2, in the background.
web_pair() {
	cluster n1 n2
	rm -f go.n1 evicted.n1
	echo "$1" >act.n1
	web_budget
	web_pods w-1:n1 w-2:n2
	t_bg "$R" $T_DRAIN -L -p 2 -u 100% -m "$M" "$NEW"
}

# 3c. A node waiting for a budget is read once when it begins to wait, and
# once when it would start; meanwhile the budgets are watched, from the
# resourceVersion of the list the decision read, and nothing else is asked
# (no look every 5 seconds): n1 (held in its drain) and n2 share web, which
# allows one, and web does not change.
web_pair gate
rv0=$(cksum <pdbs.json) rv0=${rv0%% *}
t_until 30 grep -q '^wait n2 budget team/web$' out
t_ok $? "n2 waits for web while n1 is under way"
t_until 10 test -s pdbs.watches
t_ok $? "the budgets are watched"
sleep 11
grep -v -e ' leases\.coordination' -e ' replace -f ' kubectl.log >during.log
: >go.n1
t_wait 60
t_rc 0 "then n2 goes too"
t_is "n2's pods were read twice over the wait" \
	"$(grep -c 'get --raw /api/v1/pods?fieldSelector=spec.nodeName%3Dn2$' kubectl.log)" 2
t_run sed -n 's/^.* get --raw //; /poddisruptionbudgets?resourceVersion=/,$p' during.log
t_out "once the watch began, nothing else was asked in 11 s (the lease aside)" \
	"/apis/policy/v1/poddisruptionbudgets?resourceVersion=$rv0&watch=1&timeoutSeconds=30"
t_is "watched from the list's resourceVersion" "$(uniq pdbs.watches)" "$rv0"
t_run grep -c 'get --raw /api/v1/nodes?' during.log
t_out "(the nodes were listed before it)" 1
rm -f pods.json pdbs.json pdbs.watches

# 3d. A node under way draws on a budget only while its pods of it are on
# it: n1's pod of web is evicted while n1 goes on (held until go.n1); n2,
# waiting for web, goes on waiting while web allows none, and starts once
# the replacement is Ready (web allows one again), before n1 ends.
web_pair evict
rv0=$(cksum <pdbs.json) rv0=${rv0%% *}
t_until 30 test -e evicted.n1
t_ok $? "n1's pod of web is evicted"
rv1=$(cksum <pdbs.json) rv1=${rv1%% *}
t_until 30 grep -q '^wait n2 budget team/web$' out
t_ok $? "n2 waits for web"
sleep 6
t_is "n2 not started while web allows none (the replacement not Ready)" "$(grep -c '^start 2 n2 ' out)" 0
sed 's/"disruptionsAllowed":0/"disruptionsAllowed":1/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
t_until 30 grep -q '^start 2 n2 ' out
t_ok $? "n2 starts once web allows one, n1 still under way"
t_is "n1 still under way then" "$(awk -F '\t' '$1 == "n1" { print $3 }' facts)" drain-required
: >go.n1
t_wait 60
t_rc 0 "both done"
t_is "web watched from the list's resourceVersion, then, after the eviction's event, from the list the look made" \
	"$(uniq pdbs.watches | tr '\n' ' ')" "$rv0 $rv1 "
rm -f pods.json pdbs.json pdbs.watches evicted.n1 go.n1

# 3e. The same eviction landing between the rollout's reads, as it reads
# n1's pods: a budget read before the pods would still allow one, and n2
# would start into a budget that allows none.  The budgets are read after
# the pods: n2 waits until the replacement is Ready.
web_pair race
# (n2 waits with the budgets watched; a change of web's status that
# matters to no decision, its count of healthy pods, brings the look that
# reads n1's pods)
t_until 30 test -s pdbs.watches
sed 's/"currentHealthy":2/"currentHealthy":3/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
t_until 30 test -e evicted.n1
t_ok $? "n1's pod of web is evicted as the rollout reads n1's pods"
sleep 6
t_is "n2 not started: web allows none (the replacement not Ready)" "$(grep -c '^start 2 n2 ' out)" 0
sed 's/"disruptionsAllowed":0/"disruptionsAllowed":1/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
t_until 30 grep -q '^start 2 n2 ' out
t_ok $? "n2 starts once web allows one, n1 still under way"
: >go.n1
t_wait 60
t_rc 0 "both done"
rm -f pods.json pdbs.json pdbs.watches evicted.n1 go.n1

# 3f. Where the budgets cannot be watched: a Role without watch on them
# (said once, then a look every 5 s, as before); a watch from a
# resourceVersion too old (410 Expired: the budgets listed again, the watch
# begun from that list, nothing said).
FAKE_PDB_WATCH=forbidden
export FAKE_PDB_WATCH
web_pair gate
t_until 30 grep -q '^wait n2 budget team/web$' out
t_ok $? "forbidden: n2 waits for web"
sleep 11
: >go.n1
t_wait 60
t_rc 0 "forbidden: both done"
t_grep "it says so, and what to grant" err \
	'^drv-rollout.sh: warning: the API refuses to watch the budgets: Error from server (Forbidden): poddisruptionbudgets.policy is forbidden: .*; a look every 5 s instead while a node waits for one (add watch to the poddisruptionbudgets rule of the Role: deploy/20-upgrader.yaml)$'
t_is "once" "$(grep -c 'refuses to watch' err)" 1
t_is "one watch asked" "$(grep -c . pdbs.watches)" 1
t_ok "$([ "$(grep -c 'get --raw /api/v1/nodes?' kubectl.log)" -ge 4 ]; echo $?)" "the nodes looked at again meanwhile (every 5 s)"
rm -f pods.json pdbs.json pdbs.watches
FAKE_PDB_WATCH=410
web_pair gate
rv0=$(cksum <pdbs.json) rv0=${rv0%% *}
t_until 30 grep -q '^wait n2 budget team/web$' out
t_until 10 sh -c '[ "$(cat pdbs.watches 2>/dev/null | grep -c .)" -ge 2 ]'
t_ok $? "410: a second watch"
sleep 3
: >go.n1
t_wait 60
t_rc 0 "410: both done"
t_is "each from the list's resourceVersion" "$(tr '\n' ' ' <pdbs.watches)" "$rv0 $rv0 "
t_run grep -e 'watch' -e 'Expired' err
t_out "nothing said of it"
unset FAKE_PDB_WATCH
rm -f pods.json pdbs.json pdbs.watches pdbs.expired

# 3g. A node its budget blocks, nothing under way, -w 60: it waits with the
# budget watched, and starts once the budget allows it, long before -w
# runs out; no look meanwhile.
cluster n1
web_budget
sed 's/"disruptionsAllowed":1/"disruptionsAllowed":0/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
web_pods w-1:n1 w-2:n3
t_bg "$R" $T_DRAIN -L -p 1 -u 100% -w 60 -m "$M" "$NEW"
t_until 30 test -s pdbs.watches
t_ok $? "n1 blocked by web: the budgets watched"
sleep 6
t_is "not started while web allows none" "$(grep -c '^start ' out)" 0
# (a change of web but for its status, a label, brings no look)
sed 's/"generation":1}/"generation":1,"labels":{"touched":"yes"}}/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
sleep 2
grep -v -e ' leases\.coordination' -e ' replace -f ' kubectl.log >during.log
sed 's/"disruptionsAllowed":0/"disruptionsAllowed":1/' pdbs.json >pdbs.new && mv pdbs.new pdbs.json
t_wait 30
t_rc 0 "n1 starts once web allows one, and is done"
t_grep "n1 done" out '^done 1 failed 0 skipped 0 left 0$'
t_run sed -n 's/^.* get --raw //; /poddisruptionbudgets?resourceVersion=/,$p' during.log
t_out "while it waited, a label changed too, the watch alone" "$(sed -n '1s/^/\/apis\/policy\/v1\/poddisruptionbudgets?resourceVersion=/p' pdbs.watches)&watch=1&timeoutSeconds=30"
rm -f pods.json pdbs.json pdbs.watches

# 3h. SIGTERM while a node waits with the budgets watched: the run stops
# as on any signal, and nothing of it, the watch's kubectl among them, is
# left running (the run in a process group of its own: setsid).
cluster n1 n2
echo gate >act.n1
web_budget
web_pods w-1:n1 w-2:n2
: >"$STANDIN/pids"
setsid "$R" $T_DRAIN -L -p 2 -u 100% -m "$M" "$NEW" >out 2>err &
t_pid=$!
t_until 30 test -s pdbs.watches
t_ok $? "n2 waits, the budgets watched"
kill -TERM "$t_pid"
t_wait 20
t_rc 2 "SIGTERM"
t_grep "says so" err "^drv-rollout.sh: interrupted by SIGTERM$"
t_until 5 sh -c "! $(command -v ps) -eo pgid=,stat= | awk -v g=$t_pid '\$1 == g && \$2 !~ /^Z/' | grep -q ."
t_ok $? "nothing of its process group is left running"
t_none_alive "no kubectl left running (the watch's among them)" "$STANDIN/pids"
t_none_alive "no drv-upgrade.sh stand-in left running" kubectl.pids
rm -f pods.json pdbs.json pdbs.watches

# 4. The API goes away after a node ends: exit 2, no summary made up, the
# node named as its run last saw it.
cluster n1 n2
echo down >act.n1
t_run "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_rc 2 "the API lost after n1 ended"
t_grep "says so" err "^drv-rollout.sh: cannot list the GPU nodes after n1 ended$"
t_grep "gives no summary" err "^drv-rollout.sh: the API does not answer: no summary; the nodes last under way, as their runs last saw them:$"
t_grep "names n1 by its last state line" err "^drv-rollout.sh:     n1: $S=upgrade-done (its last state line)$"
cp out lost.out
t_run grep -c '^done ' lost.out
t_out "no summary line on stdout" 0

# 5. The deadline with a node under way: it is stopped (resumable), said.
cluster n1
echo hang >act.n1
# (Under valgrind or the sanitizers the filters take seconds before the
# node starts: the deadline must fall while it is under way all the same.)
dl=10
[ "${GPUDRV_VALGRIND:-0}${GPUDRV_SANITIZED:-0}" = 00 ] || dl=40
GPUDRV_TIMEOUT=$dl t_run "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_rc 2 "the run's deadline"
t_grep "says so" err "^drv-rollout.sh: the run's deadline came (GPUDRV_TIMEOUT=$dl, [0-9]*s of it kept to put the node back) with n1 under way$"
t_grep "n1 as its run left it" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_grep "that state on stdout" out "^n1 upgrade-required$"
t_none_alive "the stand-in is not left running" kubectl.pids

# 6. SIGTERM with two nodes under way.
cluster n1 n2
echo hang >act.n1
echo hang >act.n2
t_bg "$R" $T_DRAIN -p 2 -u 100% -m "$M" "$NEW"
t_until 10 test -e hung.n1 -a -e hung.n2
t_ok $? "both under way"
kill -TERM "$t_pid"
t_wait 20
t_rc 2 "SIGTERM"
t_grep "says so" err "^drv-rollout.sh: interrupted by SIGTERM$"
t_grep "each node as its run left it (n1)" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_grep "each node as its run left it (n2)" err "^drv-rollout.sh: n2: now: unschedulable= state=upgrade-required$"
t_none_alive "no stand-in left running" kubectl.pids
last_line "the summary from the API" "done 0 failed 0 skipped 0 left 2"

# 6b. SIGTERM while the rollout prints a record: what it says must still be
# on its stderr (emit's errors go to a file), and the record be printed
# once, not again on the way out.  A cat that pauses while it copies the
# record of n1's drain-required.
cluster n1
echo hang >act.n1
mkdir -p slow
cat >slow/cat <<EOF
#!/bin/sh
if [ \$# = 1 ] && grep -q '^n1 drain-required\$' "\$1" 2>/dev/null; then
	: >"$D/catting"
	sleep 2
fi
exec $(command -v cat) "\$@"
EOF
chmod +x slow/cat
rm -f catting
PATH=$PWD/slow:$PATH t_bg "$R" $T_DRAIN -p 1 -u 100% -m "$M" "$NEW"
t_until 10 test -e catting
t_ok $? "the rollout prints n1's drain-required"
kill -TERM "$t_pid"
t_wait 20
t_rc 2 "SIGTERM there"
t_grep "says so" err "^drv-rollout.sh: interrupted by SIGTERM$"
t_grep "and where n1 is" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_grep "its state on stdout" out "^n1 upgrade-required$"
t_is "the record the signal came in, printed once" "$(grep -c '^n1 drain-required$' out)" 1
last_line "and the summary" "done 0 failed 0 skipped 0 left 1"
t_none_alive "no stand-in left running" kubectl.pids

# 7. -o: a directory others can write is refused before anything; a link in
# the user's own, where a node's log goes, is replaced by the log, never
# written through.
cluster n1
mkdir -m 777 open
t_run "$R" $T_DRAIN -p 1 -u 100% -o open -m "$M" "$NEW"
t_rc 2 "-o, a directory others can write"
t_grep "is refused, nothing changed" err \
	"^drv-rollout.sh: the log directory open (-o) can be written by group or others (drwxrwxrwx): refusing it (another user could plant a link there for a node's log to be written through); make it yours and writable by you alone, or name another; nothing was changed$"
t_run cat up.log
t_out "no node was started"
cluster n1
mkdir logs
echo precious >victim
ln -s "$PWD/victim" logs/n1.out
ln -s "$PWD/victim" logs/n1.log
t_run "$R" $T_DRAIN -p 1 -u 100% -o logs -m "$M" "$NEW"
t_rc 0 "-o, links planted where n1's log goes"
t_run cat victim
t_out "the file they led to is untouched" precious
t_ok "$([ -f logs/n1.out ] && ! [ -h logs/n1.out ]; echo $?)" "n1's log is a file of its own"
t_grep "with n1's records" logs/n1.out "^n1 upgrade-done$"
# 8. -N: the webhook hears of the start, each node failed or skipped, and
# the end or the stop, a POST of JSON each (t/webhook.pl records them); one
# that answers 500, or never, is said on stderr and changes nothing else.
hook() { # hook MODE: the webhook, its pid $hook, its URL $H
	rm -rf hook && mkdir hook
	perl "$T/webhook.pl" "$1" "$PWD/hook" &
	hook=$!
	t_until 10 test -s hook/port
	H=http://127.0.0.1:$(cat hook/port)/hooks/gpudrv
}
unhook() { kill "$hook" 2>/dev/null; wait "$hook" 2>/dev/null; }
events() { sed 's/.*"event":"\([a-z]*\)".*/\1/' hook/got | tr '\n' ' '; }
cluster n1 n2 n3
echo fail >act.n2
echo refuse >act.n3
hook ok
t_run "$R" $T_DRAIN -L -c -p 1 -u 100% -N "$H" -m "$M" "$NEW"
unhook
t_rc 1 "-N: n2 fails, n3 refused twice, -c"
last_line "its summary" "done 1 failed 1 skipped 1 left 0"
t_is "a message each: the start, n2's failure, n3 skipped, the end" "$(events)" "start failed skipped end "
t_run sort -u hook/req
t_out "each a POST of JSON to the URL's path" "POST /hooks/gpudrv application/json"
t_run perl -MJSON::PP -ne 'my $m = decode_json($_); print $m->{gpudrv}{event}, " ", $m->{gpudrv}{node} // "-", " ", $m->{gpudrv}{version}, "\n"' hook/got
t_out "each one JSON: its event, node and version" "start - $NEW" "failed n2 $NEW" "skipped n3 $NEW" "end - $NEW"
t_grep "the failure's text: the node, its state, its last words" hook/got \
	"^{\"text\":\"gpudrv: drv-rollout.sh $NEW on [^\"]*: n2: failed ($S=upgrade-failed): drv-upgrade.sh: n2: drain failed (exit 1): see kubectl's words above\","
t_grep "the end's text: the counts" hook/got "\"text\":\"gpudrv: [^\"]*: ended: done 1 failed 1 skipped 1 left 0 (exit 1)\""
t_is "nothing said of the webhook" "$(grep -c webhook err)" 0
cluster n1 n2 n3
echo fail >act.n2
hook ok
t_run "$R" $T_DRAIN -L -p 1 -u 100% -N "$H" -m "$M" "$NEW"
unhook
t_rc 1 "-N: n2 fails, no -c"
t_is "the start, the failure, the stop" "$(events)" "start failed stop "
t_grep "the stop's text: why, and the counts" hook/got "\"text\":\"gpudrv: [^\"]*: stopped: n2 not through; done 1 failed 1 skipped 0 left 1 (exit 1)\""
cluster n1 n2
hook fail
t_run "$R" $T_DRAIN -L -p 1 -u 100% -N "$H" -m "$M" "$NEW"
unhook
t_rc 0 "-N: a webhook that answers 500: the rollout goes on"
last_line "its summary" "done 2 failed 0 skipped 0 left 0"
t_grep "the refusal said" err "^drv-rollout.sh: warning: the webhook (-N) refused the start message: HTTP 500; it said: no_service$"
t_is "the end tried too" "$(events)" "start end "
cluster n1 n2
hook hang
t0=$(date +%s)
GPUDRV_NOTIFY_TIMEOUT=2 t_run "$R" $T_DRAIN -L -p 1 -u 100% -N "$H" -m "$M" "$NEW"
t1=$(date +%s)
unhook
t_rc 0 "-N: a webhook that never answers: the rollout goes on"
last_line "its summary" "done 2 failed 0 skipped 0 left 0"
t_grep "curl's timeout said" err "^drv-rollout.sh: warning: cannot send the start message to the webhook (-N) (curl exit 28): curl: (28) "
t_grep "and no other message" err "^drv-rollout.sh: warning: the webhook (-N) did not answer in 2s: no other message is sent$"
t_is "the start alone was tried" "$(events)" "start "
t_ok "$([ $((t1 - t0)) -le 20 ] && echo 0 || echo 1)" "it cost the rollout one timeout ($((t1 - t0)) s in all)"
t_done
