#!/bin/sh
# drv-kubeconfig.sh: a kubeconfig for one of gpudrv's service accounts (made by
# deploy/*.yaml), for cron.  Run with an admin's kubeconfig: it takes the
# cluster (server and CA) from the current context and a token for the
# service account, either bound in time (kubectl create token --duration) or
# long-lived (-S: a kubernetes.io/service-account-token Secret), and writes
# the file atomically, mode 0600, once it has checked that the file works.
set -eu

prog=drv-kubeconfig.sh
usage_line="usage: $prog [-n namespace] [-d duration | -S] service-account file"

# gpudrv-lib.sh is in ../lib/gpudrv from this script's real directory (links
# followed): where make puts it in the build tree, and make install in LIBDIR.
here=$(dirname -- "$(readlink -f -- "$0")")
lib=$here/../lib/gpudrv/gpudrv-lib.sh
[ -r "$lib" ] || { echo "$prog: $lib not found: install gpudrv whole (make install)" >&2 && exit 2; }
# shellcheck source-path=SCRIPTDIR source=gpudrv-lib.sh
. "$lib"

ns=gpudrv
duration=
secret=0
while getopts n:d:Sh opt; do
	case $opt in
	n) ns=$OPTARG ;;
	d) duration=$OPTARG ;;
	S) secret=1 ;;
	h) show_usage ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
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
*/) die "$file: a file name, not a directory" ;;
esac
[ ! -d "$file" ] || die "$file is a directory"
dir=$(dirname -- "$file")
[ -d "$dir" ] || die "no directory $dir for $file"

umask 077
new=
# A half-made file never stays behind, whatever stops the run.
abort() {
	[ -z "$new" ] || rm -f "$new"
	say "$1"
	finish 2
}
# A few requests, and the Secret's token to wait for.
gpudrv_start 60 0

# failed WHAT: says WHAT failed, then kubectl's words, and exits 2.
failed() {
	[ -z "$new" ] || rm -f "$new"
	kubectl_said "$1" "$tmp/err"
	finish 2
}

# cluster FIELD: a field of the current context's cluster, file references
# made inline (--flatten), into $tmp/ctx.
cluster() {
	kc "$tmp/ctx" "$tmp/err" config view --raw --minify --flatten -o "jsonpath={.clusters[0]$1}" ||
		failed "cannot read the current context of the kubeconfig"
}
cluster .name
cname=$(cat "$tmp/ctx")
cluster .cluster.server
server=$(cat "$tmp/ctx")
cluster '.cluster.certificate-authority-data'
ca=$(cat "$tmp/ctx")
cluster '.cluster.insecure-skip-tls-verify'
insecure=$(cat "$tmp/ctx")
[ "$insecure" != true ] ||
	die "the current context does not verify the server's certificate (insecure-skip-tls-verify); refusing to write a kubeconfig that sends a token so"
printf '%s\n' "$server" | LC_ALL=C grep -q '^https://[][A-Za-z0-9._~:/@%+-]*$' ||
	die "the current context's server is not an https URL: '$(printf '%s' "$server" | tr -c 'A-Za-z0-9._:/-' '?' | cut -c1-80)'"
printf '%s\n' "$ca" | LC_ALL=C grep -q '^[A-Za-z0-9+/=]*$' ||
	die "the current context's certificate-authority-data is not base64"
printf '%s\n' "$cname" | LC_ALL=C grep -q '^[A-Za-z0-9._:@-]\{1,200\}$' || cname=cluster

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
	out=$(cat "$tmp/tok")
	token=${out#* }
	expires="token expires ${out%% *}; make the file again before then"
else
	# A long-lived token: valid until the Secret is deleted.  The token
	# controller fills it in; it stays readable by whoever may read Secrets
	# in $ns.
	name=$sa-token
	if kc "$tmp/sec" "$tmp/err" -n "$ns" get secret "$name" \
		-o 'jsonpath={.type} {.metadata.annotations.kubernetes\.io/service-account\.name}'; then
		[ "$(cat "$tmp/sec")" = "kubernetes.io/service-account-token $sa" ] ||
			die "secret $ns/$name exists but is not $sa's service account token ($(cat "$tmp/sec")); delete it or choose another account"
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
		token=$(cat "$tmp/tok")
		[ -z "$token" ] || break
		[ "$n" -lt 30 ] || die "secret $ns/$name has no token after 30s: is the token controller (kube-controller-manager) running?"
		nap 1
		n=$((n + 1))
	done
	expires="token never expires; revoke it with: kubectl -n $ns delete secret $name"
fi
printf '%s\n' "$token" | LC_ALL=C grep -q '^[A-Za-z0-9._-]\{1,\}$' ||
	die "the API server returned no usable token for $ns/$sa"

# The new file beside the old one (the same file system: the rename is atomic).
user=system:serviceaccount:$ns:$sa
new=$(mktemp "$dir/.${file##*/}.XXXXXX") || die "cannot write in $dir"
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
chmod 600 "$new"

# It must work before it replaces anything.
kc "$tmp/who" "$tmp/err" --kubeconfig="$new" auth whoami -o 'jsonpath={.status.userInfo.username}' ||
	failed "the new kubeconfig does not authenticate"
[ "$(cat "$tmp/who")" = "$user" ] ||
	abort "the new kubeconfig authenticates as '$(cat "$tmp/who")', not $user"
mv -f "$new" "$file" || abort "cannot rename $new to $file"
new=
echo "$file: $user on $server; $expires" >"$tmp/out"
emit "$tmp/out" 0
finish 0
