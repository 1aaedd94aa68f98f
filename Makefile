# gpudrv: see README.md.  `make` builds every command into bin/.

PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANDIR    = $(PREFIX)/share/man
PKG_CONFIG = pkg-config
CC        = cc
CFLAGS    = -O2 -g

# Warnings stay on whatever CFLAGS the user passes.
DEPS_CFLAGS != $(PKG_CONFIG) --cflags libcjson yaml-0.1 2>/dev/null || true
DEPS_LIBS   != $(PKG_CONFIG) --libs libcjson yaml-0.1 2>/dev/null || echo -lcjson -lyaml
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Werror \
	-Icommon $(DEPS_CFLAGS) $(CFLAGS)

CMDS    = labels2tag matrix-grep
SCRIPTS = drv-tag.sh drv-audit.sh
COMMON  = common/err.o common/input.o common/doc.o common/tag.o common/node.o common/strset.o common/lines.o common/matrix.o

BINS = $(CMDS:%=bin/%) $(SCRIPTS:%=bin/%)

all: deps-ok $(BINS)

deps-ok:
	@sh .ci/deps build

common/libgpudrv.a: $(COMMON)
	rm -f $@
	$(AR) rcs $@ $(COMMON)

$(COMMON): common/gpudrv.h

common/%.o: common/%.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

bin/%: cmd/%.c common/libgpudrv.a common/gpudrv.h
	@mkdir -p bin
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< common/libgpudrv.a $(DEPS_LIBS)

bin/%.sh: sh/%.sh
	@mkdir -p bin
	cp $< $@
	chmod +x $@

check: all
	prove t/

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	cp $(BINS) $(DESTDIR)$(BINDIR)/
	cp man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	cp man1/*.7 $(DESTDIR)$(MANDIR)/man7/

clean:
	rm -rf bin common/*.o common/*.a

.PHONY: all check clean install deps-ok
