#!/bin/sh
# The fault table: every script against a kubectl that, for each answer in
# turn (the Nth GET or write of a clean run's; a write, drv-upgrade.sh's
# merge patch, is made and its answer, the node after it, replaced),
# answers exit 0 with an empty body, a Status, a watch's ERROR event, the
# real answer cut in half, a list of another kind, or (where the answer is a
# list) one page of it, metadata.continue set.  Each run must exit 2 (a poll that tries again, or the audit after a
# finished upgrade, say so and go on: the table says where), print no OK,
# and make no write after the fault but those that put a node back (its
# uncordon, its state to upgrade-failed or as it was) and the release of the
# rollout's lease; checked from the calls the API received.
. "$(dirname "$0")/lib.sh"

S=nvidia.com/gpu-driver-upgrade-state
NEW=550.90.07
{ cat "$ROOT/lab/support-matrix.csv"; echo 550,5.15.0-107-generic,ubuntu22.04; } >matrix.csv
M=$PWD/matrix.csv

# The wrapper: $FAULT_INNER answers, but for the $FAULT_AT-th answer, which
# gets $FAULT.  Every call is a line of ./calls, in order (GET n ARGS, WRITE
# n ARGS, CALL ARGS, FAULT n); ./gets counts the answers.  A page of an
# answer that is not a list is the answer itself, and NOFAULT n says so.
cat >fk <<'STUB'
#!/bin/sh
D=$FAULT_DIR
case " $* " in
*" get "* | *" patch "*)
	n=$(($(cat "$D/gets" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$D/gets"
	kind=GET
	case " $* " in *" patch "*) kind=WRITE ;; esac
	echo "$kind $n $*" >>"$D/calls"
	if [ "$n" = "${FAULT_AT:-0}" ]; then
		echo "FAULT $n $FAULT" >>"$D/calls"
		# A write is made; only its answer is lost.
		[ "$kind" = GET ] || [ "$FAULT" = trunc ] || [ "$FAULT" = page ] || "$FAULT_INNER" "$@" >/dev/null 2>&1
		case $FAULT in
		empty) ;;
		status) echo '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}' ;;
		error) echo '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}}' ;;
		trunc)
			"$FAULT_INNER" "$@" >"$D/full" 2>/dev/null
			head -c $(($(wc -c <"$D/full") / 2)) "$D/full"
			;;
		other) echo '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}' ;;
		page)
			"$FAULT_INNER" "$@" >"$D/full" 2>/dev/null
			perl -MJSON::PP -0777 -ne '
				my $d = eval { JSON::PP->new->decode($_) };
				exit 1 unless ref $d eq "HASH" && ($d->{kind} // "") =~ /List$/;
				$d->{metadata}{continue} = "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ";
				print JSON::PP->new->canonical->encode($d), "\n"' "$D/full" || {
				cat "$D/full"
				echo "NOFAULT $n" >>"$D/calls"
			}
			;;
		esac
		exit 0
	fi
	;;
*) echo "CALL $*" >>"$D/calls" ;;
esac
exec "$FAULT_INNER" "$@"
STUB
chmod +x fk
FAULT_DIR=$PWD
export FAULT_DIR

# inner: what t_fake_* made ./kubectl becomes the wrapper's inner kubectl.
inner() {
	mv kubectl inner
	FAULT_INNER=$PWD/inner
	KUBECTL=$PWD/fk
	export FAULT_INNER KUBECTL
}

# forward_writes: the calls after the fault that move things forward (not
# a GET, not putting the node back, not an Event, not the lease's release);
# into ./fwd.
forward_writes() {
	sed -n '/^FAULT /,$p' calls | sed 1d | grep -v \
		-e '^GET ' \
		-e '^CALL .* uncordon lab-node-1$' \
		-e "^WRITE [0-9]* .* patch node lab-node-1 .* -p {\"metadata\":{\"labels\":{\"$S\":\"upgrade-failed\"}" \
		-e '^CALL .* create --raw /api/v1/namespaces/default/events ' \
		-e "^CALL .* label node lab-node-1 --overwrite $S=upgrade-failed\$" \
		-e "^CALL .* label node lab-node-1 $S-\$" \
		-e '^CALL .* config view ' \
		-e '^CALL .* replace -f ' \
		-e '^CALL .* delete lease' >fwd
}

# table NAME SETUP EXCEPT CMD...: CMD after SETUP, clean, then with each
# fault at each of the clean run's GETs.  EXCEPT GET-ARGS prints the status
# expected for a fault there when it is not 2, and "go" when the run may go
# on with forward writes (a poll trying again).
table() {
	name=$1 setup=$2 except=$3
	shift 3
	rm -f calls gets
	$setup
	t_run "$@"
	cp out clean.out
	[ "$rc" -le 1 ]
	t_ok $? "$name: a clean run (exit $rc)"
	[ "$rc" -le 1 ] || t_diag <err
	n=$(cat gets 2>/dev/null || echo 0)
	cp calls clean.calls 2>/dev/null || : >clean.calls
	i=1
	while [ "$i" -le "$n" ]; do
		args=$(sed -n "s/^\(GET\|WRITE\) $i //p" clean.calls)
		want=$($except "$args")
		faults="empty status error trunc other page"
		# Under valgrind each GET gets one fault, in turn (GET 1 empty, GET 2
		# a Status, ...): every GET is still met, and every fault, in a sixth
		# of the time; the full table runs in make check and make check-asan.
		if [ "${GPUDRV_VALGRIND:-0}" = 1 ]; then
			case $(((i - 1) % 6)) in
			0) faults=empty ;; 1) faults=status ;; 2) faults=error ;; 3) faults=trunc ;; 4) faults=other ;; *) faults=page ;;
			esac
		fi
		for f in $faults; do
			rm -f calls gets
			$setup
			FAULT_AT=$i FAULT=$f t_run "$@"
			# A page of what is not a list is no fault.
			! grep -qx "NOFAULT $i" calls || continue
			case $want in
			'') t_rc 2 "$name: answer $i ($args), $f" ;;
			go)
				# A poll: the answer is not used, the look is tried again.
				t_rc 0 "$name: answer $i ($args), $f: a poll, tried again"
				t_grep "$name: answer $i, $f: says the look failed and is tried again" err \
					"^drv-upgrade.sh: lab-node-1: warning: cannot read the node while waiting for the driver: .*; looking again$"
				continue
				;;
			*) t_rc "$want" "$name: answer $i ($args), $f: $want, and said" ;;
			esac
			if grep -q -e '^OK$' -e '^audit: OK$' out; then
				t_ok 1 "$name: answer $i, $f: no OK"
				t_diag <out
			else
				t_ok 0 "$name: answer $i, $f: no OK"
			fi
			if [ "$want" != go ]; then
				forward_writes
				if [ -s fwd ]; then t_ok 1 "$name: answer $i, $f: no write after the fault"; t_diag <fwd; else
					t_ok 0 "$name: answer $i, $f: no write after the fault"
				fi
			fi
		done
		i=$((i + 1))
	done
}
none() { :; }

# The read-only scripts.
cluster() {
	t_fake_cluster
	inner
}
table drv-tag.sh cluster none drv-tag.sh lab-node-1
table drv-audit.sh cluster none drv-audit.sh -m "$M"
table drv-states.sh cluster none drv-states.sh -m "$M"
# Nodes whose states need the budgets and pods, and the driver and
# validator pods: each of those four GETs faulted too.
states() {
	t_fake_pods
	t_state_nodes "$(t_state_node lab-node-1 drain-required - true True 60)" \
		"$(t_state_node lab-node-2 pod-restart-required - true True 60)" >nodes.json
	t_gpu_pods "$(t_gpu_pod lab-node-2 gpu-operator/driver-x Running False 3)" >driver.json
	inner
}
table "drv-states.sh, a drain and a driver under way" states none drv-states.sh -m "$M"
ops() {
	t_fake_ops
	mv ops kubectl
	inner
	FAKE_OUT=$DATA/lab-nodes.json FAKE_CP=$DATA/targets/cp-crd.json FAKE_NVD=$DATA/targets/nvd.json
	export FAKE_OUT FAKE_CP FAKE_NVD
}
table "drv-audit.sh -t" ops none drv-audit.sh -t -m "$M"
table "drv-states.sh -t" ops none drv-states.sh -t -m "$M"

# drv-upgrade.sh, the whole way (a driver pod restarted, and the new driver
# reported after it, as gpu-feature-discovery would) and with -j.  The
# validation poll tries a look again (it says so), and the audit after a
# finished upgrade cannot undo the upgrade: it is said, and the upgrade's
# exit stays 0.
up_except() {
	case $1 in
	*"get --raw /api/v1/nodes?"*) echo 0 ;; # drv-audit.sh, after the upgrade
	*"get --raw /api/v1/nodes/lab-node-1")
		# The looks at the node: the second is the poll for the driver.
		nth=$(awk -v i="$i" '{ print } $2 == i { exit }' clean.calls | grep -c ' get --raw /api/v1/nodes/lab-node-1$')
		[ "$nth" != 2 ] || echo go
		;;
	esac
}
FAKE_NEW_DRIVER=$NEW
export FAKE_NEW_DRIVER
table drv-upgrade.sh cluster up_except drv-upgrade.sh -m "$M" lab-node-1 "$NEW"
# The cluster's own policy where a pod holds a GPU: evicted, then the
# node's pods looked at until it is gone (a look is a GET of a list too).
gpu_cluster() {
	cluster
	FAKE_PDB=$DATA/pdb-gpu-ok.json
	export FAKE_PDB
}
table "drv-upgrade.sh, a pod that holds a GPU" gpu_cluster up_except drv-upgrade.sh -m "$M" lab-node-1 "$NEW"
FAKE_PDB=$DATA/pdb-lab-ok.json
# The lab's policy: the drain of every pod.
# shellcheck disable=SC2086 # T_DRAIN is words
table "drv-upgrade.sh, the drain" cluster up_except drv-upgrade.sh $T_DRAIN -m "$M" lab-node-1 "$NEW"
unset FAKE_NEW_DRIVER
table "drv-upgrade.sh -j" cluster up_except drv-upgrade.sh -L -N -j job=train -J 5 -m "$M" lab-node-1 "$NEW"

# drv-rollout.sh, the plan and the run, each node's drv-upgrade.sh a
# stand-in that says it started (in ./calls: nothing may start after a
# fault) and does the upgrade in the fake API.
mkdir -p x/bin x/lib/gpudrv
cp "$BIN/drv-rollout.sh" x/bin/
cp "$BIN"/../lib/gpudrv/*.sh x/lib/gpudrv/
for t in labels2tag matrix-grep pdb-check rollout-plan upgrade-policy; do ln -s "$(command -v "$t")" "x/bin/$t"; done
cat >x/bin/drv-upgrade.sh <<'STUB'
#!/bin/sh
for a; do node=$v; v=$a; done
echo "CALL drv-upgrade.sh $node" >>"$FAULT_DIR/calls"
exec 8>"$FAULT_DIR/facts.lock"
flock 8
awk -F '\t' -v OFS='\t' -v n="$node" -v v="$v" '$1 == n { $2 = v; $3 = "upgrade-done" } { print }' \
	"$FAULT_DIR/facts" >"$FAULT_DIR/facts.new" && mv "$FAULT_DIR/facts.new" "$FAULT_DIR/facts"
flock -u 8
echo "$node upgrade-done"
echo "$node upgrade-done $v"
STUB
chmod +x x/bin/drv-upgrade.sh
GPUDRV_LOCK_DIR=$PWD/locks
export GPUDRV_LOCK_DIR
mkdir -p locks
chmod 700 locks
fleet() {
	rm -f lease lease.log
	t_fake_fleet
	inner
	t_fleet n1:535.183.06::::True n2:535.183.06::::True n3:535.183.06::::True
}
table "drv-rollout.sh -D" fleet none x/bin/drv-rollout.sh -D -L -p 1 -u 100% -m "$M" "$NEW"
table drv-rollout.sh fleet none x/bin/drv-rollout.sh -L -p 2 -u 100% -m "$M" "$NEW"
# No summary is made up after a fault: the last line is never "done ...".
rm -f calls gets
fleet
FAULT_AT=5 FAULT=empty t_run x/bin/drv-rollout.sh -L -p 1 -u 100% -m "$M" "$NEW"
t_rc 2 "drv-rollout.sh: the node list after the first node ended is empty"
t_run grep -c '^done ' out
t_out "no summary line is made up" 0
# A whole answer that no longer lists the rollout's nodes (deleted): each
# said, counted left, never done.
rm -f calls gets
fleet
cat >x/bin/drv-upgrade.sh.gone <<'STUB'
#!/bin/sh
for a; do node=$v; v=$a; done
exec 8>"$FAULT_DIR/facts.lock"
flock 8
grep -v "^$node	" "$FAULT_DIR/facts" >"$FAULT_DIR/facts.new"; mv "$FAULT_DIR/facts.new" "$FAULT_DIR/facts"
echo "$node upgrade-required"
exit 0
STUB
mv x/bin/drv-upgrade.sh x/bin/drv-upgrade.sh.done
cp x/bin/drv-upgrade.sh.gone x/bin/drv-upgrade.sh
chmod +x x/bin/drv-upgrade.sh
t_run x/bin/drv-rollout.sh -L -p 3 -u 100% -m "$M" "$NEW"
t_rc 1 "drv-rollout.sh: the nodes deleted during the batch"
last_line=$(tail -n 1 out)
t_is "counted left, not done" "$last_line" "done 0 failed 0 skipped 0 left 3"
t_grep "each said" err "^drv-rollout.sh: n2: no longer listed among the GPU nodes: left as it is$"
t_done
