#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-kubeconfig.sh: a kubeconfig for one of gpudrv's service accounts (made by
# deploy/*.yaml), for cron.  Run with an admin's kubeconfig: it takes the
# cluster (server and CA) from the current context and a token for the
# service account, either bound in time (kubectl create token --duration) or
# long-lived (-S: a kubernetes.io/service-account-token Secret), and writes
# the file atomically, mode 0600, once it has checked that the file works.
set -eu

prog=drv-kubeconfig.sh
usage_line="usage: $prog [-n namespace] [-d duration | -S] service-account file"

# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/api.sh"; . "$lib/files.sh"

ns=gpudrv
duration=
secret=0
eval "set -- $(gpudrv_opts 'n:namespace d:duration' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-n | --namespace) need_arg "$@"; ns=$2; shift ;;
	-d | --duration) need_arg "$@"; duration=$2; shift ;;
	-S | --secret) secret=1 ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 2 ] || usage
sa=$1
file=$2

# Names go to kubectl and into the file: DNS names only.
for name in "$ns" "$sa"; do
	case $name in
	'' | [!a-z0-9]* | *[!a-z0-9.-]*)
		die "not a namespace or service account name: '$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'"
		;;
	esac
done
if [ "$secret" = 1 ] && [ -n "$duration" ]; then
	die "-d and -S do not go together: the token of -S never expires"
fi
duration=${duration:-720h}
case $duration in
'' | [!0-9]* | *[!0-9hms]*) die "-d takes a duration such as 720h or 90m, not '$duration'" ;;
esac
case $file in
'') usage ;;
*[[:cntrl:]]*) die "not a file name without control characters: '$(printf '%s' "$file" | tr '[:cntrl:]' '?' | cut -c1-80)'" ;;
*/) die "$file: a file name, not a directory" ;;
esac
[ ! -d "$file" ] || die "$file is a directory"
dir=$(dirname -- "$file")
[ -d "$dir" ] || die "no directory $dir for $file"

umask 077
# (A half-made file never stays behind, whatever stops the run: files.sh's
# exit hook drops it.)
# A few requests, and the Secret's token to wait for.
gpudrv_start 60 0

# failed WHAT: says WHAT failed, then kubectl's words, and exits 2.
failed() {
	kubectl_said "$1" "$tmp/err"
	finish 2
}

# whole FILE: FILE's text into $value, every byte of it: a final newline
# too, which $(...) alone would drop.  Each value is judged whole, never
# line by line: a line that looks right must not carry others into the file.
whole() {
	value=$(cat "$1" && echo .)
	value=${value%.}
}
# safe VALUE: VALUE shown in a message, one line, at most 80 characters.
safe() {
	printf '%s' "$1" | tr -c 'A-Za-z0-9._:/@+=-' '?' | cut -c1-80
}

# cluster FIELD: a field of the current context's cluster, file references
# made inline (--flatten), into $value.
cluster() {
	kc "$tmp/ctx" "$tmp/err" config view --raw --minify --flatten -o "jsonpath={.clusters[0]$1}" ||
		failed "cannot read the current context of the kubeconfig"
	whole "$tmp/ctx"
}
cluster .name
cname=$value
cluster .cluster.server
server=$value
cluster '.cluster.certificate-authority-data'
ca=$value
cluster '.cluster.insecure-skip-tls-verify'
case $value in
'' | false) ;;
*) die "the current context does not verify the server's certificate (insecure-skip-tls-verify); refusing to write a kubeconfig that sends a token so" ;;
esac
# What goes into the file goes between double quotes in YAML: characters
# that mean nothing there only (no quote, backslash, newline, nor any other
# control character), checked before anything is written.
case ${server#https://} in
"$server" | '' | *[![A-Za-z0-9._~:/@%+-]*)
	die "the current context's server is not an https URL of one line: '$(safe "$server")'; nothing was written"
	;;
esac
case $ca in
*[!A-Za-z0-9+/=]*) die "the current context's certificate-authority-data is not base64 of one line; nothing was written" ;;
esac
# The cluster's name only names it in the file: a name that is not plain
# becomes "cluster".
case $cname in
'' | *[!A-Za-z0-9._:@-]*) cname=cluster ;;
esac
[ "${#cname}" -le 200 ] || cname=cluster

if ! kc /dev/null "$tmp/err" -n "$ns" get serviceaccount "$sa" -o name; then
	grep -q '(NotFound)' "$tmp/err" &&
		die "no service account $ns/$sa (kubectl apply -f deploy/ makes gpudrv/auditor and gpudrv/upgrader)"
	failed "cannot read the service account $ns/$sa"
fi

if [ "$secret" = 0 ]; then
	# A bound token: valid until it expires (the API server may shorten the
	# duration: --service-account-max-token-expiration); not revocable but by
	# deleting the service account.
	kc "$tmp/tok" "$tmp/err" -n "$ns" create token "$sa" --duration="$duration" \
		-o 'jsonpath={.status.expirationTimestamp} {.status.token}' ||
		failed "cannot create a token for $ns/$sa"
	whole "$tmp/tok"
	token=${value#* }
	until=${value%% *}
	case $until in
	'' | *[!0-9TZ:.+-]*) die "the API server returned no usable expiry for the token of $ns/$sa: '$(safe "$until")'; nothing was written" ;;
	esac
	expires="token expires $until; make the file again before then"
else
	# A long-lived token: valid until the Secret is deleted.  The token
	# controller fills it in; it stays readable by whoever may read Secrets
	# in $ns.
	name=$sa-token
	if kc "$tmp/sec" "$tmp/err" -n "$ns" get secret "$name" \
		-o 'jsonpath={.type} {.metadata.annotations.kubernetes\.io/service-account\.name}'; then
		whole "$tmp/sec"
		[ "$value" = "kubernetes.io/service-account-token $sa" ] ||
			die "secret $ns/$name exists but is not $sa's service account token ($(safe "$value")); delete it or choose another account"
	elif grep -q '(NotFound)' "$tmp/err"; then
		cat >"$tmp/secret.yaml" <<EOF
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: $name
  namespace: $ns
  labels:
    app.kubernetes.io/part-of: gpudrv
  annotations:
    kubernetes.io/service-account.name: $sa
EOF
		kc /dev/null "$tmp/err" create -f "$tmp/secret.yaml" ||
			failed "cannot create the secret $ns/$name"
	else
		failed "cannot read the secret $ns/$name"
	fi
	token=
	n=0
	while :; do
		kc "$tmp/tok" "$tmp/err" -n "$ns" get secret "$name" \
			-o 'go-template={{if .data.token}}{{.data.token | base64decode}}{{end}}' ||
			failed "cannot read the secret $ns/$name"
		whole "$tmp/tok"
		token=$value
		[ -z "$token" ] || break
		[ "$n" -lt 30 ] || die "secret $ns/$name has no token after 30s: is the token controller (kube-controller-manager) running?"
		nap 1
		n=$((n + 1))
	done
	expires="token never expires; revoke it with: kubectl -n $ns delete secret $name"
fi
case $token in
'' | *[!A-Za-z0-9._-]*) die "the API server returned no usable token for $ns/$sa; nothing was written" ;;
esac

# The file is made in the run's own directory, tried, and only then put in
# place (put_file: mode 0600 from its creation on, nothing planted beside it
# ever written through, the rename atomic).
user=system:serviceaccount:$ns:$sa
new=$tmp/kubeconfig
{
	echo "apiVersion: v1"
	echo "kind: Config"
	echo "clusters:"
	echo "- name: \"$cname\""
	echo "  cluster:"
	echo "    server: \"$server\""
	[ -z "$ca" ] || echo "    certificate-authority-data: \"$ca\""
	echo "users:"
	echo "- name: \"$user\""
	echo "  user:"
	printf '    token: "%s"\n' "$token"
	echo "contexts:"
	echo "- name: \"$sa@$cname\""
	echo "  context:"
	echo "    cluster: \"$cname\""
	echo "    user: \"$user\""
	echo "    namespace: \"$ns\""
	echo "current-context: \"$sa@$cname\""
} >"$new" || abort "cannot write $new"

# It must work before it replaces anything (its own context named: a
# --context given to kubectl-gpudrv is the admin kubeconfig's).
kc "$tmp/who" "$tmp/err" --kubeconfig="$new" --context="$sa@$cname" auth whoami -o 'jsonpath={.status.userInfo.username}' ||
	failed "the new kubeconfig does not authenticate; nothing was written"
whole "$tmp/who"
[ "$value" = "$user" ] ||
	abort "the new kubeconfig authenticates as '$(safe "$value")', not $user; nothing was written"
put_file "$new" "$file" 600 || abort "cannot write $file: $why"
echo "$file: $user on $server; $expires" >"$tmp/out"
emit "$tmp/out" 0
finish 0
