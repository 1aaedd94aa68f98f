# gpudrv: see README.md.  `make` builds every command into bin/.

PREFIX     = /usr/local
BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib/gpudrv
DATADIR    = $(PREFIX)/share/gpudrv
MANDIR     = $(PREFIX)/share/man
PKG_CONFIG = pkg-config
CC         = cc
CFLAGS     = -O2 -g
VERSION    = `cat VERSION`
# Checks the Debian packages the build needs: names the missing ones and
# stops.  A build never changes the system: make deps (as root) installs
# them; make check and make lab do too, saying so.
DEPS       = sh .ci/deps -n build

# pkg-config is asked when a compiler runs, after $(DEPS), never while make
# reads this file (on a fresh machine the packages are not there yet); the
# fallbacks are Debian's paths.
LIB_CFLAGS = `$(PKG_CONFIG) --cflags libcjson yaml-0.1 2>/dev/null || echo -I/usr/include/cjson`
LIB_LIBS   = `$(PKG_CONFIG) --libs libcjson yaml-0.1 2>/dev/null || echo -lcjson -lyaml`
# Warnings stay on whatever CFLAGS the user passes.
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Werror \
	-Icommon $(LIB_CFLAGS) $(CFLAGS)

CMDS    = labels2tag matrix-grep pdb-check report-fmt rollout-plan upgrade-policy gate-pod states-fmt time-window alert-gate revision-drift
SCRIPTS = drv-tag.sh drv-audit.sh drv-next.sh drv-upgrade.sh drv-rollout.sh drv-states.sh drv-kubeconfig.sh drv-lab.sh
COMMON  = common/err.o common/input.o common/json.o common/yaml.o common/access.o common/keep.o common/doc.o \
	common/tag.o common/image.o common/node.o common/target.o common/strset.o common/lines.o common/matrix.o common/selector.o \
	common/pdb.o common/drain.o common/plan.o common/policy.o common/remove.o

# Sourced by the scripts from ../lib/gpudrv, seen from their own directory
# (through symlinks): in the build tree as where make install puts it.
SHLIB   = lib/gpudrv/runtime.sh lib/gpudrv/options.sh lib/gpudrv/node.sh lib/gpudrv/api.sh \
	lib/gpudrv/lease.sh lib/gpudrv/files.sh lib/gpudrv/table.sh lib/gpudrv/report.sh \
	lib/gpudrv/look.sh lib/gpudrv/state.sh lib/gpudrv/removal.sh \
	lib/gpudrv/validate.sh lib/gpudrv/pace.sh
BINS = $(CMDS:%=bin/%) $(SCRIPTS:%=bin/%)

all: $(BINS) $(SHLIB)

# Order-only: every compile waits for it (make -j too), none is redone for it.
need:
	@$(DEPS)

# The Debian packages the build needs, installed (as root, with apt-get).
deps:
	@sh .ci/deps build

common/libgpudrv.a: $(COMMON)
	rm -f $@
	$(AR) rcs $@ $(COMMON)

common/%.o: common/%.c common/gpudrv.h | need
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# --version: the one object that knows it.
common/err.o: VERSION
common/err.o: ALL_CFLAGS += -DGPUDRV_VERSION=\"$(VERSION)\"

bin/%: cmd/%.c common/libgpudrv.a common/gpudrv.h | need
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< common/libgpudrv.a $(LIB_LIBS)

lib/gpudrv/%.sh: sh/lib/%.sh VERSION
	@mkdir -p lib/gpudrv
	sed "s/@VERSION@/$(VERSION)/" $< >$@

bin/%.sh: sh/%.sh
	@mkdir -p bin
	cp $< $@
	chmod +x $@

# The kubectl plugin (kubectl-gpudrv(1)): kubectl finds it on PATH by its
# name, and it runs the commands beside it.
all: bin/kubectl-gpudrv
bin/kubectl-gpudrv: sh/kubectl-gpudrv
	@mkdir -p bin
	cp sh/kubectl-gpudrv $@
	chmod +x $@

# prove, JOBS test files at once, the longest (the fault table's three
# parts, minutes each; under the sanitizers and valgrind, the readers'
# streams and the budgets of every node) first, so that the rest fill the
# other slots meanwhile; first of all t/0025, which makes the package
# (t_deb) that t/0915, early in the end-to-end chain, installs.
JOBS  = 2
PROVE = prove -j$(JOBS) $(PROVE_FLAGS)
SLOW  = t/0025-deb.t t/0150-stream-diff.t t/0410-pdb-check-all.t \
	t/0620-fault-table.t t/0621-fault-table-upgrade.t t/0622-fault-table-rollout.t
slow_first = $(filter $(SLOW),$(1)) $(filter-out $(SLOW),$(1))
E2E   = $(sort $(wildcard t/09*.t))
UNIT  = $(call slow_first,$(filter-out $(E2E),$(sort $(wildcard t/*.t))))

# The tests, end-to-end ones included (GPUDRV_E2E=0 skips those, saying so),
# JOBS at once through one queue (t/harness.pl).  The end-to-end ones share
# the sandbox, so they run one after the other; beside them, niced (the
# sandbox's controllers come first), the others take the other slot, one
# at a time, then every slot once the end-to-end ones are done.  (Two at
# once beside them load this 2-core machine so that the tests that time a
# wait fail: HACKING.md, CI.)  SAN=1 puts check-asan's and check-valgrind's
# runs in the same queue, after the others: they fill the time the
# end-to-end chain leaves, rather than coming after it (CI does so).
# What failed, and why, comes last, so that a log's tail says it.  The
# queue runs in a session of its own: a signal stops every test, and the
# sandbox is left alone until none of them runs (10 s at most); a sandbox
# that check started is stopped again, on a signal too; a running one is
# reused.
SAN_LANES = --par asan 'nice env $(ASAN_ENV)' '$(ASAN_TESTS)' \
	--par valgrind 'nice env $(VG_ENV) sh t/vg-ldso.sh' '$(VG_TESTS)'
check:
	@sh .ci/deps test
	@$(MAKE) -s all
	@if [ "$(SAN)" = 1 ]; then $(MAKE) -s asan; fi
	@if sh sandbox/status.sh >/dev/null 2>&1; then up=1; else up=0; fi; queue=; \
	ended() { [ -z "$$queue" ] || { kill -TERM -$$queue 2>/dev/null; n=0; \
		while kill -0 -$$queue 2>/dev/null && [ $$n -lt 100 ]; do sleep 0.1; n=$$((n + 1)); done; }; \
		if [ $$up = 0 ]; then sh sandbox/down.sh >/dev/null 2>&1 || :; fi; }; \
	trap 'ended; exit 130' HUP INT TERM; \
	setsid perl t/harness.pl -j$(JOBS) $(PROVE_FLAGS) --seq - - '$(E2E)' --par - nice '$(UNIT)' \
		$(if $(filter 1,$(SAN)),$(SAN_LANES)) & queue=$$!; \
	rc=0; wait $$queue || rc=$$?; \
	ended; exit $$rc

# The C filters' own tests: each runs its filter on inputs of its own (t/data,
# generated lists, bad input of every kind).
FILTER_TESTS = $(filter-out t/0110-drv-tag.t t/045% t/046%,$(sort $(wildcard \
	t/01*.t t/02*.t t/0367-*.t t/04*.t t/05*.t t/06[01]*.t t/07[1-9]*.t)))
# The scripts' tests that reach lines of C no filter's test reaches:
# drv-states.sh's (states-fmt's reading of revision-drift's lines and its
# JSON of them, and labels2tag's records of a node its target skips and of
# one two NVIDIADrivers claim).
# The other scripts' tests reach none (.ci/cover; HACKING.md, CI): make
# check runs them on the same C.
SAN_SCRIPTS = t/0360-drv-states.t t/0365-drv-states-why.t t/0368-drv-states-revisions.t

# The tests of the C again, every binary built under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a separate build tree (bin stays as it
# is): the filters' tests and SAN_SCRIPTS, which reach every line of C the
# whole suite reaches (5,032 of cmd/ and common/, 2026-12-05).
ASAN_TESTS = $(call slow_first,$(FILTER_TESTS) $(SAN_SCRIPTS))
# LeakSanitizer's look at each exit is 60 ms of an ASan run's 100.  The
# tests whose every filter run check-valgrind checks for the same leaks
# (definite and indirect) run without it (t/lib.sh): VG_TESTS but t/0150,
# which valgrind runs one case in three.
LEAKS_ELSEWHERE = $(filter-out t/0150-stream-diff.t,$(VG_TESTS))
empty =
comma = ,
LEAKS_CSV = $(subst $(empty) $(empty),$(comma),$(strip $(LEAKS_ELSEWHERE)))
ASAN_ENV = GPUDRV_BIN=$(CURDIR)/.asan/bin GPUDRV_SANITIZED=1 GPUDRV_E2E=0 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	GPUDRV_LEAKS_ELSEWHERE=$(LEAKS_CSV)
# The sanitizer build, in .asan/bin.
asan:
	rm -rf .asan && mkdir -p .asan
	cp -R Makefile VERSION cmd common sh .ci .asan/
	rm -f .asan/common/*.o .asan/common/*.a # copied after their sources, they would look current
	$(MAKE) -C .asan all CFLAGS='-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer' \
		LDFLAGS='-fsanitize=address,undefined'
check-asan: asan
	env $(ASAN_ENV) $(PROVE) $(ASAN_TESTS)

# The filters' tests again, each filter under valgrind (leaks and invalid
# accesses fail): GPUDRV_VALGRIND=1 puts a valgrind wrapper of each first
# on PATH, which those tests call (under valgrind a test in which no filter
# ran under it fails: t/lib.sh, t_done).  A script run from bin/ finds the
# bare filters beside it, so SAN_SCRIPTS cannot run here; nor t/0160,
# whose lists of production width reach no line of their own (135 s under
# valgrind), which check-asan runs.  t/vg-ldso.sh keeps the C library's
# separate debugging symbols from valgrind, which read them at each start
# (t/0100 under valgrind: 52 s with them, 30 s without).
VG_TESTS = $(call slow_first,$(filter-out t/0160-scale.t,$(FILTER_TESTS)))
VG_ENV = GPUDRV_VALGRIND=1 GPUDRV_E2E=0
check-valgrind: all
	env $(VG_ENV) sh t/vg-ldso.sh $(PROVE) $(VG_TESTS)

# AFL++ against every parser for FUZZ_SECONDS each (default 600); see fuzz/run.sh.
fuzz:
	@sh .ci/deps fuzz
	@sh fuzz/run.sh

sandbox:
	@sh sandbox/up.sh

sandbox-lab:
	@sh sandbox/up.sh --lab

sandbox-down:
	@sh sandbox/down.sh

# The driver-upgrade lab (drv-lab.sh(1)), end to end, on the sandbox (or
# LAB_KUBECONFIG's cluster).
lab:
	@sh .ci/deps test
	@$(MAKE) -s all
	@sh bin/drv-lab.sh

# Installed as a Debian package would be; the RBAC manifests as data.
# drv-lab.sh needs a checkout (its manifests, the sandbox), so it stays there.
INSTALLED = $(CMDS) $(SCRIPTS:drv-lab.sh=)
install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DATADIR)/deploy \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	cp $(INSTALLED:%=bin/%) bin/kubectl-gpudrv $(DESTDIR)$(BINDIR)/
	cp $(SHLIB) $(DESTDIR)$(LIBDIR)/
	mkdir -p $(DESTDIR)$(DATADIR)/deploy/in-cluster
	cp deploy/*.yaml deploy/README.md $(DESTDIR)$(DATADIR)/deploy/
	cp deploy/in-cluster/* $(DESTDIR)$(DATADIR)/deploy/in-cluster/
	cp $(INSTALLED:%=man1/%.1) man1/kubectl-gpudrv.1 $(DESTDIR)$(MANDIR)/man1/
	cp man1/gpudrv.7 $(DESTDIR)$(MANDIR)/man7/

# The Debian package (debian/; dpkg-buildpackage -b, then lintian), built in
# a copy of the tree's files (tracked, and untracked but not ignored) in
# $(DEBDIR)/src, so that bin/ and lib/ here stay as they are; the .deb lands
# in $(DEBDIR).
DEBDIR = .deb
# The tree's files, NUL-terminated: what deb copies, and what the tests'
# one package is made again for (t/lib.sh, t_deb: make tree-files).
TREE_FILES = git ls-files -z -c -o --exclude-standard | \
	xargs -0 sh -c 'for f; do [ ! -e "$$f" ] || printf "%s\0" "$$f"; done' sh
tree-files:
	@$(TREE_FILES)
deb:
	@sh .ci/deps deb
	rm -rf $(DEBDIR) && mkdir -p $(DEBDIR)/src
	$(TREE_FILES) | tar --null -T - -cf - | tar -xf - -C $(DEBDIR)/src
	cd $(DEBDIR)/src && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning $(DEBDIR)/*.changes
	@ls $(DEBDIR)/*.deb

# The OCI image (image/build.sh; README.md, Install): Debian's packages,
# unpacked by mmdebstrap, the .deb above and the sandbox's kubectl
# (sandbox/build.sh builds the sandbox's binaries, kubectl among them, from
# their Go modules when they are missing: minutes on a fresh machine),
# imported with podman and written to $(IMAGE) as an oci-archive.  As root.
IMAGE = .image/gpudrv.oci.tar
# IMAGE_DEB=FILE: that package, made before (the tests make one for all of
# them: t/lib.sh, t_deb), rather than make deb's.
IMAGE_DEB =
image: $(if $(IMAGE_DEB),,deb)
	@sh .ci/deps image
	@sh sandbox/build.sh >&2
	sh image/build.sh $(or $(IMAGE_DEB),$(DEBDIR)/gpudrv_$(VERSION)_`dpkg --print-architecture`.deb) \
		$${GPUDRV_SANDBOX_DIR:-.sandbox}/bin/kubectl $(IMAGE)

clean:
	rm -rf bin lib common/*.o common/*.a .asan .image .test-cache gpudrv-*.tar.gz

# The source tarball of the commit checked out (git archive), into $(DIST):
# what it holds builds, and passes GPUDRV_E2E=0 make check, on its own.
DIST = gpudrv-$(VERSION).tar.gz
dist:
	git archive --prefix=gpudrv-$(VERSION)/ -o $(DIST) HEAD
	@echo $(DIST)

.PHONY: all asan check check-asan check-valgrind clean dist fuzz install deps need lab sandbox sandbox-lab sandbox-down deb image tree-files

# Benchmarks (bench/README.md): generated inputs and results stay in bench/out.
# The generated inputs (gen/, as the tests build it).
GEN_SRC = gen/gen.h gen/main.c gen/write.c gen/nodes.c gen/pods.c gen/slim.c gen/evict.c
bench/out/gen: $(GEN_SRC)
	@mkdir -p bench/out
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ gen/*.c

# The tests' whole-tree reader, for the bench's comparison.
bench/out/whole-tree: t/whole.c
	@mkdir -p bench/out
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L -O2 $(LIB_CFLAGS) -o $@ t/whole.c $(LIB_LIBS)

bench: all bench/out/gen bench/out/whole-tree
	@sh .ci/deps bench
	@sh bench/run.sh

# drv-audit.sh on a sandbox of its own with 1,000 GPU nodes (bench/audit.sh).
bench-audit: all bench/out/gen
	@sh bench/audit.sh

# The drain path (pdb-check, kubectl drain, drv-states.sh, drv-upgrade.sh) on a
# sandbox of its own with 1,000 GPU nodes, 30,000 pods, 3,000 budgets
# (bench/fleet.sh).
bench-fleet: all bench/out/gen
	@sh .ci/deps bench
	@sh bench/fleet.sh

# drv-rollout.sh on a sandbox of its own with 200 GPU nodes, P = 1, 4, 16,
# against the bare kubectl calls (bench/rollout.sh).
bench-rollout: all bench/out/gen
	@sh .ci/deps test
	@sh bench/rollout.sh

# The GPU Operator's own upgrade library (bench/operator/, a Go program of
# its own module) and drv-rollout.sh on the same kwok fleet of the sandbox
# (bench/operator/run.sh; its env sets the scale).
GO_CMD = $$(command -v go || echo /usr/local/go/bin/go)
bench/out/operator-bench: bench/operator/main.go bench/operator/go.mod bench/operator/go.sum
	@mkdir -p bench/out
	cd bench/operator && GOFLAGS=-mod=readonly "$(GO_CMD)" build -p 1 -trimpath -o ../out/operator-bench .

bench-operator: all bench/out/operator-bench
	@sh .ci/deps test
	@sh bench/operator/run.sh

.PHONY: bench bench-audit bench-fleet bench-rollout bench-operator
