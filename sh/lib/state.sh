# state.sh: drv-upgrade.sh's record of the node: what the API says of it
# (facts, look), the upgrade-state label written with the cordon and the
# annotations in one patch (set_state), the -P records on standard output,
# the Events on the node, and the refusal (POSIX sh; sourced by
# drv-upgrade.sh only, after runtime.sh, node.sh and api.sh).  It reads the
# caller's $tmp, $node, $version, $major, $progress, $prog, $host and
# $labels2tag, and writes to fd 7 (runtime.sh); it sets facts' $r_*
# (record_read), $cur_state, $state_set and $events.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# facts FILE: the node in FILE (its JSON) read by labels2tag -F, the one
# reader of a node: $r_tag (the tag it needs for $version, or UNKNOWN:...),
# $r_driver (major.minor.rev or -), $r_state (or -), $r_skip (skip or -),
# $r_cordon (cordoned or schedulable), $r_initial (was-cordoned: the
# operator's record of a cordon before the upgrade; gpudrv: this tool's of
# the cordon its upgrade set; or -), $r_uid (or -).  Status 2 with the
# reason in $tmp/err when FILE is not this node whole.
facts() {
	"$labels2tag" -F -b "$major" "$1" >"$tmp/facts" 2>"$tmp/err" || return 2
	record_read "$tmp/facts" || {
		echo "no record of the node in the API's answer" >"$tmp/err"
		return 2
	}
	[ "$r_node" = "$node" ] || {
		echo "the API answered with node $r_node, not $node" >"$tmp/err"
		return 2
	}
}
# look: the node as the API has it now (one GET of its JSON), into facts'
# variables.
look() {
	kc "$tmp/look" "$tmp/err" get --raw "/api/v1/nodes/$node" || return 2
	facts "$tmp/look"
}
# record WORDS...: with -P, "node WORDS" on standard output at once: "node
# state" at each change of the state label ("-": removed), "node now state
# cordon" where a failure or a signal left it, as the API said ("node now
# unknown": it did not answer).  Only this script writes there: what kubectl
# or a server says goes to standard error, indented or on one line.  Fd 7,
# the standard output the script was given (runtime.sh): records come as
# they come, even while a failure path silences its messages.
record() {
	[ "$progress" = 1 ] || return 0
	printf '%s %s\n' "$node" "$*" 2>/dev/null >&7 || gpudrv_abort "cannot write to standard output"
}
# event TYPE REASON MESSAGE: an Event on the node (Normal or Warning), as
# kubectl describe node shows them, from source gpudrv, as the GPU
# Operator's upgrade manager records its own: one POST in namespace
# default, where the Events of nodes go.  An Event that cannot be written
# (no right to create events there) is said once, and the upgrade goes on
# without them: they tell, they decide nothing.
events=1
event() {
	[ "$events" = 1 ] && [ -n "$r_uid" ] || return 0
	ev_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	ev_msg=$(quoted "$3" 1000)
	ev_uid=
	[ "$r_uid" = - ] || ev_uid=",\"uid\":\"$r_uid\""
	printf '{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"%s.","namespace":"default","labels":{"app.kubernetes.io/part-of":"gpudrv"}},"involvedObject":{"apiVersion":"v1","kind":"Node","name":"%s"%s},"reason":"%s","message":"%s","type":"%s","source":{"component":"gpudrv","host":"%s"},"reportingComponent":"gpudrv","reportingInstance":"%s","firstTimestamp":"%s","lastTimestamp":"%s","count":1}\n' \
		"$node" "$node" "$ev_uid" "$2" "$ev_msg" "$1" "$host" "$host" "$ev_now" "$ev_now" >"$tmp/event.json"
	kc /dev/null "$tmp/event.err" create --raw /api/v1/namespaces/default/events -f "$tmp/event.json" && return 0
	events=0
	[ "$gpudrv_stopping" = 1 ] ||
		say "warning: cannot record Events on $node (kubectl said: $(said "$tmp/event.err")); going on without them"
}
# refuse MESSAGE: exit 1 with nothing changed, said and recorded.
refuse() {
	event Warning GPUDriverUpgradeRefused "$1"
	finish 1
}

# set_state STATE [LABELS [ANNOTATIONS [SPEC]]]: the upgrade-state label
# STATE, with the members given ("key":value,... of the node's other labels,
# its annotations, its spec), in one merge patch of the node (field manager
# gpudrv).  The API server answers with the node as it is after the write:
# read into facts' variables, so that what took is seen without another GET.
# Status 1, said, when the write or its answer fails.
set_state() {
	p="\"labels\":{\"$L_STATE\":\"$1\"${2:+,$2}}"
	[ -z "${3:-}" ] || p="$p,\"annotations\":{$3}"
	p="{\"metadata\":{$p}"
	[ -z "${4:-}" ] || p="$p,\"spec\":{$4}"
	if ! kc "$tmp/look" "$tmp/err" patch node "$node" --type=merge --field-manager=gpudrv -p "$p}" -o json; then
		say "cannot set $L_STATE=$1 on $node: $(said "$tmp/err")"
		return 1
	fi
	cur_state=$1
	state_set=1
	if ! facts "$tmp/look"; then
		say "$node: the API's answer to setting $L_STATE=$1 cannot be read: $(said "$tmp/err")"
		return 1
	fi
	if [ "$r_state" != "$1" ]; then
		say "$node: the API answered the write of $L_STATE=$1 with $L_STATE=$r_state"
		return 1
	fi
	say "$node: $L_STATE=$1"
	record "$1"
	event Normal GPUDriverUpgrade "$L_STATE=$1 (driver $version, by $prog on $host)"
}

# ann A B...: annotation members, those not empty, joined by commas.
ann() {
	ann_out=
	for ann_m; do [ -z "$ann_m" ] || ann_out="${ann_out:+$ann_out,}$ann_m"; done
	printf '%s' "$ann_out"
}
