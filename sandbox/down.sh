#!/bin/sh
# Stop exactly what up.sh started (by its pid files: TERM, up to 15 s, then
# KILL), remove the state dir and the kubeconfig. Keeps bin/ and logs/.
# Harmless when nothing runs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

if [ -d "$state" ]; then
	stop_all 15
	rm -rf "$state"
	rm -f "$kubeconfig"
	echo "sandbox: stopped; removed $state"
else
	echo "sandbox: not running (no $state)"
fi
