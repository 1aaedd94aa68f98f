#!/bin/sh
# Start the sandbox control plane on 127.0.0.1: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok (fake kubelets), from the
# binaries of build.sh, and an OCI registry (Debian's docker-registry); the
# GPU Operator's two CRDs (crds/). With --lab, also the fake nodes lab-node-0..2.
# Progress goes to stderr; stdout gets one line: export KUBECONFIG=<path>.
# Env: GPUDRV_SANDBOX_DIR (default <repo>/.sandbox), GPUDRV_SANDBOX_PORT_BASE
# (default 26440), GPUDRV_SANDBOX_TIMEOUT (seconds per wait, default 120).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

lab=0
for a in "$@"; do
	case $a in
	--lab) lab=1 ;;
	*)
		echo "usage: $0 [--lab]" >&2
		exit 2
		;;
	esac
done
timeout=${GPUDRV_SANDBOX_TIMEOUT:-120}
t0=$(date +%s)

say() { echo "sandbox: $*" >&2; }
kc() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# fail <component> <message>: report with the tail of the component's log.
fail() {
	say "ERROR: $1: $2"
	if [ -f "$logs/$1.log" ]; then
		echo "---- last lines of $logs/$1.log ----" >&2
		tail -n 25 "$logs/$1.log" >&2
		echo "----" >&2
	fi
	say "the sandbox is left as it is for inspection; stop it with sh $here/down.sh"
	exit 1
}

# wait_for <component> <what> <command...>: retry until the command succeeds,
# at most $timeout seconds; fail at once if the component died.
wait_for() {
	c=$1 what=$2
	shift 2
	end=$(($(date +%s) + timeout))
	until "$@" >/dev/null 2>&1; do
		[ -n "$(live_pid "$c")" ] || fail "$c" "process exited while waiting for $what"
		[ "$(date +%s)" -lt "$end" ] || fail "$c" "no $what after ${timeout}s"
		sleep 0.5
	done
	say "$c: $what ($(($(date +%s) - t0))s)"
}

# 1. Binaries (a no-op when up to date).
sh "$here/build.sh" >&2

# 2. Already running? Partly running or crashed? (pid files + liveness)
alive='' dead=''
for c in $components; do
	if [ -n "$(live_pid "$c")" ]; then alive="$alive $c"; else dead="$dead $c"; fi
done
fresh=1
if [ -z "$dead" ]; then
	say "already running (pids in $state)"
	fresh=0
elif [ -n "$alive" ]; then
	say "partial sandbox found (running:$alive; dead:$dead): stopping it and starting anew"
	stop_all 15
fi

if [ "$fresh" = 1 ]; then
	# Leftovers of a crashed run: our pid files name no live process; wipe.
	[ ! -d "$state" ] || say "removing leftovers of a previous run ($state)"
	rm -rf "$state"
	rm -f "$kubeconfig"

	# 3. Ports must be free (any address, v4 or v6).
	busy=
	for pp in "etcd-client:$port_etcd" "etcd-peer:$port_etcd_peer" \
		"kube-apiserver:$port_apiserver" "kube-controller-manager:$port_kcm" \
		"kube-scheduler:$port_scheduler" "registry:$port_registry"; do
		p=${pp##*:}
		hex=$(printf '%04X' "$p")
		if cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk -v h="$hex" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == h) f = 1 } END { exit !f }'; then
			busy="$busy ${pp%:*}=$p"
		fi
	done
	if [ -n "$busy" ]; then
		say "ERROR: port(s) already in use by another process:$busy"
		say "free them, or choose another block with GPUDRV_SANDBOX_PORT_BASE (now $base; uses base..base+6)"
		exit 1
	fi

	mkdir -p "$state/pki" "$logs"
	pki=$state/pki
	registry=$(command -v docker-registry) ||
		fail registry "docker-registry not found: apt-get install -y docker-registry (sh .ci/deps test)"

	# 4. Certificates and keys (openssl), kubeconfigs.
	say "generating certificates in $pki"
	ossl() { openssl "$@" >/dev/null 2>&1 || {
		say "ERROR: openssl $*"
		exit 1
	}; }
	ossl req -x509 -new -newkey rsa:2048 -nodes -sha256 -days 3650 \
		-subj "/CN=gpudrv-sandbox-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt"
	# Front-proxy CA: kcm and scheduler read requestheader-client-ca-file
	# from the extension-apiserver-authentication ConfigMap (log spam without).
	ossl req -x509 -new -newkey rsa:2048 -nodes -sha256 -days 3650 \
		-subj "/CN=gpudrv-sandbox-front-proxy-ca" \
		-keyout "$pki/front-proxy-ca.key" -out "$pki/front-proxy-ca.crt"
	ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key"
	ossl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
	# cert <name> <subject> <serverAuth|clientAuth> [subjectAltName] [CA name]
	cert() {
		ca=${5:-ca}
		{
			echo "basicConstraints=CA:FALSE"
			echo "keyUsage=critical,digitalSignature,keyEncipherment"
			echo "extendedKeyUsage=$3"
			[ -z "${4-}" ] || echo "subjectAltName=$4"
		} >"$pki/$1.ext"
		ossl req -new -newkey rsa:2048 -nodes -subj "$2" \
			-keyout "$pki/$1.key" -out "$pki/$1.csr"
		ossl x509 -req -sha256 -days 3650 -in "$pki/$1.csr" -CA "$pki/$ca.crt" \
			-CAkey "$pki/$ca.key" -CAcreateserial -CAserial "$pki/$ca.srl" \
			-extfile "$pki/$1.ext" -out "$pki/$1.crt"
		rm -f "$pki/$1.csr" "$pki/$1.ext"
	}
	local_san="IP:127.0.0.1,DNS:localhost"
	cert apiserver "/CN=kube-apiserver" serverAuth \
		"$local_san,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert kcm-serving "/CN=kube-controller-manager" serverAuth "$local_san"
	cert scheduler-serving "/CN=kube-scheduler" serverAuth "$local_san"
	cert admin "/O=system:masters/CN=kubernetes-admin" clientAuth
	cert kcm "/CN=system:kube-controller-manager" clientAuth
	cert scheduler "/CN=system:kube-scheduler" clientAuth
	cert kwok "/O=system:masters/CN=kwok-controller" clientAuth
	cert front-proxy-client "/CN=front-proxy-client" clientAuth "" front-proxy-ca

	b64() { openssl base64 -A -in "$1"; }
	# kubeconfig <file> <cert name>
	write_kubeconfig() {
		cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gpudrv-sandbox
  cluster:
    server: https://127.0.0.1:$port_apiserver
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(b64 "$pki/$2.crt")
    client-key-data: $(b64 "$pki/$2.key")
contexts:
- name: gpudrv-sandbox
  context:
    cluster: gpudrv-sandbox
    user: $2
current-context: gpudrv-sandbox
EOF
		chmod 600 "$1"
	}
	write_kubeconfig "$state/kcm.kubeconfig" kcm
	write_kubeconfig "$state/scheduler.kubeconfig" scheduler
	write_kubeconfig "$state/kwok.kubeconfig" kwok
	write_kubeconfig "$state/admin.kubeconfig" admin
	mkdir -p "$state/kwok-home" "$state/etcd"

	# start <component> <args...>: detached (own session if setsid exists),
	# stdin from /dev/null, output to its log, pid file in the state dir.
	detach=
	command -v setsid >/dev/null 2>&1 && detach=setsid
	start() {
		c=$1
		shift
		: >"$logs/$c.log"
		(
			cd "$state"
			# Go's defaults, whatever the caller's (t/e2e.sh tunes its kubectl).
			unset GOGC GOMAXPROCS
			# kwok reads ~/.kwok/kwok.yaml if it exists: give it a private HOME.
			if [ "$c" = kwok ]; then
				HOME=$state/kwok-home
				export HOME
			fi
			# shellcheck disable=SC2086 # $detach is empty or one word
			exec $detach "$bin/$c" "$@" </dev/null >>"$logs/$c.log" 2>&1
		) &
		echo $! >"$state/$c.pid"
		# Until the child has exec'd, its command line is this shell's, and
		# live_pid would call it gone: wait for the exec (or its end).
		n=0
		while [ $n -lt 50 ] && [ -z "$(live_pid "$c")" ] && kill -0 $! 2>/dev/null; do
			sleep 0.1
			n=$((n + 1))
		done
		say "started $c (pid $!, log $logs/$c.log)"
	}

	# 5. The components.
	start etcd --name sandbox --data-dir "$state/etcd" \
		--listen-client-urls "http://127.0.0.1:$port_etcd" \
		--advertise-client-urls "http://127.0.0.1:$port_etcd" \
		--listen-peer-urls "http://127.0.0.1:$port_etcd_peer" \
		--initial-advertise-peer-urls "http://127.0.0.1:$port_etcd_peer" \
		--initial-cluster "sandbox=http://127.0.0.1:$port_etcd_peer" \
		--initial-cluster-state new --unsafe-no-fsync --log-level warn
	wait_for etcd "health OK" curl -sf "http://127.0.0.1:$port_etcd/health"

	start kube-apiserver --etcd-servers "http://127.0.0.1:$port_etcd" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
		--secure-port "$port_apiserver" \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--client-ca-file "$pki/ca.crt" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$pki/sa.pub" \
		--service-account-signing-key-file "$pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--endpoint-reconciler-type none \
		--requestheader-client-ca-file "$pki/front-proxy-ca.crt" \
		--requestheader-allowed-names front-proxy-client \
		--requestheader-username-headers X-Remote-User \
		--requestheader-group-headers X-Remote-Group \
		--requestheader-extra-headers-prefix X-Remote-Extra- \
		--proxy-client-cert-file "$pki/front-proxy-client.crt" \
		--proxy-client-key-file "$pki/front-proxy-client.key"
	cp "$state/admin.kubeconfig" "$kubeconfig"
	wait_for kube-apiserver "/readyz OK" kc get --raw /readyz

	start kube-controller-manager --kubeconfig "$state/kcm.kubeconfig" \
		--authentication-kubeconfig "$state/kcm.kubeconfig" \
		--authorization-kubeconfig "$state/kcm.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$port_kcm" \
		--tls-cert-file "$pki/kcm-serving.crt" --tls-private-key-file "$pki/kcm-serving.key" \
		--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
		--use-service-account-credentials \
		--cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
		--leader-elect=false
	start kube-scheduler --kubeconfig "$state/scheduler.kubeconfig" \
		--authentication-kubeconfig "$state/scheduler.kubeconfig" \
		--authorization-kubeconfig "$state/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$port_scheduler" \
		--tls-cert-file "$pki/scheduler-serving.crt" \
		--tls-private-key-file "$pki/scheduler-serving.key" \
		--leader-elect=false
	# kwok: only nodes annotated kwok.x-k8s.io/node=fake; no server port;
	# Stage definitions from sandbox/stages (copied from the kwok module).
	set --
	for f in "$here"/stages/*.yaml; do set -- "$@" --config "$f"; done
	start kwok --kubeconfig "$state/kwok.kubeconfig" \
		--manage-all-nodes=false \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--node-ip 127.0.0.1 --cidr 10.0.0.1/16 --node-lease-duration-seconds 40 "$@"

	# The registry: Debian's distribution 2.8, through a link in bin/ so
	# that its pid file's process is known as ours.
	ln -sf "$registry" "$bin/registry"
	mkdir -p "$state/registry"
	cat >"$state/registry.yml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $state/registry}, delete: {enabled: true}}
http: {addr: "127.0.0.1:$port_registry"}
EOF
	start registry serve "$state/registry.yml"
fi

# 6. Wait until usable (also when already running: quick then).
wait_for etcd "health OK" curl -sf "http://127.0.0.1:$port_etcd/health"
wait_for kube-apiserver "/readyz OK" kc get --raw /readyz
wait_for kube-controller-manager "/healthz OK" \
	kc --server "https://127.0.0.1:$port_kcm" get --raw /healthz
wait_for kube-scheduler "/healthz OK" \
	kc --server "https://127.0.0.1:$port_scheduler" get --raw /healthz
wait_for kube-controller-manager "ServiceAccount default/default" \
	kc -n default get serviceaccount default
[ -n "$(live_pid kwok)" ] || fail kwok "process exited"
wait_for registry "/v2/ OK" curl -sf "http://127.0.0.1:$port_registry/v2/"

# The GPU Operator's CRDs (ClusterPolicy, GPUCluster, NVIDIADriver).
kc apply -f "$here/crds" >&2
wait_for kube-apiserver "CRDs established" kc wait --for=condition=Established \
	crd/clusterpolicies.nvidia.com crd/gpuclusters.nvidia.com crd/nvidiadrivers.nvidia.com --timeout=5s

# 7. The lab nodes.
if [ "$lab" = 1 ]; then
	for n in lab-node-0 lab-node-1 lab-node-2; do
		echo ---
		sed "s/@NAME@/$n/g" "$here/node.yaml.in"
	done | kc apply -f - >&2
	for n in lab-node-0 lab-node-1 lab-node-2; do
		wait_for kwok "node $n Ready" \
			kc wait --for=condition=Ready "node/$n" --timeout=5s
	done
fi

say "up in $(($(date +%s) - t0))s: kubectl=$bin/kubectl, server https://127.0.0.1:$port_apiserver, registry 127.0.0.1:$port_registry"
echo "export KUBECONFIG=$kubeconfig"
