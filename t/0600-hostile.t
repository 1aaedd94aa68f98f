#!/bin/sh
# Hostile and broken input: labels2tag, matrix-grep and pdb-check answer
# exit 2 with a message naming what and where; no crash, no silent pass,
# bounded memory.
. "$(dirname "$0")/lib.sh"

N1=$DATA/node-1.json
L=$DATA/lab-nodes.json
# rss COMMAND...: runs it (stdin from /dev/null unless redirected), peak RSS in KiB in ./rss.
have_time=0
if [ -x /usr/bin/time ] && [ -z "${GPUDRV_BIN:-}" ] && [ "${GPUDRV_VALGRIND:-0}" = 0 ]; then have_time=1; fi
t_rss() {
	if [ "$have_time" = 1 ]; then
		/usr/bin/time -f %M -o rss "$@" >out 2>err
		rc=$?
	else
		t_run "$@"
		echo 0 >rss
	fi
}
# t_small DESC MiB: the last t_rss stayed under MiB of resident memory.
t_small() {
	[ "$have_time" = 1 ] || { t_skip "$1: no /usr/bin/time, or a sanitizer or valgrind run"; return; }
	if [ "$(tail -n 1 rss)" -lt $(($2 * 1024)) ]; then t_ok 0 "$1"; else
		t_ok 1 "$1"
		echo "peak RSS $(tail -n 1 rss) KiB" | t_diag
	fi
}

# Cut short anywhere, as a kubectl killed mid-output leaves it.
size=$(wc -c <"$L")
for at in 1 100 2000 7777 15000 $((size - 40)) $((size - 2)); do
	head -c "$at" "$L" >cut.json
	t_run labels2tag cut.json
	if [ "$rc" -eq 2 ] && ! [ -s out ] && grep -q '^labels2tag: cut.json' err; then
		t_ok 0 "JSON cut at byte $at: exit 2, nothing printed, the file named"
	else
		t_ok 1 "JSON cut at byte $at: exit 2, nothing printed, the file named"
		echo "exit $rc" | t_diag
		t_diag <err
	fi
done
lines=$(wc -l <"$DATA/lab-nodes.yaml")
# (A cut that leaves well-formed YAML, such as one before the last line, is
# not detectable: YAML has no end marker.  See labels2tag(1), BUGS.)
for at in 3 40 120 $((lines - 3)); do
	head -n "$at" "$DATA/lab-nodes.yaml" >cut.yaml
	t_run labels2tag cut.yaml
	if [ "$rc" -eq 2 ] && ! [ -s out ]; then t_ok 0 "a YAML list cut after line $at: exit 2, nothing printed"; else
		t_ok 1 "a YAML list cut after line $at: exit 2, nothing printed"
		echo "exit $rc" | t_diag
		t_diag <out
	fi
done

t_run labels2tag </dev/null
t_rc 2 "empty stdin"
printf '  \n\t\n' >blank.json
t_run labels2tag blank.json
t_rc 2 "only white space"

# A label value of 100 MB.
{
	printf '{"kind": "Node", "metadata": {"name": "big", "labels": {'
	printf '"nvidia.com/cuda.driver.major": "550", "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",'
	printf '"feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",'
	printf '"feature.node.kubernetes.io/kernel-version.full": "'
	head -c 104857600 /dev/zero | tr '\0' 'k'
	printf '"}}}\n'
} >big.json
t_rss labels2tag big.json
t_rc 2 "a 100 MB kernel label"
t_out "prints nothing"
t_err "says it is not kubectl output, with the line" \
	"labels2tag: big.json:1: a key or value gpudrv reads is over 65536 bytes: not kubectl output"
t_small "in bounded memory (under 48 MiB)" 48
rm -f big.json

# A YAML value nobody reads (issue 19): libyaml holds a scalar whole before
# it hands it over, so one that large is refused rather than kept.  6 MiB
# (more than any Kubernetes object holds) is read, and not copied; 64 MB is
# an error naming where it starts, in bounded memory.
# ynode BYTES: a Node whose annotation x is BYTES bytes of 'a'.
ynode() {
	printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  annotations:\n    x: '
	head -c "$1" /dev/zero | tr '\0' 'a'
	printf '\n  labels:\n    nvidia.com/gpu.present: "true"\n    nvidia.com/cuda.driver.major: "550"\n'
	printf '    feature.node.kubernetes.io/kernel-version.full: 5.15.0-107-generic\n'
	printf '    feature.node.kubernetes.io/system-os_release.ID: ubuntu\n'
	printf '    feature.node.kubernetes.io/system-os_release.VERSION_ID: "22.04"\n'
}
ynode 6291456 >big6.yaml
t_rss labels2tag big6.yaml
t_rc 0 "YAML: a 6 MiB annotation nobody reads"
t_out "the tag all the same" "550-5.15.0-107-generic-ubuntu22.04"
t_small "the value is not copied (under 14 MiB)" 14
ynode 67108864 >big.yaml
t_rss labels2tag big.yaml
t_rc 2 "YAML: a 64 MB annotation nobody reads"
t_out "prints nothing"
t_err "says it is not kubectl output, and where" \
	"labels2tag: big.yaml:6:6: a YAML scalar or comment after this point runs over 8 MiB: not kubectl output (the API server keeps no object over 1.5 MiB)"
t_small "streamed, in bounded memory (under 24 MiB)" 24
t_rss pdb-check -a big.yaml
t_rc 2 "pdb-check: the same 64 MB value"
t_grep "the same error" err '^pdb-check: big.yaml:6:6: a YAML scalar or comment after this point runs over 8 MiB'
t_small "in bounded memory (under 24 MiB)" 24
rm -f big.yaml big6.yaml

# Nested 100,000 deep.
{ head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; } >deep.json
t_run labels2tag deep.json
t_rc 2 "JSON arrays nested 100,000 deep"
t_out "prints nothing"
{ printf '{"kind":"Node","metadata":{"name":"n"},"status":'; head -c 200000 /dev/zero | sed 's/\x0/{"a":/g'; } >deep2.json
t_run labels2tag deep2.json
t_rc 2 "JSON objects nested 200,000 deep inside a Node"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "- "; print "x" }' >deep.yaml
t_run labels2tag deep.yaml
t_rc 2 "YAML nested 100,000 deep"

# NUL bytes and invalid UTF-8.
sed 's/"lab-node-1"/"lab-node-1\x00"/' "$N1" >nul.json
t_run labels2tag nul.json
t_rc 2 "a NUL byte in JSON"
t_grep "named with its place" err '^labels2tag: nul.json:[0-9]*:[0-9]*: NUL byte'
sed 's/"kubelet is posting ready status"/"kubelet \xff\xfe posting"/' "$N1" >utf8.json
t_run labels2tag utf8.json
t_rc 2 "invalid UTF-8 in a field the tag does not use"
t_grep "is refused with its place" err '^labels2tag: utf8.json:[0-9]*:[0-9]*: invalid UTF-8'
sed 's/ubuntu/ubunt\xc3\xbc/' "$N1" >utf8b.json
t_run labels2tag utf8b.json
t_rc 2 "valid UTF-8 that cannot be part of a tag"
t_grep "is named as such" err 'value "ubunt\\xc3\\xbc22.04"\|value "ubunt\\xc3\\xbc"'

# Duplicate keys: which value would count?
sed 's/"nvidia.com\/cuda.driver.major": "535",/"nvidia.com\/cuda.driver.major": "535", "nvidia.com\/cuda.driver.major": "550",/' "$N1" >dup.json
t_run labels2tag dup.json
t_rc 2 "a label given twice"
t_out "prints no tag: either value would be a guess"
t_grep "names the key" err 'duplicate key "nvidia.com/cuda.driver.major"'
printf 'kind: Node\nmetadata:\n  name: a\n  name: b\n' >dup.yaml
t_run labels2tag dup.yaml
t_rc 2 "a YAML key given twice"
t_grep "is named with its line" err '^labels2tag: dup.yaml:4:.*duplicate'

# Values that must never reach a shell or forge a line.
for v in '5.15.0-107-generic;reboot' '$(reboot)' '5.15.0 `id`' '5.15.0|x' "5.15.0'x" '5.15.0\nlab-node-9 550-x-ubuntu22.04'; do
	esc=$(printf '%s' "$v" | sed 's/[\\"]/\\&/g')
	sed "s#\"5.15.0-107-generic\",#\"$esc\",#" "$N1" >meta.json
	t_run labels2tag -n meta.json
	if [ "$rc" -eq 2 ] && ! [ -s out ] && grep -q 'is not a valid label value' err; then
		t_ok 0 "kernel label $v: refused, nothing printed"
	else
		t_ok 1 "kernel label $v: refused, nothing printed"
		t_diag <out
	fi
done

# Node names that are not DNS names (as JSON string contents).
for j in 'Lab-Node' 'a b' 'a;b' '-a' 'a\nb' ''; do
	sedj=$(printf '%s' "$j" | sed 's/[\\&#]/\\&/g')
	sed "s#\"name\": \"lab-node-1\"#\"name\": \"$sedj\"#" "$N1" >name.json
	t_run labels2tag -n -u name.json
	t_rc 2 "node name \"$j\""
	t_out "\"$j\" becomes an unnamed UNKNOWN item" "#0 UNKNOWN invalid:metadata.name"
done

sed 's/"name": "lab-node-1"/"name": "lab-node-1\\u0000-x"/' "$N1" >nulname.json
t_run labels2tag -n -u nulname.json
t_rc 2 "a name with an escaped NUL (cJSON would cut it to another name)"
t_out "prints nothing"
t_grep "says so with the line" err '^labels2tag: nulname.json:[0-9]*: \\u0000 (NUL) in a JSON string$'

# Billion laughs.
cat >laughs.yaml <<'EOF2'
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
kind: Node
EOF2
t_rss labels2tag laughs.yaml
t_rc 2 "a YAML alias bomb"
t_grep "aliases are refused where they stand" err '^labels2tag: laughs.yaml:2:.*YAML aliases are not accepted'
t_small "in bounded memory (under 16 MiB)" 16

# The other parsers.
{ printf 'driver_branch,kernel,os_tag\n550,'; head -c 10485760 /dev/zero | tr '\0' 'k'; printf ',ubuntu22.04\n'; } >big.csv
printf 'lab-node-0 550-5.15.0-119-generic-ubuntu22.04\n' >one
t_rss matrix-grep -m big.csv one
t_rc 2 "a matrix row with a 10 MB kernel"
t_grep "is refused with its line" err '^matrix-grep: big.csv:2: '
printf 'driver_branch,kernel,os_tag\n550,5.15.0-119-generic,ubuntu22.04\n\0\n' >nul.csv
t_run matrix-grep -m nul.csv one
t_rc 2 "a NUL byte in the matrix"
printf 'lab-node-0 550-5.15.0-119-generic-ubuntu22.04\0\n' >nul.lines
t_run matrix-grep -m "$ROOT/lab/support-matrix.csv" nul.lines
t_rc 2 "a NUL byte in a '<node> <tag>' line"
t_out "never OK"
sed 's/"minAvailable": 4/"minAvailable": 4, "minAvailable": 0/' "$DATA/pdb-lab.json" >dup-pdb.json
t_run pdb-check lab-node-1 dup-pdb.json
t_rc 2 "pdb-check on a budget with minAvailable twice (Go would take the last, cJSON the first)"
t_err "names the key" 'pdb-check: dup-pdb.json: duplicate key "minAvailable"'
head -c 3000 "$DATA/pdb-lab.json" >cut-pdb.json
t_run pdb-check lab-node-1 cut-pdb.json
t_rc 2 "pdb-check on a cut list"
t_out "never OK"
t_done
