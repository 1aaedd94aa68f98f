#!/bin/sh
# End to end: drv-rollout.sh's pace on the sandbox, against Debian's
# Prometheus and Pushgateway started here on loopback.  20 GPU nodes; a
# window that opens 20 seconds after the run starts and closes 40 seconds
# after that (-x); a soak of 4 seconds (-Z); an alert, GPUXidErrors, that
# fires on a metric pushed to the Pushgateway from before the window opens
# until the test pushes it back to 0 (-P), beside Watchdog, which always
# fires and -A passes over; a training pod on pc-01 (-B); a webhook (-N);
# then Prometheus stopped.
# The first run ends when its window closes (exit 75); the second, its
# window open all day, finishes once the pod has gone.  Each start is
# checked against when the window was open, when Prometheus said the alert
# fired, the soak, and the pod; the webhook got one message per event.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"
for c in prometheus prometheus-pushgateway; do
	command -v "$c" >/dev/null 2>&1 && continue
	t_skip "$c is not installed (Debian's package; .ci/deps test installs it)"
	t_done
done
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_gpudrv_ns || { echo "Bail out! cannot make the namespace gpudrv (the rollout's lease)"; exit 1; }
NEW=550.90.07
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; e2e_reset_lab >/dev/null 2>&1; rm -rf "$SCRATCH"' EXIT

nodes=
for i in $(seq -w 1 20); do nodes="$nodes pc-$i"; done
# shellcheck disable=SC2086 # one node a word
e2e_gpu_nodes $nodes
t_ok $? "20 GPU nodes Ready"
e2e_namespace gpu-drv
# The training job: a pod a controller owns (a drain would evict it), on
# pc-01.
kubectl -n gpu-drv apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: train}
spec:
  replicas: 1
  selector: {matchLabels: {app: train}}
  template:
    metadata: {labels: {app: train}}
    spec:
      nodeSelector: {kubernetes.io/hostname: pc-01}
      containers: [{name: c, image: trainer}]
EOF2
e2e_until 60 sh -c '[ "$(kubectl -n gpu-drv get pods -l app=train -o jsonpath={.items[*].status.phase})" = Running ]'
t_ok $? "a training pod Running on pc-01"
train=$(kubectl -n gpu-drv get pods -l app=train -o jsonpath='{.items[0].metadata.name}')

# free: a port on 127.0.0.1 nothing listens on now.
free() { perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport, "\n"'; }
mkdir pg prom hook
prometheus-pushgateway --web.listen-address=127.0.0.1:0 --persistence.file="$PWD/pg/data" >pg/log 2>&1 &
pids="$pids $!"
t_until 20 grep -q 'msg="Listening on"' pg/log
PG=$(sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' pg/log | head -n 1)
xid() { # xid N: gpu_xid_errors N, pushed
	echo "gpu_xid_errors $1" | curl -sS --data-binary @- "http://127.0.0.1:$PG/metrics/job/dcgm" >/dev/null
}
xid 0
PP=$(free)
cat >prom/prometheus.yml <<EOF2
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules.yml]
scrape_configs:
- job_name: pushgateway
  honor_labels: true
  static_configs: [{targets: ["127.0.0.1:$PG"]}]
EOF2
cat >prom/rules.yml <<'EOF2'
groups:
- name: gpu
  rules:
  - alert: GPUXidErrors
    expr: gpu_xid_errors > 0
  - alert: Watchdog
    expr: vector(1)
EOF2
prometheus --config.file="$PWD/prom/prometheus.yml" --web.listen-address="127.0.0.1:$PP" \
	--storage.tsdb.path="$PWD/prom/data" >prom/log 2>&1 &
prom_pid=$!
pids="$pids $prom_pid"
P=http://127.0.0.1:$PP
alerts() { curl -sS -m 2 "$P/api/v1/alerts" 2>/dev/null | alert-gate -r '^Watchdog$' 2>/dev/null; }
watchdog() { curl -sS -m 2 "$P/api/v1/alerts" 2>/dev/null | grep -q '"alertname":"Watchdog"'; }
t_until 60 watchdog
t_ok $? "Prometheus on $P fires Watchdog, its rules read"
perl "$T/webhook.pl" ok hook &
pids="$pids $!"
t_until 10 test -s hook/port
W=http://127.0.0.1:$(cat hook/port)/hook

# The alert, as Prometheus says it, every half second: "seconds firing|-".
sampler() {
	while :; do
		if alerts | grep -q '^GPUXidErrors firing'; then s=firing; else s=-; fi
		echo "$(date +%s) $s" >>alert.seen
		sleep 0.5
	done
}
sampler &
pids="$pids $!"
xid 3
t_until 30 grep -qs ' firing$' alert.seen
t_ok $? "GPUXidErrors fires"

t_matrix
# stamp: each line of the run's stdout, the second it came first.
stamp() { while IFS= read -r l; do echo "$(date +%s) $l"; done; }
R="drv-rollout.sh -L $T_DRAIN -m $M -p 4 -u 100% -Z 4 -B app=train -P $P -A ^Watchdog\$ -N $W"

# 1. The window opens 20 s after the runs start, and closes 40 s later.
opens=$(($(date +%s) + 20))
closes=$((opens + 40))
win="* $(date -u -d "@$opens" +%H:%M:%S) $(date -u -d "@$closes" +%H:%M:%S)"
winre=$(printf '%s' "$win" | sed 's/\*/\\*/')
# (date +%s is whole seconds: the window's end is in it to its last.)
# From cron at the wrong time (-x): out at once, nothing started.
t_run $R -W "$win" -x "$NEW"
t_rc 75 "-x outside the window: out at once"
t_grep "saying when it opens" err "^drv-rollout.sh: nothing under way, and the window ($winre) is closed: it opens at $(date -u -d "@$opens" +%Y-%m-%dT%H:%M:%S)+00:00: the run ends here (-x); run it again then: "
t_run grep -c ' start ' out
t_out "no node started" 0
# Without -x: it waits for the window, then for the alert, then goes until
# the window closes; the nodes under way then end, and the run waits for
# the next opening until the test stops it (TERM).
{
	$R -W "$win" "$NEW" 2>run1.err &
	echo $! >run1.pid
	wait $!
	echo $? >run1.rc
} | stamp >run1.out &
run=$!
# The alert stops 10 s after the window opened.
while [ "$(date +%s)" -lt $((opens + 10)) ]; do sleep 1; done
xid 0
t_until 30 sh -c 'tail -n 1 alert.seen | grep -q " -$"'
t_ok $? "GPUXidErrors stops"
# Past the window's end, once every node it started has ended.
while [ "$(date +%s)" -le "$closes" ]; do sleep 1; done
quiet() { [ "$(grep -c ' start [0-9]' run1.out)" -eq "$(grep -c ' upgrade-done$' run1.out)" ]; }
t_until 120 quiet
t_ok $? "after the window closed, the nodes under way ended"
# It then says the window closed (after the soak of the last node, if that
# ends later); stopped once it has, or after 30 s.
again="^drv-rollout.sh: no node starts: the window ($winre) is closed: it opens at $(date -u -d "@$((opens + 86400))" +%Y-%m-%dT%H:%M:%S)+00:00"
t_until 30 grep -q "$again" run1.err
kill -TERM "$(cat run1.pid)"
wait "$run"
t_is "stopped by TERM while it waited: exit 2" "$(cat run1.rc)" 2
sed 's/^/# run 1: /' run1.err
t_grep "it said it waits for the window" run1.err "^drv-rollout.sh: no node starts: the window ($winre) is closed: it opens at $(date -u -d "@$opens" +%Y-%m-%dT%H:%M:%S)+00:00$"
t_grep "then for the alert" run1.err '^drv-rollout.sh: no node starts: alert(s) fire (GPUXidErrors is firing)$'
t_grep "it named the pod that holds pc-01" run1.err "^drv-rollout.sh: pc-01: gpu-drv/$train and maybe more pods that -B picks run on it: not started"
t_grep "and that the window closed again" run1.err "$again"
sed -n 's/^\([0-9]*\) start [0-9]* \([^ ]*\) .*/\1 \2/p' run1.out >starts1
n1=$(grep -c . starts1)
t_ok "$([ "$n1" -ge 1 ] && [ "$n1" -lt 19 ] && echo 0 || echo 1)" "the first run started some nodes, not all ($n1)"
t_run awk -v o="$opens" -v c="$closes" '$1 < o || $1 > c + 1 { print "started outside the window:", $0 }' starts1
t_out "no start outside the window"
fired=$(awk '$2 == "firing" { l = $1 } END { print l }' alert.seen)
t_run awk -v f="$fired" '$1 <= f { print "started while GPUXidErrors fired (last seen firing at " f "):", $0 }' starts1
t_out "no start while the alert fired"
t_run grep -c ' pc-01$' starts1
t_out "pc-01, its pod there, not started" 0

# 2. Open all day: every node but pc-01, then pc-01 once its pod is gone.
{
	$R -W '* 0 23:59:59' "$NEW" 2>run2.err
	echo $? >run2.rc
} | stamp >run2.out &
run=$!
t_until 300 sh -c '[ "$(grep -c " upgrade-done$" run1.out run2.out | awk -F: "{ n += \$2 } END { print n }")" -ge 19 ]'
t_ok $? "19 nodes done"
sleep 3
t_run grep -c ' pc-01$' run2.out
t_out "pc-01 not started while its pod runs" 0
t_is "nor cordoned" "$(kubectl get node pc-01 -o jsonpath='{.spec.unschedulable}')" ""
gone=$(date +%s)
kubectl -n gpu-drv delete deployment train --wait=true --timeout=60s >/dev/null
e2e_until 60 sh -c '[ -z "$(kubectl -n gpu-drv get pods -l app=train -o name)" ]'
t_ok $? "the training job and its pod deleted"
wait "$run"
sed 's/^/# run 2: /' run2.err
t_is "the second run ends with every node done" "$(cat run2.rc)" 0
t_grep "the summary" run2.out ' done 20 failed 0 skipped 0 left 0$'
sed -n 's/^\([0-9]*\) start [0-9]* \([^ ]*\) .*/\1 \2/p' run2.out >starts2
t_run awk -v g="$gone" '$2 == "pc-01" && $1 < g { print "pc-01 started before its pod was deleted:", $0 }' starts2
t_out "pc-01 started after its pod went"
t_is "each node started once over both runs" "$(cat starts1 starts2 | cut -d' ' -f2 | sort | uniq -d)" ""
# The soak: no start less than 4 s (3, whole seconds) after a node ended.
for r in run1 run2; do
	awk '$3 == "upgrade-done" && NF == 3 { e = $1 } $2 == "start" { if (e != "" && $1 - e < 3) print "started", $1 - e, "s after an end:", $0 }' "$r.out"
done >soak.bad
t_cmp "each start 4 s after the last end (the soak)" /dev/null soak.bad

# 3. The webhook: one message per event: start and stop for each of the
# first two runs (-x, TERM), start and end for the last.
sed 's/.*"event":"\([a-z]*\)".*/\1/' hook/got >events
printf '%s\n' start stop start stop start end >events.expected
t_cmp "six messages: start, stop (-x); start, stop (TERM); start, end" events.expected events
t_grep "the stop says why" hook/got '"text":"gpudrv: drv-rollout.sh 550.90.07 on [^"]*: stopped: the window closed (-x); done [0-9]* failed 0 skipped 0 left [0-9]* (exit 75)"'
t_grep "the end, the counts" hook/got '"text":"gpudrv: drv-rollout.sh 550.90.07 on [^"]*: ended: done 20 failed 0 skipped 0 left 0 (exit 0)"'
# 4. Prometheus down: the run cannot tell whether alerts fire, and starts
# no node (a rollout to 550.127.05: every node again, the same images).
kill "$prom_pid"
wait "$prom_pid" 2>/dev/null
t_bg drv-rollout.sh -L $T_DRAIN -m "$M" -p 4 -u 100% -P "$P" 550.127.05
t_until 60 grep -q "^drv-rollout.sh: no node starts: it cannot tell whether alerts fire: GET $P/api/v1/alerts failed (curl exit 7): " err
t_ok $? "Prometheus down: it says it cannot tell"
sleep 2
t_run_out=$(grep -c '^start ' out)
t_is "and starts no node" "$t_run_out" 0
kill -TERM "$t_pid"
t_wait 30
t_rc 2 "stopped by TERM"
t_is "no node cordoned" "$(kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath='{range .items[*]}{.spec.unschedulable}{end}')" ""

echo "first run: $n1 node(s) in its 40 s window; the alert last seen firing $((fired - opens)) s after it opened" | t_note
t_done
