#!/bin/sh
# matrix-grep: nodes whose tag is not in the matrix; every matrix form and fault.
. "$(dirname "$0")/lib.sh"

M=$ROOT/lab/support-matrix.csv
T0=550-5.15.0-119-generic-ubuntu22.04
T1=535-5.15.0-107-generic-ubuntu22.04
T2=550-6.8.0-45-generic-ubuntu24.04
T3=550-6.8.0-52-generic-ubuntu24.04
printf '%s\n' "lab-node-0 $T0" "lab-node-1 $T1" "lab-node-2 $T2" >three
printf '%s\n' "lab-node-0 $T0" "lab-node-1 $T1" "lab-node-2 $T2" "lab-node-3 $T3" >four

t_run matrix-grep -m "$M" three
t_rc 0 "every node's tag is in the matrix"
t_out "prints exactly OK" OK
t_err "nothing on stderr"

t_run matrix-grep -m "$M" <four
t_rc 1 "a node whose tag was never built"
t_out "prints that node, MISSING, its tag" "lab-node-3 MISSING $T3"

printf '%s\n' "lab-node-3 $T3" "lab-node-0 $T0" "lab-node-4 $T3" >order
t_run matrix-grep -m "$M" order
t_out "every missing node, in input order" "lab-node-3 MISSING $T3" "lab-node-4 MISSING $T3"

# What hand-edited matrices carry.
{ printf '\357\273\277'; sed 's/$/\r/' "$M"; printf '\r\n\r\n550,6.8.0-52-generic,ubuntu24.04'; } >dos.csv
t_run matrix-grep -m dos.csv four
t_rc 0 "a BOM, CRLF line ends, blank lines and no final newline are tolerated"
t_out "and the last row still counts" OK

cp "$M" dup.csv
sed -n 2p "$M" >>dup.csv
t_run matrix-grep -m dup.csv three
t_rc 0 "a duplicate row is harmless"
t_err "and silent by default"
t_run matrix-grep -D -m dup.csv three
t_rc 0 "-D with a duplicate row"
t_err "-D reports it with both lines" \
	"matrix-grep: dup.csv:5: duplicate of line 2 ($T0)"

# What is ambiguous is refused, with file:line.
bad() { # bad NAME DESCRIPTION EXPECTED-STDERR: the matrix in ./NAME is refused
	t_run matrix-grep -m "$1" three
	t_rc 2 "$2"
	t_err "$2: the message" "$3"
	t_out "$2: stdout stays empty, never OK"
}
printf 'branch,kernel,os\n550,5.15.0-119-generic,ubuntu22.04\n' >h1.csv
bad h1.csv "a wrong header" 'matrix-grep: h1.csv:1: header must be exactly driver_branch,kernel,os_tag, not "branch,kernel,os"'
printf 'kernel,driver_branch,os_tag\n' >h2.csv
bad h2.csv "columns in another order" 'matrix-grep: h2.csv:1: header must be exactly driver_branch,kernel,os_tag, not "kernel,driver_branch,os_tag"'
sed 1d "$M" >h3.csv
bad h3.csv "a missing header" 'matrix-grep: h3.csv:1: header must be exactly driver_branch,kernel,os_tag, not "550,5.15.0-119-generic,ubuntu22.04"'
printf 'driver_branch,kernel,os_tag\n550,5.15.0-119-generic\n' >c2.csv
bad c2.csv "two columns" 'matrix-grep: c2.csv:2: 2 columns (expected 3: driver_branch,kernel,os_tag)'
printf 'driver_branch,kernel,os_tag\n550,5.15.0-119-generic,ubuntu,22.04\n' >c4.csv
bad c4.csv "four columns" 'matrix-grep: c4.csv:2: more than 3 columns (expected driver_branch,kernel,os_tag)'
printf 'driver_branch,kernel,os_tag\n\n550,,ubuntu22.04\n' >e.csv
bad e.csv "an empty field" 'matrix-grep: e.csv:3: empty kernel'
printf 'driver_branch,kernel,os_tag\n550,5.15.0-119-generic,ubuntu 22.04\n' >v.csv
bad v.csv "a value that cannot be part of a tag" "matrix-grep: v.csv:2: os_tag \"ubuntu 22.04\" cannot be part of an image tag (only letters, digits, '_', '.' and '-')"
printf 'driver_branch,kernel,os_tag\n550.90.,5.15.0-119-generic,ubuntu22.04\n' >b.csv
bad b.csv "a driver part that is neither a branch nor a version" 'matrix-grep: b.csv:2: driver_branch "550.90." is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)'
: >empty.csv
bad empty.csv "an empty matrix file" 'matrix-grep: empty.csv: empty matrix: expected the header driver_branch,kernel,os_tag'
t_run matrix-grep -m nosuch.csv three
t_rc 2 "a matrix that does not exist"
t_err "names it" "matrix-grep: cannot open nosuch.csv: No such file or directory"

# The registry's own word for what exists.
printf '%s\n' "$T1" "" "$T0" "$T2" >tags.txt
t_run matrix-grep -m tags.txt four
t_rc 1 "a plain tag list as the matrix"
t_out "finds the same missing node" "lab-node-3 MISSING $T3"
printf '%s\n' "$T0" "nvcr.io/nvidia/driver:$T1" >ref.txt
bad ref.txt "an image reference in a tag list" "matrix-grep: ref.txt:2: \"nvcr.io/nvidia/driver:$T1\" is not an image tag (give the tag alone, without registry/repository:)"
cat >skopeo.json <<JSON
{
    "Repository": "nvcr.io/nvidia/driver",
    "Tags": [
        "550.90.07-ubuntu22.04",
        "$T0",
        "$T1",
        "$T2",
        "latest"
    ]
}
JSON
t_run matrix-grep -m skopeo.json four
t_rc 1 "skopeo list-tags JSON as the matrix"
t_out "finds the same missing node" "lab-node-3 MISSING $T3"
# A registry's whole tag list, megabytes of it (a busy repository has tens
# of thousands of tags): read whole, however long, and still checked.
awk -v t0="$T0" -v t1="$T1" -v t3="$T3" 'BEGIN { printf "{\"Repository\": \"registry.example/nvidia/driver\", \"Tags\": [";
	for (i = 0; i < 40000; i++) printf "\"%d.%d.%d-5.15.0-%d-generic-ubuntu22.04\", ", 500 + i % 80, i % 200, i % 10, i
	printf "\"%s\", \"%s\", \"%s\"]}\n", t0, t1, t3 }' >many.json
t_run matrix-grep -m many.json four
t_rc 1 "a skopeo list of 40,003 tags ($(wc -c <many.json) bytes)"
t_out "read whole: only the node whose tag is not there" "lab-node-2 MISSING $T2"
sed 's/"Tags": \[/"Tags": ["a b", /' many.json >many-bad.json
bad many-bad.json "a bad tag first in a long skopeo list" 'matrix-grep: many-bad.json: Tags[0] "a b" is not an image tag'
printf '{"Repository": "x", "Tags": ["%s"], "x": {"a": 1, "a": 2}}' "$T0" >skd.json
bad skd.json "a key given twice in skopeo JSON, even where nothing is read" 'matrix-grep: skd.json: duplicate key "a"'
printf '{"Repository": "x", "Tags": ["ok", "a b"]}' >skb.json
bad skb.json "a bad tag in skopeo JSON" 'matrix-grep: skb.json: Tags[1] "a b" is not an image tag'
printf '{"Repository": "x"}' >skn.json
bad skn.json "skopeo JSON without Tags" 'matrix-grep: skn.json: JSON matrix has no "Tags" list (expected `skopeo list-tags` output)'

# Stdin.
printf '%s\n' "lab-node-0 $T0" "lab-node-1" >short
t_run matrix-grep -m "$M" short
t_rc 2 "a stdin line without a tag"
t_err "names the line" 'matrix-grep: short:2: not a '"'<node> <tag>'"' line: "lab-node-1"'
t_out "never says OK"
printf '%s\n' "lab-node-0 $T0 extra" >long
t_run matrix-grep -m "$M" long
t_rc 2 "a stdin line with three fields"
printf '%s\n' "lab-node-0 $T0" "no-major UNKNOWN missing:nvidia.com/cuda.driver.major" "lab-node-3 $T3" >unk
t_run matrix-grep -m "$M" unk
t_rc 2 "a node whose tag could not be built"
t_out "is passed on, MISSING nodes still listed, no OK" \
	"no-major UNKNOWN missing:nvidia.com/cuda.driver.major" "lab-node-3 MISSING $T3"
printf '%s\n' "#4 UNKNOWN invalid:metadata.name" >item
t_run matrix-grep -m "$M" item
t_rc 2 "an unnamed list item from labels2tag -u"
t_out "is passed on" "#4 UNKNOWN invalid:metadata.name"

t_run matrix-grep -m "$M" </dev/null
t_rc 2 "no nodes at all"
t_out "says NONE, not OK" NONE
t_err "and why it is not a pass" "matrix-grep: no nodes on input: nothing was checked (-e accepts that)"
t_run matrix-grep -e -m "$M" </dev/null
t_rc 0 "-e accepts no nodes"
t_out "still saying NONE" NONE

t_run matrix-grep three
t_rc 2 "no -m"
t_err "prints the usage" "usage: matrix-grep [-De] -m matrix [file]"

# The pipeline the audit runs.
t_run sh -c 'labels2tag "$1" | matrix-grep -m "$2"' sh "$DATA/lab-nodes.yaml" "$M"
t_rc 0 "labels2tag | matrix-grep on the lab nodes"
t_out "is OK" OK

t_done
