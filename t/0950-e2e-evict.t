#!/bin/sh
# End to end: pdb-check against the real eviction API, on random scenarios.
#
# gen -e (gen/evict.c) makes GPUDRV_EVICT_SCENARIOS (default 30) scenarios from a
# seed, each in its own namespace (sometimes with a look-alike namespace whose
# pods carry the same labels) on its own two tainted kwok nodes, NODE (the one
# drained) and another: Deployments, ReplicaSets, bare pods and DaemonSets,
# 0, 1 or 2 budgets per workload group (minAvailable/maxUnavailable, int or
# percent; matchLabels, In, NotIn, Exists, DoesNotExist, the empty selector;
# unhealthyPodEvictionPolicy unset, IfHealthyBudget, AlwaysAllow), some pods
# made unready after kwok made them Ready (their status' Ready condition set
# to False; kwok's pod-ready stage only selects Pending pods, so it stays).
# The scenarios of every seed are created at once, in one batch, each
# seed's named after its place in it (ev2-5: the second seed's fifth
# scenario), and waited for together (pods
# Running, budgets' status.observedGeneration = metadata.generation or their
# sync failed for good, and two reads 5 s apart the same: the disruption
# controller may take seconds to count a pod made unready, and a budget's
# status shows no sign of it until it has), then
#
# 1. one snapshot (kubectl get pdb,pods -A -o json) between two reads of the
#    scenarios' budgets and pods; pdb-check -s NODE snapshot; a server-side
#    dry-run eviction (deleteOptions.dryRun [All]) of every pod on NODE; if
#    the second read differs from the first (any resourceVersion) the
#    scenario is done again (at most 3 times).  A dry-run eviction is one pod
#    alone and changes nothing, while pdb-check judges the whole drain, the
#    node's pods evicted one after another, each needing one of its budget's
#    disruptionsAllowed.  So, per pod on NODE:
#      in a MULTIPLE-BUDGETS line                           <=> 500
#      in a BLOCKS line whose budget allows 0, or whose status is stale or
#        incomplete (the advice says so)                    <=> 429 (403 where
#        the advice says the API answers 403)
#      in a BLOCKS line whose budget allows A >= 1 (N > A)   => 201: each pod
#        alone may go; only the sum is over (the by-design difference)
#      in no line                                            => 201
#      SKIP                                                  not compared (drain
#        leaves it; here: DaemonSet pods, which pdb-check must SKIP exactly)
#    NO-CONTROLLER is drain's refusal, not the API's: checked to name exactly
#    the bare pods, and the pod is still compared by the rules above.
#
# 2. The sum, which one dry-run cannot show, with real evictions.  NODE is
#    cordoned, so no evicted pod's replacement can become Ready (each
#    Deployment and ReplicaSet is pinned to one node by its nodeSelector;
#    bare pods have none): the case pdb-check reports on ("it cannot see
#    whether they can be scheduled").  After a fresh snapshot and pdb-check,
#    the pods on NODE that pdb-check does not SKIP are evicted for real, as
#    kubectl drain does, with retries: in rounds, Ready pods first, each
#    round once the budgets have settled (evicted pods gone, no
#    status.disruptedPods, statuses current), until a round evicts nothing.
#    The result does not hang on the disruption controller's timing: a Ready
#    pod's eviction takes one disruption for good (the controller counts the
#    pod out of currentHealthy), an unready pod's only until the controller's
#    next sync (it never counted it), and Ready-first spends the lasting ones
#    first.  Then, where pdb-check's model holds (every pod in a BLOCKS line
#    takes one of A), per budget and pod:
#      a BLOCKS line's pods: exactly A of them evicted (0 if its status is
#        stale or it allows 0), the others refused
#      a MULTIPLE-BUDGETS pod: never evicted, 500 every time
#      a pod in no line: evicted (its budget, if any, allowed them all)
#    One exception, by design of the disruption controller: a budget whose
#    pods on NODE include pods with no controller.  It counts such pods among
#    its expected pods, so an evicted one can lower desiredHealthy and free a
#    disruption for the next eviction if the controller resyncs in between
#    (seed 1796050173, scenario 13: minAvailable 25%, two bare pods, both
#    evicted one after the other in 1 run of 3).  There, at least A (if A > 0).
#    Found by this test (regression seeds 10, scenarios 10 and 25, and
#    1796036188, scenario 29), and fixed in pdb-check: an unready pod of a
#    budget whose desiredHealthy is 0 is not exempt (eviction.go exempts it
#    only with AlwaysAllow or when currentHealthy >= desiredHealthy > 0), so
#    its eviction needs disruptionsAllowed >= 1, but it does not use it up,
#    as said above: such pods need one disruption between them (needed = the
#    Ready pods listed, plus one if any listed pod is unready).
#
# Any disagreement fails the scenario's check and prints the seed, how to
# rerun it, its manifests, the state the snapshot saw, pdb-check's output
# and the server's answers as TAP diagnostics.
#
# Everything carries the label gpudrv-evict=1 and is deleted at the end,
# failure or not.  Seeds: one fresh seed from the clock, printed, its
# scenarios all, and the regression scenarios of SEEDS below (SEED:K,...:
# scenarios K of SEED; one that ever found a disagreement is added there).
# GPUDRV_EVICT_SEED=N runs just seed N, all its scenarios;
# GPUDRV_EVICT_SCENARIOS=N the first N of a seed run whole (scenario k is
# the same for any N >= k); GPUDRV_EVICT_KEEP=DIR keeps the run's files.
# (The cluster's work grows with the scenarios, not with the seeds: 120
# scenarios at once took as long as 30 at a time, four times.)
# Needs curl (as sandbox/up.sh does) for the evictions and status patches.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"

# Regression scenarios.  Seed 10's 10 and 25 and 1796036188's 29: pdb-check's
# BLOCKS for unready pods of a budget with desiredHealthy 0 (see above);
# 1796050173's 13: the pods with no controller (above).
SEEDS="10:10,25 1796036188:29 1796050173:13"

NSCN=${GPUDRV_EVICT_SCENARIOS:-30}
case $NSCN in '' | *[!0-9]*) e2e_bail "GPUDRV_EVICT_SCENARIOS must be a number, not '$NSCN'" ;; esac
[ "$NSCN" -ge 1 ] || e2e_bail "GPUDRV_EVICT_SCENARIOS must be at least 1"
if [ -n "${GPUDRV_EVICT_SEED:-}" ]; then
	case $GPUDRV_EVICT_SEED in *[!0-9]*) e2e_bail "GPUDRV_EVICT_SEED must be a number, not '$GPUDRV_EVICT_SEED'" ;; esac
	SEEDS=$GPUDRV_EVICT_SEED
else
	fresh=$(($(date +%s) % 2147483646))
	SEEDS="$SEEDS $fresh"
fi
e2e_setup
[ -z "${fresh:-}" ] || echo "# fresh seed this run: $fresh (GPUDRV_EVICT_SEED=$fresh reruns it)"
command -v curl >/dev/null 2>&1 || e2e_bail "curl not found (the eviction calls use it)"

# The API with the admin client certificate of the sandbox's kubeconfig.
for f in client-certificate-data:api.crt client-key-data:api.key; do
	kubectl config view --raw --minify -o "jsonpath={.users[0].user.${f%%:*}}" | base64 -d >"${f#*:}" ||
		e2e_bail "cannot read ${f%%:*} from $KUBECONFIG"
done
kubectl config view --raw --minify -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}' |
	base64 -d >api.ca || e2e_bail "cannot read the CA from $KUBECONFIG"
chmod 600 api.key
SERVER=$(kubectl config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
# api_batch <REQUESTS: each line "METHOD PATH BODYFILE CONTENT-TYPE", sent in
# this order by one curl (one TLS connection); prints one HTTP status a line
# (000 when there was no answer), the bodies of the answers in resp.1, ...
api_batch() {
	ev_i=0
	rm -f resp.*
	set --
	while read -r ev_m ev_path ev_body ev_ct; do
		ev_i=$((ev_i + 1))
		[ "$ev_i" = 1 ] || set -- "$@" --next
		set -- "$@" -sS -o "resp.$ev_i" -w '%{http_code}\n' -X "$ev_m" --cacert api.ca \
			--cert api.crt --key api.key -H "Content-Type: $ev_ct" --data-binary "@$ev_body" \
			"$SERVER$ev_path"
	done
	[ "$ev_i" = 0 ] || curl "$@" 2>>curl.err || :
}
# ev_evict DRYRUN <PODS: an eviction of each pod (ns/name first on its line),
# in order, a server-side dry-run one if DRYRUN is 1; prints "ns/name
# HTTP-status message" for each (the last message of the answer, a refusal's
# cause).
ev_evict() {
	ev_opt=
	[ "$1" != 1 ] || ev_opt=',"deleteOptions":{"dryRun":["All"]}'
	ev_n=0
	: >reqs
	: >names
	while read -r ev_p _; do
		ev_n=$((ev_n + 1))
		printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"}%s}' \
			"${ev_p#*/}" "${ev_p%%/*}" "$ev_opt" >"body.$ev_n"
		echo "POST /api/v1/namespaces/${ev_p%%/*}/pods/${ev_p#*/}/eviction body.$ev_n application/json" >>reqs
		echo "$ev_p" >>names
	done
	[ "$ev_n" -gt 0 ] || return 0
	api_batch <reqs >codes
	awk 'FILENAME == "codes" { c[FNR] = $1; next }
	{
		m = ""; f = "resp." FNR
		while ((getline l < f) > 0) m = m " " l
		close(f)
		last = ""
		while (match(m, /"message": *"[^"]*"/)) {
			last = substr(m, RSTART, RLENGTH)
			m = substr(m, RSTART + RLENGTH)
		}
		sub(/^"message": *"/, "", last)
		sub(/"$/, "", last)
		print $1, (FNR in c ? c[FNR] : "none"), last
	}' codes names
}

# Everything the test makes carries the label gpudrv-evict=1.  ev_reset
# removes the workloads, budgets and pods; ev_cleanup, at the start (a
# crashed run's leftovers) and at the end, failure or not, the lot.
EV_KINDS=deployments,replicasets,daemonsets,poddisruptionbudgets,pods
# (kubectl delete --wait=true takes minutes over 300 objects: it is polled.)
ev_reset() {
	kubectl delete "$EV_KINDS" -A -l gpudrv-evict=1 --grace-period=0 --force --wait=false \
		>/dev/null 2>&1 && e2e_until 120 ev_none
}
# shellcheck disable=SC2317 # called by e2e_until
ev_none() {
	[ -z "$(kubectl get "$EV_KINDS" -A -l gpudrv-evict=1 -o name)" ]
}
ev_cleanup() {
	ev_reset
	kubectl delete namespace -l gpudrv-evict=1 --wait=false >/dev/null 2>&1
	kubectl delete node -l gpudrv-evict=1 --wait=false >/dev/null 2>&1
}
# GPUDRV_EVICT_KEEP=DIR: the run's files (manifests, lists, snapshots,
# answers) are copied into DIR at the end.
KEEP=${GPUDRV_EVICT_KEEP:-}
trap 'ev_cleanup; [ -z "$KEEP" ] || cp -R "$SCRATCH/." "$KEEP/"; rm -rf "$SCRATCH"' EXIT
ev_cleanup
kubectl wait --for=delete namespace -l gpudrv-evict=1 --timeout=180s >/dev/null 2>&1
kubectl wait --for=delete node -l gpudrv-evict=1 --timeout=60s >/dev/null 2>&1
[ -z "$(kubectl get namespaces,nodes -l gpudrv-evict=1 -o name)" ] ||
	e2e_bail "the namespaces and nodes of an earlier run are still there (label gpudrv-evict=1)"
# The probes' namespace (ev_cordon_seen).
RUN=ev

# ev_list FILE: the run's budgets and pods, one a line, tab-separated:
# kind ns name resourceVersion nodeName phase Ready deletionTimestamp
# owner-kind ctl-label generation observedGeneration currentHealthy
# desiredHealthy expectedPods disruptionsAllowed DisruptionAllowed-reason
# disruptedPods.
JP='{range .items[*]}{.kind}{"\t"}{.metadata.namespace}{"\t"}{.metadata.name}{"\t"}{.metadata.resourceVersion}{"\t"}{.spec.nodeName}{"\t"}{.status.phase}{"\t"}{range .status.conditions[?(@.type=="Ready")]}{.status}{end}{"\t"}{.metadata.deletionTimestamp}{"\t"}{range .metadata.ownerReferences[?(@.controller==true)]}{.kind}{end}{"\t"}{.metadata.labels.ctl}{"\t"}{.metadata.generation}{"\t"}{.status.observedGeneration}{"\t"}{.status.currentHealthy}{"\t"}{.status.desiredHealthy}{"\t"}{.status.expectedPods}{"\t"}{.status.disruptionsAllowed}{"\t"}{range .status.conditions[?(@.type=="DisruptionAllowed")]}{.reason}{end}{"\t"}{.status.disruptedPods}{"\t"}{.metadata.labels.app}{"\t"}{.metadata.labels.tier}{"\t"}{.metadata.labels.track}{"\n"}{end}'
ev_list() {
	kubectl get pdb,pods -A -o "jsonpath=$JP" >"$1.raw" 2>>kubectl.err || return 1
	awk -F '\t' '$2 ~ /^ev[0-9]+-/' "$1.raw" | sort >"$1"
}
# ev_state LIST MODE SID...: prints what is not yet as it should be, nothing
# when all is.  MODE up: every planned pod there, Running, Ready.  quiet: the
# planned unready pods unready, the others Ready, every budget computed (or
# its sync failed).  settled: no pod terminating, no budget with
# disruptedPods, every budget computed (or failed).  Both: each computed
# budget's currentHealthy is the Ready pods its selector (the plan's
# tokens) takes, as the disruption controller counts them: its status
# has caught up with the pods (nothing else in it shows that it has not).
ev_state() {
	ev_l=$1 ev_m=$2
	shift 2
	for ev_s; do
		set -- "$@" "$G/$ev_s.plan"
		shift
	done
	cat "$@" >plans
	awk -F '\t' -v mode="$ev_m" '
	# picks(TOKENS, NS, I): the selector TOKENS takes pod I of NS
	function picks(t, ns, i,    n, w, j, k, v, m, x, y) {
		n = split(t, w, " ")
		for (j = 1; j <= n; j++) {
			if (match(w[j], /!~|~|=|!\?|\?/) == 0) return 0
			k = substr(w[j], 1, RSTART - 1); m = substr(w[j], RSTART, RLENGTH); v = substr(w[j], RSTART + RLENGTH)
			x = pl[ns, i, k]
			y = x != "" && index("|" v "|", "|" x "|") > 0
			if (m == "=" && x != v) return 0
			if (m == "~" && !y) return 0
			if (m == "!~" && y) return 0
			if (m == "?" && x == "") return 0
			if (m == "!?" && x != "") return 0
		}
		return 1
	}
	FILENAME == "plans" {
		split($0, w, " ")
		if (w[1] == "pods") want[w[2]] = w[3]
		if (w[1] == "unready") unr[w[2] SUBSEP w[3]] = w[4]
		if (w[1] == "ns") nss[w[2]] = 1
		if (w[1] == "budget") { bud[w[2] SUBSEP w[3]] = 1; sel[w[2] SUBSEP w[3]] = substr($0, length(w[1] w[2] w[3]) + 4) }
		next
	}
	!($2 in nss) { next }
	$1 == "Pod" && $8 == "" {
		np[$2]++
		pl[$2, np[$2], "app"] = $19; pl[$2, np[$2], "tier"] = $20; pl[$2, np[$2], "track"] = $21
		pl[$2, np[$2], "ctl"] = $10; pr[$2, np[$2]] = ($7 == "True")
	}
	$1 == "PodDisruptionBudget" && $11 == $12 && $17 != "SyncFailed" { healthy[$2 SUBSEP $3] = $13 }
	$1 == "Pod" {
		if (mode == "settled") {
			if ($8 != "") print "pod " $2 "/" $3 " terminating"
			next
		}
		have[$2]++
		if ($6 != "Running" || $5 == "" || $8 != "") print "pod " $2 "/" $3 " " $6 " on \"" $5 "\" " $8
		else if ($7 == "False") nun[$2 SUBSEP $10]++
		else if ($7 != "True") print "pod " $2 "/" $3 " Ready=" $7
		next
	}
	$1 == "PodDisruptionBudget" && mode != "up" {
		if ($11 != $12 && $17 != "SyncFailed") print "pdb " $2 "/" $3 " generation " $11 " observed " $12
		if (mode == "settled" && $18 != "" && $18 != "{}") print "pdb " $2 "/" $3 " disruptedPods " $18
	}
	END {
		if (mode != "up")
			for (k in healthy) {
				if (!(k in bud)) continue
				split(k, a, SUBSEP)
				n = 0
				for (i = 1; i <= np[a[1]]; i++) if (pr[a[1], i] && picks(sel[k], a[1], i)) n++
				if (n != healthy[k]) print "pdb " a[1] "/" a[2] " currentHealthy " healthy[k] ", not the " n " Ready pods it selects"
			}
		if (mode == "settled") exit
		for (ns in want)
			if (have[ns] + 0 != want[ns]) print "namespace " ns ": " have[ns] + 0 " pods, not " want[ns]
		for (k in nun) if (mode == "up" || nun[k] != unr[k]) { split(k, a, SUBSEP); print "ctl " a[1] "/" a[2] ": " nun[k] " unready" }
		if (mode == "quiet")
			for (k in unr) if (nun[k] + 0 != unr[k]) { split(k, a, SUBSEP); print "ctl " a[1] "/" a[2] ": " nun[k] + 0 " unready, not " unr[k] }
	}' plans "$ev_l"
}
# ev_wait SECONDS MODE GAP SID...: until ev_state MODE says nothing and two
# lists GAP seconds apart are the same; 1 if not in time (why in ./why).
ev_wait() {
	ev_end=$(($(date +%s) + $1))
	ev_mode=$2 ev_gap=$3
	shift 3
	while :; do
		if ev_list w1 && ev_state w1 "$ev_mode" "$@" >why && [ ! -s why ]; then
			[ "$ev_gap" = 0 ] && return 0
			sleep "$ev_gap"
			ev_list w2 && cmp -s w1 w2 && return 0
			echo "the budgets or pods changed within ${ev_gap}s" >why
		fi
		[ "$(date +%s)" -lt "$ev_end" ] || return 1
		sleep 1
	done
}

# ev_snapshot PHASE DRYRUN SID...: one snapshot between two lists; into
# $G/PHASE (also $P): for each scenario its part of the first list (.state),
# its pods on NODE (.pods: ns/name Ready owner-kind), pdb-check -s NODE
# (.out, .err, .rc) and with DRYRUN 1 a dry-run eviction of each pod on NODE
# (.dry).  Scenarios whose part of the two lists differs are left in
# $ev_changed.
ev_snapshot() {
	P=$G/$1
	ev_dry=$2
	shift 2
	mkdir -p "$P"
	printf '%s\n' "$@" >want
	ev_list s1 || return 1
	kubectl get pdb,pods -A -o json >snap.json 2>>kubectl.err || return 1
	for ev_s; do
		pdb-check -s "$ev_s-d" snap.json >"$P/$ev_s.out" 2>"$P/$ev_s.err"
		echo $? >"$P/$ev_s.rc"
		: >"$P/$ev_s.state"
		: >"$P/$ev_s.pods"
		: >"$P/$ev_s.dry"
	done
	awk -F '\t' -v P="$P" 'FILENAME == "want" { w[$1] = 1; next }
	{
		s = $2
		sub(/-x$/, "", s)
		if (!(s in w)) next
		f = P "/" s ".state"
		print >>f
		close(f)
		f = P "/" s ".pods"
		if ($1 == "Pod" && $5 == s "-d")
			print $2 "/" $3, ($7 == "" ? "-" : $7), ($9 == "" ? "-" : $9) >>f
		close(f)
	}' want s1
	if [ "$ev_dry" = 1 ]; then
		for ev_s; do
			set -- "$@" "$P/$ev_s.pods"
			shift
		done
		cat "$@" | ev_evict 1 | ev_by_scenario .dry
	fi
	ev_list s2 || return 1
	ev_changed=$(awk -F '\t' 'FILENAME == "want" { w[$1] = 1; next }
	{
		s = $2
		sub(/-x$/, "", s)
		if (s in w) x[FILENAME, s] = x[FILENAME, s] $0 "\n"
	}
	END { for (s in w) if (x["s1", s] != x["s2", s]) print s }' want s1 s2 | sort | tr '\n' ' ')
}
# ev_by_scenario SUFFIX [PREFIX]: appends each line "ns/name ..." of its
# input (PREFIX first) to $P/SCENARIO.SUFFIX.
ev_by_scenario() {
	awk -v P="$P" -v x="$1" -v pre="${2:-}" '{
		s = $1
		sub(/\/.*/, "", s)
		sub(/-x$/, "", s)
		f = P "/" s x
		print (pre == "" ? "" : pre " ") $0 >>f
		close(f)
	}'
}

# The pdb-check lines, read by the two comparisons below.
# shellcheck disable=SC2016 # awk, not shell
CMP_READ='
FILENAME == OUT {
	if ($1 == "SKIP" && NF == 3) { skip[$2] = $3; next }
	if ($0 == "OK") { okline = 1; next }
	if ($2 == "MULTIPLE-BUDGETS") { multi[$1] = $3; lines++; next }
	if ($2 == "NO-CONTROLLER:") { noctl[$1] = 1; lines++; next }
	if ($2 == "BLOCKS") {
		lines++
		nb++
		bname[nb] = $1
		a = ""; need = ""
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^disruptionsAllowed=/) a = substr($i, 20)
			if ($i ~ /^needed=[0-9]+:$/) need = substr($i, 8, length($i) - 8)
		}
		stale = index($0, ": status never computed") || index($0, ": status incomplete") ||
		    index($0, ": status not yet recomputed")
		bcode[nb] = index($0, "(HTTP 403)") ? 403 : (stale || a == "-" || a == "0") ? 429 : 201
		ballow[nb] = (bcode[nb] == 201) ? a + 0 : 0
		n = split($3, ps, ",")
		bn[nb] = n
		bneed[nb] = need
		bline[nb] = $0
		for (i = 1; i <= n; i++) { blk[ps[i]] = nb; bpod[nb, i] = ps[i] }
		if (bcode[nb] == 201 && need <= a + 0) bad[++nbad] = "BLOCKS line with needed " need " <= allowed " a ": " $0
		next
	}
	bad[++nbad] = "unexpected pdb-check line: " $0
	next
}
FILENAME == PODS { onnode[$1] = 1; ready[$1] = $2; owner[$1] = $3; np++; pod[np] = $1; next }
'
# shellcheck disable=SC2016 # awk, not shell
CMP_CHECKS='
function checks(    p, i, b, nr, nu) {
	if (errsize != 0) bad[++nbad] = "pdb-check wrote on stderr"
	# needed: one per Ready pod listed, and one for all the unready ones
	for (b = 1; b <= nb; b++) {
		nr = nu = 0
		for (i = 1; i <= bn[b]; i++)
			if (ready[bpod[b, i]] == "True") nr++; else nu++
		if (bneed[b] != nr + (nu > 0))
			bad[++nbad] = "BLOCKS line says needed=" bneed[b] " for " nr " Ready and " nu " unready pods: " bline[b]
	}
	if (rc == 0 && !(okline && lines == 0)) bad[++nbad] = "exit 0 without a lone OK"
	if (rc == 1 && (okline || lines == 0)) bad[++nbad] = "exit 1 with OK or no finding"
	if (rc != 0 && rc != 1) bad[++nbad] = "exit " rc
	for (p in skip) if (!(p in onnode)) bad[++nbad] = "SKIP names " p ", not on the node"
	for (p in multi) if (!(p in onnode)) bad[++nbad] = "MULTIPLE-BUDGETS names " p ", not on the node"
	for (p in noctl) if (!(p in onnode)) bad[++nbad] = "NO-CONTROLLER names " p ", not on the node"
	for (p in blk) if (!(p in onnode)) bad[++nbad] = "BLOCKS names " p ", not on the node"
	for (i = 1; i <= np; i++) {
		p = pod[i]
		if ((owner[p] == "DaemonSet") != ((p in skip) && skip[p] == "daemonset"))
			bad[++nbad] = p " (owner " owner[p] ") " (p in skip ? "SKIP " skip[p] : "not SKIP daemonset")
		if ((owner[p] == "-") != (p in noctl))
			bad[++nbad] = p " (owner " owner[p] ") " (p in noctl ? "" : "not ") "in a NO-CONTROLLER line"
	}
}
'

# ev_cmp_dry SID: the dry-run rule; 0 when all agree.  Writes the per-pod table.
# shellcheck disable=SC2317 # called by ev_verdicts
ev_cmp_dry() {
	awk -v OUT="$P/$1.out" -v PODS="$P/$1.pods" -v DRY="$P/$1.dry" -v rc="$(cat "$P/$1.rc")" \
		-v errsize="$(wc -c <"$P/$1.err")" "$CMP_READ$CMP_CHECKS"'
	FILENAME == DRY { got[$1] = $2; next }
	END {
		checks()
		for (i = 1; i <= np; i++) {
			p = pod[i]
			if (p in skip) { why = "SKIP " skip[p]; e = "-" }
			else if (p in multi) { why = "MULTIPLE-BUDGETS"; e = 500; cls = "multiple" }
			else if (p in blk) {
				e = bcode[blk[p]]
				why = "BLOCKS " bname[blk[p]] (e == 201 ? " allowing " ballow[blk[p]] " of " bn[blk[p]] : "")
				cls = e == 201 ? "blocks-allowing" : "blocks-refused"
			} else { why = "no line"; e = 201; cls = "no-line" }
			g = (p in got) ? got[p] : "none"
			c = (e == "-") ? "not compared" : (g == e) ? "agrees" : "DISAGREES"
			if (c == "DISAGREES") nbad++
			printf "%s ready=%s owner=%s: pdb-check %s => %s; dry-run %s: %s\n", p, ready[p], owner[p], why, e, g, c
			if (e != "-") { ncmp++; cnt[cls]++ }
			if (e != "-" && ready[p] != "True") cnt["unready"]++
		}
		if (ncmp == 0) bad[++nbad] = "no pod on the node to compare (the generator puts some there)"
		for (i = 1; i <= nbad; i++) if (i in bad) print "DISAGREES: " bad[i]
		printf "summary %d %d", ncmp, nbad + 0
		for (k in cnt) printf " %s=%d", k, cnt[k]
		printf "\n"
		exit nbad > 0
	}' "$P/$1.out" "$P/$1.pods" "$P/$1.dry"
}

# ev_cmp_real SID: the real-eviction rule on the real phase's snapshot.
# shellcheck disable=SC2317 # called by ev_verdicts
ev_cmp_real() {
	awk -v OUT="$P/$1.out" -v PODS="$P/$1.pods" -v REAL="$P/$1.real" -v rc="$(cat "$P/$1.rc")" \
		-v errsize="$(wc -c <"$P/$1.err")" -v unsettled="$(cat "$P/$1.unsettled" 2>/dev/null)" "$CMP_READ$CMP_CHECKS"'
	FILENAME == REAL {
		codes[$2] = codes[$2] (codes[$2] == "" ? "" : ",") $3
		if ($3 == 201 && !($2 in ev)) { ev[$2] = 1; nevicted++ }
		next
	}
	END {
		checks()
		if (unsettled != "") bad[++nbad] = "the budgets did not settle between rounds: " unsettled
		for (i = 1; i <= np; i++) {
			p = pod[i]
			if (p in skip) continue
			ntried++
			if (p in multi) {
				c = (!(p in ev) && codes[p] ~ /^500(,500)*$/) ? "agrees" : "DISAGREES"
				w = "MULTIPLE-BUDGETS => never evicted, 500"
			} else if (p in blk) {
				c = "see its budget"
				w = "BLOCKS " bname[blk[p]]
				nev[blk[p]] += (p in ev)
			} else {
				c = (p in ev) ? "agrees" : "DISAGREES"
				w = "no line => evicted"
			}
			if (c == "DISAGREES") nbad++
			printf "%s ready=%s: %s; answers %s: %s\n", p, ready[p], w, codes[p] == "" ? "none" : codes[p], c
		}
		for (b = 1; b <= nb; b++) {
			# Pods with no controller: the disruption controller counts them
			# among its expected pods, so an eviction may lower desiredHealthy
			# and free another disruption when it resyncs between two
			# evictions (timing): the A of pdb-check is then a floor.
			moving = 0
			for (i = 1; i <= bn[b]; i++) if (bpod[b, i] in noctl) moving = 1
			if (moving && ballow[b] > 0) {
				c = (nev[b] + 0 >= ballow[b]) ? "agrees" : "DISAGREES"
				m = " (pods with no controller: at least that many)"
			} else {
				c = (nev[b] + 0 == ballow[b]) ? "agrees" : "DISAGREES"
				m = ""
			}
			if (c == "DISAGREES") nbad++
			printf "%s: pdb-check: %d of its %d pods can go%s; %d were evicted: %s\n", bname[b], ballow[b], bn[b], m, nev[b], c
		}
		if (ntried == 0) bad[++nbad] = "no pod on the node to evict (the generator puts some there)"
		for (i = 1; i <= nbad; i++) if (i in bad) print "DISAGREES: " bad[i]
		printf "summary %d %d %d\n", nb, nbad + 0, nevicted
		exit nbad > 0
	}' "$P/$1.out" "$P/$1.pods" "$P/$1.real"
}

# ev_diag SEED SID KIND: the scenario, for the TAP diagnostics: on standard
# error, which prove shows without -v, and kept in the sandbox's logs.
ev_diag() {
	{
		echo "seed $1 scenario $2 (k=${2##*-}); rerun: GPUDRV_EVICT_SEED=$1 GPUDRV_EVICT_SCENARIOS=${2##*-} prove t/0950-e2e-evict.t"
		echo "--- manifests:"
		cat "$G/$2.yaml"
		echo "--- plan:"
		grep -v '^feature' "$G/$2.plan"
		echo "--- state at the snapshot (kind ns name rv node phase Ready deletion owner ctl gen obsgen healthy desired expected allowed reason disrupted):"
		cat "$P/$2.state"
		echo "--- pdb-check -s $2-d (exit $(cat "$P/$2.rc")):"
		cat "$P/$2.out"
		sed 's/^/stderr: /' "$P/$2.err"
		if [ "$3" = dry ]; then
			echo "--- dry-run evictions (pod, HTTP status, message):"
			cat "$P/$2.dry"
		else
			echo "--- real evictions (round, pod, HTTP status, message):"
			cat "$P/$2.real"
			[ ! -f "$P/$2.unsettled" ] || sed 's/^/unsettled: /' "$P/$2.unsettled"
		fi
		echo "--- comparison:"
		cat "$P/$2.cmp"
	} | tee -a "$e2e_dir/logs/evict-disagreements.log" | t_diag
}

# ev_cordon true|false: (un)cordons the drained nodes of $SIDS as kubectl
# cordon does (spec.unschedulable), in one batch (kubectl takes 4s for 30).
ev_cordon() {
	printf '{"spec":{"unschedulable":%s}}' "$1" >cordon.json
	for ev_s in $SIDS; do
		echo "PATCH /api/v1/nodes/$ev_s-d cordon.json application/merge-patch+json"
	done | api_batch >codes
	[ "$(sort -u codes)" = 200 ]
}

# ev_cordon_seen: the scheduler has seen every drained node's cordon: a
# probe pod pinned to each (in a namespace of its own, no budget's) is
# found unschedulable, then deleted; a probe bound to its node, the cordon
# not yet seen, is made again (3 tries).  Without it a replacement created
# right after the evictions could be bound to a node its cache still had
# schedulable, become Ready, and free one disruption more than pdb-check
# said (CI of 0320cea: seed 1796480338, ev-5: three of g1-b1's pods evicted
# where it allowed two).
ev_cordon_seen() {
	if ! kubectl get namespace "$RUN-probe" >/dev/null 2>&1; then
		kubectl create namespace "$RUN-probe" >/dev/null &&
			kubectl label namespace "$RUN-probe" gpudrv-evict=1 >/dev/null || return 1
	fi
	for ev_try in 1 2 3; do
		for ev_s in $SIDS; do
			printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: probe-%s, labels: {gpudrv-evict: "1"}}\nspec:\n  nodeSelector: {kubernetes.io/hostname: %s-d}\n  tolerations: [{key: gpudrv.test/evict, operator: Equal, value: %s, effect: NoSchedule}]\n  containers: [{name: c, image: busybox}]\n---\n' \
				"$ev_s" "$ev_s" "$ev_s"
		done | kubectl -n "$RUN-probe" create -f - >/dev/null || return 1
		e2e_until 60 ev_probes_judged
		ev_bound=$(ev_probes | grep -vc '^|')
		kubectl -n "$RUN-probe" delete pods --all --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1
		[ "$ev_bound" != 0 ] || return 0
		sleep 1
	done
	return 1
}
# ev_probes: each probe, "node|PodScheduled status, reason and message".
ev_probes() {
	kubectl -n "$RUN-probe" get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{"|"}{range .status.conditions[?(@.type=="PodScheduled")]}{.status}{.reason}{.message}{end}{"\n"}{end}'
}
# shellcheck disable=SC2317 # called by e2e_until
ev_probes_judged() { # every probe bound, or unschedulable for the cordon
	[ "$(ev_probes | grep -c -e '^[^|]' -e '^|FalseUnschedulable.*unschedulable')" -eq "$(echo $SIDS | wc -w)" ]
}

# ev_sa_ready: every namespace of the run has its default service account.
# shellcheck disable=SC2317 # called by e2e_until
ev_sa_ready() {
	[ "$(kubectl get serviceaccount -A --field-selector=metadata.name=default \
		-o 'jsonpath={range .items[*]}{.metadata.namespace}{"\n"}{end}' | grep -c '^ev[0-9][0-9]*-')" -eq "$nns" ]
}

# ev_lap NAME: the seconds since the last lap, for the timing line.
ev_lap() {
	ev_now=$(date +%s)
	laps="$laps $1 $((ev_now - lap0))s,"
	lap0=$ev_now
}

# ev_verdicts PHASE CMP TEXT: one TAP line per scenario of $SIDS from the
# comparison function CMP; $pending held the ones never snapshot.
ev_verdicts() {
	P=$G/$1
	for ev_s in $SIDS; do
		seed_of "$ev_s"
		case " $pending " in
		*" $ev_s "*)
			t_ok 1 "seed $sd $ev_s: the budgets and pods held still for a snapshot ($1)"
			continue
			;;
		esac
		"$2" "$ev_s" >"$P/$ev_s.cmp"
		ev_ok=$?
		ev_sum=$(sed -n 's/^summary //p' "$P/$ev_s.cmp")
		[ "$ev_ok" = 0 ] || total_bad=$((total_bad + 1))
		if [ "$1" = dry ]; then
			total_scn=$((total_scn + 1))
			total_pods=$((total_pods + ${ev_sum%% *}))
			echo "$ev_sum" | cut -d' ' -f3- >>"$G/outcomes"
			t_ok "$ev_ok" "seed $sd $ev_s: pdb-check and ${ev_sum%% *} $3 (${ev_sum#* * })"
		else
			total_real=$((total_real + 1))
			t_ok "$ev_ok" "seed $sd $ev_s: $3 (${ev_sum%% *} blocking budgets, ${ev_sum##* } evicted)"
		fi
		[ "$ev_ok" = 0 ] || ev_diag "$sd" "$ev_s" "$1"
	done
}

# ev_snapshots PHASE DRYRUN WHEN: ev_snapshot PHASE DRYRUN of every
# scenario, then again (3 times at most) of those that changed meanwhile,
# once they are quiet; $pending, those that never held still.
ev_snapshots() {
	pending=$SIDS
	for attempt in 1 2 3; do
		# shellcheck disable=SC2086 # one argument per scenario
		ev_snapshot "$1" "$2" $pending || e2e_bail "$B: cannot list the budgets and pods"
		pending=$ev_changed
		[ -n "$pending" ] || break
		echo "$B: changed $3 (attempt $attempt), again: $pending" | t_note
		# shellcheck disable=SC2086 # one argument per scenario
		ev_wait 60 quiet 5 $pending || :
	done
}

# seed_of SID: the seed scenario SID came from, in $sd (ev2-5: the second
# seed's fifth scenario).
seed_of() {
	sd=${1%%-*}
	eval "sd=\$seed_${sd#ev}"
}

t_gen
t0=$(date +%s)
lap0=$t0 laps=
total_scn=0 total_pods=0 total_bad=0 total_real=0
# Every seed's scenarios in one batch, each seed's named after its place
# (ev2-5: the second seed's fifth scenario): created and waited for
# together, so that the waits on the cluster, most of this test's time,
# come once, not once a seed.
G=$PWD/batch
mkdir -p "$G"
round=0 SIDS=
: >pre.yaml
: >main.yaml
for entry in $SEEDS; do
	round=$((round + 1))
	seed=${entry%%:*}
	eval "seed_$round=\$seed"
	# SEED:K,...: those scenarios, the generator asked for the last of them.
	ks=
	case $entry in *:*) ks=$(echo "${entry#*:}" | tr ',' ' ') ;; esac
	n=$NSCN
	[ -z "$ks" ] || n=$(echo "$ks" | tr ' ' '\n' | sort -n | tail -n 1)
	mkdir -p "$G/gen-$round"
	t_run "$GEN" -e "$seed" -R "ev$round" -d "$G/gen-$round" "$n"
	t_rc 0 "seed $seed: the generator makes $n scenarios"
	sids=$(cat "$G/gen-$round/list")
	# shellcheck disable=SC2086 # one argument per scenario
	set -- $sids
	[ $# -eq "$n" ] || e2e_bail "seed $seed: the generator listed $# scenarios, not $n"
	if [ -n "$ks" ]; then
		sids=
		for k in $ks; do sids="$sids ev$round-$k"; done
	fi
	# Each scenario's files, its nodes and namespaces into pre.yaml, the
	# rest into main.yaml.
	for s in $sids; do
		cp "$G/gen-$round/$s.plan" "$G/gen-$round/$s.yaml" "$G/"
		awk '/^---$/ { put(); d = $0 "\n"; p = 0; next }
		{ d = d $0 "\n" } /^kind: (Node|Namespace)$/ { p = 1 }
		function put() { if (d != "") printf "%s", d >>(p ? "pre.yaml" : "main.yaml"); d = "" }
		END { put() }' "$G/$s.yaml"
	done
	# shellcheck disable=SC2086,SC2116 # one word a scenario, on one line
	SIDS="$SIDS $(echo $sids)"
	[ -z "$ks" ] || continue

	# Coverage: every feature the rules need, in a seed's scenarios.
	for s in $sids; do sed -n 's/^feature //p' "$G/$s.plan" | sort -u; done | grep -v '^forced:' |
		sort | uniq -c | awk '{ print $2 "=" $1 }' >"$G/coverage"
	{ printf 'seed %s: scenarios with each feature: ' "$seed"; tr '\n' ' ' <"$G/coverage"; echo; } | fold -s -w 150 | t_note
	if [ "$n" -ge 18 ]; then
		missing=
		for f in kind-dep kind-rs kind-bare ds lookalike two-budgets group-budgets-0 group-budgets-1 \
			group-budgets-2 split minAvailable-int minAvailable-pct maxUnavailable-int maxUnavailable-pct \
			sel-matchLabels sel-In sel-NotIn sel-Exists sel-DoesNotExist sel-empty unready \
			policy-AlwaysAllow policy-IfHealthyBudget policy-unset; do
			grep -q "^$f=" "$G/coverage" || missing="$missing $f"
		done
		[ -z "$missing" ]
		t_ok $? "seed $seed: the scenarios cover every feature${missing:+ (missing:$missing)}"
	fi
done
SIDS=${SIDS# }
NALL=$(echo "$SIDS" | wc -w)
B="$NALL scenarios"

# Nodes and namespaces first (a pod needs its namespace's default service
# account), then the workloads and budgets.
t_run kubectl create -f pre.yaml
t_rc 0 "$NALL scenarios' nodes and namespaces created"
nns=$(grep -c '^kind: Namespace$' pre.yaml)
e2e_until 120 ev_sa_ready
t_ok $? "their $nns namespaces' default service accounts exist"
t_run kubectl create -f main.yaml
t_rc 0 "$B: workloads and budgets created"
ev_lap create
# shellcheck disable=SC2086 # one argument per scenario
ev_wait 240 up 0 $SIDS
t_ok $? "$B: every pod Running and Ready on its node"
[ ! -s why ] || head -n 20 why | t_diag
ev_lap up

# Unready pods: the status' Ready condition set to False.
printf '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"GpudrvEvictTest"}]}}' >unready.json
for s in $SIDS; do cat "$G/$s.plan"; done | awk -F '\t' '
FILENAME == "-" { split($0, w, " "); if (w[1] == "unready") want[w[2] "/" w[3]] = w[4]; next }
$1 == "Pod" && (($2 "/" $10) in want) && want[$2 "/" $10]-- > 0 {
	print "PATCH /api/v1/namespaces/" $2 "/pods/" $3 "/status unready.json application/strategic-merge-patch+json"
}' - w1 >reqs
api_batch <reqs >codes
paste -d ' ' reqs codes >patched
[ -s patched ] && ! grep -qv ' 200$' patched
t_ok $? "$B: $(wc -l <patched) pods made unready (HTTP 200)"
grep -v ' 200$' patched | t_diag

# Every budget touched (a label), so that the disruption controller counts
# its pods again: a pod's change makes it count again only the first
# budget (by name) that selects the pod, so a second one that selects it
# too keeps the counts of before, in its status and for the eviction API,
# until something else makes it count (CI of a079b15: a pod made unready
# left {} still counting it healthy, allowing one disruption too many).
kubectl label pdb -A -l gpudrv-evict=1 --overwrite "gpudrv-evict/counted=$t0" >/dev/null
t_ok $? "$B: every budget touched, to be counted again"
# shellcheck disable=SC2086 # one argument per scenario
ev_wait 240 quiet 5 $SIDS
t_ok $? "$B: quiet: unready pods stay unready, budgets computed and counting the pods as they are, nothing changes in 5s"
[ ! -s why ] || head -n 20 why | t_diag
ev_lap unready+quiet

# 1. Snapshot, pdb-check, dry-run evictions; a scenario that changed
# meanwhile again.
ev_snapshots dry 1 "during the dry-runs"
ev_verdicts dry ev_cmp_dry "dry-run evictions agree"
tr ' ' '\n' <"$G/outcomes" | awk -F= 'NF == 2 { n[$1] += $2 } END { for (k in n) printf "%s=%d ", k, n[k]; printf "\n" }' |
	sed 's/^/pods compared, by pdb-check verdict: /' | t_note
ev_lap dry-runs

# 2. Real evictions on the cordoned nodes, after a fresh snapshot.
ev_cordon true
t_ok $? "$B: the drained nodes cordoned"
ev_cordon_seen
t_ok $? "$B: the scheduler has seen the cordons (a probe pod on each is unschedulable)"
ev_snapshots real 0 "before the real evictions"
ev_lap snapshot
P=$G/real
active=
for s in $SIDS; do
	: >"$P/$s.real"
	case " $pending " in *" $s "*) ;; *) active="$active $s" ;; esac
done
# Rounds: every pod not SKIP and not yet evicted, Ready ones first, in
# one batch; then the budgets settle; until a round evicts nothing.
r=0
while [ -n "$active" ] && [ "$r" -lt 8 ]; do
	r=$((r + 1))
	# shellcheck disable=SC2086 # one argument per scenario
	set -- $active
	for s; do
		set -- "$@" "$P/$s.out" "$P/$s.real" "$P/$s.pods"
		shift
	done
	awk '
	FILENAME ~ /\.out$/ { if ($1 == "SKIP") x[$2] = 1; next }
	FILENAME ~ /\.real$/ { if ($3 == 201) x[$2] = 1; next }
	!($1 in x) { s = FILENAME; sub(/.*\//, "", s); sub(/\.pods$/, "", s); print s, ($2 == "True" ? 0 : 1), $1 }' "$@" |
		sort -k1,1 -k2,2n -k3,3 | cut -d' ' -f3 | ev_evict 0 | ev_by_scenario .real "$r"
	# shellcheck disable=SC2086 # one argument per scenario
	active=$(for s in $active; do awk -v r="$r" -v s="$s" '$1 == r && $3 == 201 { print s; exit }' "$P/$s.real"; done)
	[ -n "$active" ] || break
	# shellcheck disable=SC2086 # one argument per scenario
	if ! ev_wait 60 settled 1 $active; then
		for s in $active; do
			ev_state w1 settled "$s" >"$P/$s.unsettled"
			[ -s "$P/$s.unsettled" ] || rm -f "$P/$s.unsettled"
		done
	fi
done
ev_lap "evictions ($r rounds)"
ev_verdicts real ev_cmp_real "real evictions on the cordoned node agree with pdb-check"

ev_reset
t_ok $? "$B: their workloads, budgets and pods deleted"
ev_lap delete
echo "$total_scn scenarios with dry-runs ($total_pods pods compared) and $total_real with real evictions of $SEEDS, $total_bad disagreeing; $(($(date +%s) - t0))s:${laps%,}" | t_note
t_done
