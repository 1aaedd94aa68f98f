#!/bin/sh
# kubectl-count.sh: the kubectl gpudrv runs during make bench-operator
# ($KUBECTL and first in PATH).  It runs the real kubectl ($BENCH_KUBECTL)
# at -v=6 and appends to $BENCH_REQLOG one "call" line a run and one "req"
# line for each HTTP response kubectl logs (client-go's round tripper, at
# -v=6: one line a request, a retried eviction included).  Those log lines,
# and kubectl's other informational klog lines of -v=6, are kept off the
# standard error the scripts read; everything else passes through as it
# comes, and the exit status is kubectl's.
real=${BENCH_KUBECTL:?BENCH_KUBECTL: the real kubectl}
log=${BENCH_REQLOG:?BENCH_REQLOG: the request log}
printf 'call %s\n' "$1 $2 $3 $4" >>"$log"
st=$(mktemp) || exit 2
{ { "$real" -v=6 "$@" 2>&1 1>&3 3>&-; echo $? >"$st"; } |
	awk -v rq="$log" '
	/^I[0-9][0-9][0-9][0-9] [0-9:.]+ +[0-9]+ [a-zA-Z_]+\.go:[0-9]+\] / {
		if (index($0, "\"Response\"")) {
			v = $0; sub(/.*verb="/, "", v); sub(/".*/, "", v)
			s = $0; sub(/.*status="/, "", s); sub(/[ "].*/, "", s)
			print "req " v " " s >>rq; fflush(rq)
		}
		next
	}
	{ print; fflush() }' >&2; } 3>&1
rc=$(cat "$st")
rm -f "$st"
exit "${rc:-2}"
