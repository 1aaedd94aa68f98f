#!/bin/sh
# drv-rollout.sh's pace: its window (-W, -x), the soak after a node's end
# (-Z), the pods that hold a node (-B) and a Prometheus's alerts (-P, -A,
# -Q, -F), against t_fake_fleet's API and t/fake-upgrade.sh; when each
# node started is in ./starts.  t/0996 does it on the sandbox, against a
# real Prometheus.
. "$(dirname "$0")/lib.sh"

NEW=550.90.07
t_matrix
t_rollout_tree
cp "$T/fake-upgrade.sh" x/bin/drv-upgrade.sh
chmod +x x/bin/drv-upgrade.sh
t_fake_fleet
GPUDRV_LOCK_DIR=$PWD
GPUDRV_GATE_PERIOD=1
export GPUDRV_LOCK_DIR GPUDRV_GATE_PERIOD

# cluster NODE...: GPU nodes on 535, schedulable, Ready, every one ok.
cluster() {
	rm -f down act.* go.* up.log kubectl.log kubectl.pids starts blockpods.*
	for n; do set -- "$@" "$n:535.183.06::::True"; shift; done
	t_fleet "$@"
}
started() { cut -d' ' -f1 starts 2>/dev/null | tr '\n' ' '; }
# hms SECONDS: the time of day SECONDS from now, UTC.
hms() { date -u -d "@$(($(date +%s) + $1))" +%H:%M:%S; }
# A Prometheus as curl reads it: file://$PWD/prom/api/v1/alerts.
mkdir -p prom/api/v1
PROM=file://$PWD/prom
prom() { # prom ALERT:STATE...: its answer
	printf '{"status":"success","data":{"alerts":[' >prom/api/v1/alerts.new
	s=
	for a; do
		printf '%s{"labels":{"alertname":"%s"},"state":"%s","activeAt":"2026-12-05T15:00:00Z"}' "$s" "${a%%:*}" "${a#*:}" >>prom/api/v1/alerts.new
		s=,
	done
	echo ']}}' >>prom/api/v1/alerts.new
	mv prom/api/v1/alerts.new prom/api/v1/alerts
}

# 1. Misuse: exit 2 before any request.
cluster n1
for bad in "-x" "-A x" "-F" "-Q" "-P $PROM -Q" "-W mon" "-W x 1 2" "-W * 25 2" "-W * 1 2 No/Where" "-Z 5x" "-P $PROM -A ("; do
	set -f
	# shellcheck disable=SC2086 # the words of each case
	t_run "$R" -L $bad -m "$M" "$NEW"
	set +f
	t_rc 2 "$bad refused"
done
t_run "$R" -L -x -m "$M" "$NEW"
t_grep "-x without -W, said" err '^drv-rollout.sh: -x ends the run when its window is closed: give -W too$'
t_run "$R" -L -W '* 25 2' -m "$M" "$NEW"
t_grep "-W's fault, in time-window's words" err '^drv-rollout.sh: -W: start "25": not a time of day'
t_run "$R" -L -P "$PROM" -Q -m "$M" "$NEW"
t_grep "-Q without -A, said" err '^drv-rollout.sh: -Q counts only the alerts -A matches: give -A too$'
t_is "no request made" "$(cat kubectl.log 2>/dev/null | grep -c .)" 0
GPUDRV_GATE_PERIOD=soon t_run "$R" -L -m "$M" "$NEW"
t_rc 2 "GPUDRV_GATE_PERIOD that is not seconds"

# 2. -D shows each gate it would apply, judged now.
cluster n1 n2 n3
prom GPUDriverXid:firing Watchdog:pending
train() { # train: the pod of app=train on n2
	printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[%s]}\n' \
		'{"metadata":{"name":"train-0","namespace":"ml"},"spec":{"nodeName":"n2"},"status":{"phase":"Running"}}' >blockpods.json
}
train
t_run "$R" -L -D -W '* 0 23:59:59' -Z 10m -B app=train -P "$PROM" -A '^Watchdog$' -F -m "$M" "$NEW"
t_rc 0 "-D with every gate"
t_grep "the window, open with no end" out '^window \* 0 23:59:59 UTC open - -$'
t_grep "the soak, in seconds" out '^soak 600$'
t_grep "the selector" out '^blocking-pods app=train$'
t_grep "the node a pod of it holds now" out '^blocking n2 ml/train-0$'
t_grep "the Prometheus and its filters" out "^alerts $PROM firing-only ignore ^Watchdog\$\$"
t_grep "the alert that holds now" out '^alert GPUDriverXid firing 2026-12-05T15:00:00Z$'
t_run "$R" -L -D -P "$PROM" -A '^GPU' -Q -m "$M" "$NEW"
t_grep "-Q: only the alerts that match" out "^alerts $PROM only ^GPU\$"
t_grep "so GPUDriverXid holds" out '^alert GPUDriverXid firing '
t_grep "the plan still" out "^start 1 n1 "
w="* $(hms 3600) $(hms 7200)"
t_run "$R" -L -D -W "$w" -m "$M" "$NEW"
t_grep "a window closed now, and when it opens" out "^window \\${w} UTC closed [0-9]* "
t_is "no node was started by -D" "$(started)" ""

# 3. A closed window: no node starts; with -x the run ends, exit 75, naming
# when it opens, nothing changed.
cluster n1 n2
t_run "$R" -L -W "* $(hms 3600) $(hms 7200)" -x -m "$M" "$NEW"
t_rc 75 "-x outside the window"
t_is "no node started" "$(started)" ""
t_grep "said when it opens" err "^drv-rollout.sh: no node starts: the window (\* .*) is closed: it opens at $(date -u -d "@$(($(date +%s) + 3600))" +%Y-%m-%d)T"
t_grep "said how to run it again" err '^drv-rollout.sh: nothing under way, and .*: the run ends here (-x); run it again then: '
t_grep "the summary: two left" out '^done 0 failed 0 skipped 0 left 2$'

# 4. A window that opens 12 seconds later: the run waits, saying until
# when, and starts its nodes once it is open, not before.
cluster n1 n2
opens=$(($(date +%s) + 12))
t_bg "$R" -L -p 1 -W "* $(date -u -d "@$opens" +%H:%M:%S) $(hms 3600)" -m "$M" "$NEW"
t_wait 60
t_rc 0 "the run waited for its window, then upgraded both"
t_grep "it said it waits" err "^drv-rollout.sh: no node starts: the window (.*) is closed: it opens at $(date -u -d "@$opens" +%Y-%m-%dT%H:%M:%S)+00:00$"
t_is "both started" "$(started)" "n1 n2 "
t_is "none before the window opened" "$(awk -v o="$opens" '$2 < o' starts)" ""

# 4b. While the window holds every start, the budgets the plan's waiting
# nodes need are not watched (the window says when to look): n1 and n2
# share web, which allows one; once the window opens, n1 starts and n2
# waits for web, watched.
cluster n1 n2
printf '{"kind":"PodDisruptionBudgetList","apiVersion":"policy/v1","metadata":{},"items":[%s]}\n' \
	'{"metadata":{"name":"web","namespace":"team","generation":1},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":1,"currentHealthy":2,"desiredHealthy":1,"disruptionsAllowed":1,"expectedPods":2}}' >pdbs.json
web_pod() { # web_pod NAME NODE: a pod of web, a line of pods.json
	printf '{"metadata":{"name":"%s","namespace":"team","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-rs","uid":"u","controller":true}]},"spec":{"nodeName":"%s"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' "$1" "$2"
}
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[\n%s\n,%s\n]}\n' "$(web_pod w-1 n1)" "$(web_pod w-2 n2)" >pods.json
rm -f pdbs.watches
opens=$(($(date +%s) + 10))
t_bg "$R" $T_DRAIN -L -p 2 -u 100% -W "* $(date -u -d "@$opens" +%H:%M:%S) $(hms 3600)" -m "$M" "$NEW"
while [ "$(date +%s)" -lt $((opens - 1)) ]; do sleep 0.2; done
t_ok "$([ ! -e pdbs.watches ]; echo $?)" "the window closed: no budget watched"
t_wait 60
t_rc 0 "then both, one after the other"
t_grep "n2 waited for web" out '^wait n2 budget team/web$'
t_ok "$([ -s pdbs.watches ]; echo $?)" "the window open: web watched while n2 waited"
rm -f pods.json pdbs.json pdbs.watches

# 5. A window that closes mid-run (12 seconds from now): the node under
# way, held past it, ends; none starts after; -x ends the run then.
cluster n1 n2 n3
echo gate >act.n1
closes=$(($(date +%s) + 12))
t_bg "$R" -L -p 1 -x -W "* $(hms -3600) $(date -u -d "@$closes" +%H:%M:%S)" -m "$M" "$NEW"
t_until 20 grep -qs '^n1 ' starts
t_ok $? "n1 started inside the window"
while [ "$(date +%s)" -le $((closes + 1)) ]; do sleep 1; done
: >go.n1
t_wait 40
t_rc 75 "the window closed with nodes left"
t_is "n1, under way, went on to its end; no other started" "$(started)" "n1 "
t_grep "n1 done" out '^n1 upgrade-done$'
t_grep "the summary" out '^done 1 failed 0 skipped 0 left 2$'
# With a node failed (-c goes on past it), the window's close is not "try
# again later": exit 1.
cluster n1 n2 n3
echo fail >act.n1
echo gate >act.n2
closes=$(($(date +%s) + 12))
t_bg "$R" -L -p 1 -u 100% -c -x -W "* $(hms -3600) $(date -u -d "@$closes" +%H:%M:%S)" -m "$M" "$NEW"
t_until 20 grep -qs '^n2 ' starts
t_ok $? "n1 failed, n2 started inside the window"
while [ "$(date +%s)" -le $((closes + 1)) ]; do sleep 1; done
: >go.n2
t_wait 40
t_rc 1 "-x with a node failed: exit 1, not 75"
t_grep "the summary" out '^done 1 failed 1 skipped 0 left 1$'

# 6. The soak: 3 seconds between one node's end and the next start.
cluster n1 n2 n3
t_run "$R" -L -p 1 -Z 3 -m "$M" "$NEW"
t_rc 0 "-Z 3"
t_is "all three" "$(started)" "n1 n2 n3 "
t_grep "said, naming the node that ended" err '^drv-rollout.sh: no node starts: the soak (-Z 3s) after n1 ended runs until '
t_run awk 'NR > 1 && $2 - p < 3 { print "started", $2 - p, "s after the one before:", $0 } { p = $2 }' starts
t_out "each start at least 3 s after the one before"

# 7. -B: a node on which such a pod runs is not started (nor cordoned), the
# others are; once the pod has left, it is.
cluster n1 n2 n3
train
t_bg "$R" -L -p 1 -B app=train -m "$M" "$NEW"
t_until 30 grep -q '^n3 upgrade-done$' out
t_ok $? "n1 and n3 go on"
sleep 2
t_is "n2, held by its pod, did not start" "$(started)" "n1 n3 "
t_grep "said so, naming the pod" err '^drv-rollout.sh: n2: ml/train-0 and maybe more pods that -B picks run on it: not started; judged again at each decision$'
t_is "said once" "$(grep -c 'n2: ml/train-0' err)" 1
t_is "n2 never cordoned" "$(awk -F '\t' '$1 == "n2" { print $5 }' facts)" ""
printf '{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}\n' >blockpods.json
t_wait 30
t_rc 0 "then n2 too"
t_is "all three" "$(started)" "n1 n3 n2 "
# held PATTERN: the run (t_bg) said PATTERN, started no node, and ends on
# TERM (exit 2).
held() {
	t_until 30 grep -q "$1" err
	t_ok $? "said: $1"
	t_is "no node started" "$(started)" ""
	kill -TERM "$t_pid"
	t_wait 20
	t_rc 2 "stopped by TERM"
}
# The pods cannot be listed: no node starts ("cannot tell"), said once with
# kubectl's words.
cluster n1
: >blockpods.fail
t_bg "$R" -L -B app=train -m "$M" "$NEW"
held '^drv-rollout.sh: no node starts: it cannot tell which nodes pods that -B picks run on$'
t_grep "kubectl's words" err '^ *Error from server (InternalError): etcdserver: request timed out$'

# 8. Alerts: none starts while one fires; once it stops, they do.
cluster n1 n2
prom GPUDriverXid:firing Watchdog:pending
t_bg "$R" -L -p 1 -P "$PROM" -A '^Watchdog$' -m "$M" "$NEW"
t_until 30 grep -q '^drv-rollout.sh: no node starts: alert(s) fire (GPUDriverXid is firing)$' err
t_ok $? "said, naming the alert"
sleep 2
t_is "no node starts while GPUDriverXid fires" "$(started)" ""
t_is "said once" "$(grep -c 'alert(s) fire' err)" 1
prom Watchdog:pending
t_wait 30
t_rc 0 "then both go"
t_is "both" "$(started)" "n1 n2 "
# -F: a pending alert holds nothing; -Q: only what -A matches counts.
cluster n1
prom GPUDriverXid:pending
t_run "$R" -L -P "$PROM" -F -m "$M" "$NEW"
t_rc 0 "-F: a pending alert does not hold"
cluster n1
prom Watchdog:firing
t_run "$R" -L -P "$PROM" -A Xid -Q -m "$M" "$NEW"
t_rc 0 "-A Xid -Q: Watchdog does not hold"
# Prometheus down, or answering what is not its alerts: "cannot tell",
# never a start.
cluster n1
t_bg "$R" -L -P http://gpudrv:secret@127.0.0.1:9/ -m "$M" "$NEW"
held '^drv-rollout.sh: no node starts: it cannot tell whether alerts fire: GET http://127.0.0.1:9/api/v1/alerts failed (curl exit 7): '
t_is "said once, whatever curl's words" "$(grep -c 'cannot tell whether alerts fire' err)" 1
t_is "the password never said" "$(grep -c secret err)" 0
echo '<html>502</html>' >prom/api/v1/alerts
cluster n1
t_bg "$R" -L -P "$PROM" -m "$M" "$NEW"
held "^drv-rollout.sh: no node starts: it cannot tell whether alerts fire: the answer of $PROM/api/v1/alerts: "
# The deadline while the gate holds: said, with what held the starts.
cluster n1
GPUDRV_TIMEOUT=40 t_run "$R" -L -P "$PROM" -m "$M" "$NEW"
t_rc 2 "the deadline while Prometheus cannot be read"
t_is "no node started" "$(started)" ""
t_grep "the deadline names what held the starts" err "^drv-rollout.sh: the run's deadline came (.*) while nodes waited (it cannot tell whether alerts fire: the answer of $PROM/api/v1/alerts: "
t_done
