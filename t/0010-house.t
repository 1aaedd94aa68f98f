#!/bin/sh
# The house's promises: every command has a man page with EXIT STATUS and
# EXAMPLES, a line in gpudrv(7), and -h; every script passes shellcheck; no
# file refers to anything outside the repository.
. "$(dirname "$0")/lib.sh"

for cmd in "$BIN"/*; do
	name=${cmd##*/}
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
	t_run "$cmd" --version
	t_rc 0 "$name --version"
	t_out "$name --version names the release (VERSION)" "$name (gpudrv) $(cat "$ROOT/VERSION")"
done
t_run sed -n '1s/^gpudrv (\([^)]*\)).*/\1/p' "$ROOT/debian/changelog"
t_out "debian/changelog's last entry is VERSION's release" "$(cat "$ROOT/VERSION")"
t_grep "NEWS.md says what VERSION brings" "$ROOT/NEWS.md" "^## $(cat "$ROOT/VERSION")\( \|$\)"
t_grep "deploy/in-cluster runs VERSION's image" "$ROOT/deploy/in-cluster/kustomization.yaml" \
	"^  newTag: \"$(cat "$ROOT/VERSION")\"\$"
if command -v shellcheck >/dev/null 2>&1; then
	for s in "$ROOT"/sh/*.sh "$ROOT"/sh/kubectl-gpudrv "$ROOT"/sh/lib/*.sh "$ROOT"/image/*.sh; do
		t_run shellcheck -x -s sh "$s"
		t_rc 0 "shellcheck ${s##*/}"
	done
else
	t_skip "shellcheck: not on this machine"
fi
# The node contract is the filters' (common/gpudrv.h): every L_ and A_
# name sh/lib/node.sh sets has the #define of that name's value, every
# upgrade state (S_) too, and the record's fields are labels2tag -F's (the
# RF_ enum, in order); record_read reads them in that order.
t_node=$ROOT/sh/lib/node.sh
sed -n 's/^\([LAS]_[A-Z_]*\)=\(.*\)$/\1 "\2"/p' "$t_node" >sh.consts
t_run grep -c '^[LA]_' sh.consts
t_out "node.sh names the eleven labels and annotations the scripts spell" 11
t_run grep -c '^S_' sh.consts
t_out "and the twelve upgrade states" 12
t_run dash -c '. "$1"; printf "%s\n" $gpudrv_sv | grep -c "^S_"' sh "$t_node"
t_out "record_awk gives awk the twelve, read from node.sh's own definitions" 12
while read -r t_name t_value; do
	t_run sed -n "s/^#define $t_name  *//p" "$ROOT/common/gpudrv.h"
	t_out "node.sh's $t_name is gpudrv.h's" "$t_value"
done <sh.consts
t_run sed -n "s/^record_fields='\(.*\)'$/\1/p" "$t_node"
t_fields=$(cat out)
t_run sh -c "sed -n '/^enum rec_field {/,/}/p' \"\$1\" | grep -o 'RF_[A-Z]*' | grep -vx RF_COUNT | sed 's/^RF_//' | tr 'A-Z' 'a-z' | paste -sd' '" sh "$ROOT/common/gpudrv.h"
t_out "gpudrv.h's RF_ fields are node.sh's record_fields, in order" "$t_fields"
t_run sh -c "sed -n 's/^[[:space:]]*read -r \\(r_.*\\) _ <.*/\\1/p' \"\$1\" | sed 's/r_//g'" sh "$t_node"
t_out "record_read reads them in that order" "$t_fields"
# The rollout's table (sh/lib/table.sh) the same way: table_read reads
# its fields in the order of table_fields.
t_table=$ROOT/sh/lib/table.sh
t_run sed -n "s/^table_fields=\"\(.*\)\"$/\1/p" "$t_table"
t_tfields=$(cat out)
t_out "table.sh names its fields" "node pid state wait since refused seen rc gone held"
t_run sh -c "sed -n 's/.*read -r \\(tr_.*\\) _ <.*/\\1/p' \"\$1\" | sed 's/tr_//g'" sh "$t_table"
t_out "table_read reads table_fields in their order" "$t_tfields"
# No upgrade state spelled outside the constants: code lines of sh/, cmd/
# and common/ (comments aside) name them by S_.
t_states=$(sed -n 's/^S_[A-Z_]*=//p' "$t_node" | paste -sd'|')
(cd "$ROOT" && grep -nE "(^|[^a-z-])($t_states)([^a-z-]|\$)" sh/*.sh sh/kubectl-gpudrv sh/lib/*.sh cmd/*.c common/*.c common/gpudrv.h) |
	sed 's/[[:space:]]#[[:space:]].*//; s#/\*.*##' |
	grep -vE '^[^:]*:[0-9]+:[[:space:]]*(#|\*|$)' |
	grep -vE '^(sh/lib/node.sh:[0-9]+:S_|common/gpudrv.h:[0-9]+:#define S_)' |
	grep -E "(^|[^a-z-])($t_states)([^a-z-]|\$)" >states.lit
t_run cat states.lit
t_out "no literal upgrade state outside the constants"
# No column number of the record outside node.sh and gpudrv.h's enum: a
# script reads the records (the files named *facts*) with record_read or
# record_awk, never with awk, cut or read by position.
(cd "$ROOT" && grep -nE 'facts' sh/*.sh) | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' |
	grep -E '(^|[^_a-z])(awk|cut|read -r)[[:space:]][^|]*facts' >columns
t_run cat columns
t_out "no script reads a record by its column number"
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
