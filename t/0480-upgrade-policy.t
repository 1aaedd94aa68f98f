#!/bin/sh
# upgrade-policy: the upgradePolicy in force for each node, field by field,
# and where each came from: the owner's object (the NVIDIADriver that
# selects the node, else the ClusterPolicy), its defaults (the CRDs'; an
# NVIDIADriver with none is autoUpgrade true), a flag; a bad field or flag
# named, exit 2; label selectors read as labels.Parse reads them.
. "$(dirname "$0")/lib.sh"

NODES=$DATA/lab-nodes.json
E='{"kind":"List","apiVersion":"v1","items":[]}'
echo "$E" >none.json
# cp POLICY...: a ClusterPolicy whose spec.driver.upgradePolicy is POLICY (JSON), then no GPUCluster nor NVIDIADriver.
cp_obj() {
	printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"driver":{"enabled":true,"usePrecompiled":true,"version":"550","repository":"r.example/nvidia","image":"driver"%s}}}]}\n' "${1:+,\"upgradePolicy\":$1}"
	printf '{"kind":"NVIDIADriverList","apiVersion":"nvidia.com/v1alpha1","items":[]}\n'
}
DEFAULTS="autoUpgrade default false
maxParallelUpgrades default 1
maxUnavailable default 25%
waitForCompletion.podSelector default
waitForCompletion.timeoutSeconds default 0
podDeletion.force default false
podDeletion.timeoutSeconds default 300
podDeletion.deleteEmptyDir default false
drain.enable default false
drain.force default false
drain.podSelector default nvidia.com/gpu-driver-upgrade-drain.skip!=true
drain.timeoutSeconds default 300
drain.deleteEmptyDir default false
podDeletionFilter default gpu"

# 1. No object: every node's owner is "-", its policy the defaults.
t_run upgrade-policy none.json "$NODES"
t_rc 0 "no object"
printf 'node lab-node-0 -\nnode lab-node-1 -\nnode lab-node-2 -\n' >expected
echo "$DEFAULTS" | sed 's/^/policy - /; s/ *$//' >>expected
sed 's/ *$//' out >got
t_cmp "the defaults, each said so" expected got
t_err "nothing on stderr"

# 2. A ClusterPolicy: what it sets is the object's, the rest default.
cp_obj '{"autoUpgrade":false,"maxParallelUpgrades":0,"maxUnavailable":"50%","drain":{"enable":true,"podSelector":"app in (a, b)","timeoutSeconds":0},"podDeletion":{"deleteEmptyDir":true}}' >cp.json
t_run upgrade-policy cp.json "$NODES"
t_rc 0 "a ClusterPolicy"
t_grep "the nodes are its" out "^node lab-node-1 clusterpolicy/cluster-policy$"
cp out all
t_run grep '^policy ' all
t_out "each field, the object's or the default" \
	"policy clusterpolicy/cluster-policy autoUpgrade object false" \
	"policy clusterpolicy/cluster-policy maxParallelUpgrades object 0" \
	"policy clusterpolicy/cluster-policy maxUnavailable object 50%" \
	"policy clusterpolicy/cluster-policy waitForCompletion.podSelector default " \
	"policy clusterpolicy/cluster-policy waitForCompletion.timeoutSeconds default 0" \
	"policy clusterpolicy/cluster-policy podDeletion.force default false" \
	"policy clusterpolicy/cluster-policy podDeletion.timeoutSeconds default 300" \
	"policy clusterpolicy/cluster-policy podDeletion.deleteEmptyDir object true" \
	"policy clusterpolicy/cluster-policy drain.enable object true" \
	"policy clusterpolicy/cluster-policy drain.force default false" \
	"policy clusterpolicy/cluster-policy drain.podSelector object app in (a, b),nvidia.com/gpu-driver-upgrade-drain.skip!=true" \
	"policy clusterpolicy/cluster-policy drain.timeoutSeconds object 0" \
	"policy clusterpolicy/cluster-policy drain.deleteEmptyDir default false" \
	"policy clusterpolicy/cluster-policy podDeletionFilter default gpu"
t_run upgrade-policy -U drain.force=true -U maxParallelUpgrades=3 -U maxParallelUpgrades=4 cp.json "$NODES"
t_grep "-U: a flag's, the last of a field" out "^policy clusterpolicy/cluster-policy maxParallelUpgrades flag 4$"
t_grep "-U drain.force" out "^policy clusterpolicy/cluster-policy drain.force flag true$"
t_run upgrade-policy cp.json
t_rc 0 "without nodes"
t_out "every owner's policy, and the defaults'" \
	"$(upgrade-policy cp.json "$NODES" | grep '^policy ')" "$(echo "$DEFAULTS" | sed 's/^/policy - /; s/default$/default /')"
cp_obj >nopol.json
t_run upgrade-policy nopol.json "$NODES"
t_grep "a ClusterPolicy without upgradePolicy: the defaults, autoUpgrade false" out "^policy clusterpolicy/cluster-policy autoUpgrade default false$"

# 3. NVIDIADrivers (useNvidiaDriverCRD): each its nodes, its own policy;
# with none at all autoUpgrade is true, as GetUpgradePolicyWithDefaults has it.
{
	printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[{"kind":"ClusterPolicy","metadata":{"name":"cluster-policy"},"spec":{"driver":{"useNvidiaDriverCRD":true}}}]}\n'
	printf '{"kind":"NVIDIADriverList","apiVersion":"nvidia.com/v1alpha1","items":['
	printf '{"kind":"NVIDIADriver","metadata":{"name":"a100"},"spec":{"usePrecompiled":true,"version":"550","nodeSelector":{"kubernetes.io/hostname":"lab-node-1"},"upgradePolicy":{"autoUpgrade":false,"maxParallelUpgrades":2}}},'
	printf '{"kind":"NVIDIADriver","metadata":{"name":"default"},"spec":{"default":true,"usePrecompiled":true,"version":"550"}}]}\n'
} >nvd.json
t_run upgrade-policy nvd.json "$NODES"
t_rc 0 "two NVIDIADrivers"
cp out all
t_run grep -e '^node ' -e ' autoUpgrade ' -e ' maxParallelUpgrades ' all
t_out "each node its NVIDIADriver, each its policy" \
	"node lab-node-0 nvidiadriver/default" "node lab-node-1 nvidiadriver/a100" "node lab-node-2 nvidiadriver/default" \
	"policy nvidiadriver/default autoUpgrade default true" "policy nvidiadriver/default maxParallelUpgrades default 1" \
	"policy nvidiadriver/a100 autoUpgrade object false" "policy nvidiadriver/a100 maxParallelUpgrades object 2"

# 4. A member the operator does not read is said, and left out.
cp_obj '{"gpuPodDeletion":{"force":true}}' >helm.json
t_run upgrade-policy helm.json "$NODES"
t_rc 0 "a member the operator does not read"
t_err "is said, with what the object calls it" \
	'upgrade-policy: clusterpolicy/cluster-policy: upgradePolicy."gpuPodDeletion" is not a field of the upgradePolicy the operator reads (the Helm chart'"'"'s gpuPodDeletion is podDeletion in the object): left out'
t_grep "and left out" out "^policy clusterpolicy/cluster-policy podDeletion.force default false$"

# 5. Fields of the wrong kind: exit 2, the owner and the field named.
while IFS='|' read -r pol msg; do
	cp_obj "$pol" >bad.json
	t_run upgrade-policy bad.json "$NODES"
	t_rc 2 "upgradePolicy $pol"
	t_out "$pol: nothing on stdout"
	t_err "$pol: says why" "upgrade-policy: clusterpolicy/cluster-policy: $msg"
done <<'EOF2'
{"autoUpgrade":"yes"}|upgradePolicy.autoUpgrade is a string, not a boolean
{"maxParallelUpgrades":-1}|upgradePolicy.maxParallelUpgrades is -1: the CRD's minimum is 0
{"maxParallelUpgrades":1.5}|upgradePolicy.maxParallelUpgrades is 1.5, not a 32-bit integer
{"maxUnavailable":"5"}|upgradePolicy.maxUnavailable "5" is a string but not a percentage (the operator cannot scale it)
{"maxUnavailable":"150%"}|upgradePolicy.maxUnavailable "150%" takes a number of nodes or a percentage up to 100% (25%)
{"drain":[]}|upgradePolicy.drain is a list, not an object
{"drain":{"podSelector":"a in ("}}|upgradePolicy.drain.podSelector "a in (": "a in (": a value list is (v1,v2,...)
{"waitForCompletion":{"timeoutSeconds":"60"}}|upgradePolicy.waitForCompletion.timeoutSeconds is "60", not an integer
[]|upgradePolicy is a list, not an object
EOF2

# 6. Flags: checked before any input, exit 2.
while IFS='|' read -r flag msg; do
	t_run upgrade-policy -U "$flag" no-such-file
	t_rc 2 "-U $flag"
	t_err "-U $flag: says why" "upgrade-policy: -U \"$flag\": $msg"
done <<'EOF2'
drain.enable|is not FIELD=VALUE
drain=true|names no field of the upgradePolicy (upgrade-policy(1) lists them)
drain.enable=yes|takes true or false
maxParallelUpgrades=-1|takes a whole number from 0 to 2147483647
drain.timeoutSeconds=2147483648|takes a whole number from 0 to 2147483647
maxUnavailable=101%|takes a number of nodes or a percentage up to 100% (25%)
podDeletionFilter=all|takes gpu (the GPU Operator's: pods that hold a GPU) or none
EOF2
printf '{"kind":"ClusterPolicyList","apiVersion":"nvidia.com/v1","items":[]}\n' >empty-cp.json
t_run upgrade-policy -U drain.timeoutSeconds=2147483647 -U podDeletion.timeoutSeconds=0000000300 empty-cp.json
t_rc 0 "-U: the CRD's int32 whole, as an object may say it"
t_grep "kept as given" out "drain.timeoutSeconds flag 2147483647$"
t_run upgrade-policy
t_rc 2 "no objects"
t_err "the usage" "usage: upgrade-policy [-U field=value]... objects [nodes]"
t_run upgrade-policy - -
t_rc 2 "both on standard input"

# 7. Label selectors as labels.Parse reads them, on drain.podSelector.
while IFS='|' read -r sel ok; do
	t_run upgrade-policy -U "drain.podSelector=$sel" none.json
	if [ "$ok" = ok ]; then t_rc 0 "selector '$sel' is one"; else t_rc 2 "selector '$sel' is not one"; t_grep "says why" err "$ok"; fi
done <<'EOF2'
app=a|ok
app==a,tier!=b|ok
 app in ( a , b ) , !gone, env|ok
app notin (a,),x=|ok
example.com/key=v,gpu>2,gpu<10|ok
in=notin,notin in (in, notin),!in,notin|ok
app in in|'(' must follow in and notin
a in (|a value list is
a=b c|requirements are separated by commas
=a|a requirement must start with a key
!|a key must follow
a>x|> and < take an integer
-a=b|is not a valid label key
a=b_|is not a valid label value
a b|an operator
EOF2
t_done
