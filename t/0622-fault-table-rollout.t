#!/bin/sh
# The fault table (t/fault-table.sh says how it is made and judged), part
# three: drv-rollout.sh, its plan and its run.
. "$(dirname "$0")/lib.sh"
. "$T/fault-table.sh"

# drv-rollout.sh, the plan and the run, each node's drv-upgrade.sh a
# stand-in that says it started (in ./calls: nothing may start after a
# fault) and does the upgrade in the fake API.
mkdir -p x/bin x/lib/gpudrv
cp "$BIN/drv-rollout.sh" x/bin/
cp "$BIN"/../lib/gpudrv/*.sh x/lib/gpudrv/
for t in labels2tag matrix-grep pdb-check rollout-plan upgrade-policy; do ln -s "$(command -v "$t")" "x/bin/$t"; done
cat >x/bin/drv-upgrade.sh <<'STUB'
#!/bin/sh
for a; do node=$v; v=$a; done
echo "CALL drv-upgrade.sh $node" >>"$STANDIN_TRACE/calls"
exec 8>"$FLEET_DIR/facts.lock"
flock 8
awk -F '\t' -v OFS='\t' -v n="$node" -v v="$v" '$1 == n { $2 = v; $3 = "upgrade-done" } { print }' \
	"$FLEET_DIR/facts" >"$FLEET_DIR/facts.new" && mv "$FLEET_DIR/facts.new" "$FLEET_DIR/facts"
flock -u 8
echo "$node upgrade-done"
echo "$node upgrade-done $v"
STUB
chmod +x x/bin/drv-upgrade.sh
GPUDRV_LOCK_DIR=$PWD/locks
export GPUDRV_LOCK_DIR
mkdir -p locks
chmod 700 locks
fleet() {
	rm -f lease lease.log
	t_fake_fleet
	t_fleet n1:535.183.06::::True n2:535.183.06::::True n3:535.183.06::::True
}
table "drv-rollout.sh -D" fleet none x/bin/drv-rollout.sh -D -L -p 1 -u 100% -m "$M" "$NEW"
table drv-rollout.sh fleet none x/bin/drv-rollout.sh -L -p 2 -u 100% -m "$M" "$NEW"
# No summary is made up after a fault: the last line is never "done ...".
rm -f calls gets
fleet
STANDIN_FAULT_AT='5 empty'
export STANDIN_FAULT_AT
t_run x/bin/drv-rollout.sh -L -p 1 -u 100% -m "$M" "$NEW"
unset STANDIN_FAULT_AT
t_rc 2 "drv-rollout.sh: the node list after the first node ended is empty"
t_run grep -c '^done ' out
t_out "no summary line is made up" 0
# A whole answer that no longer lists the rollout's nodes (deleted): each
# said, counted left, never done.
rm -f calls gets
fleet
cat >x/bin/drv-upgrade.sh.gone <<'STUB'
#!/bin/sh
for a; do node=$v; v=$a; done
exec 8>"$FLEET_DIR/facts.lock"
flock 8
grep -v "^$node	" "$FLEET_DIR/facts" >"$FLEET_DIR/facts.new"; mv "$FLEET_DIR/facts.new" "$FLEET_DIR/facts"
echo "$node upgrade-required"
exit 0
STUB
mv x/bin/drv-upgrade.sh x/bin/drv-upgrade.sh.done
cp x/bin/drv-upgrade.sh.gone x/bin/drv-upgrade.sh
chmod +x x/bin/drv-upgrade.sh
t_run x/bin/drv-rollout.sh -L -p 3 -u 100% -m "$M" "$NEW"
t_rc 1 "drv-rollout.sh: the nodes deleted during the batch"
last_line=$(tail -n 1 out)
t_is "counted left, not done" "$last_line" "done 0 failed 0 skipped 0 left 3"
t_grep "each said" err "^drv-rollout.sh: n2: no longer listed among the GPU nodes: left as it is$"
t_done
