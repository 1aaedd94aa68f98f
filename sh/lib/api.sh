# api.sh: kubectl, skopeo and curl, bounded by the run's deadline, and the
# readers of what the API server answers: lists proven whole, budgets and
# pods through pdb-check, one node, the GPU Operator's objects (POSIX sh;
# sourced after runtime.sh and node.sh).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# kc OUT ERR ARGS...: kubectl ARGS ($KUBECTL), its output into the file OUT,
# its errors into ERR (ERR the same as OUT: both there).  It runs under
# timeout(1), in the background, waited for: a signal stops it at once, and
# the run's deadline stops it even when kubectl itself hangs (an API server
# that never answers, a credential plugin that waits); timeout kills its
# own process group, so kubectl's children go too.  Each request is also
# bounded: --request-timeout is GPUDRV_REQUEST_TIMEOUT or what is left of
# the run, the less.  When the deadline passes, kc calls abort.
# GPUDRV_KUBECONFIG and GPUDRV_CONTEXT, when set (kubectl-gpudrv sets them
# from kubectl's --kubeconfig and --context), go first on every call, as
# --kubeconfig= and --context=; a call's own flag after them wins.
kc() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	[ -n "$gpudrv_icc" ] || in_cluster
	gpudrv_bounded kubectl --request-timeout "${KUBECTL:-kubectl}" \
		${GPUDRV_KUBECONFIG:+"--kubeconfig=$GPUDRV_KUBECONFIG"} ${GPUDRV_CONTEXT:+"--context=$GPUDRV_CONTEXT"} "$@"
}
# in_cluster: in a pod with no kubeconfig (none named, no ~/.kube/config),
# the pod's service account, as kubectl's in-cluster config takes it, but
# through a kubeconfig of the run's own that GPUDRV_KUBECONFIG names: kubectl
# drops its in-cluster config when a flag (--request-timeout, on every call
# here) makes its config differ from the default one, and asks localhost:8080
# instead.  The token is named by its file (tokenFile), which client-go reads
# again as the kubelet rotates it.
# (A KUBECONFIG whose files are all missing counts as none, as for kubectl;
# POD_NAMESPACE is not read: every call names its namespace.)
# $gpudrv_in_pod: 1 once it did.
gpudrv_icc=
gpudrv_in_pod=
gpudrv_sa=/var/run/secrets/kubernetes.io/serviceaccount
in_cluster() {
	[ -n "$gpudrv_tmp" ] || return 0
	gpudrv_icc=1
	[ -z "${GPUDRV_KUBECONFIG:-}" ] && [ ! -e "${HOME:-/nonexistent}/.kube/config" ] &&
		[ -n "${KUBERNETES_SERVICE_HOST:-}" ] && [ -n "${KUBERNETES_SERVICE_PORT:-}" ] &&
		[ -r "$gpudrv_sa/token" ] || return 0
	gpudrv_ifs=$IFS
	IFS=:
	for gpudrv_f in ${KUBECONFIG:-}; do
		[ ! -e "$gpudrv_f" ] || { IFS=$gpudrv_ifs && return 0; }
	done
	IFS=$gpudrv_ifs
	case $KUBERNETES_SERVICE_HOST in
	*:*) gpudrv_h="[$KUBERNETES_SERVICE_HOST]" ;;
	*) gpudrv_h=$KUBERNETES_SERVICE_HOST ;;
	esac
	{
		printf '%s\n' 'apiVersion: v1' 'kind: Config' 'clusters:' '- name: in-cluster' '  cluster:' \
			"    server: \"https://$gpudrv_h:$KUBERNETES_SERVICE_PORT\""
		[ ! -r "$gpudrv_sa/ca.crt" ] || printf '    certificate-authority: "%s"\n' "$gpudrv_sa/ca.crt"
		printf '%s\n' 'users:' '- name: in-cluster' '  user:' "    tokenFile: \"$gpudrv_sa/token\"" \
			'contexts:' '- name: in-cluster' '  context:' '    cluster: in-cluster' '    user: in-cluster'
		[ ! -s "$gpudrv_sa/namespace" ] || printf '    namespace: "%s"\n' "$(cat "$gpudrv_sa/namespace")"
		echo 'current-context: in-cluster'
	} >"$gpudrv_tmp/in-cluster.kubeconfig" ||
		die "cannot write the in-cluster kubeconfig in $gpudrv_tmp"
	GPUDRV_KUBECONFIG=$gpudrv_tmp/in-cluster.kubeconfig
	gpudrv_in_pod=1
}
# kc_bg OUT ERR ARGS...: kc, but kubectl left running in the background (a
# watch, read meanwhile from OUT, a fifo), stopped on the way out
# (track_bg).  kc_stop ERR ARGS...: it stopped (TERM, if it still runs) and
# waited for; its status, and abort as kc's once the deadline passed.
kc_bg() {
	gpudrv_bg=1
	kc "$@"
}
kc_stop() {
	kill -TERM "$gpudrv_also" 2>/dev/null || :
	gpudrv_st=0
	wait_bg || gpudrv_st=$?
	gpudrv_judge "$gpudrv_st" "$@"
}
# watch_until PATH SECONDS FILTER LINE: the watch GET PATH (its query asks
# watch=1), at most SECONDS (and 3/4 of the request timeout), through the
# fifo $tmp/watch: its events read as they come by the function FILTER (on
# its standard input; its status into $tmp/watch.rc, its words into
# $tmp/watch.err), each line FILTER prints given to the function LINE (in a
# subshell; what it prints into $tmp/watch.rec), until LINE returns 0:
# then kubectl is stopped.  Status 0: LINE returned 0; 1: the watch ended
# without; 2: it failed, $tmp/err says why (kubectl's words first, else
# FILTER's: an answer that is no watch of the kind, an ERROR event).
watch_until() {
	wu_s=$2
	[ "$wu_s" -le $((gpudrv_rt * 3 / 4)) ] || wu_s=$((gpudrv_rt * 3 / 4))
	[ "$wu_s" -ge 1 ] || wu_s=1
	wu_path="$1&timeoutSeconds=$wu_s"
	wu_filter=$3
	wu_line=$4
	rm -f "$tmp/watch" "$tmp/watch.rc"
	mkfifo "$tmp/watch"
	# The fifo held open both ways (fd 5) until each side has opened its
	# own end: no open waits for the other side, so that neither is left
	# waiting there when the other is stopped (a signal) before it opened;
	# once all have let go of fd 5, the reader sees the end when kubectl
	# ends.
	exec 5<>"$tmp/watch"
	kc_bg "$tmp/watch" "$tmp/err" get --raw "$wu_path"
	watch_read "$gpudrv_also" >"$tmp/watch.rec" 2>"$tmp/watch.sh.err" 7>&- 8>&- &
	gpudrv_child=$!
	exec 5>&-
	wu_rc=0
	gpudrv_wait || wu_rc=$?
	wu_k=0
	kc_stop "$tmp/err" kubectl get --raw "$wu_path" || wu_k=$?
	[ "$wu_rc" != 0 ] || return 0
	wu_l=2
	[ ! -s "$tmp/watch.rc" ] || read -r wu_l <"$tmp/watch.rc"
	[ "$wu_k" != 0 ] || [ "$wu_l" != 0 ] || return 1
	if [ "$wu_k" = 0 ] || ! [ -s "$tmp/err" ]; then cp "$tmp/watch.err" "$tmp/err"; fi
	return 2
}
# watch_after STATUS T0 WHAT INSTEAD RULE FAILED [410]: after a watch_until
# that began at T0 and ended with STATUS: one the API refused (Forbidden)
# said, "the API refuses to watch WHAT: ...; INSTEAD instead (add watch to
# the RULE rule of the Role ...)", and status 1: the caller reads by GETs
# from then on; one that failed otherwise said, "FAILED: ...; looking
# again" (with 410, not where the API found its resourceVersion too old,
# 410 Expired: the caller lists again, as a watch from a resourceVersion
# must); and, but for a watch that got what it waited for, none started
# again at once: 2 s apart at least.
watch_after() {
	if [ "$1" = 2 ] && grep -q '(Forbidden)' "$tmp/err"; then
		say "$node: warning: the API refuses to watch $3: $(said "$tmp/err"); $4 instead (add watch to the $5 rule of the Role: deploy/20-upgrader.yaml)"
		return 1
	fi
	if [ "$1" = 2 ] && { [ "${7:-}" != 410 ] || ! grep -q -e 'code 410)' -e '(Expired)' "$tmp/err"; }; then
		say "$node: warning: $6: $(said "$tmp/err"); looking again"
	fi
	gpudrv_clock
	[ "$1" = 0 ] || [ $((gpudrv_now - $2)) -ge 2 ] || nap 2
}
# pods_events: watch_until's FILTER for a watch of pods: pdb-check -p -w
# ($pdb_check), a line an event: "TYPE RV node namespace/name phase ready
# restarts".
pods_events() {
	"$pdb_check" -p -w
}
# watch_read KUBECTL-PID: watch_until's reader: FILTER's lines to LINE as
# they come, and status 0, KUBECTL-PID stopped, at the first LINE takes.
# (sh's read takes a line as it comes; awk's reads wait for a buffer's
# worth.)  TERM, which stops the run's children on the way out, is left to
# kubectl: the reader ends as its answer does, waited for whole, so that
# nothing of it outlives the run.
watch_read() {
	trap '' TERM
	{
		exec <"$tmp/watch" 5>&-
		wr_l=0
		"$wu_filter" 2>"$tmp/watch.err" || wr_l=$?
		echo "$wr_l" >"$tmp/watch.rc"
	} | {
		exec 5>&-
		while read -r wr_line; do
			if "$wu_line" "$wr_line"; then
				kill -TERM "$1" 2>/dev/null
				exit 0
			fi
		done
		exit 1
	} &
	wr_p=$!
	exec 5>&-
	wr_s=0
	wait "$wr_p" || wr_s=$?
	wait
	return "$wr_s"
}
# sk OUT ERR ARGS...: skopeo ARGS ($SKOPEO) as kc runs kubectl, each request
# bounded by --command-timeout.
sk() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	gpudrv_bounded skopeo --command-timeout "${SKOPEO:-skopeo}" "$@"
}
# push OUT ERR ARGS...: curl ARGS ($CURL) as kc runs kubectl (drv-audit.sh
# -P, the Pushgateway), the whole transfer bounded by --max-time.
push() {
	gpudrv_o=$1
	gpudrv_e=$2
	shift 2
	gpudrv_bounded curl --max-time "${CURL:-curl}" "$@"
}
# get_list FILE PATH [WHAT]: GET PATH (--raw, the API server's own JSON)
# into FILE; status 2, saying why ("cannot list WHAT" with WHAT), when
# kubectl fails or answers exit 0 with no body (a proxy or a wrapper can): a
# list not read is never an empty one.  The filter that reads FILE proves
# the rest (the kind asked for, an items list, every byte, no Status, no
# watch event), and the caller names PATH if it refuses.
get_list() {
	if ! kc "$1" "$1.err" get --raw "$2"; then
		if [ -n "${3:-}" ]; then kubectl_said "cannot list $3" "$1.err"; else kubectl_said "cannot GET $2" "$1.err"; fi
		return 2
	fi
	# A byte that is not white space, in constant memory: the body is one
	# line, and grep would hold all of it (110 MB at 30,000 pods).  One
	# process where the body begins with one (each GET pays for it); the
	# whole body looked through where 64 bytes of white space lead it.
	if [ -s "$1" ]; then
		case $(dd bs=64 count=1 <"$1" 2>/dev/null) in *[![:space:]]*) return 0 ;; esac
		[ -z "$(tr -d '[:space:]' <"$1" | dd bs=1 count=1 2>/dev/null)" ] || return 0
	fi
	say "${3:+cannot list $3: }GET $2 answered with an empty body (kubectl exit 0): nothing can be said of it"
	return 2
}
# get_budget_pods FILE PODS: every budget, then the pods GET PODS lists,
# back to back into FILE, which pdb-check reads as one cluster (the API
# server's own JSON; kubectl get pdb,pods -A -o json takes a minute at
# 30,000 pods, bench/README.md); status 2, get_list having said why.
get_budget_pods() {
	get_list "$1" /apis/policy/v1/poddisruptionbudgets &&
		get_list "$1.pods" "$2" &&
		cat "$1.pods" >>"$1" || return 2
}
# get_draws FILE [POLICIES]: every budget and every pod on a node, read by
# pdb-check -a ($pdb_check) in one pass: each node's draws on each budget
# and what would refuse the removal of its pods (with POLICIES,
# upgrade-policy's output, the pods each node's policy removes; else its
# drain), into FILE; status 2, saying why, when the lists cannot be read
# whole or judged.
get_draws() {
	if ! get_budget_pods "$1.pp" '/api/v1/pods?fieldSelector=spec.nodeName%21%3D'; then
		say "cannot list budgets and pods"
		return 2
	fi
	gpudrv_pc=0
	"$pdb_check" -a ${2:+-y "$2"} "$1.pp" >"$1" || gpudrv_pc=$?
	rm -f "$1.pp" "$1.pp.pods" "$1.pp.err" "$1.pp.pods.err"
	[ "$gpudrv_pc" -le 1 ] && return 0
	say "pdb-check cannot judge the answers to GET /apis/policy/v1/poddisruptionbudgets and GET /api/v1/pods?fieldSelector=spec.nodeName%21%3D (exit $gpudrv_pc)"
	return 2
}
# get_pods FILE WHAT PATH: the pods GET PATH lists (a PodList, the API
# server's own JSON), read by pdb-check -p ($pdb_check): a line a pod into
# FILE, "node namespace/name phase ready restarts"; status 2, saying why
# (WHAT: which pods), when the list cannot be read whole.
get_pods() {
	get_list "$1.json" "$3" "$2" || return 2
	gpudrv_pc=0
	"$pdb_check" -p "$1.json" >"$1" || gpudrv_pc=$?
	rm -f "$1.json" "$1.json.err"
	[ "$gpudrv_pc" = 0 ] && return 0
	say "cannot list $2: pdb-check cannot read the answer to GET $3 (exit $gpudrv_pc)"
	return 2
}
# get_node NODE FILE: the node's JSON into FILE (one GET, no discovery), or
# exit 2 saying why not; a failed kubectl must never read as a node without
# labels.
get_node() {
	kc "$2" "$2.err" get --raw "/api/v1/nodes/$1" && return 0
	grep -q '(NotFound)' "$2.err" && die "node $1 not found in the cluster"
	kubectl_said "cannot read node $1 from the cluster" "$2.err"
	finish 2
}
# registry_tags FILE: with -r, what exists is what the registry lists: every
# tag, every page (skopeo follows the registry's Link headers), into FILE,
# which matrix-grep reads as a matrix; status 2, skopeo's words said, when it
# cannot.
registry_tags() {
	sk "$1" "$1.err" list-tags ${insecure:+--tls-verify=false} "docker://$repo" && return 0
	say "cannot list the tags of $repo; skopeo said:"
	sed 's/^/    /' "$1.err" >&2 || :
	return 2
}
# get_targets FILE: the GPU Operator's ClusterPolicies, GPUClusters and
# NVIDIADrivers, back to back, into FILE (labels2tag -t reads them).  Each
# answer must be the whole list asked for, proven here by labels2tag -L
# ($labels2tag), where it is known which request a body answers: an empty
# body, a Status, a list of another kind or a body cut short is status 2,
# naming the request and what the body is instead, never "none of them".  A
# CRD that is not installed (NotFound) is an empty list, typed as that
# kind's, so that the reader can check kinds still.  Status 2, said, when
# they cannot be read.
get_targets() {
	: >"$1"
	for gpudrv_api in nvidia.com/v1/clusterpolicies:ClusterPolicyList \
		nvidia.com/v1alpha1/gpuclusters:GPUClusterList \
		nvidia.com/v1alpha1/nvidiadrivers:NVIDIADriverList; do
		gpudrv_tkind=${gpudrv_api#*:}
		gpudrv_api=${gpudrv_api%:*}
		if ! kc "$1.part" "$1.err" get --raw "/apis/$gpudrv_api"; then
			grep -q '(NotFound)' "$1.err" || {
				kubectl_said "cannot list the ${gpudrv_api##*/}" "$1.err"
				return 2
			}
			printf '{"apiVersion":"%s","kind":"%s","items":[]}\n' \
				"${gpudrv_api%/*}" "$gpudrv_tkind" >"$1.part"
		else
			gpudrv_st=0
			"$labels2tag" -L "$gpudrv_tkind" "$1.part" >"$1.err" || gpudrv_st=$?
			if [ "$gpudrv_st" = 1 ]; then
				say "GET /apis/$gpudrv_api answered exit 0 with $(head -n 1 "$1.err" | tr -c '[:print:]\n' '?' | cut -c1-300): not the $gpudrv_tkind asked for, so nothing is known of the ${gpudrv_api##*/}"
				return 2
			elif [ "$gpudrv_st" != 0 ]; then
				say "cannot check the answer to GET /apis/$gpudrv_api (labels2tag exit $gpudrv_st)"
				return 2
			fi
		fi
		cat "$1.part" >>"$1"
	done
	rm -f "$1.part" "$1.err"
}
# urlencode STRING: for a query parameter (RFC 3986 unreserved kept).
urlencode() {
	printf '%s' "$1" | LC_ALL=C awk '
		BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
		{ for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c ~ /[A-Za-z0-9._~-]/) printf "%s", c; else printf "%%%02X", ord[c]
		} }'
}
