#!/bin/sh
# drv-audit.sh -P URL: the textfile's metrics pushed to a real Pushgateway
# (Debian's prometheus-pushgateway, started here on 127.0.0.1 on a port the
# kernel picks, with a data file of its own, stopped by its pid at the end),
# scraped back with curl and compared exactly with the -p file, in the
# group job=gpudrv_audit,cluster=NAME: PUT after an audit (a node fixed
# since leaves no gauge), POST after a failed run (the last success time
# stays); the cluster from -c, else the kubeconfig's context (a name with
# '/' through @base64).  A push that fails is exit 2, says why (curl's
# words, the HTTP status and the answer) and prints no OK, and the -p file
# says exit status 2: nothing listening, a 404, a gateway that never
# answers (the run's deadline bounds curl).  SKIPs without curl or the
# Pushgateway.
. "$(dirname "$0")/lib.sh"

A=$BIN/drv-audit.sh
if ! command -v curl >/dev/null 2>&1; then
	t_skip "curl is not installed (.ci/deps test installs it)"
	t_done
fi

# The stand-in: the lab's GPU nodes; "config view" answers $FAKE_CTX, the
# current context (unset: none, as kubectl says); the nodes' fault "down"
# while the API server is gone.
t_standin
t_serve _any "$DATA/lab-nodes.json"
mkdir -p "$STANDIN/GET/api/v1"
t_serve config/view <<'STUB'
#!/bin/sh
if [ -z "${FAKE_CTX+set}" ]; then
	echo 'error: current-context must exist in order to minify' >&2
	exit 1
fi
printf '%s' "$FAKE_CTX"
STUB
chmod +x "$STANDIN/config/view"
unset FAKE_CTX
M=$ROOT/lab/support-matrix.csv
# partial.csv: lab-node-1's image (535, 5.15.0-107) not built.
grep -v '^535,' "$M" >partial.csv
T1=535-5.15.0-107-generic-ubuntu22.04

# Options, before any request: -c without -P, -P with -k, not an http URL
# (its password never shown).
t_run "$A" -c lab
t_rc 2 "-c without -P"
t_err "-c without -P: says so, then the usage" "drv-audit.sh: -c names the cluster for -P" "$("$A" -h)"
t_run "$A" -P http://127.0.0.1:9 -k 6.8.0-52-generic
t_rc 2 "-P with -k"
t_grep "-P with -k: says why" err '^drv-audit.sh: -P records the fleet as it is; it does not go with -k or -b$'
t_run "$A" -P ftp://gw:s3cret@127.0.0.1:9 -c lab
t_rc 2 "-P ftp://..."
t_err "-P ftp://...: says what it takes, without the password" \
	"drv-audit.sh: -P takes the Pushgateway's http:// or https:// URL (http://pushgateway.example:9091), not 'ftp://127.0.0.1:9'"
t_run "$A" -P 'http://127.0.0.1:9/?x=1' -c lab
t_rc 2 "-P with a query"
t_err "-P with a query: says so" \
	"drv-audit.sh: -P takes the Pushgateway's URL, without spaces, query or fragment, not 'http://127.0.0.1:9/?x=1'"
t_out "-P refused: nothing on standard output"

if ! command -v prometheus-pushgateway >/dev/null 2>&1; then
	t_skip "prometheus-pushgateway is not installed (Debian's package; .ci/deps test installs it)"
	t_done
fi

# The Pushgateway: port 0, so the kernel picks a free one, which it logs.
# Stopped by its pid on every way out.
mkdir pg
prometheus-pushgateway --web.listen-address=127.0.0.1:0 \
	--persistence.file="$PWD/pg/data" --log.level=info >pg/log 2>&1 &
pg_pid=$!
trap 'kill "$pg_pid" 2>/dev/null; wait "$pg_pid" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
port() {
	P=$(sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' pg/log | head -n 1)
	[ -n "$P" ]
}
ready() {
	[ "$(curl -sS -m 2 "http://127.0.0.1:$P/-/ready" 2>/dev/null)" = OK ]
}
if t_until 20 port && t_until 20 ready; then
	t_ok 0 "the Pushgateway is ready on 127.0.0.1:$P"
else
	t_ok 1 "the Pushgateway is ready"
	t_diag <pg/log
	t_done
fi
U=http://127.0.0.1:$P

# scrape CLUSTER: the group's gpudrv_audit_ series, HELP and TYPE lines
# included, into ./scraped, sorted, each value as an integer (the textfile's
# are; the Pushgateway prints 1796111920 as 1.79611192e+09).
scrape() {
	curl -sS "$U/metrics" >metrics.txt
	awk -v c="cluster=\"$1\"," '
		/^# (HELP|TYPE) gpudrv_audit_/ { print; next }
		/^gpudrv_audit_/ && index($0, "{" c) { $NF = sprintf("%d", $NF); print }' metrics.txt | sort >scraped
}
# expect CLUSTER FILE: the -p file FILE as the Pushgateway shows it in the
# group: the labels cluster, instance and job first, a family with no
# sample (gpudrv_audit_missing when none is) without its HELP and TYPE,
# sorted, into ./expect.
expect() {
	awk -v l="cluster=\"$1\",instance=\"\",job=\"gpudrv_audit\"" '
		NR == FNR { if (!/^#/) { n = $1; sub(/{.*/, "", n); has[n] = 1 }; next }
		/^#/ { if ($3 in has) print; next }
		/{/ { sub(/{/, "{" l ","); print; next }
		{ $1 = $1 "{" l "}"; print }' "$2" "$2" | sort >expect
}

# 1. Images missing: exit 1; the group holds exactly the -p file's metrics.
t_run "$A" -m partial.csv -p g.prom -P "$U/" -c lab-1
t_rc 1 "an audit with a missing image, pushed"
t_out "its stdout: the missing node" "lab-node-1 MISSING $T1"
t_err "nothing on stderr"
scrape lab-1
expect lab-1 g.prom
t_cmp "the group job=gpudrv_audit,cluster=lab-1 is the -p file, exactly" expect scraped
t_grep "the missing gauge, as pushed" metrics.txt \
	"^gpudrv_audit_missing{cluster=\"lab-1\",instance=\"\",job=\"gpudrv_audit\",node=\"lab-node-1\",tag=\"$T1\"} 1\$"

# 2. Built since: exit 0, and the PUT replaced the group: no missing gauge.
t_run "$A" -m "$M" -p g.prom -P "$U" -c lab-1
t_rc 0 "the image built, pushed again"
t_out "its stdout: OK" OK
scrape lab-1
expect lab-1 g.prom
t_cmp "the group is the new -p file: the fixed node's gauge is gone" expect scraped
last=$(sed -n 's/^gpudrv_audit_last_success_timestamp_seconds //p' g.prom)

# 3. The API server gone: exit 2, pushed with POST: exit status 2, the last
# success time (and the rest of the last audit) kept.
sleep 1
echo down >"$STANDIN/GET/api/v1/nodes.fault"
t_run "$A" -m "$M" -p g.prom -P "$U" -c lab-1
rm "$STANDIN/GET/api/v1/nodes.fault"
t_rc 2 "a failed audit, pushed"
t_out "nothing on stdout"
scrape lab-1
t_grep "the group says exit status 2" scraped '^gpudrv_audit_exit_status{cluster="lab-1",instance="",job="gpudrv_audit"} 2$'
t_grep "the group keeps the last success time" scraped \
	"^gpudrv_audit_last_success_timestamp_seconds{cluster=\"lab-1\",instance=\"\",job=\"gpudrv_audit\"} $last\$"
t_grep "the group keeps the last audit's node count" scraped '^gpudrv_audit_gpu_nodes{cluster="lab-1",instance="",job="gpudrv_audit"} 3$'

# 4. No -c: the kubeconfig's context, '/' and ':' in it (sent as @base64).
FAKE_CTX=arn:aws:eks:us-east-1:111122223333:cluster/prod-gpu
export FAKE_CTX
t_run "$A" -m partial.csv -p g.prom -P "$U"
t_rc 1 "no -c: the cluster is the current context"
scrape "$FAKE_CTX"
expect "$FAKE_CTX" g.prom
t_cmp "the group cluster=$FAKE_CTX is the -p file, exactly" expect scraped
unset FAKE_CTX

# 5. No -c and no current context: exit 2 before the audit; nothing pushed.
curl -sS "$U/metrics" | grep -c '^push_time_seconds' >groups.before
t_run "$A" -m "$M" -p g.prom -P "$U"
t_rc 2 "no -c and no context"
t_err "no -c and no context: says so, with kubectl's words" \
	"drv-audit.sh: -P: no cluster name for the Pushgateway's group: kubectl config view said: error: current-context must exist in order to minify; name the cluster with -c; no audit was made"
t_out "no -c and no context: nothing on stdout"
curl -sS "$U/metrics" | grep -c '^push_time_seconds' >groups.after
t_cmp "no -c and no context: no group pushed" groups.before groups.after
t_grep "no -c and no context: the -p file says exit status 2" g.prom '^gpudrv_audit_exit_status 2$'

# 6. The gateway refuses (404: a wrong path): exit 2, the status and its
# answer said, no OK, the -p file says 2; the MISSING lines still printed.
t_run "$A" -m "$M" -p g.prom -P "http://gw:s3cret@127.0.0.1:$P/nothere" -c lab-1
t_rc 2 "a push refused with HTTP 404"
t_err "a push refused: the status, the path, the answer; no password" \
	"drv-audit.sh: the Pushgateway http://127.0.0.1:$P/nothere refused the metrics: HTTP 404 to PUT /metrics/job/gpudrv_audit/cluster/lab-1; it said: 404 page not found; check the URL (-P) and the Pushgateway's log"
t_out "a push refused: no OK"
t_grep "a push refused: the -p file says exit status 2" g.prom '^gpudrv_audit_exit_status 2$'
t_run "$A" -m partial.csv -P "$U/nothere" -c lab-1
t_rc 2 "a push refused, images missing"
t_out "a push refused, images missing: the MISSING line, still" "lab-node-1 MISSING $T1"

# 7. A gateway that never answers: the run's deadline bounds curl.
perl -MIO::Socket::INET -e '
	$s = IO::Socket::INET->new(Listen => 5, LocalAddr => "127.0.0.1", LocalPort => 0) or die "$!\n";
	$| = 1; print $s->sockport, "\n"; sleep 30' >mute.port &
mute=$!
t_until 10 test -s mute.port
t0=$(date +%s)
GPUDRV_TIMEOUT=3 t_run "$A" -m "$M" -p g.prom -P "http://127.0.0.1:$(cat mute.port)" -c lab-1
t1=$(date +%s)
kill "$mute" 2>/dev/null
wait "$mute" 2>/dev/null
t_rc 2 "a gateway that never answers"
t_ok "$([ $((t1 - t0)) -le 6 ] && echo 0 || echo 1)" "a gateway that never answers: the run ends at its deadline (3 s; took $((t1 - t0)) s)"
t_grep "a gateway that never answers: says so" err \
	'^drv-audit.sh: \(gave up after [0-9]*s, the run.s deadline (GPUDRV_TIMEOUT=3): no answer to .curl \|cannot push the metrics to the Pushgateway http://127.0.0.1:[0-9]* (curl exit 28): curl said: curl: (28) \)'
t_out "a gateway that never answers: no OK"
t_grep "a gateway that never answers: the -p file says exit status 2" g.prom '^gpudrv_audit_exit_status 2$'

# 8. Stopped by its pid: gone, and nothing listens on its port any more.
kill "$pg_pid"
wait "$pg_pid" 2>/dev/null
if t_alive "$pg_pid"; then t_ok 1 "the Pushgateway stopped"; else t_ok 0 "the Pushgateway stopped"; fi
t_run "$A" -m "$M" -p g.prom -P "$U" -c lab-1
t_rc 2 "nothing listening"
curl -sS "$U/" 2>&1 | sed 's/after [0-9]* ms/after N ms/' >curl.said
sed 's/after [0-9]* ms/after N ms/' err >err.n && mv err.n err
t_err "nothing listening: curl's words, what to check" \
	"drv-audit.sh: cannot push the metrics to the Pushgateway $U (curl exit 7): curl said: $(cat curl.said); check the URL (-P) and that the Pushgateway is up"
t_out "nothing listening: no OK"
t_grep "nothing listening: the -p file says exit status 2" g.prom '^gpudrv_audit_exit_status 2$'
t_grep "nothing listening: the -p file keeps the last success time" g.prom "^gpudrv_audit_last_success_timestamp_seconds [0-9]"

t_done
