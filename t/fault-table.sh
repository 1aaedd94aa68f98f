# t/fault-table.sh: the fault table's kit, sourced after t/lib.sh by
# t/0620-fault-table.t (the read-only scripts), t/0621-fault-table-upgrade.t
# and t/0622-fault-table-rollout.t: the table is one, cut in three so that
# make runs its parts side by side.
#
# The fault table: every script against a kubectl that, for each answer in
# turn (the Nth GET or write of a clean run's; a write, drv-upgrade.sh's
# merge patch, is made and its answer, the node after it, replaced),
# answers exit 0 with an empty body, a Status, a watch's ERROR event, the
# real answer cut in half, a list of another kind, or (where the clean
# run's answer is a list) one page of it, metadata.continue set.  Each run
# must exit 2 (a watch that is started again, or the audit after a
# finished upgrade, say so and go on: the table says where), print no OK,
# and make no write after the fault but those that put a node back (its
# uncordon, its state to upgrade-failed or as it was) and the release of
# the rollout's lease; checked from the calls the API received.

S=nvidia.com/gpu-driver-upgrade-state
NEW=550.90.07
{ cat "$ROOT/lab/support-matrix.csv"; echo 550,5.15.0-107-generic,ubuntu22.04; } >matrix.csv
M=$PWD/matrix.csv

# The faults are t/kubectl's (STANDIN_FAULT_AT, "N FAULT": the Nth answer
# gets FAULT; a page of an answer that is not a list is the answer itself,
# and NOFAULT N says so).  Every call is a line of ./calls, in order (GET
# N ARGS, WRITE N ARGS, CALL ARGS, FAULT N FAULT), whichever stand-in
# directory the setup made; ./gets counts the answers.
STANDIN_TRACE=$PWD
export STANDIN_TRACE

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
# on with forward writes (a watch started again).
table() {
	name=$1 setup=$2 except=$3
	shift 3
	rm -f calls gets
	$setup
	# (and which answers are lists: only those are paged)
	STANDIN_LISTS=1
	export STANDIN_LISTS
	t_run "$@"
	unset STANDIN_LISTS
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
		faults="empty status error cut other page"
		# Run by hand under the sanitizers or valgrind (make check-asan
		# runs the tests of the C only: FILTER_TESTS, SAN_SCRIPTS), each
		# GET gets one fault, in turn
		# (GET 1 empty, GET 2 a Status, ...): every GET is still met, and
		# every fault, in a sixth of the time.  The whole table is the
		# scripts' logic, which make check runs; the lines of C it reaches,
		# other tests reach (.ci/cover; HACKING.md, CI).
		if [ "${GPUDRV_VALGRIND:-0}" = 1 ] || [ "${GPUDRV_SANITIZED:-0}" = 1 ]; then
			case $(((i - 1) % 6)) in
			0) faults=empty ;; 1) faults=status ;; 2) faults=error ;; 3) faults=cut ;; 4) faults=other ;; *) faults=page ;;
			esac
		fi
		cargs=$args cwant=$want
		for f in $faults; do
			# A page of what is not a list is no fault: not run.
			[ "$f" != page ] || grep -qx "LIST $i" clean.calls || continue
			args=$cargs want=$cwant
			rm -f calls gets
			$setup
			STANDIN_FAULT_AT="$i $f"
			export STANDIN_FAULT_AT
			t_run "$@"
			unset STANDIN_FAULT_AT
			# (nor is one of what was a list in the clean run but not now)
			! grep -qx "NOFAULT $i" calls || continue
			# The answer faulted is judged as what it was in this run (a
			# watch started again, say, puts the later answers one further).
			fargs=$(sed -n "s/^\(GET\|WRITE\) $i //p" calls)
			[ "$fargs" = "$args" ] || { args=$fargs && want=$($except "$args"); }
			case $want in
			'') t_rc 2 "$name: answer $i ($args), $f" ;;
			go)
				# A watch: the answer is not used, the watch is started again.
				t_rc 0 "$name: answer $i ($args), $f: a watch, started again"
				ft_failed=$t_failed
				t_grep "$name: answer $i, $f: says the look failed and is tried again" err \
					"^drv-upgrade.sh: lab-node-1: warning: cannot read the node while waiting for the driver: .*; looking again$"
				# (and, when it does not, what the API was asked)
				[ "$t_failed" = "$ft_failed" ] || t_diag <calls
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

# cluster: one node (t_fake_cluster).
cluster() { t_fake_cluster; }
