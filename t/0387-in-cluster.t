#!/bin/sh
# in_cluster (sh/lib/api.sh): in a pod with no kubeconfig, the kubeconfig
# every kubectl call is given (GPUDRV_KUBECONFIG) names the pod's service
# account, as kubectl's in-cluster config would; anywhere a kubeconfig is
# found, nothing.  Run in a script of its own, the service account's
# directory a scratch one.  (t/0995 runs the image as a pod, on the
# sandbox.)
. "$(dirname "$0")/lib.sh"

L=$BIN/../lib/gpudrv
mkdir -p sa home
echo token >sa/token
echo ca >sa/ca.crt
echo team >sa/namespace
# icc ENV...: in_cluster with only ENV (and PATH, HOME) set: the kubeconfig
# it wrote, the one named, or "none".
icc() {
	t_run env -i PATH="$PATH" HOME="$PWD/home" "$@" sh -c '
		prog=t0387
		. "$1/runtime.sh"
		. "$1/api.sh"
		gpudrv_sa=$2
		make_tmp
		in_cluster
		if [ -n "$gpudrv_in_pod" ]; then cat "$GPUDRV_KUBECONFIG"; elif [ -n "${GPUDRV_KUBECONFIG:-}" ]; then echo "kept $GPUDRV_KUBECONFIG"; else echo none; fi
		finish 0' t0387 "$L" "$PWD/sa"
}
pod='KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443'
# shellcheck disable=SC2086 # the two variables, a word each
icc $pod
t_rc 0 "in a pod"
t_out "the service account's kubeconfig" \
	'apiVersion: v1' 'kind: Config' 'clusters:' '- name: in-cluster' '  cluster:' \
	'    server: "https://10.96.0.1:443"' "    certificate-authority: \"$PWD/sa/ca.crt\"" \
	'users:' '- name: in-cluster' '  user:' "    tokenFile: \"$PWD/sa/token\"" \
	'contexts:' '- name: in-cluster' '  context:' '    cluster: in-cluster' '    user: in-cluster' \
	'    namespace: "team"' 'current-context: in-cluster'
t_err "and nothing said"
icc KUBERNETES_SERVICE_HOST=fd00::1 KUBERNETES_SERVICE_PORT=443
t_grep "an IPv6 address in brackets" out '^    server: "https://\[fd00::1\]:443"$'
# shellcheck disable=SC2086
icc $pod KUBECONFIG="$PWD/none:$PWD/neither"
t_grep "a KUBECONFIG whose files are missing counts as none, as for kubectl" out '^current-context: in-cluster$'
: >kc
# shellcheck disable=SC2086
icc $pod KUBECONFIG="$PWD/none:$PWD/kc"
t_out "a KUBECONFIG with a file: that one" none
# shellcheck disable=SC2086
icc $pod GPUDRV_KUBECONFIG="$PWD/kc"
t_out "a kubeconfig named (kubectl gpudrv --kubeconfig): that one" "kept $PWD/kc"
mkdir -p home/.kube && : >home/.kube/config
# shellcheck disable=SC2086
icc $pod
t_out "~/.kube/config: that one" none
rm -r home/.kube
icc KUBERNETES_SERVICE_PORT=443
t_out "no KUBERNETES_SERVICE_HOST: not a pod" none
mv sa/token sa/token.x
# shellcheck disable=SC2086
icc $pod
t_out "no token: nothing to take" none
mv sa/token.x sa/token
rm sa/ca.crt sa/namespace
# shellcheck disable=SC2086
icc $pod
t_grep "no CA file: none named (the system's, as kubectl)" out '^users:$'
t_is "no certificate-authority line, no namespace line" "$(grep -c 'certificate-authority\|namespace' out)" 0
t_done
