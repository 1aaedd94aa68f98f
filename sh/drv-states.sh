#!/bin/sh
# drv-states.sh: every GPU node at a glance, from one API call: name,
# upgrade state, schedulable or cordoned, tag, whether its image exists,
# how long it has been in its state and what it waits for, with the fix.
set -eu

prog=drv-states.sh
usage_line="usage: $prog [-e] [-t] [-m matrix | -r repository [-I]] [-S | -o text|json]"
# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv/gpudrv-lib.sh
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
if [ -r "$lib" ]; then . "$lib"; else echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; fi
matrix=
matrix_given=
repo=
insecure=
empty=0
target=
format=text
summary=

eval "set -- $(gpudrv_opts 'm:matrix r:registry o:output' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-m | --matrix | -r | --registry) source_option "$@"; shift ;;
	-I | --insecure) insecure=1 ;;
	-e | --allow-empty) empty=1 ;;
	-t | --target) target=1 ;;
	-S | --summary) summary=1 ;;
	-o | --output)
		need_arg "$@"
		case $2 in text | json) format=$2 ;; *) die "$1 takes text or json, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-40)'" ;; esac
		shift
		;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 0 ] || usage
if [ -n "$summary" ] && [ "$format" = json ]; then
	say "-S is the summary for people; -o json gives every node to a program: one or the other"
	usage
fi
image_source
# Which images exist: the registry's tags (-r), the matrix named (-m, else
# GPUDRV_MATRIX), else the default one if there is one; else none is known
# and the image column is "-": the states and cordons are worth seeing still.
if [ -z "$repo" ] && [ -z "$matrix_given" ]; then
	if [ -n "${GPUDRV_MATRIX:-}" ]; then
		check_file GPUDRV_MATRIX "$GPUDRV_MATRIX"
		matrix=$GPUDRV_MATRIX
	elif [ -e "$default_matrix" ] || [ -h "$default_matrix" ]; then
		matrix=$default_matrix
	fi
fi
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
pdb_check=$(find_tool pdb-check) || finish 2
gpudrv_start 120 0

# A matrix named is read, or the run stops here, before any request.
if [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || finish 2
	matrix=$tmp/tags.json
elif [ -n "$matrix" ]; then
	[ -r "$matrix" ] ||
		die "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another, -r a registry)"
else
	say "no matrix was given (-m, GPUDRV_MATRIX, or $default_matrix), nor a registry (-r): no image is checked; the image column is '-'"
fi

# One GET, the API server's own JSON (see drv-audit.sh), with managedFields:
# when each state label last changed.
# (The selector $L_PRESENT=true, its / and = encoded.)
if ! kc "$tmp/nodes" "$tmp/err" get --raw "/api/v1/nodes?labelSelector=${L_PRESENT%%/*}%2F${L_PRESENT#*/}%3Dtrue"; then
	kubectl_said "cannot list the GPU nodes" "$tmp/err"
	finish 2
fi
# -t: each node's tag of the driver the GPU Operator will deploy.
set -- -F
if [ -n "$target" ]; then
	get_targets "$tmp/targets" || finish 2
	set -- "$@" -t "$tmp/targets"
fi
l2t=0
"$labels2tag" "$@" "$tmp/nodes" >"$tmp/facts" || l2t=$?
if [ "$l2t" -ne 0 ] && ! [ -s "$tmp/facts" ]; then
	[ -z "$target" ] || die "the node list or the GPU Operator's objects could not be read"
	die "the node list could not be read"
fi
if ! [ -s "$tmp/facts" ]; then
	if [ "$empty" = 1 ]; then
		[ "$format" != json ] || echo '[]'
		finish 0
	fi
	die "no GPU node ($L_PRESENT=true) in the cluster; -e accepts that"
fi
# The nodes with a tag, as matrix-grep reads them.
awk '$2 !~ /^(UNKNOWN|SKIP):/ { print $1, $2 }' "$tmp/facts" >"$tmp/tags"
rc=0
: >"$tmp/audit"
if [ -n "$matrix" ]; then
	# Even with no tag to look up (every node SKIP or UNKNOWN): the matrix
	# is read, and a broken one said (-e: no tag is not NONE's exit 2).
	"$matrix_grep" -e -m "$matrix" "$tmp/tags" >"$tmp/audit" || rc=$?
	[ "$rc" -le 1 ] || finish 2
fi
# A node whose labels give no tag: what its image is cannot be told.
[ "$l2t" -eq 0 ] && ! grep -q '^[^ ]* UNKNOWN:' "$tmp/facts" || rc=2

# What a node waits for is in the pods only in some states, and only those
# are read: the budgets and every pod when a drain or a pod deletion is
# under way (pdb-check -a: what holds it), the driver and validator pods
# (the labels the GPU Operator selects them by) when a node waits for one.
# A list that cannot be read whole is exit 2, never "nothing holds it".
: >"$tmp/draws"
: >"$tmp/gpupods"
if awk '$4 == "drain-required" || $4 == "pod-deletion-required" { f = 1 } END { exit !f }' "$tmp/facts"; then
	get_draws "$tmp/draws" || finish 2
fi
if awk '$4 ~ /^(pod-restart-required|post-maintenance-required|validation-required|upgrade-failed)$/ { f = 1 } END { exit !f }' "$tmp/facts"; then
	for role in driver:app.kubernetes.io/component=nvidia-driver validator:app=nvidia-operator-validator; do
		get_pods "$tmp/pods.${role%%:*}" "the ${role%%:*} pods (${role#*:})" \
			"/api/v1/pods?labelSelector=$(urlencode "${role#*:}")" || finish 2
		sed "s|^|${role%%:*} |" "$tmp/pods.${role%%:*}" >>"$tmp/gpupods"
	done
fi
now=$(date +%s)

# Each node: its columns, then how long it has been in its state, what it
# waits for (one word), the phrase and the fix.  In the order of the facts.
# shellcheck disable=SC2016 # an awk program
LC_ALL=C awk -v audit="$tmp/audit" -v draws="$tmp/draws" -v gpupods="$tmp/gpupods" \
	-v known="${matrix:+1}" -v now="$now" -v fmt="$format" -v summary="$summary" \
	-v l_state="$L_STATE" -v l_skip="$L_SKIP" '
function age(s) {
	if (s < 0) s = 0
	if (s >= 86400) return int(s / 86400) "d" int(s % 86400 / 3600) "h"
	if (s >= 3600) return int(s / 3600) "h" int(s % 3600 / 60) "m"
	if (s >= 60) return int(s / 60) "m" (s % 60) "s"
	return s "s"
}
# A JSON string: a backslash doubled ("\\\\" is two in a replacement),
# quotes, tabs, returns and newlines escaped; what the phrases hold beside
# (pdb-check'"'"'s words, escaped by it) is printable ASCII.
function js(s) {
	gsub(/\\/, "\\\\\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s)
	gsub(/\r/, "\\r", s); gsub(/\n/, "\\n", s)
	return "\"" s "\""
}
function jn(s) { return s == "-" || s == "" ? "null" : js(s) }
# pod ROLE NODE: "ns/name phase ready restarts" of the first such pod on NODE, or "".
function pod(role, n) { return (role SUBSEP n) in gp ? gp[role, n] : "" }
function podwords(p, w) {
	split(p, w, " ")
	return w[1] " is " (w[2] == "-" ? "not started" : w[2]) ", " (w[3] == "True" ? "Ready" : "not Ready") \
		(w[4] > 0 ? ", " w[4] " restarts" : "")
}
BEGIN {
	while ((getline l < audit) > 0) { split(l, f, " "); if (f[2] == "MISSING") miss[f[1]] = 1 }
	while ((getline l < draws) > 0) {
		split(l, f, " ")
		if (f[2] == "DRAWS" || (f[1] in held)) continue
		sub(/^[^ ]* /, "", l)
		held[f[1]] = l
	}
	while ((getline l < gpupods) > 0) {
		# ROLE NODE ns/name PHASE READY RESTARTS (pdb-check -p; "-": not set)
		split(l, f, " ")
		if (f[2] == "-" || ((f[1] SUBSEP f[2]) in gp)) continue
		gp[f[1], f[2]] = f[3] " " f[4] " " f[5] " " f[6]
	}
	# The operator counts these as under way (maxParallelUpgrades).
	split("cordon-required wait-for-jobs-required pod-deletion-required drain-required node-maintenance-required post-maintenance-required pod-restart-required validation-required uncordon-required", u, " ")
	for (i in u) busy[u[i]] = 1
	order = "- upgrade-required cordon-required wait-for-jobs-required pod-deletion-required drain-required node-maintenance-required post-maintenance-required pod-restart-required validation-required uncordon-required upgrade-done upgrade-failed"
	ns = split(order, st_order, " ")
}
{ rec[NR] = $0; if ($4 in busy) inflight++; if ($6 == "cordoned" || $7 != "ready") unavail++ }
END {
	if (fmt == "json") printf "["
	for (i = 1; i <= NR; i++) {
		split(rec[i], f, " ")
		n = f[1]; tag = f[2]; state = f[4]; cordon = f[6]; ready = f[7]; by = f[10]
		since = -1; from = "-"
		if (f[9] != "-") { since = substr(f[9], 1, index(f[9], ":") - 1) + 0; from = substr(f[9], index(f[9], ":") + 1) }
		if (tag ~ /^UNKNOWN:/) { img = "UNKNOWN"; shown = "UNKNOWN" }
		else if (tag ~ /^SKIP:/) { img = substr(tag, 6); shown = "-" }
		else { img = !known ? "-" : (n in miss) ? "MISSING" : "ok"; shown = tag }
		# a start in the future (clocks apart) is no time yet
		secs = since < 0 ? -1 : now - since < 0 ? 0 : now - since
		w = "-"; why = "-"; fix = "-"
		who = by == "-" ? "someone" : by
		drv = pod("driver", n); val = pod("validator", n)
		if (f[5] == "skip") {
			w = "skip"; why = "labelled " l_skip "=true: neither the GPU Operator nor gpudrv upgrades it"
			fix = "kubectl label node " n " " l_skip "- to let them"
		} else if (tag == "UNKNOWN:conflict:nvidiadriver") {
			w = "labels"; why = "two NVIDIADrivers select it (labels2tag names them): the GPU Operator then deploys no driver on it"
			fix = "change their nodeSelectors so that one selects it"
		} else if (img == "UNKNOWN") {
			split(tag, t, ":")
			w = "labels"; why = "its labels give no tag (" t[2] " " t[3] ")"
			fix = "see that " (t[3] ~ /^nvidia\.com\// ? "gpu-feature-discovery" : "node-feature-discovery") " runs on it"
		} else if (img == "MISSING" && state != "upgrade-done" && state != "-" && state != "uncordon-required") {
			w = "image"; why = "its driver image " tag " does not exist: the driver pod cannot pull it"
			fix = "build and push " tag " (drv-audit.sh prints the matrix row)"
		} else if (ready != "ready" && state != "-" && state != "upgrade-done") {
			w = "node"; why = "the node is " (ready == "not-ready" ? "not Ready" : "of unknown readiness") ": its kubelet does not report; the operator counts it unavailable"
			fix = "kubectl describe node " n
		} else if (state == "-" || state == "upgrade-done") {
			if (cordon == "cordoned") {
				w = "cordon"; why = (state == "-" ? "cordoned by " who ", outside any upgrade" : "upgrade done, still cordoned by " who)
				fix = "kubectl uncordon " n " when nobody needs it so"
			} else if (img == "MISSING") {
				w = "image"; why = "its driver image " tag " does not exist: its next driver pod cannot pull it"
				fix = "build and push " tag " before the node restarts its driver"
			}
		} else if (state == "upgrade-required") {
			w = "slot"; why = "waits for an upgrade slot: " inflight + 0 " GPU node(s) under way, " unavail + 0 " unavailable (maxParallelUpgrades, maxUnavailable)"
			if (cordon == "cordoned") why = why "; cordoned by " who " before its upgrade, it counts as unavailable"
			fix = "the GPU Operator takes it when a slot frees (autoUpgrade on), or drv-rollout.sh"
		} else if (state == "cordon-required" || state == "uncordon-required") {
			w = "controller"; why = "waits for the GPU Operator to " (state == "cordon-required" ? "cordon" : "uncordon") " it on its next pass"
			fix = "if this lasts, see that the GPU Operator runs: kubectl -n gpu-operator get pods"
		} else if (state == "wait-for-jobs-required") {
			w = "jobs"; why = "waits for the pods of waitForCompletion.podSelector on it to finish"
			fix = "they end, or waitForCompletion.timeoutSeconds (0: for ever) moves it on; deleting them moves it now"
		} else if (state == "pod-deletion-required" || state == "drain-required") {
			if (n in held) {
				w = "budget"; why = "its " (state == "drain-required" ? "drain" : "pod deletion") " is refused: " held[n]
				fix = "as pdb-check says; the operator fails it at drain.timeoutSeconds"
			} else {
				w = state == "drain-required" ? "drain" : "pods"
				why = (state == "drain-required" ? "drained" : "its GPU pods deleted") ", no budget refusing: pods are still terminating"
				fix = "kubectl get pods -A --field-selector spec.nodeName=" n
			}
		} else if (state == "node-maintenance-required") {
			w = "maintenance"; why = "waits for the maintenance operator to cordon and drain it (a NodeMaintenance, requestor mode)"
			fix = "kubectl get nodemaintenances -A"
		} else if (state == "pod-restart-required" || state == "post-maintenance-required") {
			w = "driver-pod"
			if (drv == "") why = "waits for a driver pod on it: there is none (app.kubernetes.io/component=nvidia-driver)"
			else why = "waits for the new driver pod: " podwords(drv)
			fix = drv == "" ? "kubectl -n gpu-operator get daemonsets: is the driver scheduled there?" : "kubectl -n " substr(drv, 1, index(drv, "/") - 1) " logs " substr(drv, index(drv, "/") + 1, index(drv, " ") - index(drv, "/") - 1) " (past 10 restarts the operator fails it)"
		} else if (state == "validation-required") {
			w = "validator"
			if (val == "") why = "waits for a validator pod on it: there is none (app=nvidia-operator-validator)"
			else why = "waits for the validator: " podwords(val)
			if (from == "validation") why = why "; the operator fails it 600 s after its start" (secs >= 600 ? ", past" : ", in " age(600 - secs))
			fix = val == "" ? "kubectl -n gpu-operator get daemonsets: is the validator scheduled there?" : "kubectl -n " substr(val, 1, index(val, "/") - 1) " logs " substr(val, index(val, "/") + 1, index(val, " ") - index(val, "/") - 1)
		} else if (state == "upgrade-failed") {
			w = "failed"; why = "its upgrade failed; the operator moves it on once its driver pod is Ready and current" (drv == "" ? " (none on it)" : " (" podwords(drv) ")")
			fix = "find why (kubectl describe node " n "; the driver pod), then: kubectl label node " n " " l_state "=upgrade-required --overwrite"
		} else {
			w = "unknown"; why = "a state neither the GPU Operator nor gpudrv writes"
			fix = "kubectl label node " n " " l_state "- to forget it"
		}
		a = secs < 0 ? "-" : age(secs)
		if (summary != "") {
			cnt[state]++
			if (!(state in long) || secs > long[state]) { long[state] = secs; longn[state] = n; longw[state] = w }
			continue
		}
		if (fmt == "json") {
			printf "%s\n{\"node\":%s,\"state\":%s,\"cordoned\":%s,\"ready\":%s,\"tag\":%s,\"image\":%s,", (i > 1 ? "," : ""), js(n), jn(state), cordon == "cordoned" ? "true" : "false", js(ready), jn(shown), js(img)
			printf "\"since\":%s,\"sinceFrom\":%s,\"seconds\":%s,\"cordonedBy\":%s,\"waiting\":%s,\"why\":%s,\"fix\":%s}", since < 0 ? "null" : since, jn(from), secs < 0 ? "null" : secs, jn(by), jn(w), jn(why), jn(fix)
			continue
		}
		line = n " " state " " cordon " " shown " " img " " a " " w
		if (why != "-") line = line " " why "; fix: " fix
		print line
	}
	if (fmt == "json") print "\n]"
	if (summary == "") exit
	for (i = 1; i <= ns; i++) if (st_order[i] in cnt) { s = st_order[i]; printf "%s %d %s %s %s\n", s, cnt[s], long[s] < 0 ? "-" : age(long[s]), longn[s], longw[s]; delete cnt[s] }
	# States of no one we know, by name.
	k = 0
	for (s in cnt) { for (j = ++k; j > 1 && other[j - 1] > s; j--) other[j] = other[j - 1]; other[j] = s }
	for (j = 1; j <= k; j++) { s = other[j]; printf "%s %d %s %s %s\n", s, cnt[s], long[s] < 0 ? "-" : age(long[s]), longn[s], longw[s] }
}' "$tmp/facts" >"$tmp/out"
emit "$tmp/out" "$rc"
finish "$rc"
