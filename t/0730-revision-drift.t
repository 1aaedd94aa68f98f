#!/bin/sh
# revision-drift: the driver pods behind their DaemonSet's newest revision,
# and whether the driver's image changes, on lists the sandbox's API server
# answered (t/data/drift: a DaemonSet changed four times, its pods deleted
# between, and a driver pod no DaemonSet owns); lists that are not whole
# are refused.  t/0925 does it on the sandbox through drv-states.sh -R.
. "$(dirname "$0")/lib.sh"

X=$DATA/drift
DS=drift-x/nvidia-driver-daemonset
t_run revision-drift "$X/ds.json" "$X/cr.json" "$X/pods.json"
t_rc 1 "pods behind the newest revision"
t_out "each pod: its node, its revision and the newest, why, the images" \
	"lab-node-0 drift-x/nvidia-driver-daemonset-cxfnn $DS 7db5bbb684 568496f46f driver nvcr/driver:550.90.07 nvcr/driver:550.127.05" \
	"lab-node-1 drift-x/nvidia-driver-daemonset-f7j8b $DS 5d85cb89f5 568496f46f config nvcr/driver:550.127.05 nvcr/driver:550.127.05" \
	"lab-node-2 drift-x/nvidia-driver-daemonset-z22ll $DS 568496f46f 568496f46f current nvcr/driver:550.127.05 nvcr/driver:550.127.05" \
	"lab-node-2 drift-x/stray-driver - - - orphan nvcr/driver:535.183.06 -"
t_err "nothing on stderr"

# Every pod current: exit 0.
perl -MJSON::PP -e '
	my $l = decode_json(do { local $/; <STDIN> });
	$l->{items} = [grep { $_->{metadata}{name} =~ /z22ll/ } @{$l->{items}}];
	print JSON::PP->new->canonical->encode($l), "\n"' <"$X/pods.json" >current.json
t_run revision-drift "$X/ds.json" "$X/cr.json" current.json
t_rc 0 "every pod at the newest revision"
t_out "said so" "lab-node-2 drift-x/nvidia-driver-daemonset-z22ll $DS 568496f46f 568496f46f current nvcr/driver:550.127.05 nvcr/driver:550.127.05"

# A revision another DaemonSet owns, named as if it were this one's: not
# this one's.  With no owner, the GPU Operator's rule (named after it, its
# selector's labels) takes it.
t_run revision-drift "$X/ds.json" "$X/cr-other.json" "$X/pods.json"
t_grep "another DaemonSet's revision passed over" out "^lab-node-0 .* 7db5bbb684 568496f46f driver "
t_run revision-drift "$X/ds.json" "$X/cr-unowned.json" "$X/pods.json"
t_grep "an unowned one taken by the operator's rule" out "^lab-node-0 .* 7db5bbb684 ext-7c9f8d6b5 driver "

# No revision at all, or a pod without its hash: cannot tell ("unknown").
printf '{"kind":"ControllerRevisionList","apiVersion":"apps/v1","metadata":{},"items":[]}\n' >nocr.json
t_run revision-drift "$X/ds.json" nocr.json current.json
t_rc 1 "no revision of the DaemonSet"
t_out "unknown" "lab-node-2 drift-x/nvidia-driver-daemonset-z22ll $DS 568496f46f - unknown nvcr/driver:550.127.05 -"
perl -MJSON::PP -e '
	my $l = decode_json(do { local $/; <STDIN> });
	delete $_->{metadata}{labels}{"controller-revision-hash"} for @{$l->{items}};
	print JSON::PP->new->canonical->encode($l), "\n"' <current.json >nohash.json
t_run revision-drift "$X/ds.json" "$X/cr.json" nohash.json
t_out "a pod without its hash: unknown" "lab-node-2 drift-x/nvidia-driver-daemonset-z22ll $DS - - unknown nvcr/driver:550.127.05 -"

# Lists that are not whole, or not of their kind: exit 2, nothing printed.
bad() { # bad DESC WHICH BODY PATTERN: WHICH (ds, cr or pods) is BODY
	printf '%s' "$3" >bad.json
	set -- "$1" "$2" "$4"
	case $2 in
	ds) t_run revision-drift bad.json "$X/cr.json" "$X/pods.json" ;;
	cr) t_run revision-drift "$X/ds.json" bad.json "$X/pods.json" ;;
	pods) t_run revision-drift "$X/ds.json" "$X/cr.json" bad.json ;;
	esac
	t_rc 2 "$1"
	t_out "nothing on stdout"
	t_grep "says why" err "$3"
}
bad "a Status for the DaemonSets" ds '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"daemonsets.apps is forbidden","reason":"Forbidden","code":403}' \
	'^revision-drift: bad.json: not a whole DaemonSetList: a Status (403 Forbidden: '
bad "pods for the revisions" cr "$(cat "$X/pods.json")" '^revision-drift: bad.json: not a whole ControllerRevisionList: kind PodList'
bad "an empty body for the pods" pods '' '^revision-drift: bad.json: not a whole PodList: an empty body'
bad "a body cut short" pods "$(head -c 300 "$X/pods.json")" '^revision-drift: bad.json: not a whole PodList: a body cut short'
bad "one page of the pods" pods '{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},"items":[]}' \
	'^revision-drift: bad.json: not a whole PodList: one page of a longer list (metadata.continue is set: the request had a limit)$'
bad "a revision without its number" cr '{"kind":"ControllerRevisionList","apiVersion":"apps/v1","metadata":{},"items":[{"metadata":{"name":"nvidia-driver-daemonset-1","namespace":"drift-x"},"revision":"1"}]}' \
	'^revision-drift: bad.json: items\[0\]: revision is a string, not an integer$'
bad "a DaemonSet without its uid" ds '{"kind":"DaemonSetList","apiVersion":"apps/v1","metadata":{},"items":[{"metadata":{"name":"d","namespace":"n"}}]}' \
	'^revision-drift: bad.json: items\[0\]: metadata.uid is '
t_run revision-drift "$X/ds.json" "$X/cr.json"
t_rc 2 "two operands"
t_err "the usage" "usage: revision-drift daemonsets revisions pods"
t_done
