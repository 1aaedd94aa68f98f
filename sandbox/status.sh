#!/bin/sh
# Is the sandbox running? Exit 0 when every component that up.sh started is
# alive (pid files, checked to be our binaries) and the API server is ready;
# 1 otherwise (not running, partly running, or not answering).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

dead=''
for c in $components; do
	p=$(live_pid "$c")
	if [ -n "$p" ]; then echo "$c: running (pid $p)"; else echo "$c: not running"; dead="$dead $c"; fi
done
if [ -n "$dead" ]; then
	echo "sandbox: not running (down:$dead)"
	exit 1
fi
if ! "$bin/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; then
	echo "sandbox: processes run but https://127.0.0.1:$port_apiserver/readyz does not answer ok"
	exit 1
fi
echo "sandbox: running; export KUBECONFIG=$kubeconfig"
