#!/bin/sh
# alert-gate: the alerts of a Prometheus's /api/v1/alerts answer that hold
# a rollout back, with kured's filters (-r passes matching names over, -m
# counts only them, -F only firing alerts); an answer that is not one
# whole is an error, never "no alert".  t/0996 reads a real Prometheus.
. "$(dirname "$0")/lib.sh"

# alerts ALERT...: the answer, each ALERT name:state.
alerts() {
	printf '{"status":"success","data":{"alerts":['
	s=
	for a; do
		printf '%s{"labels":{"alertname":"%s","severity":"page"},"annotations":{"summary":"x"},"state":"%s","activeAt":"2026-12-05T15:00:00.5Z","value":"1e+00"}' \
			"$s" "${a%%:*}" "${a#*:}"
		s=,
	done
	echo ']}}'
}
alerts GPUDriverXid:firing Watchdog:pending NodeDown:firing >three.json

t_run alert-gate three.json
t_rc 1 "alerts fire or are pending"
t_out "each that holds, with its state and since when" \
	"GPUDriverXid firing 2026-12-05T15:00:00.5Z" "Watchdog pending 2026-12-05T15:00:00.5Z" "NodeDown firing 2026-12-05T15:00:00.5Z"
t_run alert-gate -F <three.json
t_rc 1 "-F, from stdin"
t_out "only the firing ones" "GPUDriverXid firing 2026-12-05T15:00:00.5Z" "NodeDown firing 2026-12-05T15:00:00.5Z"
t_run alert-gate -r '^(Watchdog|NodeDown)$' three.json
t_rc 1 "-r: names passed over"
t_out "the others" "GPUDriverXid firing 2026-12-05T15:00:00.5Z"
t_run alert-gate -r 'Xid' -m three.json
t_rc 1 "-r -m: only the names that match"
t_out "those" "GPUDriverXid firing 2026-12-05T15:00:00.5Z"
t_run alert-gate -F -r 'Xid|Down' three.json
t_rc 0 "-F -r: nothing left"
t_out "no line"
alerts >none.json
t_run alert-gate none.json
t_rc 0 "no alert"
t_out "no line"
alerts Old:inactive >inactive.json
t_run alert-gate inactive.json
t_rc 0 "an inactive alert holds nothing"
alerts 'odd name:firing' >odd.json
t_run alert-gate odd.json
t_out "a name that is not a word, quoted" '"odd name" firing 2026-12-05T15:00:00.5Z'

# Anything else: exit 2, nothing on stdout.
bad() { # bad DESC BODY PATTERN
	printf '%s' "$2" >bad.json
	t_run alert-gate bad.json
	t_rc 2 "$1"
	t_out "no line"
	t_grep "says why" err "$3"
}
bad "Prometheus's error" '{"status":"error","errorType":"bad_data","error":"invalid parameter"}' \
	'^alert-gate: bad.json: Prometheus answered with an error: "bad_data": "invalid parameter"$'
bad "an empty body" '' '^alert-gate: bad.json: empty input'
bad "a body cut short" '{"status":"success","data":{"alerts":[' '^alert-gate: bad.json:'
bad "another API's answer" '{"status":"success","data":{"resultType":"vector","result":[]}}' \
	'^alert-gate: bad.json: no data.alerts list: not the answer'
bad "no status" '{"data":{"alerts":[]}}' '^alert-gate: bad.json: status is missing, not "success"'
bad "a Kubernetes list" '{"kind":"PodList","items":[]}' '^alert-gate: bad.json: status is missing'
bad "an alert with no name" '{"status":"success","data":{"alerts":[{"labels":{},"state":"firing"}]}}' \
	'^alert-gate: bad.json: data.alerts\[0\]: no labels.alertname$'
bad "a state not known" '{"status":"success","data":{"alerts":[{"labels":{"alertname":"A"},"state":"burning"}]}}' \
	'^alert-gate: bad.json: data.alerts\[0\]: state is "burning", not firing, pending or inactive$'
bad "a good alert, then a bad one: nothing printed" '{"status":"success","data":{"alerts":[{"labels":{"alertname":"A"},"state":"firing"},{"labels":{"alertname":"B"},"state":"burning"}]}}' \
	'^alert-gate: bad.json: data.alerts\[1\]: state is "burning"'
bad "a key twice" '{"status":"success","status":"success","data":{"alerts":[]}}' '^alert-gate: bad.json:.*status'
bad "an HTML page (a proxy)" '<html><body>502 Bad Gateway</body></html>' '^alert-gate: bad.json: an HTML page'
t_run alert-gate -r '(' none.json
t_rc 2 "an expression that does not compile"
t_grep "named" err '^alert-gate: -r "(": '
t_run alert-gate -m none.json
t_rc 2 "-m without -r"
t_err "the usage" "usage: alert-gate [-F] [-r regexp [-m]] [file]"
t_run alert-gate nosuch.json
t_rc 2 "a file that is not there"
t_grep "named" err '^alert-gate: cannot open nosuch.json: '
t_done
