# lease.sh: the rollout's lock, a Lease in the cluster, and the lock file
# on this machine (POSIX sh; sourced by drv-rollout.sh alone, after
# runtime.sh and api.sh).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# One rollout a cluster at a time, from whatever machine: a
# coordination.k8s.io/v1 Lease, $lease_ns/$lease_name, held as controllers'
# leader election holds theirs.  Taken only when absent (create) or free:
# released (no holder), expired, or the lease of a run of this user on this
# machine that is dead (see rollout_lock).  Expired is judged as client-go's
# leader election judges it: a lease that looks expired by this machine's
# clock (renewTime + leaseDurationSeconds past) is watched, and taken only
# once it has stayed unchanged (its resourceVersion) for its
# leaseDurationSeconds by this run's own monotonic clock: the holder's
# clock may be behind this one's.  (A lease that does not look expired is
# refused at once: refusing never upgrades a node twice.)  Every update is
# a compare-and-swap (kubectl replace with the resourceVersion read: the
# API server answers 409 Conflict to the loser of a race).  Renewed every third of its duration while the run goes on;
# released, by a compare-and-swap too, on the way out (gpudrv_cleanup).  A
# renewal that finds another holder stops the run as abort does.
lease_ns=${GPUDRV_LEASE_NAMESPACE:-gpudrv}
lease_name=gpudrv-rollout
lease_for=60 # leaseDurationSeconds (GPUDRV_LEASE_DURATION)
lease_every=20
lease_me=    # this run's holderIdentity: host_pid_random
lease_rv=    # the resourceVersion this run last wrote: set while it holds the lease
lease_at=0   # when (this machine's clock) it was last taken or renewed
lease_mat=0  # the same, by the monotonic clock (mono), which times renewals
lease_next=0 # no renewal tried before then (mono; after a failed one)
lease_acq=   # this run's acquireTime
lease_tr=0   # leaseTransitions
lease_why=   # after a failed lease_put: what kubectl said, its last line
gpudrv_hooks="$gpudrv_hooks lease_release"

# mono: seconds by a clock that only goes forward (the time since boot),
# whatever is done to this machine's clock meanwhile.
mono() {
	if read -r mo_up mo_rest </proc/uptime 2>/dev/null; then
		echo "${mo_up%%.*}"
	else
		date +%s
	fi
}

# lease_time EPOCH: as a MicroTime: RFC 3339, UTC, microseconds (GNU date,
# which coreutils' timeout(1) comes with).
lease_time() {
	date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000000Z
}
# lease_epoch TIME: an RFC 3339 time in seconds since the epoch; nothing when
# it is not one (GNU date reads more than RFC 3339: the form is checked first).
lease_epoch() {
	printf '%s\n' "$1" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$' || return 0
	date -u -d "$1" +%s 2>/dev/null || :
}

# lease_read: the lease as the API has it, into lr_rv, lr_renew, lr_for,
# lr_acq, lr_tr and lr_holder (the holder last: it may hold any character);
# status 1 when there is none, 2 when it cannot be read (kubectl's words in
# $gpudrv_tmp/lease.err).
lease_read() {
	kc "$gpudrv_tmp/lease" "$gpudrv_tmp/lease.err" -n "$lease_ns" get leases.coordination.k8s.io "$lease_name" \
		-o 'jsonpath={.metadata.resourceVersion}{"\n"}{.spec.renewTime}{"\n"}{.spec.leaseDurationSeconds}{"\n"}{.spec.acquireTime}{"\n"}{.spec.leaseTransitions}{"\n"}{.spec.holderIdentity}' || {
		if grep -q '(NotFound)' "$gpudrv_tmp/lease.err"; then return 1; fi
		lease_why=$(grep -v '^[[:space:]]*$' "$gpudrv_tmp/lease.err" | tail -n 1 | cut -c1-300)
		return 2
	}
	lr_rv=$(sed -n 1p "$gpudrv_tmp/lease")
	lr_renew=$(sed -n 2p "$gpudrv_tmp/lease")
	lr_for=$(sed -n 3p "$gpudrv_tmp/lease")
	lr_acq=$(sed -n 4p "$gpudrv_tmp/lease")
	lr_tr=$(sed -n 5p "$gpudrv_tmp/lease")
	lr_holder=$(sed -n '6,$p' "$gpudrv_tmp/lease")
	case $lr_rv in '' | *[!0-9A-Za-z._-]*)
		lease_why="no resourceVersion in kubectl's answer"
		: >"$gpudrv_tmp/lease.err"
		say "the lease $lease_ns/$lease_name: $lease_why"
		return 2
		;;
	esac
	case $lr_for in '' | *[!0-9]*) lr_for=0 ;; esac
	case $lr_tr in '' | *[!0-9]*) lr_tr=0 ;; esac
	return 0
}
# lease_who: the holder read, made safe to print; its times, and when it expires.
lease_who() {
	lw_h=$(printf '%s' "$lr_holder" | tr -c 'A-Za-z0-9._:/@-' '?' | cut -c1-120)
	lw_r=$(lease_epoch "$lr_renew")
	[ -n "$lw_r" ] || lw_r=$(lease_epoch "$lr_acq")
	if [ -z "$lw_r" ]; then
		echo "$lw_h (no renewTime: it never expires by itself)"
		return
	fi
	lw_x=$((lw_r + lr_for))
	lw_in=$((lw_x - $(date +%s)))
	if [ "$lw_in" -ge 0 ]; then lw_in="in ${lw_in}s"; else lw_in="$((-lw_in))s ago"; fi
	echo "$lw_h (acquired ${lr_acq:-?}, renewed ${lr_renew:-?}, for ${lr_for}s: it expires at $(lease_time "$lw_x") by this machine's clock, $lw_in, unless renewed)"
}
# lease_expired: 0 when the lease read was not renewed in time.
lease_expired() {
	le_r=$(lease_epoch "$lr_renew")
	[ -n "$le_r" ] || le_r=$(lease_epoch "$lr_acq")
	[ -n "$le_r" ] && [ $((le_r + lr_for)) -lt "$(date +%s)" ]
}

# lease_put create|take|renew|release [RV]: writes the lease (take, renew
# and release: a compare-and-swap on RV); the new resourceVersion in
# $lease_rv.  Status 1 on a conflict (409, or created meanwhile), 2 else;
# kubectl's last words in $lease_why.
lease_put() {
	lp_now=$(date +%s)
	lp_t=$(lease_time "$lp_now")
	lp_rv=${2:-}
	case $1 in
	create | take) lease_acq=$lp_t ;;
	esac
	if [ "$1" = release ]; then
		lp_spec="\"leaseDurationSeconds\":1,\"acquireTime\":\"$lp_t\",\"renewTime\":\"$lp_t\",\"leaseTransitions\":$lease_tr"
	else
		lp_spec="\"holderIdentity\":\"$lease_me\",\"leaseDurationSeconds\":$lease_for,\"acquireTime\":\"$lease_acq\",\"renewTime\":\"$lp_t\",\"leaseTransitions\":$lease_tr"
	fi
	printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s","namespace":"%s",%s"labels":{"app.kubernetes.io/part-of":"gpudrv"}},"spec":{%s}}\n' \
		"$lease_name" "$lease_ns" "${lp_rv:+\"resourceVersion\":\"$lp_rv\",}" "$lp_spec" >"$gpudrv_tmp/lease.json"
	if [ "$1" = create ]; then lp_verb=create; else lp_verb=replace; fi
	if kc "$gpudrv_tmp/lease.rv" "$gpudrv_tmp/lease.err" -n "$lease_ns" "$lp_verb" -f "$gpudrv_tmp/lease.json" \
		-o 'jsonpath={.metadata.resourceVersion}'; then
		lease_rv=$(cat "$gpudrv_tmp/lease.rv")
		[ -n "$lease_rv" ] || lease_rv=unknown
		lease_at=$lp_now
		lease_mat=$(mono)
		return 0
	fi
	lease_why=$(grep -v '^[[:space:]]*$' "$gpudrv_tmp/lease.err" | tail -n 1 | cut -c1-300)
	grep -q -e '(Conflict)' -e '(AlreadyExists)' "$gpudrv_tmp/lease.err" && return 1
	return 2
}

# lease_take PRIOR: takes the lease, or exits 2 saying who holds it.  PRIOR:
# the holder this user's lock file names, a run of this machine; a lease
# still held by it is taken over when that run is dead (rollout_lock holds
# the file only once nothing of that run is left).
lease_take() {
	case $lease_ns in
	'' | -* | *- | *[!a-z0-9-]*) die "GPUDRV_LEASE_NAMESPACE takes a namespace name, not '$(printf '%s' "$lease_ns" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'" ;;
	esac
	[ "${#lease_ns}" -le 63 ] || die "GPUDRV_LEASE_NAMESPACE: over 63 characters"
	if [ -n "${GPUDRV_LEASE_DURATION:-}" ]; then
		lease_for=$(secs "$GPUDRV_LEASE_DURATION") || lease_for=0
		[ "$lease_for" -ge 3 ] ||
			die "GPUDRV_LEASE_DURATION takes seconds, 3 or more (60, 60s, 2m), not '$GPUDRV_LEASE_DURATION'"
	fi
	lease_every=$((lease_for / 3))
	lt_host=$(uname -n)
	lt_host=$(printf '%s' "$lt_host" | tr -c 'A-Za-z0-9.-' '-' | cut -c1-63)
	lt_rand=$(od -An -N4 -tx4 /dev/urandom 2>/dev/null | tr -dc '0-9a-f')
	[ -n "$lt_rand" ] || lt_rand=$(awk 'BEGIN { srand(); printf "%08x", rand() * 4294967295 }')
	lease_me=${lt_host:-host}_$$_$lt_rand
	lt_what="the lease $lease_ns/$lease_name (the rollout's lock)"
	lt_st=0
	lease_read || lt_st=$?
	if [ "$lt_st" = 2 ]; then
		[ ! -s "$gpudrv_tmp/lease.err" ] || kubectl_said "cannot read $lt_what" "$gpudrv_tmp/lease.err"
		lease_rbac
	fi
	lt_old=
	if [ "$lt_st" = 1 ]; then
		lease_tr=0
		lt_st=0
		lease_put create || lt_st=$?
		if [ "$lt_st" = 2 ] && grep -q "namespaces \"$lease_ns\" not found" "$gpudrv_tmp/lease.err"; then
			die "the namespace $lease_ns, where the rollout's lease goes, does not exist: make it (kubectl create namespace $lease_ns, or kubectl apply -f deploy/), or name another in GPUDRV_LEASE_NAMESPACE; nothing was changed"
		fi
		if [ "$lt_st" = 2 ]; then
			kubectl_said "cannot create $lt_what" "$gpudrv_tmp/lease.err"
			lease_rbac
		fi
		# Made: now the update that renews and releases it, at once, so
		# that a role without it stops the run before any node is touched.
		if [ "$lt_st" = 0 ]; then
			lt_rv=$lease_rv
			lease_rv=
			lease_put renew "$lt_rv" || {
				kubectl_said "created $lt_what, but cannot update it: it could be neither renewed nor released, and stays held until $(lease_time $((lease_at + lease_for)))" "$gpudrv_tmp/lease.err"
				lease_rbac
			}
		fi
	else
		lt_pid=${lr_holder%_*}
		lt_pid=${lt_pid##*_}
		if [ -z "$lr_holder" ]; then
			:
		elif [ -n "$1" ] && [ "$lr_holder" = "$1" ] && [ "${1%%_*}" = "$lt_host" ] &&
			! kill -0 "$lt_pid" 2>/dev/null && ! [ -d "/proc/$lt_pid" ]; then
			lt_old="a run on this machine that is dead (pid $lt_pid)"
		elif lease_expired; then
			lt_old="an expired lease: $(lease_who)"
			lease_watch
		else
			say "another rollout holds $lt_what: $(lease_who)"
			die "nothing was changed; run again once it has ended (or its lease expired; if its run is dead, an administrator may clear it at once: kubectl -n $lease_ns delete lease $lease_name)"
		fi
		lease_tr=$((lr_tr + 1))
		lease_put take "$lr_rv" || lt_st=$?
		if [ "$lt_st" = 2 ]; then
			kubectl_said "cannot update $lt_what" "$gpudrv_tmp/lease.err"
			lease_rbac
		fi
	fi
	if [ "$lt_st" = 1 ]; then
		lease_rv=
		lt_st=0
		lease_read || lt_st=$?
		if [ "$lt_st" = 0 ]; then
			say "another rollout took $lt_what first: $(lease_who)"
		else
			say "another rollout changed $lt_what first ($lease_why)"
		fi
		die "nothing was changed; run again once it has ended (or its lease expired)"
	fi
	[ -z "$lt_old" ] || say "took over $lt_what from $lt_old"
	lease_next=0
}
# lease_watch: the lease read looks expired by this machine's clock, which
# may be ahead of its holder's: it is read again (every third of its
# leaseDurationSeconds, at most 10 s) until it has stayed unchanged for
# that long by the monotonic clock; a change meanwhile (its holder renewed
# it) is exit 2, nothing changed.  The take that follows is a
# compare-and-swap on the version watched.
lease_watch() {
	lw_rv=$lr_rv
	lw_for=$lr_for
	[ "$lw_for" -gt 0 ] || lw_for=$lease_for
	lw_step=$((lw_for / 3))
	[ "$lw_step" -ge 1 ] || lw_step=1
	[ "$lw_step" -le 10 ] || lw_step=10
	say "$lt_what looks expired by this machine's clock: $(lease_who); it is taken over only once it has stayed unchanged for ${lw_for}s (its holder's clock may be behind this one's)"
	lw_t0=$(mono)
	while [ $(($(mono) - lw_t0)) -lt "$lw_for" ]; do
		[ "$(time_left)" -gt 0 ] || die "the run's deadline came ($gpudrv_why) while watching $lt_what; nothing was changed"
		nap "$lw_step"
		lw_st=0
		lease_read || lw_st=$?
		case $lw_st in
		1) die "$lt_what was deleted meanwhile; nothing was changed; run again" ;;
		2)
			[ ! -s "$gpudrv_tmp/lease.err" ] || kubectl_said "cannot read $lt_what" "$gpudrv_tmp/lease.err"
			lease_rbac
			;;
		esac
		if [ "$lr_rv" != "$lw_rv" ]; then
			say "another rollout holds $lt_what: it changed meanwhile, $(lease_who)"
			die "nothing was changed; run again once it has ended (or its lease expired)"
		fi
	done
}
# lease_rbac: the end of a refused lease request.
lease_rbac() {
	if grep -q '(Forbidden)' "$gpudrv_tmp/lease.err"; then
		die "nothing was changed; the rollout's account needs get, create and update on leases in $lease_ns (deploy/25-upgrader-lease.yaml; with another namespace, put that Role there)"
	fi
	die "nothing was changed"
}

# lease_cas renew|release RV: lease_put, a compare-and-swap on RV; on a
# conflict the lease is read again, and written again at its new version
# if it is still this run's (a write whose answer was lost, a label
# added).  Status 0 written; 1 another run holds it now (read into lr_*);
# 3 it is gone; 2 not written (kubectl's last words in $lease_why).
lease_cas() {
	lc_st=0
	lease_put "$1" "$2" || lc_st=$?
	[ "$lc_st" = 1 ] || return "$lc_st"
	lc_st=0
	lease_read || lc_st=$?
	case $lc_st in
	0) [ "$lr_holder" = "$lease_me" ] || return 1 ;;
	1) return 3 ;;
	*) return 2 ;;
	esac
	lease_rv=$lr_rv
	lease_put "$1" "$lr_rv" || return 2
}

# lease_renew: the lease renewed, if a third of its time has passed since
# the last time.  Another holder found: the run stops (gpudrv_abort), as it
# does when the lease could not be renewed for its whole duration.
lease_renew() {
	[ -n "$lease_rv" ] && [ "$gpudrv_stopping" = 0 ] || return 0
	lr_now=$(mono)
	[ $((lr_now - lease_mat)) -ge "$lease_every" ] && [ "$lr_now" -ge "$lease_next" ] || return 0
	lr_st=0
	lease_cas renew "$lease_rv" || lr_st=$?
	case $lr_st in
	0) return 0 ;;
	1 | 3)
		lease_rv=
		if [ "$lr_st" = 1 ]; then lr_who="held by $(lease_who)"; else lr_who="deleted"; fi
		gpudrv_abort "lost the lease $lease_ns/$lease_name, the rollout's lock (last renewed $((lr_now - lease_mat))s ago): it is now $lr_who; this run stops here, as on a signal, so that two rollouts never move the same nodes"
		return 0
		;;
	esac
	lease_next=$((lr_now + 5))
	if [ $((lr_now + 5 - lease_mat)) -ge "$lease_for" ]; then
		lease_rv=
		gpudrv_abort "could not renew the lease $lease_ns/$lease_name, the rollout's lock, for $((lr_now - lease_mat))s (kubectl said: $lease_why): it expires, and another rollout may take it; this run stops here, as on a signal"
	fi
	say "warning: could not renew the lease $lease_ns/$lease_name (kubectl said: $lease_why); trying again in 5s (it expires at $(lease_time $((lease_at + lease_for))))"
}

# lease_release: on the way out, the lease made free (no holder), if this
# run holds it; a compare-and-swap, so that a lease another run took over
# (or one deleted) is left alone.
lease_release() {
	[ -n "$lease_rv" ] || return 0
	lr_was=$lease_rv
	lease_rv=
	lr_st=0
	lease_cas release "$lr_was" || lr_st=$?
	lease_rv=
	[ "$lr_st" = 2 ] || return 0
	say "warning: could not release the lease $lease_ns/$lease_name (kubectl said: $lease_why): it expires by itself at $(lease_time $((lease_at + lease_for)))"
}

# rollout_lock SERVER: the rollout's locks, before any node is touched: the
# Lease (lease_take), and a file in a directory only the user can write
# (GPUDRV_LOCK_DIR, default ~/.local/state/gpudrv), one per API server,
# held with flock(1) by the run and everything it starts (on fd 9), and
# naming the lease's holder.  After a run killed by SIGKILL, its
# drv-upgrade.sh runs may go on: the file is held until they end, and a
# rerun waits for them, its lease renewed meanwhile, rather than take their
# nodes a second time; it takes over the killed run's lease at once (its
# holder is the one the file names, and dead).  A directory or file that is
# a symbolic link, not the user's, or writable by group or others is
# refused: another user could hold it, or point it elsewhere.
rollout_lock() {
	command -v flock >/dev/null 2>&1 || die "flock(1) not found on PATH: install util-linux"
	if [ -n "${GPUDRV_LOCK_DIR:-}" ]; then
		rl_dir=$GPUDRV_LOCK_DIR
	else
		[ -n "${HOME:-}" ] || die "HOME is not set: name the directory of the rollout's lock in GPUDRV_LOCK_DIR (one only you can write)"
		rl_dir=$HOME/.local/state/gpudrv
	fi
	[ -e "$rl_dir" ] || [ -L "$rl_dir" ] || (umask 077 && mkdir -p -- "$rl_dir") 2>/dev/null ||
		die "cannot create the lock directory $rl_dir (GPUDRV_LOCK_DIR names another)"
	rollout_lock_own "$rl_dir" directory
	lockf=$rl_dir/gpudrv-rollout-$(id -u).$(printf '%s' "$1" | cksum | cut -d' ' -f1).lock
	if [ -e "$lockf" ] || [ -L "$lockf" ]; then rollout_lock_own "$lockf" file; fi
	# (a failed redirection of exec would end the shell: tried first)
	(umask 077 && : >>"$lockf") 2>/dev/null || die "cannot open the lock $lockf"
	exec 9>>"$lockf"
	rl_prior=$(sed -n '1{/^[A-Za-z0-9.-]*_[0-9][0-9]*_[0-9a-f][0-9a-f]*$/p;}' "$lockf")
	lease_take "$rl_prior"
	printf '%s\n' "$lease_me" >"$lockf" || die "cannot write the lock $lockf"
	flock -n 9 && return 0
	say "another drv-rollout.sh of $1 runs on this machine, or upgrades one started still do: waiting for them to end (lock $lockf)"
	until flock -n 9; do
		[ "$(time_left)" -gt 0 ] || die "the run's deadline came ($gpudrv_why) while waiting for the lock $lockf; nothing was changed"
		nap 1
		lease_renew
	done
}
# rollout_lock_own PATH WHAT: exits 2 unless PATH is a directory (WHAT
# directory) or a regular file of the user's, not a symbolic link, that
# only the user can write (files.sh: own_path).
rollout_lock_own() {
	own_path "$1" "$2" ||
		die "the lock $2 $1 $why: refusing it (another user could hold the lock, or point it elsewhere); make it yours, not a link, mode 0700 (file: 0600), or name another directory in GPUDRV_LOCK_DIR; nothing was changed"
}

