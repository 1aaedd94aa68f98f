# gpudrv-lib.sh: what the gpudrv scripts share (POSIX sh; sourced, never
# run), installed in $(PREFIX)/lib/gpudrv.  The script sets prog, usage_line
# and here (its own directory) first.
# shellcheck shell=sh disable=SC2154 # prog, usage_line and here are the caller's

# Where the support matrix is unless -m or GPUDRV_MATRIX says otherwise.
# shellcheck disable=SC2034 # used by the scripts
default_matrix=/etc/gpudrv/support-matrix.csv

usage() {
	echo "$usage_line" >&2
	exit 2
}
say() {
	echo "$prog: $*" >&2
}

# find_tool NAME: the gpudrv command NAME beside the script, else on PATH.
find_tool() {
	if [ -x "$here/$1" ]; then
		echo "$here/$1"
	elif command -v "$1" >/dev/null 2>&1; then
		echo "$1"
	else
		say "$1 not found beside $0 nor on PATH"
		exit 2
	fi
}

# check_node NAME: exits 2 unless NAME can be a node name (a DNS subdomain's
# characters), before it reaches kubectl; the message shows it made safe.
check_node() {
	case $1 in
	'' | -* | *[!a-z0-9.-]*)
		say "not a node name: '$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'"
		exit 2
		;;
	esac
}

# kc ARGS...: kubectl ($KUBECTL), every request bounded in time, so that a
# hung API server is an error, not a hung cron job.
kc() {
	"${KUBECTL:-kubectl}" --request-timeout="${GPUDRV_REQUEST_TIMEOUT:-60s}" "$@"
}

# kubectl_said WHAT FILE: says WHAT failed, then kubectl's words (FILE), indented.
kubectl_said() {
	say "$1; kubectl said:"
	sed 's/^/    /' "$2" >&2
}

# get_node NODE FILE: the node's JSON into FILE, or exit 2 saying why not; a
# failed kubectl must never read as a node without labels.
get_node() {
	if kc get node "$1" -o json >"$2" 2>"$2.err"; then
		return 0
	fi
	if grep -q '(NotFound)' "$2.err"; then
		say "node $1 not found in the cluster"
	else
		kubectl_said "cannot read node $1 from the cluster" "$2.err"
	fi
	exit 2
}

# urlencode STRING: for a query parameter (RFC 3986 unreserved kept).
urlencode() {
	printf '%s' "$1" | LC_ALL=C awk '
		BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
		{ for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c ~ /[A-Za-z0-9._~-]/) printf "%s", c; else printf "%%%02X", ord[c]
		} }'
}
