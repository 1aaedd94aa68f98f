#!/bin/sh
# drv-rollout.sh's lock: the Lease gpudrv/gpudrv-rollout in the cluster
# (t/fake-lease.sh keeps it in ./lease and answers get, create and replace,
# 409 Conflict on a stale resourceVersion) and the local lock file in a
# directory only the user can write.  Each case is checked by what is left
# behind: the lease, the requests made, the nodes' upgrades started.
# t/0985 does it on the sandbox.
. "$(dirname "$0")/lib.sh"

NEW=550.90.07
t_matrix
t_rollout_tree
D=$PWD
t_fake_fleet
mkdir -m 700 locks
GPUDRV_LOCK_DIR=$PWD/locks
export GPUDRV_LOCK_DIR
unset GPUDRV_LEASE_NAMESPACE GPUDRV_LEASE_DURATION
HOST=$(uname -n)
HOST=$(printf '%s' "$HOST" | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63)
LOCKF=$GPUDRV_LOCK_DIR/gpudrv-rollout-$(id -u).$(printf '%s' https://127.0.0.1:6443 | cksum | cut -d' ' -f1).lock
L="the lease gpudrv/gpudrv-rollout (the rollout's lock)"

# drv-upgrade.sh, played by a stand-in (t/0460's, cut down): its arguments
# to up.log, its pid to kubectl.pids, its records (-P) on stdout, its words
# on stderr; by act.NODE: ok (upgrade-done at once), hang (under way until a
# signal, then upgrade-required, exit 2).
cat >x/bin/drv-upgrade.sh <<STUB
#!/bin/sh
D=$D
STUB
cat >>x/bin/drv-upgrade.sh <<'STUB'
echo "$$" >>"$D/kubectl.pids"
printf '%s\n' "$*" >>"$D/up.log"
for a; do node=$v; v=$a; done
say() { echo "drv-upgrade.sh: $*" >&2; }
st() { say "$node: nvidia.com/gpu-driver-upgrade-state=$1"; echo "$node $1"; }
set_node() {
	awk -F '\t' -v OFS='\t' -v n="$node" -v s="$1" -v v="$2" \
		'$1 == n { $3 = s; if (v != "") $2 = v } { print }' "$D/facts" >"$D/facts.$node"
	mv "$D/facts.$node" "$D/facts"
}
case $(cat "$D/act.$node" 2>/dev/null || echo ok) in
ok)
	st upgrade-done
	set_node upgrade-done "$v"
	echo "$node upgrade-done $v"
	exit 0 ;;
hang)
	trap 'set_node upgrade-required; say "$node: interrupted by SIGTERM"; echo "$node upgrade-required"
		say "$node: now: unschedulable= state=upgrade-required"; echo "$node now upgrade-required schedulable"; exit 2' TERM
	: >"$D/hung.$node" # a signal from now on is caught
	st upgrade-required
	set_node upgrade-required
	while :; do sleep 1 & wait $!; done ;;
esac
STUB
chmod +x x/bin/drv-upgrade.sh

# fresh NODE...: GPU nodes on 535, every one ok; no lease, no lock file.
fresh() {
	rm -f down act.* hung.* up.log kubectl.log kubectl.pids lease lease.* "$LOCKF"
	for n; do set -- "$@" "$n:535.183.06::::True"; shift; done
	t_fleet "$@"
}
now() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }
# lease_is RV RENEW DURATION ACQUIRE TRANSITIONS HOLDER: ./lease, as the fake keeps it.
# (under the stand-in's lock: a run's request may be under way)
lease_is() {
	(
		flock 7
		printf '%s\n' "$@" >lease
		echo "$1" >lease.rvc
	) 7>lease.lock
}
field() { sed -n "$1p" lease; }
upgrades() { if [ -f up.log ]; then grep -c . up.log; else echo 0; fi; }

# 1. A free lease: created, renewed at once (the update is proven before any
# node), released at the end; the lock file names the holder.
fresh n1
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "a rollout with no lease in the cluster"
t_err "says nothing of the lock"
t_run sed 's/ .*//' lease.log
t_out "get, create, the update at once, and the release" get create replace replace
me=$(awk '$1 == "create" { print $2 }' lease.log)
case $me in
"${HOST}_"[0-9]*_[0-9a-f]*) t_ok 0 "the holder: host, pid and a random part ($me)" ;;
*) t_ok 1 "the holder: host, pid and a random part ($me)" ;;
esac
t_run sed -n 3p lease.log
t_grep "renewed as the same holder, a compare-and-swap on the created version" out "^replace 1 $me [0-9-]*T[0-9:]*\.[0-9]\{6\}Z$"
t_is "the release: no holder" "$(field 6)" ""
t_is "and a duration of 1 s" "$(field 3)" 1
t_run sed -n 4p lease.log
t_grep "the release is a compare-and-swap on the renewed version" out "^replace 2 [0-9-]*T"
t_is "the lock file names the holder" "$(cat "$LOCKF")" "$me"
t_run ls -ld "$GPUDRV_LOCK_DIR" "$LOCKF"
t_grep "the lock file: mode 0600" out "^-rw------- .*\.lock$"
t_is "the node was upgraded" "$(upgrades)" 1

# The default lock directory: ~/.local/state/gpudrv, made mode 0700.
fresh n1
mkdir home
t_run env -u GPUDRV_LOCK_DIR HOME="$PWD/home" "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "without GPUDRV_LOCK_DIR"
t_run ls -ld home/.local/state/gpudrv
t_grep "the lock is in ~/.local/state/gpudrv, mode 0700" out "^drwx------ "
set -- home/.local/state/gpudrv/gpudrv-rollout-*.lock
[ -f "$1" ]
t_ok $? "the lock file is there"
t_run env -u GPUDRV_LOCK_DIR -u HOME "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "neither GPUDRV_LOCK_DIR nor HOME"
t_err "says what to set" "drv-rollout.sh: HOME is not set: name the directory of the rollout's lock in GPUDRV_LOCK_DIR (one only you can write)"

# A dry run takes no lock.
fresh n1
t_run "$R" $T_DRAIN -D -m "$M" "$NEW"
t_rc 0 "a dry run"
[ ! -e lease.log ] && [ ! -e "$LOCKF" ]
t_ok $? "makes no lease request and no lock file"

# 2. Held by another run: refused at once, exit 2, the holder and its
# expiry named; no node touched, the lease unchanged.
fresh n1
lease_is 7 "$(now)" 60 2026-01-01T00:00:00.000000Z 3 other-host_4242_cafe
cp lease lease.before
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "a lease held by another run"
t_grep "names the holder and when it expires" err \
	"^drv-rollout.sh: another rollout holds $L: other-host_4242_cafe (acquired 2026-01-01T00:00:00.000000Z, renewed [0-9T:.Z-]*, for 60s: it expires at [0-9T:.Z-]* by this machine's clock, in [0-9]*s, unless renewed)$"
t_grep "that nothing was changed, and how to clear it by hand" err \
	"^drv-rollout.sh: nothing was changed; run again once it has ended (or its lease expired; if its run is dead, an administrator may clear it at once: kubectl -n gpudrv delete lease gpudrv-rollout)$"
t_out "nothing on stdout"
t_cmp "the lease is unchanged" lease.before lease
t_is "no node was touched" "$(upgrades)" 0
t_run grep -c ' get nodes' kubectl.log
t_out "the nodes are not even read" 0

# 3. Expired: watched for its duration, unchanged, then taken over (a
# compare-and-swap on the version watched), then released.
fresh n1
lease_is 7 2020-01-01T00:00:00.000000Z 3 2020-01-01T00:00:00.000000Z 3 other-host_4242_cafe
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "an expired lease"
t_grep "says it watches it first" err \
	"^drv-rollout.sh: $L looks expired by this machine's clock: other-host_4242_cafe (.*); it is taken over only once it has stayed unchanged for 3s (its holder's clock may be behind this one's)$"
t_grep "says whose lease it took over" err \
	"^drv-rollout.sh: took over $L from an expired lease: other-host_4242_cafe (acquired 2020-01-01T00:00:00.000000Z, renewed 2020-01-01T00:00:00.000000Z, for 3s: it expires at 2020-01-01T00:00:03.000000Z by this machine's clock, [0-9]*s ago, unless renewed)$"
t_ok "$([ "$(grep -c '^get' lease.log)" -ge 2 ]; echo $?)" "it was read again while watched"
t_run grep -m1 '^replace' lease.log
t_grep "a replace with the version read" out "^replace 7 ${HOST}_[0-9]*_[0-9a-f]* "
t_is "one more transition" "$(field 5)" 4
t_is "released at the end" "$(field 6)" ""
t_is "the node was upgraded" "$(upgrades)" 1

# 3b. A live run whose clock is 5 minutes behind this machine's: its lease
# looks expired here, but it is renewed while watched: refused, nothing
# changed (this run's own clock judges, never the holder's renewTime).
fresh n1
behind() { date -u -d "@$(($(date +%s) - 300))" +%Y-%m-%dT%H:%M:%S.000000Z; }
lease_is 7 "$(behind)" 6 2020-01-01T00:00:00.000000Z 3 other-host_4242_cafe
: >renewing
(
	rv=7
	while [ -e renewing ]; do
		sleep 1
		rv=$((rv + 1))
		lease_is "$rv" "$(behind)" 6 2020-01-01T00:00:00.000000Z 3 other-host_4242_cafe
	done
) &
renewer=$!
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
rm -f renewing
wait "$renewer"
t_rc 2 "a live lease that looks expired by this machine's clock"
t_grep "says it watches it" err "^drv-rollout.sh: $L looks expired by this machine's clock: other-host_4242_cafe (.*); it is taken over only once it has stayed unchanged for 6s"
t_grep "and that it was renewed meanwhile" err "^drv-rollout.sh: another rollout holds $L: it changed meanwhile, other-host_4242_cafe ("
t_grep "nothing changed" err "^drv-rollout.sh: nothing was changed; run again once it has ended (or its lease expired)$"
t_run grep -c '^replace' lease.log
t_out "no write to the lease" 0
t_is "no node was touched" "$(upgrades)" 0

# Released (no holder): taken, quietly.
fresh n1
lease_is 9 2026-01-01T00:00:00.000000Z 1 2026-01-01T00:00:00.000000Z 4 ""
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "a released lease"
t_err "is taken without a word"

# 4. A race lost: another run wins between the read and the write.
fresh n1
lease_is 7 2020-01-01T00:00:00.000000Z 2 2020-01-01T00:00:00.000000Z 3 old-host_1_dead
: >lease.race
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "a takeover that loses the race (409)"
t_grep "names the winner" err "^drv-rollout.sh: another rollout took $L first: other-host_4242_cafe (acquired "
t_grep "and that nothing was changed" err "^drv-rollout.sh: nothing was changed; run again once it has ended (or its lease expired)$"
t_is "the winner keeps the lease" "$(field 6)" other-host_4242_cafe
t_run grep -c '^replace' lease.log
t_out "one write tried, none after the conflict (no release of another's lease)" 1
t_is "no node was touched" "$(upgrades)" 0
fresh n1
: >lease.race
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "a create that loses the race (AlreadyExists)"
t_grep "names the winner" err "^drv-rollout.sh: another rollout took $L first: other-host_4242_cafe (acquired "
t_is "the winner keeps the lease" "$(field 6)" other-host_4242_cafe
t_is "no node was touched" "$(upgrades)" 0

# 5. The lease of a run of this machine that is dead (SIGKILL), named by the
# lock file: taken over at once, without waiting for it to expire.
fresh n1
sh -c 'exit 0' &
dead=$!
wait "$dead"
echo "${HOST}_${dead}_abcd" >"$LOCKF"
lease_is 7 "$(now)" 60 "$(now)" 0 "${HOST}_${dead}_abcd"
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "the lease of a dead run of this machine"
t_grep "says so" err "^drv-rollout.sh: took over $L from a run on this machine that is dead (pid $dead)$"
t_is "the node was upgraded" "$(upgrades)" 1
# Its pid alive: held.
fresh n1
echo "${HOST}_$$_abcd" >"$LOCKF"
lease_is 7 "$(now)" 60 "$(now)" 0 "${HOST}_$$_abcd"
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "the lease of a run of this machine whose pid runs"
t_grep "is held" err "^drv-rollout.sh: another rollout holds $L: ${HOST}_$$_abcd "
# Another machine's: held, whatever pid it names.
fresh n1
echo "other-host_${dead}_abcd" >"$LOCKF"
lease_is 7 "$(now)" 60 "$(now)" 0 "other-host_${dead}_abcd"
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "the lease of another machine, though the lock file names it"
t_grep "is held" err "^drv-rollout.sh: another rollout holds $L: other-host_${dead}_abcd "

# 6. The local lock held by the upgrades of a killed run: the rerun takes
# the lease, waits for them, renews the lease meanwhile, then goes on.
fresh n1
flock "$LOCKF" sleep 4 &
holder=$!
t_until 5 sh -c "! flock -n '$LOCKF' true"
GPUDRV_LEASE_DURATION=3 t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
wait "$holder"
t_rc 0 "a rerun while the lock file is held"
t_grep "says it waits" err "^drv-rollout.sh: another drv-rollout.sh of https://127.0.0.1:6443 runs on this machine, or upgrades one started still do: waiting for them to end (lock $LOCKF)$"
n=$(grep -c "^replace [0-9]* ${HOST}_" lease.log)
[ "$n" -ge 3 ]
t_ok $? "the lease is renewed while it waits ($n updates as holder)"
t_is "released at the end" "$(field 6)" ""

# 7. A signal during a batch: the batch stopped (resumable), the lease released.
fresh n1
echo hang >act.n1
t_bg "$R" $T_DRAIN -L -m "$M" "$NEW"
t_until 10 test -e hung.n1
t_ok $? "the batch is under way"
kill -TERM "$t_pid"
t_wait 20
t_rc 2 "SIGTERM"
t_grep "says so" err "^drv-rollout.sh: interrupted by SIGTERM$"
t_grep "n1 as its run left it" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_is "the lease is released" "$(field 6)" ""
t_none_alive "no stand-in left running" kubectl.pids

# 8. A renewal that finds another holder (the lease expired while the run
# was stalled, and another run took it): the run stops as on a signal, and
# leaves that lease alone.
fresh n1
echo hang >act.n1
GPUDRV_LEASE_DURATION=3 t_bg "$R" $T_DRAIN -L -m "$M" "$NEW"
t_until 10 test -e hung.n1
t_ok $? "the batch is under way"
t_until 10 sh -c "[ \$(grep -c '^replace' lease.log) -ge 2 ]"
t_ok $? "the lease is renewed during the batch"
# (a version the run's renewals, going on meanwhile, never reach)
lease_is $(($(field 1) + 1000)) "$(now)" 60 "$(now)" 9 other-host_4242_cafe
cp lease lease.before
t_wait 20
t_rc 2 "the lease taken by another run"
t_grep "says so, naming the new holder" err \
	"^drv-rollout.sh: lost the lease gpudrv/gpudrv-rollout, the rollout's lock (last renewed [0-9]*s ago): it is now held by other-host_4242_cafe (acquired "
t_grep "the batch is stopped, n1 resumable" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_cmp "the other run's lease is left as it is" lease.before lease
t_none_alive "no stand-in left running" kubectl.pids
t_grep "the summary" out "^done 0 failed 0 skipped 0 left 1$"

# A renewal that cannot reach the API for the lease's duration: the same.
fresh n1
echo hang >act.n1
GPUDRV_LEASE_DURATION=3 t_bg "$R" $T_DRAIN -L -m "$M" "$NEW"
t_until 10 test -e hung.n1
: >lease.down
t_wait 20
rm lease.down
t_rc 2 "the lease cannot be renewed"
t_grep "says so" err "^drv-rollout.sh: could not renew the lease gpudrv/gpudrv-rollout, the rollout's lock, for [0-9]*s (kubectl said: The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?): it expires, and another rollout may take it; this run stops here, as on a signal$"
t_grep "the batch is stopped, n1 resumable" err "^drv-rollout.sh: n1: now: unschedulable= state=upgrade-required$"
t_none_alive "no stand-in left running" kubectl.pids

# 9. The lock directory and file: a symbolic link, another user's, or
# writable by group or others is refused before any request.
refused() { # refused DESC WHY
	t_rc 2 "$1"
	t_grep "says why" err "^drv-rollout.sh: the lock $2: refusing it (another user could hold the lock, or point it elsewhere); make it yours, not a link, mode 0700 (file: 0600), or name another directory in GPUDRV_LOCK_DIR; nothing was changed$"
	[ ! -e lease.log ] && [ "$(upgrades)" = 0 ]
	t_ok $? "$1: no lease request, no node touched"
}
fresh n1
mkdir -m 700 real
ln -s real linked
GPUDRV_LOCK_DIR=$PWD/linked t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
refused "a lock directory that is a symbolic link" "directory $PWD/linked is a symbolic link"
mkdir -m 777 open
chmod 777 open
GPUDRV_LOCK_DIR=$PWD/open t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
refused "a lock directory anyone can write" "directory $PWD/open can be written by group or others (drwxrwxrwx)"
GPUDRV_LOCK_DIR=/tmp t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
refused "/tmp" "directory /tmp can be written by group or others (drwxrwxrwt)"
ln -s "$PWD/elsewhere" "$LOCKF"
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
refused "a lock file that is a symbolic link" "file $LOCKF is a symbolic link"
[ ! -e elsewhere ]
t_ok $? "and nothing is made where it points"
rm -f "$LOCKF"
: >"$LOCKF"
chmod 620 "$LOCKF"
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
refused "a lock file its group can write" "file $LOCKF can be written by group or others (-rw--w----)"
if [ "$(id -u)" = 0 ]; then
	chmod 600 "$LOCKF"
	chown 65534 "$LOCKF"
	t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
	refused "a lock file of another user" "file $LOCKF belongs to uid 65534, not to you (uid 0)"
	mkdir -m 700 theirs
	chown 65534 theirs
	GPUDRV_LOCK_DIR=$PWD/theirs t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
	refused "a lock directory of another user" "directory $PWD/theirs belongs to uid 65534, not to you (uid 0)"
else
	t_skip "a lock file of another user: not root, cannot make one"
fi
rm -f "$LOCKF"

# 10. The namespace missing, and each Lease right refused: exit 2 before
# any node is touched, saying what to do.
fresh n1
: >lease.nons
t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "no namespace gpudrv"
t_err "gives the command that makes it" \
	"drv-rollout.sh: the namespace gpudrv, where the rollout's lease goes, does not exist: make it (kubectl create namespace gpudrv, or kubectl apply -f deploy/), or name another in GPUDRV_LEASE_NAMESPACE; nothing was changed"
t_is "no node was touched" "$(upgrades)" 0
for verb in get create update; do
	fresh n1
	echo "$verb" >lease.deny
	t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
	t_rc 2 "no $verb on leases"
	t_grep "relays the refusal" err "^    Error from server (Forbidden): leases.coordination.k8s.io.* cannot $verb resource \"leases\""
	t_grep "names the rights needed" err "^drv-rollout.sh: nothing was changed; the rollout's account needs get, create and update on leases in gpudrv (deploy/25-upgrader-lease.yaml; with another namespace, put that Role there)$"
	[ "$verb" != update ] || t_grep "without update: says the lease it made stays held until it expires" err \
		"^drv-rollout.sh: created $L, but cannot update it: it could be neither renewed nor released, and stays held until [0-9T:.Z-]*; kubectl said:$"
	t_is "no node was touched" "$(upgrades)" 0
	t_run grep -c ' get nodes' kubectl.log
	t_out "the nodes are not even read" 0
done

# GPUDRV_LEASE_NAMESPACE: another namespace, checked.
fresh n1
GPUDRV_LEASE_NAMESPACE=ops t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 0 "GPUDRV_LEASE_NAMESPACE=ops"
t_run grep -c -- ' -n ops ' kubectl.log
t_out "every lease request goes to ops" 4
fresh n1
GPUDRV_LEASE_NAMESPACE='a b' t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "GPUDRV_LEASE_NAMESPACE that is not a name"
t_err "says so" "drv-rollout.sh: GPUDRV_LEASE_NAMESPACE takes a namespace name, not 'a?b'"
GPUDRV_LEASE_DURATION=2 t_run "$R" $T_DRAIN -L -m "$M" "$NEW"
t_rc 2 "GPUDRV_LEASE_DURATION under 3 s"
t_err "says so" "drv-rollout.sh: GPUDRV_LEASE_DURATION takes seconds, 3 or more (60, 60s, 2m), not '2'"
t_done
