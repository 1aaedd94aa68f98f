# Shared by up.sh and down.sh (sourced; POSIX sh). Sets paths and ports and
# the helpers that know which processes are ours (pid files, never names).
# shellcheck shell=sh disable=SC2034,SC2154 # sets variables for the caller; $here from it

root=$(cd "$here/.." && pwd)
dir=${GPUDRV_SANDBOX_DIR:-$root/.sandbox}
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
bin=$dir/bin
state=$dir/state
logs=$dir/logs
kubeconfig=$dir/kubeconfig

# Ports, all on 127.0.0.1. Override the block with GPUDRV_SANDBOX_PORT_BASE.
base=${GPUDRV_SANDBOX_PORT_BASE:-26440}
case $base in
'' | *[!0-9]*)
	echo "sandbox: GPUDRV_SANDBOX_PORT_BASE must be a number, got '$base'" >&2
	exit 2
	;;
esac
port_etcd=$base
port_etcd_peer=$((base + 1))
port_apiserver=$((base + 3))
port_kcm=$((base + 4))
port_scheduler=$((base + 5))
port_registry=$((base + 6)) # an OCI registry (Debian's docker-registry), plain HTTP

# Start order; down.sh stops in reverse.
components="etcd kube-apiserver kube-controller-manager kube-scheduler kwok registry"

# pid of component $1 if its pid file names a live process running our
# binary (guards against a recycled pid); empty otherwise.
live_pid() {
	[ -f "$state/$1.pid" ] || return 0
	p=$(cat "$state/$1.pid" 2>/dev/null) || return 0
	case $p in '' | *[!0-9]*) return 0 ;; esac
	kill -0 "$p" 2>/dev/null || return 0
	exe=$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -n 1) || return 0
	[ "$exe" = "$bin/$1" ] && echo "$p"
	return 0
}

# Stop every component we started (reverse order): TERM, wait up to
# $1 seconds, then KILL. Removes the pid files.
stop_all() {
	pids=
	for c in registry kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
		p=$(live_pid "$c")
		if [ -n "$p" ]; then
			echo "sandbox: stopping $c (pid $p)"
			kill -TERM "$p" 2>/dev/null || :
			pids="$pids $p"
		fi
	done
	n=0
	while [ -n "$pids" ]; do
		left=
		for p in $pids; do
			kill -0 "$p" 2>/dev/null && left="$left $p"
		done
		pids=$left
		[ -n "$pids" ] || break
		if [ "$n" -ge "$(($1 * 5))" ]; then
			echo "sandbox: still running after ${1}s, sending KILL to:$pids"
			for p in $pids; do kill -KILL "$p" 2>/dev/null || :; done
			sleep 1
			break
		fi
		n=$((n + 1))
		sleep 0.2
	done
	for c in $components; do rm -f "$state/$c.pid"; done
}
