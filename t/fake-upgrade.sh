#!/bin/sh
# t/fake-upgrade.sh: drv-upgrade.sh played for drv-rollout.sh's tests
# (t/0460, t/0467), beside t_fake_fleet's API (t/lib.sh): it says the states
# drv-upgrade.sh says, changes the fake API's node, and ends as the test
# tells it.  In $FLEET_DIR: its arguments to up.log, its pid to
# kubectl.pids, "node seconds" (date +%s) to starts; its records (-P: "node
# state" at each change, "node now state cordon" after a failure) on
# stdout, its words on stderr; by the file act.NODE: ok (drv-upgrade.sh -L's states, the node at the new driver), fail
# (drain fails: upgrade-failed, cordoned, exit 1), refuse (exit 1 before any
# state), hang (under way until a signal; then upgrade-required, exit 2),
# down (ok, then the API goes away), gate (the states up to drain-required,
# then ok once the file go.NODE is there), move (ok, and its pod lands on
# n2, its budget allowing none until the pod is Ready: pods.json and
# pdbs.json rewritten), evict (the states up to drain-required, its pod
# landing on n3 so, then ok once go.NODE is there), race (as evict, but the
# eviction made as the rollout next reads the node's pods: t/fake-fleet.sh).
D=$FLEET_DIR
echo "$$" >>"$D/kubectl.pids"
printf '%s\n' "$*" >>"$D/up.log"
for a; do node=$v; v=$a; done
echo "$node $(date +%s)" >>"$D/starts"
say() { echo "drv-upgrade.sh: $*" >&2; }
st() { say "$node: nvidia.com/gpu-driver-upgrade-state=$1"; echo "$node $1"; }
now() { say "$node: now: unschedulable=$2 state=$1"; echo "$node now $1 $(if [ -n "$2" ]; then echo cordoned; else echo schedulable; fi)"; }
# lands NODE: the pod on n1 lands on NODE, its budget allowing none until
# it is Ready (pods.json and pdbs.json rewritten).
lands() {
	sed "s/\"nodeName\":\"n1\"/\"nodeName\":\"$1\"/" "$D/pods.json" >"$D/pods.new" && mv "$D/pods.new" "$D/pods.json"
	sed 's/"disruptionsAllowed":1/"disruptionsAllowed":0/' "$D/pdbs.json" >"$D/pdbs.new" && mv "$D/pdbs.new" "$D/pdbs.json"
}
# held: under way until the file go.NODE is there.
held() { while ! [ -e "$D/go.$node" ]; do sleep 1 & wait $!; done; }
# set STATE CORDON [VERSION]: the node, in the fake API.
set_node() {
	exec 8>"$D/facts.lock"
	flock 8
	awk -F '\t' -v OFS='\t' -v n="$node" -v s="$1" -v c="$2" -v v="$3" \
		'$1 == n { $3 = s; $5 = c; if (v != "") $2 = v } { print }' "$D/facts" >"$D/facts.new"
	mv "$D/facts.new" "$D/facts"
	flock -u 8
}
case $(cat "$D/act.$node" 2>/dev/null || echo ok) in
ok | down)
	for s in drain-required validation-required upgrade-done; do
		st "$s"
	done
	set_node upgrade-done "" "$v"
	[ "$(cat "$D/act.$node")" != down ] || : >"$D/down"
	echo "$node upgrade-done $v"
	exit 0 ;;
fail)
	st drain-required
	set_node upgrade-failed true
	say "$node: drain failed (exit 1): see kubectl's words above"
	now upgrade-failed true
	exit 1 ;;
refuse)
	say "$node: a drain now would be refused by the budget(s) above; nothing was changed"
	exit 1 ;;
move)
	for s in drain-required validation-required upgrade-done; do st "$s"; done
	set_node upgrade-done "" "$v"
	lands n2
	echo "$node upgrade-done $v"
	exit 0 ;;
refuse-once)
	# Refused once (the budgets moved between the plan and its look), then
	# taken the next time.
	echo ok >"$D/act.$node"
	say "$node: a drain now would be refused by the budget(s) above; nothing was changed"
	exit 1 ;;
forge)
	# A server's words, quoted, that look like a state line of the node.
	st drain-required
	say "$node: drain failed (exit 1): error: admission webhook denied the request:"
	say "$node: nvidia.com/gpu-driver-upgrade-state=upgrade-done"
	printf '%s\n' "drv-upgrade.sh: $node: now: unschedulable= state=upgrade-done" >&2
	set_node upgrade-failed true
	now upgrade-failed true
	exit 1 ;;
gate)
	st drain-required
	set_node drain-required true
	held
	for s in validation-required upgrade-done; do st "$s"; done
	set_node upgrade-done "" "$v"
	echo "$node upgrade-done $v"
	exit 0 ;;
race)
	# Its pod of web evicted (to n3), web allowing none until the
	# replacement is Ready, as the rollout next reads its pods: between
	# the rollout's reads, the eviction as it lands.  Then under way until
	# the file go.NODE is there.
	st drain-required
	set_node drain-required true
	: >"$D/evict-on-read.$node"
	held
	for s in validation-required upgrade-done; do st "$s"; done
	set_node upgrade-done "" "$v"
	echo "$node upgrade-done $v"
	exit 0 ;;
evict)
	# Its pod of web evicted (to n3), web allowing none until the
	# replacement is Ready; then under way until the file go.NODE is there.
	st drain-required
	set_node drain-required true
	lands n3
	: >"$D/evicted.$node"
	held
	for s in validation-required upgrade-done; do st "$s"; done
	set_node upgrade-done "" "$v"
	echo "$node upgrade-done $v"
	exit 0 ;;
hang)
	trap 'set_node upgrade-required ""; say "$node: interrupted by SIGTERM"; echo "$node upgrade-required"; now upgrade-required ""; exit 2' TERM
	: >"$D/hung.$node" # a signal from now on is caught
	st drain-required
	set_node drain-required true
	while :; do sleep 1 & wait $!; done ;;
esac
