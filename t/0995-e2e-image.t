#!/bin/sh
# End to end: the OCI image (make image) in the cluster's place.  Run with
# podman as a pod's container sees the API server: KUBERNETES_SERVICE_HOST
# and _PORT set, the auditor's token and the cluster's CA at the service
# account's path, no kubeconfig, a read-only root, the matrix mounted as a
# ConfigMap is; it prints what drv-audit.sh prints on the host, and the API
# server refuses it a write.  Then pushed to the sandbox's registry and
# deploy/in-cluster applied as deploy/README.md says, a Job made from the
# audit's CronJob and scheduled.
. "$(dirname "$0")/lib.sh"
. "$T/e2e.sh"

t_builds "the image" "make image needs root (mmdebstrap, podman)" mmdebstrap podman runc skopeo dpkg-buildpackage git
e2e_setup
e2e_reset_lab || { echo "Bail out! cannot reset the lab"; exit 1; }
e2e_facts

V=$(cat "$ROOT/VERSION")
IMG=$SCRATCH/gpudrv.oci.tar
REG=127.0.0.1:$((${GPUDRV_SANDBOX_PORT_BASE:-26440} + 6))
API_PORT=$((${GPUDRV_SANDBOX_PORT_BASE:-26440} + 3))
D=$ROOT/deploy
# podman in a storage of this test's own, gone with it.
pm() {
	CONTAINERS_CONF=$ROOT/image/containers.conf podman --root "$SCRATCH/storage" \
		--runroot "$SCRATCH/run" --storage-driver vfs "$@"
}
pg=
cleanup() {
	[ -z "$pg" ] || { kill "$pg" 2>/dev/null; wait "$pg" 2>/dev/null; }
	kubectl delete -k "$SCRATCH/in-cluster" --ignore-not-found --wait=false >/dev/null 2>&1
	kubectl -n gpudrv delete job -l app.kubernetes.io/name=gpudrv --ignore-not-found --wait=false >/dev/null 2>&1
	kubectl delete -f "$D" --ignore-not-found --wait=false >/dev/null 2>&1
	e2e_reset_lab >/dev/null 2>&1
	pm rm -a -f >/dev/null 2>&1
	rm -rf "$SCRATCH"
}
trap cleanup EXIT

# The image, as a user makes it, of the package the tests made (t_deb).
t_deb
[ "$T_DEB_RC" = 0 ] || { t_diag <"$T_DEB_LOG"; echo "Bail out! make deb failed"; exit 1; }
t_run make -s -C "$ROOT" image IMAGE_DEB="$T_DEB/gpudrv_${V}_$(dpkg --print-architecture).deb" IMAGE="$IMG"
t_rc 0 "make image"
[ -s "$IMG" ] || { t_diag <err; echo "Bail out! make image wrote no $IMG"; exit 1; }
t_run pm load -q -i "$IMG"
t_rc 0 "podman loads the oci-archive"
t_grep "named localhost/gpudrv:$V" out "localhost/gpudrv:$V"
t_run pm image inspect --format '{{.Config.User}} {{index .Config.Labels "org.opencontainers.image.version"}} {{.Size}}' "localhost/gpudrv:$V"
t_rc 0 "podman image inspect"
# shellcheck disable=SC2046 # three words
set -- $(cat out)
t_is "a numeric user that is not root (runAsNonRoot can be checked)" "$1" 10001:10001
t_is "the version label is VERSION's" "$2" "$V"
printf 'the image: %s MB unpacked, %s MB as an oci-archive\n' $(($3 / 1000000)) $(($(wc -c <"$IMG") / 1000000)) | t_note

# A pod's view of the API server: the auditor's token and the CA where
# kubectl's in-cluster config looks for them, no kubeconfig; the matrix as a
# ConfigMap volume lays it out (the file a link into ..data).
kubectl create namespace gpu-operator >/dev/null 2>&1
t_run kubectl apply -f "$D"
t_rc 0 "deploy/ applied (the namespace, the service accounts)"
SA=$SCRATCH/sa
mkdir -p "$SA" "$SCRATCH/matrix/..2026_12_05"
# The lab's matrix but lab-node-1's row: its image is missing.
grep -v '^535,' "$ROOT/lab/support-matrix.csv" >"$SCRATCH/matrix/..2026_12_05/support-matrix.csv"
ln -s ..2026_12_05 "$SCRATCH/matrix/..data"
ln -s ..data/support-matrix.csv "$SCRATCH/matrix/support-matrix.csv"
kubectl -n gpudrv create token auditor --duration=30m >"$SA/token" &&
	kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
	base64 -d >"$SA/ca.crt" && echo gpudrv >"$SA/namespace"
t_ok $? "the auditor's token and the cluster's CA"
pod() {
	pm run --rm --network=host --read-only --user 10001:10001 \
		-e KUBERNETES_SERVICE_HOST=127.0.0.1 -e KUBERNETES_SERVICE_PORT="$API_PORT" \
		-v "$SA:/var/run/secrets/kubernetes.io/serviceaccount:ro" \
		-v "$SCRATCH/matrix:/etc/gpudrv:ro" "localhost/gpudrv:$V" "$@"
}

t_run "$BIN/drv-audit.sh" -m "$SCRATCH/matrix/support-matrix.csv"
hrc=$rc
cp out host.out
t_rc 1 "on the host: a node whose image is missing"
t_out "lab-node-1's" "lab-node-1 MISSING 535-5.15.0-107-generic-ubuntu22.04"
t_run pod drv-audit.sh
t_rc "$hrc" "in the image, as a pod: drv-audit.sh with the mounted matrix"
t_cmp "the image prints what the host prints" host.out out || t_diag <err
t_run pod drv-audit.sh -m /etc/gpudrv/support-matrix.csv
t_rc "$hrc" "in the image: drv-audit.sh -m"
t_cmp "the same with -m" host.out out
t_run pod sh -c 'echo "${KUBECONFIG-unset}"; ls /tmp/.kube/config 2>/dev/null || echo none'
t_out "no kubeconfig in the pod: kubectl's in-cluster config" unset none

t_run pod kubectl label node lab-node-0 gpudrv.test/image=1
t_rc 1 "a write the auditor has no right to"
t_grep "refused by the API server, to the pod's service account" err \
	'nodes "lab-node-0" is forbidden: User "system:serviceaccount:gpudrv:auditor" cannot patch resource "nodes"'
t_is "the node unchanged" "$(kubectl get node lab-node-0 -o jsonpath='{.metadata.labels.gpudrv\.test/image}')" ""
t_run pod drv-upgrade.sh lab-node-0 550.90.07
t_rc 2 "drv-upgrade.sh as the auditor (lab-node-0's image is there)"
t_grep "refused by the API server, to the service account" err 'forbidden: User "system:serviceaccount:gpudrv:auditor" cannot'
t_is "lab-node-0 unchanged: schedulable" "$(kubectl get node lab-node-0 -o jsonpath='{.spec.unschedulable}')" ""
t_is "lab-node-0 unchanged: no upgrade state" \
	"$(kubectl get node lab-node-0 -o jsonpath='{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}')" ""

# -P, as the audit's CronJob runs it: the group in the Pushgateway under -c;
# without -c, refused (no context names the cluster in a pod).
if command -v prometheus-pushgateway >/dev/null 2>&1; then
	prometheus-pushgateway --web.listen-address=127.0.0.1:0 --log.level=info >pg.log 2>&1 &
	pg=$!
	pg_port() { sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' pg.log | head -n 1 | grep .; }
	t_until 20 pg_port >/dev/null
	PG=http://127.0.0.1:$(pg_port)
	t_until 20 curl -sSf -m 2 "$PG/-/ready" >/dev/null
	t_run pod drv-audit.sh -P "$PG" -c t0995
	t_rc 1 "in the image: drv-audit.sh -P -c (lab-node-1's image missing)"
	t_run curl -sS "$PG/metrics"
	t_grep "the Pushgateway has the audit's group, lab-node-1 missing" out \
		'^gpudrv_audit_missing{.*cluster="t0995".*node="lab-node-1".*} 1$'
	t_run pod drv-audit.sh -P "$PG"
	t_rc 2 "in the image: -P without -c"
	t_err "refused: no context names the cluster in a pod" \
		"drv-audit.sh: -P: no cluster name for the Pushgateway's group: in a pod, with its service account, no context names the cluster; name it with -c; no audit was made"
else
	t_skip "-P from the image: no prometheus-pushgateway (Debian's package; .ci/deps test installs it)"
fi

# Without the service account there is nothing to look with: exit 2, said,
# never OK.
t_run pm run --rm --network=host -e KUBERNETES_SERVICE_HOST=127.0.0.1 \
	-e KUBERNETES_SERVICE_PORT="$API_PORT" "localhost/gpudrv:$V" drv-audit.sh -m /etc/gpudrv/support-matrix.csv
t_rc 2 "no token mounted: the audit could not look"
t_grep "and says why" err "^drv-audit.sh: "
t_ok "$(grep -c OK out)" "and prints no OK"
t_run pod labels2tag --version
t_out "labels2tag --version in the image" "labels2tag (gpudrv) $V"

# A rollout in the image as its Job runs one, as the upgrader: the lab's
# three nodes to 570.86.10 (-L: the lab's drivers), the Lease taken and
# given back, every node through its states and back in service.
SA=$SCRATCH/sa-up
mkdir -p "$SA"
kubectl -n gpudrv create token upgrader --duration=30m >"$SA/token" && cp "$SCRATCH/sa/ca.crt" "$SA/" &&
	echo gpudrv >"$SA/namespace"
t_ok $? "the upgrader's token"
{ cat "$ROOT/lab/support-matrix.csv"; printf '%s\n' 570,5.15.0-119-generic,ubuntu22.04 \
	570,5.15.0-107-generic,ubuntu22.04 570,6.8.0-45-generic,ubuntu24.04; } >"$SCRATCH/matrix/..2026_12_05/support-matrix.csv"
# shellcheck disable=SC2086 # the policy's flags, a word each
t_run pod drv-rollout.sh -L $T_DRAIN -p 3 -u 100% 570.86.10
t_rc 0 "in the image, as the upgrader: drv-rollout.sh -L"
t_is "each node through its states" "$(grep -c ' upgrade-done$' out)" 3
t_grep "its summary" out '^done 3 failed 0 skipped 0 left 0$'
t_run kubectl get nodes lab-node-0 lab-node-1 lab-node-2 -o jsonpath='{range .items[*]}{.metadata.labels.nvidia\.com/cuda\.driver\.major} {.metadata.labels.nvidia\.com/gpu-driver-upgrade-state} {.spec.unschedulable}{"\n"}{end}'
t_out "every node at 570, upgrade-done, schedulable" "570 upgrade-done " "570 upgrade-done " "570 upgrade-done "
t_is "the Lease given back" "$(kubectl -n gpudrv get lease gpudrv-rollout -o jsonpath='{.spec.holderIdentity}')" ""

# Pushed as deploy/README.md says (skopeo copy of the archive), then the
# manifests with the image's name set by its sed line, applied.
t_run skopeo copy --quiet --dest-tls-verify=false "oci-archive:$IMG" "docker://$REG/gpudrv:$V"
t_rc 0 "skopeo copy oci-archive:... docker://REGISTRY/gpudrv:$V (the sandbox's registry)"
t_run skopeo inspect --tls-verify=false --format '{{index .Labels "org.opencontainers.image.version"}}' "docker://$REG/gpudrv:$V"
t_out "the registry's copy carries the version" "$V"
cp -R "$D/in-cluster" "$SCRATCH/in-cluster"
K=$SCRATCH/in-cluster
cmd=$(sed -n 's/^    \(sed -i .*\)$/\1/p' "$D/README.md")
t_ok $((${#cmd} > 0 ? 0 : 1)) "deploy/README.md has the image's sed line"
(cd "$SCRATCH" && export REGISTRY="$REG" && eval "$(echo "$cmd" | sed 's#deploy/in-cluster#in-cluster#')")
t_run kubectl kustomize "$K"
t_grep "the manifests name the registry's copy" out "image: $REG/gpudrv:$V\$"
t_run kubectl apply --dry-run=server -k "$K"
t_rc 0 "kubectl apply --dry-run=server -k deploy/in-cluster"
t_grep "the audit's CronJob" out "^cronjob.batch/gpudrv-audit created (server dry run)"
t_grep "the rollout's" out "^cronjob.batch/gpudrv-rollout created (server dry run)"
t_grep "the matrix's ConfigMap" out "^configmap/gpudrv-matrix-.* created (server dry run)"
t_run kubectl apply -k "$K"
t_rc 0 "kubectl apply -k deploy/in-cluster"
t_is "the rollout's CronJob never runs by itself" \
	"$(kubectl -n gpudrv get cronjob gpudrv-rollout -o jsonpath='{.spec.suspend}')" true
# placed JOB PATTERN: JOB's pod scheduled ("node account image" into ./got,
# matching PATTERN).
placed() {
	kubectl -n gpudrv get pods -l job-name="$1" -o jsonpath='{.items[0].spec.nodeName} {.items[0].spec.serviceAccountName} {.items[0].spec.containers[0].image}' >got &&
		grep -q "$2" got
}
t_run kubectl -n gpudrv create job --from=cronjob/gpudrv-audit gpudrv-audit-t0995
t_rc 0 "kubectl create job --from=cronjob/gpudrv-audit"
e2e_until 60 placed gpudrv-audit-t0995 '^[^ ]'
t_ok $? "the Job's pod is scheduled on a node"
t_is "as the auditor, with the registry's image" "$(cut -d' ' -f2- got)" "auditor $REG/gpudrv:$V"
# The rollout's pod never on a GPU node (it drains them): on the one node
# that is not.
sed "s/@NAME@/t0995-cpu/g" "$ROOT/sandbox/node.yaml.in" | kubectl apply -f - >/dev/null
t_run kubectl -n gpudrv create job --from=cronjob/gpudrv-rollout gpudrv-rollout-t0995
t_rc 0 "a rollout's Job from its template"
e2e_until 60 placed gpudrv-rollout-t0995 '^t0995-cpu '
t_ok $? "its pod is scheduled on the node without a GPU"
t_is "as the upgrader, with the registry's image" "$(cut -d' ' -f2- got)" "upgrader $REG/gpudrv:$V"
t_done
