#!/bin/sh
# deploy/prometheus/gpudrv-rules.yaml: promtool check rules accepts it
# (nine alerts), and promtool test rules passes its unit tests
# (gpudrv-rules.test.yaml: each alert firing, and not firing where it must
# not); a rule file broken on purpose is refused, and a unit test that
# expects what the rules do not do fails, so neither check can pass by
# default.  SKIPs without promtool (Debian's prometheus package; .ci/deps
# test installs it).  The Pushgateway is t/0306's.
. "$(dirname "$0")/lib.sh"

P=$ROOT/deploy/prometheus
if ! command -v promtool >/dev/null 2>&1; then
	t_skip "promtool is not installed (Debian's prometheus package; .ci/deps test installs it)"
	t_done
fi

t_run promtool check rules "$P/gpudrv-rules.yaml"
t_rc 0 "promtool check rules gpudrv-rules.yaml"
t_grep "nine rules" out '^  SUCCESS: 9 rules found$'

# The unit tests name the rule file relative to themselves: run from a copy.
cp "$P/gpudrv-rules.yaml" "$P/gpudrv-rules.test.yaml" .
t_run promtool test rules gpudrv-rules.test.yaml
t_rc 0 "promtool test rules gpudrv-rules.test.yaml"
t_grep "every unit test passes" out '^  SUCCESS$'

# Every alert of the rule file has a unit test, and every one tested exists.
sed -n 's/^ *- alert: *\([A-Za-z]*\)$/\1/p' gpudrv-rules.yaml | sort -u >alerts
sed -n 's/^ *alertname: *\([A-Za-z]*\)$/\1/p' gpudrv-rules.test.yaml | sort -u >tested
t_cmp "each alert is tested" alerts tested

# Can fail: a broken expression is refused; a threshold moved (6 h to 8 h)
# fails the unit test that pins it, naming the alert.
mkdir bad
sed 's/expr: gpudrv_audit_missing > 0$/expr: gpudrv_audit_missing >/' gpudrv-rules.yaml >bad/gpudrv-rules.yaml
t_run promtool check rules bad/gpudrv-rules.yaml
t_rc 1 "a rule file with a broken expression is refused"
sed 's/> 6 \* 3600$/> 8 * 3600/' gpudrv-rules.yaml >bad/gpudrv-rules.yaml
cp gpudrv-rules.test.yaml bad/
(cd bad && promtool test rules gpudrv-rules.test.yaml) >out 2>err
rc=$?
t_rc 1 "a threshold moved: the unit tests fail"
t_grep "a threshold moved: the failed test names the alert" err 'alertname: GpudrvAuditNotSucceeding, time: 7h'

t_done
