#!/bin/sh
# rollout-plan, the rollout's decisions, rule by rule on small fixtures:
# the order (left under way, then cordoned or not Ready, then by name), -p,
# -u (rounded up over every GPU node; a node down already costs none), the
# budgets (the nodes under way hold what their pods still draw), blocked
# drains, failed, done and skipped nodes, -s/-r/-g, the dry run's sequence,
# every input error (exit 2, named, nothing on stdout), and the real
# labels2tag -F and pdb-check -a output as its input.
. "$(dirname "$0")/lib.sh"

V=550.90.07
OLD=535.183.06
TAG=550-5.15.0-107-generic-ubuntu22.04
# fact NAME [DRIVER STATE SKIP CORDON READY]: a labels2tag -F record.
fact() {
	printf '%s %s %s %s %s %s %s - - - -\n' "$1" "$TAG" "${2:-$OLD}" "${3:--}" "${4:--}" \
		"${5:-schedulable}" "${6:-ready}"
}
P() { t_run rollout-plan "$@"; }

# 1. The order, and -p: given out of order, taken by the operator's order.
{
	fact n5
	fact n3
	fact n9 "$OLD" drain-required - cordoned
	fact n1
	fact n4 "$OLD" - - cordoned
	fact n2 "$OLD" - - schedulable not-ready
} >facts
: >draws
P -v "$V" -p 0 -u 100% facts draws
t_rc 0 "-p 0, -u 100%"
t_out "left under way, then down (cordoned, not Ready), then the others, by name" \
	"START n9 $TAG" "START n2 $TAG" "START n4 $TAG" "START n1 $TAG" "START n3 $TAG" "START n5 $TAG" \
	"UNAVAILABLE 3 6"
t_err "nothing on stderr"
P -v "$V" -p 2 -u 100% facts draws
t_out "-p 2: two start, the others wait for a slot" \
	"START n9 $TAG" "START n2 $TAG" "WAIT n4 parallel" "WAIT n1 parallel" "WAIT n3 parallel" "WAIT n5 parallel" \
	"UNAVAILABLE 3 6"
P -v "$V" facts draws
t_out "defaults: -p 1 and -u 25% (of 6 nodes: 2, and 3 are down)" \
	"START n9 $TAG" "WAIT n2 parallel" "WAIT n4 parallel" "WAIT n1 parallel" "WAIT n3 parallel" "WAIT n5 parallel" \
	"UNAVAILABLE 3 2"

# 2. -u: ten nodes, 25% is 3 (2.5 rounded up); a node down costs none.
for i in 0 1 2 3 4 5 6 7 8; do fact "m$i"; done >facts
fact m9 "$OLD" - - cordoned >>facts
P -v "$V" -p 0 -u 25% facts draws
t_out "25% of 10 is 3: m9 (down, one of them) and two more" \
	"START m9 $TAG" "START m0 $TAG" "START m1 $TAG" \
	"WAIT m2 unavailable" "WAIT m3 unavailable" "WAIT m4 unavailable" "WAIT m5 unavailable" "WAIT m6 unavailable" "WAIT m7 unavailable" "WAIT m8 unavailable" \
	"UNAVAILABLE 1 3"
P -v "$V" -p 0 -u 21% facts draws
t_grep "21% of 10 is 3 too (2.1 rounded up)" out "^UNAVAILABLE 1 3$"
P -v "$V" -p 0 -u 2 facts draws
t_out "-u 2, a number: m9 and one more" \
	"START m9 $TAG" "START m0 $TAG" \
	"WAIT m1 unavailable" "WAIT m2 unavailable" "WAIT m3 unavailable" "WAIT m4 unavailable" "WAIT m5 unavailable" "WAIT m6 unavailable" "WAIT m7 unavailable" "WAIT m8 unavailable" \
	"UNAVAILABLE 1 2"
P -v "$V" -p 0 -u 0% facts draws
t_grep "-u 0%: the node down still goes (no cost)" out "^START m9 $TAG$"
t_grep "and no other" out "^WAIT m0 unavailable$"
# Nodes under way hold their place, cordoned yet or not.
printf '%s\n' m0 m1 >running
P -v "$V" -p 0 -u 25% -r running -g running facts draws
t_out "m0 and m1 under way (not cordoned yet) and m9 make 3: only m9, at no cost" \
	"START m9 $TAG" \
	"WAIT m2 unavailable" "WAIT m3 unavailable" "WAIT m4 unavailable" "WAIT m5 unavailable" "WAIT m6 unavailable" "WAIT m7 unavailable" "WAIT m8 unavailable" \
	"UNAVAILABLE 3 3"
P -v "$V" -p 3 -u 100% -r running facts draws
t_out "and a slot of -p each" "START m9 $TAG" \
	"WAIT m2 parallel" "WAIT m3 parallel" "WAIT m4 parallel" "WAIT m5 parallel" "WAIT m6 parallel" "WAIT m7 parallel" "WAIT m8 parallel" \
	"UNAVAILABLE 3 10"
printf '%s\n' gone-node >running
P -v "$V" -p 1 -u 100% -r running facts draws
t_grep "a node under way the facts no longer list holds its slot" out "^WAIT m9 parallel$"

# 3. Budgets: a and b share one that allows 1, c draws 2 of one that
# allows 2, d is blocked by pdb-check's words, e needs more than its budget
# allows with nothing under way, f's budget has no count.
for n in a b c d e f g; do fact "$n"; done >facts
cat >draws <<'DRAWS'
a DRAWS web/pair 1 1
b DRAWS web/pair 1 1
b SKIP kube-system/ds-b daemonset
c DRAWS db/two 2 2
c DRAWS web/free 1 5
d web/pinned BLOCKS web/p maxUnavailable=0 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: raise maxUnavailable
e DRAWS ml/tight 2 1
f DRAWS ml/nocount 1 -
x DRAWS web/pair 1 1
DRAWS
P -v "$V" -p 0 -u 100% facts draws
t_rc 0 "budgets"
t_out "one of a budget's pair at a time; blocked drains named; x (no GPU node) passed over" \
	"START a $TAG" "WAIT b budget web/pair" "START c $TAG" "BLOCKED d" "BLOCKED e" "BLOCKED f" "START g $TAG" \
	"UNAVAILABLE 0 7"
echo a >running
P -v "$V" -p 0 -u 100% -r running -g running facts draws
t_grep "a under way, its pod still on it: b still waits" out "^WAIT b budget web/pair$"
# a's pod evicted: a draws on it no more, and the budget allows none until
# the pod's replacement is Ready, so pdb-check says it blocks b.  a took it
# when it started (-k): b waits for it, it is not blocked.
{ grep -v -e '^a ' -e '^b DRAWS web/pair' draws
  echo 'b DRAWS web/pair 1 0'
  echo 'b web/pair BLOCKS web/b1 maxUnavailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: wait'; } >draws.a
echo 'a web/pair' >held
P -v "$V" -p 0 -u 100% -r running -k held -g running facts draws.a
t_grep "a's pod evicted, the budget it took allows none: b waits for it" out "^WAIT b budget web/pair$"
P -v "$V" -p 0 -u 100% -r running -g running facts draws.a
t_grep "without -k, b is blocked" out "^BLOCKED b$"
: >running
P -v "$V" -p 0 -u 100% -r running -k held facts draws.a
t_grep "a no longer under way: what it took is not held" out "^BLOCKED b$"
echo a >running
{ grep -v -e '^a ' -e '^b DRAWS web/pair' draws; echo 'b DRAWS web/pair 1 1'; } >draws.b
P -v "$V" -p 0 -u 100% -r running -k held -g running facts draws.b
t_grep "a's pod back elsewhere, the budget allows one again: b goes" out "^START b $TAG$"
# A budget that allows less than a node needs, nothing under way holding
# it, blocks the node whatever its other budgets wait for and whatever
# the order of its draw lines (it was WAIT on the other, the -w clock
# started late); a held budget's wait is said once in a dry run.
fact y >>facts
{ cat draws; echo 'y DRAWS web/pair 1 1'; echo 'y DRAWS ml/zero 1 0'; } >draws.y
P -v "$V" -p 0 -u 100% -r running -g running facts draws.y
t_grep "y waits on web/pair, which a holds, but ml/zero alone refuses it: blocked" out "^BLOCKED y$"
t_is "and never said to wait" "$(grep -c '^WAIT y' out)" 0
P -D -v "$V" -p 0 -u 100% -r running -g running facts draws.y
t_grep "in a dry run too" out "^BLOCKED y$"
t_is "never said to wait" "$(grep -c '^WAIT y' out)" 0
{ cat draws; echo 'y DRAWS ml/zero 1 0'; echo 'y DRAWS web/pair 1 1'; } >draws.y
P -v "$V" -p 0 -u 100% -r running -g running facts draws.y
t_grep "the draw lines the other way round: the same" out "^BLOCKED y$"
for n in a b c; do fact "$n"; done >facts.k
{ grep -v -e '^a ' -e '^b DRAWS web/pair' draws | grep -e '^b ' ; echo 'b DRAWS web/pair 1 0'
  echo 'b web/pair BLOCKS web/b1 maxUnavailable=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0 needed=1: wait'
  echo 'c DRAWS db/two 1 2'; } >draws.k
P -D -v "$V" -p 1 -u 100% -r running -k held -g running facts.k draws.k
t_rc 0 "a dry run, b waiting for the budget a took (-k)"
t_is "b's wait said once, as without -k" "$(grep -c '^WAIT b budget web/pair$' out)" 1
t_grep "c goes meanwhile" out "^START c $TAG$"
head -n 7 facts >facts.n && mv facts.n facts

# A node blocked behind the limits waits for a slot first: it is judged
# blocked only when it could start (the -w clock starts then).
P -v "$V" -p 1 -u 100% facts draws
t_out "-p 1: a starts; d is not said blocked while it waits for a slot" \
	"START a $TAG" "WAIT b parallel" "WAIT c parallel" "WAIT d parallel" "WAIT e parallel" "WAIT f parallel" "WAIT g parallel" \
	"UNAVAILABLE 0 7"

# 4. Done, skipped, failed, and -s, -g.
{
	fact k1 "$V"
	fact k2 "$V" upgrade-done
	fact k3 "$V" validation-required
	fact k4 "$OLD" - skip
	fact k5 "$OLD" upgrade-failed
	fact k6 "$OLD" upgrade-failed skip
	fact k7 "$V" - skip
	fact k8
} >facts
: >draws
P -v "$V" -p 0 -u 100% facts draws
t_out "at the version (no state or upgrade-done) is done, even labelled skip; skip before failed; k3 is still under way" \
	"START k3 $TAG" "START k8 $TAG" "DONE k1" "DONE k2" "SKIP k4" "FAILED k5" "SKIP k6" "DONE k7" \
	"UNAVAILABLE 0 8"
printf '%s\n' k8 k5 >scope
P -v "$V" -p 0 -u 100% -s scope facts draws
t_out "-s: the scope's nodes only (-u still counts them all)" "START k8 $TAG" "FAILED k5" "UNAVAILABLE 0 8"
echo k3 >gone
P -v "$V" -p 0 -u 100% -g gone facts draws
t_grep "-g: a node this run is done with is not started again" out "^START k8 $TAG$"
t_is "k3 is not" "$(grep -c '^START k3' out)" 0

# 5. The dry run: the node started first ends first.
for n in a b c d; do fact "$n"; done >facts
cat >draws <<'DRAWS'
a DRAWS web/pair 1 1
b DRAWS web/pair 1 1
c DRAWS web/pair 1 1
DRAWS
P -D -v "$V" -p 2 -u 100% facts draws
t_rc 0 "-D"
t_out "a and d; b waits for the budget (once); a ends, b; d ends, nothing (c waits); b ends, c" \
	"START a $TAG" "WAIT b budget web/pair" "WAIT c budget web/pair" "START d $TAG" \
	"START b $TAG" "START c $TAG" "UNAVAILABLE 0 4"
for i in 1 2 3 4; do fact "u$i"; done >facts
fact u5 "$OLD" - - cordoned >>facts
: >draws
P -D -v "$V" -p 2 -u 1 facts draws
t_out "-u 1 with one node down: u5 goes, the others are left" \
	"START u5 $TAG" "LEFT u1 unavailable" "LEFT u2 unavailable" "LEFT u3 unavailable" "LEFT u4 unavailable" \
	"UNAVAILABLE 1 1"
P -D -v "$V" -p 2 -u 2 facts draws
t_out "-u 2: one at a time beside u5, in order" \
	"START u5 $TAG" "START u1 $TAG" "START u2 $TAG" "START u3 $TAG" "START u4 $TAG" "UNAVAILABLE 1 2"
printf '%s\n' u3 gone-node >running
P -D -v "$V" -p 2 -u 100% -r running -g running facts draws
t_out "-D -r: the nodes under way end first, then the others start" \
	"START u5 $TAG" "START u1 $TAG" "START u2 $TAG" "START u4 $TAG" "UNAVAILABLE 2 5"

# 6. What labels2tag -F and pdb-check -a really print: the lab's three
# nodes and the budget that lets one trainer go at a time.
labels2tag -F -b 570 "$T/data/lab-nodes.json" >facts 2>/dev/null
pdb-check -a "$T/data/pdb-lab-ok.json" >draws
P -D -v 570.86.10 -p 0 -u 100% facts draws
t_rc 0 "the lab's nodes and budgets"
t_out "one trainer's node at a time" \
	"START lab-node-0 570-5.15.0-119-generic-ubuntu22.04" \
	"WAIT lab-node-1 budget gpu-drv/trainer-pdb" "WAIT lab-node-2 budget gpu-drv/trainer-pdb" \
	"START lab-node-1 570-5.15.0-107-generic-ubuntu22.04" "START lab-node-2 570-6.8.0-45-generic-ubuntu24.04" \
	"UNAVAILABLE 0 3"
pdb-check -a "$T/data/pdb-lab.json" >draws
P -v 570.86.10 -p 0 -u 100% facts draws
t_out "the budget that allows none: every node blocked" \
	"BLOCKED lab-node-0" "BLOCKED lab-node-1" "BLOCKED lab-node-2" "UNAVAILABLE 0 3"

# 7. Bad input: exit 2, the file and line named, nothing on stdout.
fact n1 >facts
fact n2 >>facts
: >draws
bad() { # bad DESC MESSAGE ARGS...: exit 2, nothing on stdout, stderr MESSAGE
	d=$1 m=$2
	shift 2
	P "$@"
	t_rc 2 "$d"
	t_out "$d: nothing on stdout"
	t_err "$d: says why" "rollout-plan: $m"
}
printf 'n3 %s %s - - schedulable ready -\n' "$TAG" "$OLD" >>facts
bad "a short facts record" "facts:3: not a labels2tag -F record (node tag driver state skip cordon ready initial since cordoner uid)" \
	-v "$V" facts draws
fact n1 >facts
fact n1 >>facts
bad "a node twice" "facts:2: node n1 again (first on line 1)" -v "$V" facts draws
fact N_1 >facts
bad "not a node name" 'facts:1: "N_1" is not a node name' -v "$V" facts draws
fact n1 "$OLD" - - drained >facts
bad "a cordon field that is not one" "facts:1: not a labels2tag -F record (node tag driver state skip cordon ready initial since cordoner uid)" -v "$V" facts draws
fact n1 "$OLD" - - schedulable Ready >facts
bad "a ready field that is not one" "facts:1: not a labels2tag -F record (node tag driver state skip cordon ready initial since cordoner uid)" -v "$V" facts draws
printf 'n1  %s - - schedulable ready - - -\n' "$OLD" >facts
bad "an empty tag" "facts:1: not a labels2tag -F record (node tag driver state skip cordon ready initial since cordoner uid)" -v "$V" facts draws
fact n1 >facts
echo 'n1 web' >held
echo n1 >running
bad "a held line without a budget" 'held:1: not a "node namespace/budget" line' -v "$V" -r running -k held facts /dev/null
fact n1 >facts
echo 'n1 DRAWS web/pair x 1' >draws
bad "a DRAWS line with no count" "draws:1: not a DRAWS line (node DRAWS namespace/budget needed allowed)" -v "$V" facts draws
echo 'n1 DRAWS web/pair 1' >draws
bad "a DRAWS line cut short" "draws:1: not a DRAWS line (node DRAWS namespace/budget needed allowed)" -v "$V" facts draws
fact n2 >>facts
printf '%s\n' 'n1 DRAWS web/pair 1 1' 'n2 DRAWS web/pair 1 0' >draws
bad "two counts for one budget" "draws:2: budget web/pair allows 0 here, 1 before: not one read of the budgets" -v "$V" facts draws
printf '%s\n' 'n1 DRAWS web/pair 1 1' 'n1 DRAWS web/other 1 1' 'n1 DRAWS web/pair 1 1' >draws
bad "a budget drawn on twice by a node" "draws: node n1 draws on web/pair twice (lines 1 and 3)" -v "$V" facts draws
echo 'n1 DRAWS /pair 1 1' >draws
bad "a budget without its namespace" "draws:1: not a DRAWS line (node DRAWS namespace/budget needed allowed)" -v "$V" facts draws
echo 'n1  DRAWS web/pair 1 1' >draws
bad "two spaces" "draws:1: not a pdb-check -a line (node, then what it says)" -v "$V" facts draws
echo 'n1' >draws
bad "a node alone" "draws:1: not a pdb-check -a line (node, then what it says)" -v "$V" facts draws
: >draws
printf '%s\n' n1 '' >running
bad "an empty name under way" 'running:2: "" is not a node name' -v "$V" -r running facts draws
bad "-p x" '-p takes a number of nodes (0: no limit), not "x"' -v "$V" -p x facts draws
bad "-u 101%" '-u takes a number of nodes or a percentage up to 100% (25%), not "101%"' -v "$V" -u 101% facts draws
bad "-u -1" '-u takes a number of nodes or a percentage up to 100% (25%), not "-1"' -v "$V" -u -1 facts draws
bad "-v x" '-v "x" is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)' -v x facts draws
bad "no such file" "cannot open nofile: No such file or directory" -v "$V" nofile draws
# -y: each owner's limits apart (upgrade-policy's output): a100 owns three
# nodes, maxParallelUpgrades 2, maxUnavailable 2; the defaults the other
# three (1, and 25% of 3: 1).
for n in a1 a2 a3 d1 d2 d3; do fact "$n"; done >facts
: >draws
printf '{"kind":"List","apiVersion":"v1","items":[]}\n' >objects.json
{
	for n in a1 a2 a3; do echo "node $n nvidiadriver/a100"; done
	for n in d1 d2 d3; do echo "node $n nvidiadriver/default"; done
	upgrade-policy -U maxParallelUpgrades=2 -U maxUnavailable=2 objects.json | sed -n 's|^policy - |policy nvidiadriver/a100 |p'
	upgrade-policy objects.json | sed -n 's|^policy - |policy nvidiadriver/default |p'
} >owners.pol
P -v "$V" -y owners.pol facts draws
t_rc 0 "-y: two owners"
t_out "two of a100's start, one of the default's; each owner's unavailable said" \
	"START a1 $TAG" "START a2 $TAG" "WAIT a3 parallel" "START d1 $TAG" "WAIT d2 parallel" "WAIT d3 parallel" \
	"UNAVAILABLE 0 2 nvidiadriver/a100" "UNAVAILABLE 0 1 nvidiadriver/default"
P -D -v "$V" -y owners.pol facts draws
t_out "-D -y: the whole rollout, each owner's slots apart" \
	"START a1 $TAG" "START a2 $TAG" "START d1 $TAG" "START a3 $TAG" "START d2 $TAG" "START d3 $TAG" \
	"UNAVAILABLE 0 2 nvidiadriver/a100" "UNAVAILABLE 0 1 nvidiadriver/default"
grep -v ' a3 ' owners.pol >owners.short
bad "a node with no policy" "owners.short: node a3 has no upgradePolicy (upgrade-policy's output for every GPU node)" -v "$V" -y owners.short facts draws
P -v "$V" -p 2 -y owners.pol facts draws
t_rc 2 "-p with -y: the policy has the limits"
P facts draws
t_rc 2 "no -v"
t_grep "gives the usage" err "^usage: rollout-plan "
P -h
t_rc 0 "-h"
t_grep "the usage on stdout" out "^usage: rollout-plan "
P -v "$V" facts draws >/dev/full
t_run sh -c 'rollout-plan -v "$1" facts draws >/dev/full' sh "$V"
t_rc 2 "a write error"
t_done
