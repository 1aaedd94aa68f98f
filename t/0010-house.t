#!/bin/sh
# The house's promises: every command has a man page with EXIT STATUS and
# EXAMPLES, a line in gpudrv(7), and -h; every script passes shellcheck.
. "$(dirname "$0")/lib.sh"

for cmd in "$BIN"/*; do
	name=${cmd##*/}
	[ "$name" != gpudrv-lib.sh ] || continue
	page=$ROOT/man1/$name.1
	if [ -f "$page" ]; then t_ok 0 "$name has a man page"; else t_ok 1 "$name has a man page"; continue; fi
	if command -v mandoc >/dev/null 2>&1; then
		t_run mandoc -Tlint -W warning "$page"
		t_rc 0 "$name.1 is clean mdoc"
		t_out "mandoc -Tlint has nothing to say of $name.1"
	fi
	t_grep "$name.1 has EXIT STATUS" "$page" '^\.Sh EXIT STATUS$'
	t_grep "$name.1 has EXAMPLES" "$page" '^\.Sh EXAMPLES$'
	t_grep "gpudrv.7 lists $name" "$ROOT/man1/gpudrv.7" "^\.It Xr $name 1\$"
	t_run "$cmd" -h
	t_rc 0 "$name -h"
	t_grep "$name -h prints its usage on stdout" out "^usage: $name\( \|$\)"
done
if command -v shellcheck >/dev/null 2>&1; then
	for s in "$ROOT"/sh/*.sh; do
		t_run shellcheck -x -s sh "$s"
		t_rc 0 "shellcheck ${s##*/}"
	done
fi
# make install honours DESTDIR and PREFIX, with the manual.
t_run make -s -C "$ROOT" install DESTDIR="$SCRATCH/dest" PREFIX=/opt/gpudrv
t_rc 0 "make install DESTDIR=... PREFIX=/opt/gpudrv"
for f in labels2tag matrix-grep pdb-check report-fmt drv-tag.sh drv-audit.sh drv-upgrade.sh drv-states.sh; do
	if [ -x "dest/opt/gpudrv/bin/$f" ] && [ -f "dest/opt/gpudrv/share/man/man1/$f.1" ]; then
		t_ok 0 "installed: bin/$f and man1/$f.1"
	else
		t_ok 1 "installed: bin/$f and man1/$f.1"
	fi
done
t_run "$SCRATCH/dest/opt/gpudrv/bin/drv-tag.sh" -h
t_rc 0 "an installed script finds its library beside it"
t_done
