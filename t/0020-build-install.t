#!/bin/sh
# The build on a fresh machine, and gpudrv installed as a Debian package would
# be: commands in BINDIR, the shell library in LIBDIR, found from another
# directory and through a symlink.  No test here installs a package.
. "$(dirname "$0")/lib.sh"

# A copy of the sources, without the build's outputs.
mkdir src
(cd "$ROOT" && cp -R Makefile VERSION cmd common sh .ci man1 "$SCRATCH/src/")
rm -f src/common/*.o src/common/*.a

# On a fresh machine the packages arrive just before the build (make check
# and make lab install them, then build), so pkg-config must not be asked
# while make reads the Makefile, only after $(DEPS) has checked them: here
# it fails until the stand-in for $(DEPS) has run.
cat >pkg-config <<EOF
#!/bin/sh
[ -e "$SCRATCH/installed" ] || exit 1
exec pkg-config "\$@"
EOF
chmod +x pkg-config
t_run make -C src -j2 CFLAGS=-O0 DEPS="touch $SCRATCH/installed" PKG_CONFIG="$SCRATCH/pkg-config" all
t_rc 0 "make -j2 with the packages installed by \$(DEPS), after make read the Makefile"
t_run src/bin/labels2tag "$DATA/lab-nodes.json"
t_rc 0 "and what it built runs"
make -s -C src clean >/dev/null 2>&1

# Plain make never installs: a missing package is named, with the command
# that installs it, and nothing else happens, as root too (apt-get here is
# a stand-in that records being called).
mkdir -p fakebin
printf '#!/bin/sh\necho "dpkg-query: no packages found" >&2\nexit 1\n' >fakebin/dpkg-query
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$SCRATCH" >fakebin/apt-get
printf '#!/bin/sh\necho 0\n' >fakebin/id
chmod +x fakebin/*
PATH=$SCRATCH/fakebin:$PATH t_run make -C src CFLAGS=-O0 all
t_rc 2 "plain make with the packages missing stops"
t_grep "naming them" err "^    apt-get install -y gcc make pkg-config libcjson-dev libyaml-dev$"
t_grep "and make deps" err "^(or, as root: make deps)$"
t_ok "$([ -e apt.log ] && echo 1 || echo 0)" "apt-get was never called"
t_ok "$([ -e src/bin/labels2tag ] && echo 1 || echo 0)" "nothing was built"
t_run make -C src CFLAGS=-O0 DEPS=: PKG_CONFIG=false all
t_rc 0 "make PKG_CONFIG=false: Debian's paths without pkg-config"
t_run src/bin/pdb-check lab-node-1 "$DATA/pdb-lab-ok.json"
t_out "and what it built runs" OK

# make install honours DESTDIR and PREFIX; drv-lab.sh needs a checkout and
# stays out.
t_run make -s -C "$ROOT" install DEPS=: DESTDIR="$SCRATCH/dest" PREFIX=/opt/gpudrv
t_rc 0 "make install DESTDIR=... PREFIX=/opt/gpudrv"
P=$SCRATCH/dest/opt/gpudrv
for f in labels2tag matrix-grep pdb-check report-fmt rollout-plan upgrade-policy gate-pod states-fmt drv-tag.sh drv-audit.sh drv-next.sh drv-upgrade.sh drv-rollout.sh drv-states.sh drv-kubeconfig.sh kubectl-gpudrv; do
	if [ -x "$P/bin/$f" ] && [ -f "$P/share/man/man1/$f.1" ]; then
		t_ok 0 "installed: bin/$f and man1/$f.1"
	else
		t_ok 1 "installed: bin/$f and man1/$f.1"
	fi
done
t_run ls "$P/lib/gpudrv"
t_out "the shell library in lib/gpudrv, not in bin" api.sh files.sh lease.sh look.sh node.sh options.sh pace.sh removal.sh report.sh runtime.sh state.sh table.sh validate.sh
t_run ls "$P/bin"
t_out "bin holds the commands only" alert-gate drv-audit.sh drv-kubeconfig.sh drv-next.sh drv-rollout.sh drv-states.sh drv-tag.sh drv-upgrade.sh gate-pod \
	kubectl-gpudrv labels2tag matrix-grep pdb-check report-fmt revision-drift rollout-plan states-fmt time-window upgrade-policy
t_run ls "$P/share/gpudrv/deploy"
t_out "the RBAC manifests as data" 00-namespace.yaml 10-auditor.yaml 20-upgrader.yaml \
	25-upgrader-lease.yaml 30-upgrader-driver-pod.yaml 35-upgrader-events.yaml README.md in-cluster
t_run ls "$P/share/gpudrv/deploy/in-cluster"
t_out "and the in-cluster kustomization" audit.yaml kustomization.yaml rollout.yaml support-matrix.csv
t_run ls "$P/share/man/man1" "$P/share/man/man7"
t_grep "gpudrv(7) too" out '^gpudrv\.7$'

# Run from elsewhere, with only the installed commands on PATH, by a symlink
# in another directory, and by a relative symlink to a symlink.
t_fake_kubectl
FAKE_OUT=$DATA/node-1.json
export FAKE_OUT
mkdir -p elsewhere links
ln -s "$P/bin/drv-tag.sh" links/drv-tag
ln -s ../links/drv-tag elsewhere/tag
cd elsewhere
PATH=$P/bin:/usr/bin:/bin t_run drv-tag.sh lab-node-1
t_rc 0 "drv-tag.sh from PATH, in another directory"
t_out "gives the tag" 535-5.15.0-107-generic-ubuntu22.04
PATH=/usr/bin:/bin t_run ../links/drv-tag lab-node-1
t_rc 0 "through a symlink, the C tools not on PATH"
t_out "gives the tag" 535-5.15.0-107-generic-ubuntu22.04
PATH=/usr/bin:/bin t_run ./tag lab-node-1
t_rc 0 "through a relative symlink to a symlink"
t_out "gives the tag" 535-5.15.0-107-generic-ubuntu22.04
PATH=/usr/bin:/bin t_run ./tag -h
t_rc 0 "-h through the symlinks"
FAKE_OUT=$DATA/lab-nodes.json PATH=/usr/bin:/bin \
	t_run "$P/bin/drv-audit.sh" -m "$ROOT/lab/support-matrix.csv"
t_rc 0 "the installed drv-audit.sh"
t_out "audits" OK
cd "$SCRATCH"

# Without its library, a script says where it looked.
mkdir -p lone/bin
cp "$P/bin/drv-tag.sh" lone/bin/
t_run lone/bin/drv-tag.sh -h
t_rc 2 "a script installed without its library"
t_err "says which file it needs" \
	"drv-tag.sh: $SCRATCH/lone/bin/../lib/gpudrv/runtime.sh not found: install gpudrv whole (make install)"

# -h answers even when the C tools cannot be found.
mkdir -p bare/bin bare/lib/gpudrv
cp "$P/bin/drv-tag.sh" "$P/bin/drv-audit.sh" "$P/bin/drv-next.sh" "$P/bin/drv-states.sh" "$P/bin/drv-upgrade.sh" "$P/bin/drv-rollout.sh" bare/bin/
cp "$P"/lib/gpudrv/*.sh bare/lib/gpudrv/
for s in drv-tag.sh drv-audit.sh drv-next.sh drv-states.sh drv-upgrade.sh drv-rollout.sh; do
	PATH=/usr/bin:/bin t_run "bare/bin/$s" -h
	t_rc 0 "$s -h without the C tools"
	t_grep "$s -h prints its usage" out "^usage: $s"
done
PATH=/usr/bin:/bin t_run bare/bin/drv-tag.sh lab-node-1
t_rc 2 "but a real run without them is an error"
t_err "naming the missing tool" "drv-tag.sh: labels2tag not found beside bare/bin/drv-tag.sh nor on PATH"
# make dist: the commit checked out, as a tarball that builds on its own.
if command -v git >/dev/null 2>&1 && git -C "$ROOT" rev-parse HEAD >/dev/null 2>&1; then
	t_run make -s -C "$ROOT" dist DIST="$SCRATCH/dist.tar.gz"
	t_rc 0 "make dist"
	mkdir dist && tar -xzf dist.tar.gz -C dist
	t_run ls dist
	t_out "one folder, named for the release" "gpudrv-$(cat "$ROOT/VERSION")"
	t_run make -s -C "dist/gpudrv-$(cat "$ROOT/VERSION")" CFLAGS=-O0 DEPS=: all
	t_rc 0 "what it holds builds"
	t_run "dist/gpudrv-$(cat "$ROOT/VERSION")/bin/drv-tag.sh" --version
	t_out "and runs" "drv-tag.sh (gpudrv) $(cat "$ROOT/VERSION")"
else
	t_skip "make dist: not a git checkout"
	t_skip "make dist: one folder"
	t_skip "make dist: builds"
	t_skip "make dist: runs"
fi
t_done
