#!/bin/sh
# bench/pin.sh OLD-BIN NEW-BIN: the pinned runs of a refactor: every filter
# of both builds (two bin/ folders: git worktree add ../old REV && make -C
# ../old) over t/data and the fuzz seeds, with the option sets the tests
# use; prints each case whose stdout, stderr or exit status differ, then
# the count of cases and of each status.  Exit 1 when one differs.
set -u
if [ $# -ne 2 ] || ! [ -x "$1/labels2tag" ] || ! [ -x "$2/labels2tag" ]; then
	echo "usage: bench/pin.sh old-bin new-bin" >&2
	exit 2
fi
O=$(cd "$1" && pwd) N=$(cd "$2" && pwd)
R=$(cd "$(dirname "$0")/.." && pwd)
D=$R/t/data F=$R/fuzz/seeds
W=$(mktemp -d "${TMPDIR:-/tmp}/gpudrv-pin.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
n=0 bad=0
run() { # name args...: both builds, compared
	n=$((n + 1))
	c=$1; shift
	(cd "$W" && "$O/$c" "$@" >o.out 2>o.err; echo $? >o.rc) </dev/null
	(cd "$W" && "$N/$c" "$@" >n.out 2>n.err; echo $? >n.rc) </dev/null
	cat "$W/n.rc" >>"$W/rcs"
	if ! cmp -s "$W/o.out" "$W/n.out" || ! cmp -s "$W/o.rc" "$W/n.rc" || ! cmp -s "$W/o.err" "$W/n.err"; then
		bad=$((bad + 1)); echo "DIFF: $c $*"
	fi
}
nodes="$D/lab-nodes.json $D/lab-nodes.yaml $D/node-1.json $D/node-1.yaml $D/bad-nodes.json $D/rhel-nodes.json $F/nodes-json/list.json $F/nodes-json/node.json $F/nodes-yaml/list.yaml $F/watch/nodes.json $F/watch/events.json $F/watch/watch.yaml"
for f in $nodes; do
	for o in "" -c -F "-F -b 550" "-F -b 550.90.07" -n -N -s -u -w "-b 570" "-k 6.8.0-52-generic" -i "-i -R reg.example/nvidia/driver" "-t $D/targets/nvd.json" "-t $F/targets/policy.json" "-F -t $D/targets/cp-crd.json" "-s -u"; do
		# shellcheck disable=SC2086
		run labels2tag $o "$f"
	done
done
for m in "$R/lab/support-matrix.csv" "$F/matrix/lab.csv" "$F/matrix/skopeo.json" "$F/matrix/tags.txt"; do
	"$N/labels2tag" "$D/lab-nodes.json" >"$W/tags" 2>/dev/null
	for o in "" -e -D "-D -e"; do
		# shellcheck disable=SC2086
		run matrix-grep $o -m "$m" "$W/tags"
	done
done
for p in "$D"/pdb-*.json "$D/pdb-lab.yaml" "$F/pdb/lab.json"; do
	for o in "lab-node-1" "-s lab-node-1" "lab-node-0" -a "-a -s" -p; do
		# shellcheck disable=SC2086
		run pdb-check $o "$p"
	done
done
for pol in "$D/policy/clean.json" "$D/policy/hard.json" "$D/targets/cp-crd.json" "$D/targets/nvd.json" "$F/targets/policy.json" "$F/targets/drivers.json" "$F/targets/drivers.yaml"; do
	run upgrade-policy "$pol" "$D/lab-nodes.json"
	run upgrade-policy -U drain.enable=true "$pol" "$D/lab-nodes.json"
	run upgrade-policy "$pol"
done
for o in "-v 550.90.07" "-v 550.90.07 -p 2" "-v 550.90.07 -u 50%" "-D -v 550.90.07 -p 3 -u 1"; do
	# shellcheck disable=SC2086
	run rollout-plan $o "$F/plan-facts/fleet" "$F/plan-draws/draws"
done
"$N/labels2tag" -F -b 550 "$D/lab-nodes.json" >"$W/facts"
"$N/pdb-check" -a "$D/pdb-lab.json" >"$W/draws"
run rollout-plan -v 550.90.07 "$W/facts" "$W/draws"
run rollout-plan -D -v 550.90.07 -p 1 "$W/facts" "$W/draws"
echo drv-audit >"$W/audit"
run report-fmt -a "$W/audit" -m "$R/lab/support-matrix.csv" lab-node-1 "$D/lab-nodes.json"
printf 'OK\n' >"$W/audit"
run report-fmt -a "$W/audit" -m "$R/lab/support-matrix.csv" lab-node-1 "$D/lab-nodes.json"
for j in "$D"/upgrade/*.json; do run gate-pod -r "$j"; done
echo "cases: $n, differing: $bad; exit statuses (count status): $(sort "$W/rcs" | uniq -c | tr -s ' \n' '  ')"
[ "$bad" = 0 ]
