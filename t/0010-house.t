#!/bin/sh
# The house's promises: every command has a man page with EXIT STATUS and
# EXAMPLES, a line in gpudrv(7), and -h; every script passes shellcheck; no
# file refers to anything outside the repository.
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
	else
		t_skip "mandoc -Tlint $name.1: no mandoc on this machine"
	fi
	t_grep "$name.1 has EXIT STATUS" "$page" '^\.Sh EXIT STATUS$'
	t_grep "$name.1 has EXAMPLES" "$page" '^\.Sh EXAMPLES$'
	t_grep "gpudrv.7 lists $name" "$ROOT/man1/gpudrv.7" "^\.It Xr $name 1\$"
	t_run "$cmd" -h
	t_rc 0 "$name -h"
	t_grep "$name -h prints its usage on stdout" out "^usage: $name\( \|$\)"
done
if command -v shellcheck >/dev/null 2>&1; then
	for s in "$ROOT"/sh/*.sh "$ROOT"/sh/kubectl-gpudrv; do
		t_run shellcheck -x -s sh "$s"
		t_rc 0 "shellcheck ${s##*/}"
	done
else
	t_skip "shellcheck: not on this machine"
fi
# The labels the scripts spell are the filters' (common/gpudrv.h): every
# L_ and A_ name gpudrv-lib.sh sets has the #define of that name's value.
sed -n 's/^\([LA]_[A-Z]*\)=\(.*\)$/\1 "\2"/p' "$ROOT/sh/gpudrv-lib.sh" >sh.labels
t_run grep -c . sh.labels
t_out "gpudrv-lib.sh names the eleven labels and annotations the scripts spell" 11
while read -r t_name t_value; do
	t_run sed -n "s/^#define $t_name  *//p" "$ROOT/common/gpudrv.h"
	t_out "gpudrv-lib.sh's $t_name is gpudrv.h's" "$t_value"
done <sh.labels
# common/ calls go one way (common/README): no file calls one that calls
# it, directly or round a circle; read from the built objects' symbols.
if command -v nm >/dev/null 2>&1 && command -v tsort >/dev/null 2>&1 && [ -f "$ROOT/common/doc.o" ]; then
	for t_o in "$ROOT"/common/*.o; do nm -g --defined-only "$t_o" | awk -v f="${t_o##*/}" 'NF == 3 { print $3, f }'; done | sort >defs
	for t_o in "$ROOT"/common/*.o; do nm -u "$t_o" | awk -v f="${t_o##*/}" '{ print $2, f }'; done | sort >uses
	join uses defs | awk '$2 != $3 { print $2, $3 }' | sort -u >calls
	t_run tsort calls
	t_rc 0 "no circle of calls among the files of common/"
	t_grep "the readers are below the kinds: doc.o calls json.o" calls '^doc.o json.o$'
	t_run grep -c -e '^json.o doc.o$' -e '^yaml.o doc.o$' calls
	t_out "and neither format calls doc.o back" 0
else
	t_skip "no circle in common/: no nm, tsort or built objects"
	t_skip "doc.o calls json.o"
	t_skip "neither format calls doc.o back"
fi
# The repository stands on its own: no file names the planning notes that
# live outside it.
if [ -d "$ROOT/.git" ] && command -v git >/dev/null 2>&1; then
	t_run git -C "$ROOT" grep -n -e 'LAB\.md' -e '\.\./shared/' -- . ':!t/0010-house.t'
	t_out "no file refers to LAB.md or ../shared/"
else
	t_skip "no file refers to LAB.md: not a git checkout"
fi
t_done
