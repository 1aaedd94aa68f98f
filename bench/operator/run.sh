#!/bin/sh
# bench/operator/run.sh: make bench-operator.  The GPU Operator's own upgrade
# library (bench/out/operator-bench operator) and drv-rollout.sh (without -L)
# on the same freshly made kwok fleet of the sandbox, at each P, and the
# table (bench/README.md, "The operator side by side").
#
# Env (defaults in brackets):
#   BENCH_PACE [fast]        the drivers' pace, which sets the three below:
#                            fast: 2-10 s restarts, "16:200 4:40 1:20";
#                            real: 20-60 s, as drivers restart on real
#                            hardware, "4:40 16:200" (about 90 minutes)
#   BENCH_SCALE              the runs, P:N each (P = maxParallelUpgrades,
#                            N = GPU nodes): fast's finishes in about 40
#                            minutes on 2 cores; "1:200 4:200 16:200" is the
#                            issue's table (hours: the library's reconcile at
#                            200 nodes is ~400 requests at its client's 20 QPS)
#   BENCH_U [25%]            maxUnavailable
#   BENCH_DELAY_MIN          a driver pod is Ready DELAY_MIN..DELAY_MAX s after it
#   BENCH_DELAY_MAX            is created, uniform (kwok's delay and jitter)
#   BENCH_DRAIN_TIMEOUT [60] both tools' podDeletion.timeoutSeconds, s
# Both tools run under the GPU Operator's default upgradePolicy: the pods
# that hold a GPU deleted through the eviction API (every workload replica
# asks for one), emptyDir data kept, no drain.
#   BENCH_BUDGET_WAIT [60]   drv-rollout.sh -w
#   BENCH_TOOLS ["operator gpudrv"]
#   BENCH_DEADLINE [40m]     a run is stopped after this
# The sandbox is GPUDRV_SANDBOX_DIR / GPUDRV_SANDBOX_PORT_BASE's (as up.sh);
# started if it is not running, and left running.  The bench's GPU nodes
# carry bench.gpudrv/fleet=true, and both tools take those alone: other GPU
# nodes there (the lab's, after make lab) are left as they are.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
case ${BENCH_PACE:-fast} in
fast) pace_scale="16:200 4:40 1:20" pace_min=2 pace_max=10 ;;
real) pace_scale="4:40 16:200" pace_min=20 pace_max=60 ;;
*)
	echo "bench-operator: BENCH_PACE is fast or real, not '$BENCH_PACE'" >&2
	exit 1
	;;
esac
SCALE=${BENCH_SCALE:-$pace_scale}
U=${BENCH_U:-25%}
DMIN=${BENCH_DELAY_MIN:-$pace_min}
DMAX=${BENCH_DELAY_MAX:-$pace_max}
DT=${BENCH_DRAIN_TIMEOUT:-60}
BW=${BENCH_BUDGET_WAIT:-60}
TOOLS=${BENCH_TOOLS:-operator gpudrv}
DEADLINE=${BENCH_DEADLINE:-40m}
OLD=550.90.07
NEW=570.86.10
out=$root/bench/out/operator
mkdir -p "$out"
prog=$root/bench/out/operator-bench

say() { echo "bench-operator: $*" >&2; }
die() { say "$*"; exit 1; }

[ -x "$prog" ] || die "$prog not built (make bench-operator builds it)"

# The sandbox (up.sh says "already running" when it is).
eval "$(sh sandbox/up.sh)"
# (sandbox/lib.sh reads $here, and sets bin, state, logs and the ports)
# shellcheck disable=SC2034
here=$root/sandbox
# shellcheck source=../../sandbox/lib.sh
. sandbox/lib.sh
kubectl=$bin/kubectl
registry=127.0.0.1:$port_registry/nvidia/driver

# The driver pods' own kwok Stage: Ready after DMIN..DMAX s.  kwok reads its
# stages once, at start (--config), so its process is started again with
# this one added, as up.sh started it.  Weight 1: where it and the sandbox's
# pod-ready stage (weight 0) both match a driver pod, kwok v0.8 picks among
# the stages of positive weight only (lifecycle.Match), so pod-ready never
# makes a driver pod Ready first; every other pod matches pod-ready alone.
stage=$state/bench-driver-ready.yaml
awk -v dmin=$((DMIN * 1000)) -v dmax=$((DMAX * 1000)) '
	/^  name: pod-ready$/ { print "  name: bench-driver-ready"; next }
	/^    matchExpressions:$/ {
		print
		print "    - key: '\''.metadata.labels[\"app.kubernetes.io/component\"]'\''"
		print "      operator: '\''In'\''"
		print "      values:"
		print "      - '\''nvidia-driver'\''"
		next
	}
	/^  next:$/ {
		print "  weight: 1"
		print "  delay:"
		print "    durationMilliseconds: " dmin
		print "    jitterDurationMilliseconds: " dmax
	}
	{ print }' sandbox/stages/pod-ready.yaml >"$stage.new"
if ! grep -q 'name: bench-driver-ready' "$stage.new" || ! grep -q 'jitterDurationMilliseconds' "$stage.new"; then
	die "cannot make the driver stage from sandbox/stages/pod-ready.yaml"
fi
p=$(live_pid kwok)
[ -n "$p" ] || die "the sandbox's kwok does not run"
if ! cmp -s "$stage.new" "$stage" || ! tr '\0' '\n' <"/proc/$p/cmdline" | grep -qx "$stage"; then
	mv "$stage.new" "$stage"
	tr '\0' '\n' <"/proc/$p/cmdline" | sed 1d | awk -v s="$stage" '
		$0 == "--config" { getline f; if (f != s) print "--config\n" f; next }
		{ print }' >"$state/kwok.args"
	say "kwok (pid $p) started again with $stage (driver pods Ready after ${DMIN}-${DMAX}s)"
	kill -TERM "$p"
	i=0
	while kill -0 "$p" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 150 ] || die "kwok (pid $p) did not stop"
		sleep 0.1
	done
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$state/kwok.args"
	(
		cd "$state"
		HOME=$state/kwok-home
		export HOME
		exec setsid "$bin/kwok" "$@" --config "$stage" </dev/null >>"$logs/kwok.log" 2>&1
	) &
	echo $! >"$state/kwok.pid"
	sleep 2
	[ -n "$(live_pid kwok)" ] || die "kwok did not start again: see $logs/kwok.log"
else
	rm -f "$stage.new"
fi

# The images every node needs, before and after, in the sandbox registry.
for k in 5.15.0-107-generic-ubuntu22.04 5.15.0-119-generic-ubuntu22.04 6.8.0-45-generic-ubuntu24.04; do
	echo "550-$k"
	echo "570-$k"
done | sh sandbox/push-tags.sh nvidia/driver >/dev/null

# The kubectl gpudrv runs: counted (kubectl-count.sh).
wrap=$out/bin
mkdir -p "$wrap"
cp bench/operator/kubectl-count.sh "$wrap/kubectl"
chmod +x "$wrap/kubectl"

results=$out/results.txt
: >"$results"
host_info="$(nproc) CPU(s); $(date -u +%Y-%m-%dT%H:%MZ); load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
say "$host_info"
for run in $SCALE; do
	P=${run%%:*}
	n=${run#*:}
	case $P:$n in *[!0-9:]* | :* | *:) die "BENCH_SCALE: P:N pairs, not '$run'" ;; esac
	for tool in $TOOLS; do
		say "== $tool P=$P on $n nodes: fresh fleet"
		"$prog" setup -n "$n" -registry "$registry" -old "$OLD" -out "$out" 2>>"$out/setup.log" ||
			die "setup failed: see $out/setup.log"
		common="-n $n -p $P -u $U -registry $registry -old $OLD -new $NEW -drain-timeout $DT -deadline $DEADLINE -out $out"
		case $tool in
		operator)
			# shellcheck disable=SC2086
			"$prog" operator $common >>"$results" 2>"$out/operator-n$n-p$P.err" ||
				die "the operator run failed: see $out/operator-n$n-p$P.err"
			;;
		gpudrv)
			rm -rf "$out/logs-n$n-p$P"
			# shellcheck disable=SC2086
			PATH=$wrap:$root/bin:$PATH KUBECTL=$wrap/kubectl BENCH_KUBECTL=$kubectl \
				BENCH_REQLOG=$out/gpudrv-n$n-p$P.req BENCH_CMD_OUT=$out/gpudrv-n$n-p$P.out \
				GPUDRV_LOCK_DIR=$out/lock \
				"$prog" gpudrv $common -- "$root/bin/drv-rollout.sh" -c -p "$P" -u "$U" \
				-r "$registry" -I -n gpu-operator -s app.kubernetes.io/component=nvidia-driver -l bench.gpudrv/fleet=true \
				-t "$DT" -w "$BW" -g 300 -o "$out/logs-n$n-p$P" "$NEW" \
				>>"$results" 2>"$out/gpudrv-n$n-p$P.err" ||
				die "the gpudrv run failed: see $out/gpudrv-n$n-p$P.err"
			;;
		esac
		tail -n 1 "$results" >&2
	done
done

# The table.  The lower bound: the new driver pods' delays (created to
# Ready, as measured in that run) summed over P, or the longest one.
echo
echo "gpudrv bench-operator: $host_info"
echo "driver pods Ready ${DMIN}-${DMAX}s after creation (kwok delay + jitter); the operator's default upgradePolicy (GPU pod deletion, no drain), its timeout ${DT}s; drv-rollout.sh -w ${BW}; maxUnavailable $U"
awk '
function v(k,   i, a) { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return substr($i, length(k) + 2) } return "" }
/^result / {
	t = v("tool"); req = v("requests")
	if (t == "gpudrv") req = req " (" v("kubectl_calls") " kubectl)"
	lb = v("lower_bound_s")
	printf "%-5s %-3s %-8s %9s %5s %6s %6s %10s %7s  %-22s %8s %6s\n", v("n"), v("p"), t, v("elapsed_s"), v("done"), v("failed"), v("other"), v("violation_samples") "/" v("samples"), v("max_unavailable") "/" v("allowed_unavailable"), req, lb, (lb > 0 ? sprintf("%.2f", v("elapsed_s") / lb) : "-")
}' "$results" | {
	printf "%-5s %-3s %-8s %9s %5s %6s %6s %10s %7s  %-22s %8s %6s\n" N P tool time-s "done" failed left viol/samp maxunav "API requests" bound-s x-bound
	cat
}
