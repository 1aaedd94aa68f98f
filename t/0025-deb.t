#!/bin/sh
# The Debian package: make deb builds it in a copy of the tree (tracked
# files, and untracked ones not ignored) and lintian finds no error or
# warning; installed with dpkg into a scratch root (its maintainer scripts
# with DPKG_ROOT, never touching this machine's system), every command
# answers -h from the installed paths, the shipped matrix is valid and
# lists no image, an audit runs against a kubectl stand-in, directly and
# through kubectl-gpudrv; a changed matrix survives removal as a conffile,
# and a purge leaves nothing the package listed.
. "$(dirname "$0")/lib.sh"

t_builds "the Debian package" "dpkg --root installs as root (CI runs as root)" dpkg-buildpackage dh lintian dpkg git

V=$(cd "$ROOT" && dpkg-parsechangelog -S Version)
A=$(dpkg --print-architecture)
# (made once for the tests that take it: t_deb)
t_deb
D=$T_DEB
cp "$T_DEB_LOG" make.log
rc=$T_DEB_RC
t_rc 0 "make deb DEBDIR=... (dpkg-buildpackage -us -uc -b, then lintian --fail-on error,warning)"
[ "$rc" = 0 ] || t_diag <make.log
t_run ls "$D"
t_grep "gpudrv_${V}_$A.deb built" out "^gpudrv_${V}_$A\\.deb\$"
DEB=$D/gpudrv_${V}_$A.deb
t_grep "lintian ran" make.log "^lintian --fail-on error,warning "
t_run grep -E '^[EW]: ' make.log
t_out "lintian: no error, no warning"

t_run dpkg-deb -f "$DEB" Depends Recommends Suggests
t_grep "Depends: the libraries, coreutils (timeout), util-linux (flock)" out \
	'^Depends: .*libcjson1.*libyaml-0-2.*, coreutils (>= 8\.5), util-linux (>= 2\.20)$'
t_grep "Recommends: curl (-P), skopeo (-r), tzdata (-W)" out '^Recommends: curl, skopeo, tzdata$'
t_grep "Suggests: a kubectl" out '^Suggests: kubectl | kubernetes-client, prometheus-node-exporter$'

# The scratch root: an empty dpkg database of its own; the dependencies are
# this machine's (they are not in the root), the maintainer scripts run here
# with DPKG_ROOT set (deb-systemd-helper honours it).
R=$SCRATCH/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
# shellcheck disable=SC2317 # called through t_run
dp() { dpkg --root="$R" --force-script-chrootless --force-depends "$@"; }
t_run dp -i "$DEB"
t_rc 0 "dpkg --root -i"
# shellcheck disable=SC2016 # dpkg-query's fields
t_run dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status}\n${Conffiles}\n' gpudrv
t_out "installed, the cron example and the matrix conffiles" "install ok installed" \
	" /etc/cron.d/gpudrv $(md5sum <"$ROOT/debian/gpudrv.cron.d" | cut -d' ' -f1)" \
	" /etc/gpudrv/support-matrix.csv $(md5sum <"$ROOT/debian/support-matrix.csv" | cut -d' ' -f1)"
dpkg --root="$R" -L gpudrv >listed
t_run grep -c '^/usr/bin/' listed
t_out "19 commands in /usr/bin" 19
t_run grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$R/etc/cron.d/gpudrv"
t_out "the cron example does nothing"
t_run ls "$R/etc/systemd/system"
t_rc 2 "the timer is not enabled (no /etc/systemd/system)"

# Every command, from its installed path, the tree's bin/ not on PATH.
for c in "$R"/usr/bin/*; do
	PATH=/usr/bin:/bin t_run "$c" -h
	t_rc 0 "${c##*/} -h, installed"
	t_grep "${c##*/} -h prints its usage" out "^usage: ${c##*/}\\( \\|$\\)"
done

# The audit: the shipped matrix is a valid one that lists no image.
t_fake_kubectl
FAKE_OUT=$DATA/lab-nodes.json
export FAKE_OUT
PATH=/usr/bin:/bin t_run "$R/usr/bin/drv-audit.sh" -m "$R/etc/gpudrv/support-matrix.csv"
t_rc 1 "the installed drv-audit.sh, the shipped matrix"
t_out "every node's image is MISSING, never OK" \
	"lab-node-0 MISSING 550-5.15.0-119-generic-ubuntu22.04" \
	"lab-node-1 MISSING 535-5.15.0-107-generic-ubuntu22.04" \
	"lab-node-2 MISSING 550-6.8.0-45-generic-ubuntu24.04"
t_err "nothing on stderr"
sed 1d "$ROOT/lab/support-matrix.csv" >>"$R/etc/gpudrv/support-matrix.csv"
rm -f kubectl.log
PATH=/usr/bin:/bin t_run "$R/usr/bin/kubectl-gpudrv" audit --context lab -m "$R/etc/gpudrv/support-matrix.csv"
t_rc 0 "kubectl-gpudrv audit, installed, the lab's rows added"
t_out "OK" OK
t_run cat kubectl.log
t_out "its one kubectl call carries the context" \
	"--request-timeout=60s --context=lab get --raw /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"

# Removed, the changed conffile stays; purged, nothing the package listed.
t_run dp -r gpudrv
t_rc 0 "dpkg --root -r"
t_run grep -c '^[0-9]' "$R/etc/gpudrv/support-matrix.csv"
t_out "the changed matrix is kept, its 3 rows" 3
t_run dp -P gpudrv
t_rc 0 "dpkg --root --purge"
: >left
while IFS= read -r p; do
	[ "$p" = /. ] || ! { [ -e "$R$p" ] || [ -h "$R$p" ]; } || echo "$p" >>left
done <listed
t_run cat left
t_out "nothing of the $(grep -c . listed) paths dpkg -L listed is left"
t_run dpkg-query --admindir="$R/var/lib/dpkg" -W gpudrv
t_rc 1 "dpkg knows it no more"
t_done
