# bench/lib.sh: sourced by the benchmarks that need a control plane (POSIX
# sh).  The caller sets root (the checkout) first.
# shellcheck shell=sh disable=SC2154 # root is the caller's

# bench_sandbox: the benchmarks' own sandbox (.sandbox-bench, ports from
# BENCH_PORT_BASE, default 30440), apart from the tests' and the lab's; its
# binaries copied from the tests' sandbox when that has them (no Go rebuild);
# stopped on the way out.  Exports KUBECONFIG and puts its kubectl first.
bench_sandbox() {
	GPUDRV_SANDBOX_DIR=$root/.sandbox-bench
	GPUDRV_SANDBOX_PORT_BASE=${BENCH_PORT_BASE:-30440}
	export GPUDRV_SANDBOX_DIR GPUDRV_SANDBOX_PORT_BASE
	if [ -d "$root/.sandbox/bin" ] && [ ! -d "$GPUDRV_SANDBOX_DIR/bin" ]; then
		mkdir -p "$GPUDRV_SANDBOX_DIR"
		cp -R "$root/.sandbox/bin" "$GPUDRV_SANDBOX_DIR/bin"
	fi
	trap 'sh "$root/sandbox/down.sh" >/dev/null 2>&1 || :' EXIT
	trap 'exit 130' INT TERM
	KUBECONFIG=$GPUDRV_SANDBOX_DIR/kubeconfig
	PATH=$GPUDRV_SANDBOX_DIR/bin:$root/bin:$PATH
	export KUBECONFIG PATH
}
