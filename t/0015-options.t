#!/bin/sh
# Every script reads its options one way (sh/lib/options.sh's gpudrv_opts, then
# one while/case loop): flags bundled (-LN), a value attached (-t0) or after
# =  (--drain-timeout=5m), a missing value named, an unknown option named,
# -- ending the options; each a usage error (exit 2) before any request.
. "$(dirname "$0")/lib.sh"

# No request may be made: the stand-in, with no API server behind it,
# logs each call to ./kubectl.log.
t_standin
echo down >"$STANDIN/fault"

# SCRIPT|ARGS|STATUS|STDOUT|STDERR|U: ARGS a word each; STDOUT "usage" for
# the usage there, else nothing; STDERR its one line (empty: none), then the
# usage when U is u.
while IFS='|' read -r cmd args st out msg u; do
	case $cmd in '' | '#'*) continue ;; esac
	what="$cmd $args"
	# shellcheck disable=SC2086 # the arguments, a word each
	t_run "$cmd" $args
	t_rc "$st" "$what"
	# The usage: the script's -h (the subcommand's, for pdb-check), without
	# kubectl-gpudrv's list of subcommands.
	case $args in pdb-check*) "$cmd" pdb-check -h ;; *) "$cmd" -h ;; esac | sed '/^subcommands:$/,$d' >usage
	if [ "$out" = usage ]; then t_cmp "$what: the usage on stdout" usage out; else t_out "$what: nothing on stdout"; fi
	{
		[ -z "$msg" ] || printf '%s\n' "$msg"
		[ "$u" != u ] || cat usage
	} >expected.err
	t_cmp "$what: stderr" expected.err err
done <<'EOF'
# drv-tag.sh: -b branch, -k kernel
drv-tag.sh|-hb|0|usage||
drv-tag.sh|-b550 bad;node|2||drv-tag.sh: not a node name: 'bad?node'|
drv-tag.sh|--kernel=5.15.0-107-generic bad;node|2||drv-tag.sh: not a node name: 'bad?node'|
drv-tag.sh|-b|2||drv-tag.sh: -b takes a value|u
drv-tag.sh|lab-node-1 --branch|2|||u
drv-tag.sh|--branch|2||drv-tag.sh: --branch takes a value|u
drv-tag.sh|-x lab-node-1|2||drv-tag.sh: unknown option -x|u
drv-tag.sh|--lab=1 lab-node-1|2||drv-tag.sh: --lab is not an option that takes a value: --lab=1|u
drv-tag.sh|-- -b|2||drv-tag.sh: not a node name: '-b'|
# drv-kubeconfig.sh: -n namespace, -d duration, -S
drv-kubeconfig.sh|-Sd5h gpudrv-auditor out.conf|2||drv-kubeconfig.sh: -d and -S do not go together: the token of -S never expires|
drv-kubeconfig.sh|-nTeam auditor out.conf|2||drv-kubeconfig.sh: not a namespace or service account name: 'Team'|
drv-kubeconfig.sh|--duration=5x auditor out.conf|2||drv-kubeconfig.sh: -d takes a duration such as 720h or 90m, not '5x'|
drv-kubeconfig.sh|--namespace|2||drv-kubeconfig.sh: --namespace takes a value|u
drv-kubeconfig.sh|-Sx auditor out.conf|2||drv-kubeconfig.sh: unknown option -x|u
drv-kubeconfig.sh|-- -S out.conf|2||drv-kubeconfig.sh: not a namespace or service account name: '-S'|
# drv-next.sh: -R root, -b branch, -m matrix, -r repository, -I
drv-next.sh|-Ib550|2||drv-next.sh: -I goes with -r|u
drv-next.sh|-R/nonexistent|2||drv-next.sh: -R /nonexistent: not a directory (the root of a host's file tree)|
drv-next.sh|--root=/nonexistent|2||drv-next.sh: -R /nonexistent: not a directory (the root of a host's file tree)|
drv-next.sh|-m|2||drv-next.sh: -m takes a value|u
drv-next.sh|--insecure=yes|2||drv-next.sh: --insecure is not an option that takes a value: --insecure=yes|u
drv-next.sh|-- -I|2|||u
# drv-audit.sh
drv-audit.sh|-eI|2||drv-audit.sh: -I goes with -r|u
drv-audit.sh|-lpool=a|2||drv-audit.sh: -l goes with -k (plan a kernel change for some nodes)|u
drv-audit.sh|--selector=pool=a|2||drv-audit.sh: -l goes with -k (plan a kernel change for some nodes)|u
drv-audit.sh|-ooops|2||drv-audit.sh: -o takes images (one reference a line) or skopeo-sync (skopeo sync --src yaml's file), not 'oops'|u
drv-audit.sh|-e -p|2||drv-audit.sh: -p takes a value|u
drv-audit.sh|--frob|2||drv-audit.sh: unknown option --frob|u
drv-audit.sh|-- -e|2|||u
# drv-states.sh
drv-states.sh|-SI|2||drv-states.sh: -I goes with -r|u
drv-states.sh|-oxml|2||drv-states.sh: -o takes text or json, not 'xml'|
drv-states.sh|--output=json --summary|2||drv-states.sh: -S is the summary for people; -o json gives every node to a program: one or the other|u
drv-states.sh|-Sojson|2||drv-states.sh: -S is the summary for people; -o json gives every node to a program: one or the other|u
drv-states.sh|--registry|2||drv-states.sh: --registry takes a value|u
drv-states.sh|-eq|2||drv-states.sh: unknown option -q|u
drv-states.sh|-- -S|2|||u
# drv-upgrade.sh
drv-upgrade.sh|-LNPRh|0|usage||
drv-upgrade.sh|-NRJ5 lab-node-1 550.90.07|2||drv-upgrade.sh: -J is how long to wait for the pods -j selects: give -j too|u
drv-upgrade.sh|-t0 lab-node-1 550.90.07|2||drv-upgrade.sh: the drain timeout must be at least 1 second|u
drv-upgrade.sh|--drain-timeout=5x lab-node-1 550.90.07|2||drv-upgrade.sh: --drain-timeout takes seconds (300, 300s, 5m, 1h), not '5x'|u
drv-upgrade.sh|--wait-for= lab-node-1 550.90.07|2||drv-upgrade.sh: --wait-for takes a label selector (job=train, 'app in (a,b)'), not ''|
drv-upgrade.sh|-s|2||drv-upgrade.sh: -s takes a value|u
drv-upgrade.sh|--frob lab-node-1 550.90.07|2||drv-upgrade.sh: unknown option --frob|u
drv-upgrade.sh|--lab=1 lab-node-1 550.90.07|2||drv-upgrade.sh: --lab is not an option that takes a value: --lab=1|u
drv-upgrade.sh|-- -L 550.90.07|2||drv-upgrade.sh: not a node name: '-L'|
# drv-rollout.sh: what it passes on to drv-upgrade.sh refused before any request
drv-rollout.sh|-cDLJ5 550.90.07|2||drv-rollout.sh: -J is how long to wait for the pods -j selects: give -j too|u
drv-rollout.sh|-t0 550.90.07|2||drv-rollout.sh: the drain timeout must be at least 1 second|u
drv-rollout.sh|-g1x 550.90.07|2||drv-rollout.sh: -g takes seconds (300, 300s, 5m, 1h), not '1x'|u
drv-rollout.sh|--driver-namespace= 550.90.07|2||drv-rollout.sh: --driver-namespace takes a namespace, not ''|
drv-rollout.sh|-M|2||drv-rollout.sh: -M takes a value|u
drv-rollout.sh|-Dq 550.90.07|2||drv-rollout.sh: unknown option -q|u
drv-rollout.sh|-Dx 550.90.07|2||drv-rollout.sh: -x ends the run when its window is closed: give -W too|u
drv-rollout.sh|-- -D|2||drv-rollout.sh: not a driver version (branch.minor.rev, e.g. 550.90.07): '-D'|
# drv-lab.sh: -h only
drv-lab.sh|-hx|0|usage||
drv-lab.sh|-x|2||drv-lab.sh: unknown option -x|u
drv-lab.sh|--help=1|2||drv-lab.sh: --help is not an option that takes a value: --help=1|u
drv-lab.sh|-- x|2|||u
# kubectl-gpudrv: its flags, and pdb-check's -a and -s
kubectl-gpudrv|tag lab-node-1 --kubeconfig|2||kubectl-gpudrv: --kubeconfig takes a value|u
kubectl-gpudrv|pdb-check -sh|0|usage||
kubectl-gpudrv|pdb-check -as lab-node-1|2|||u
kubectl-gpudrv|pdb-check --short=1 lab-node-1|2||kubectl-gpudrv: --short is not an option that takes a value: --short=1|u
kubectl-gpudrv|pdb-check -x|2||kubectl-gpudrv: unknown option -x|u
kubectl-gpudrv|pdb-check -- -a|2||kubectl-gpudrv: not a node name: '-a'|
EOF
t_ok "$([ -e kubectl.log ] && echo 1 || echo 0)" "kubectl was never called"

# The library's normaliser itself: every byte of a value kept (a final
# newline, quotes), -- and the first operand ending the options.
cat >opts.sh <<'EOF'
prog=opts usage_line=usage lib=$1
. "$lib/runtime.sh"
. "$lib/options.sh"
shift
eval "set -- $(gpudrv_opts 'm:matrix t:drain-timeout' "$@")"
for a; do printf '[%s]' "$a"; done
echo
finish 0
EOF
nl='
'
t_run dash opts.sh "$BIN/../lib/gpudrv" -LNm"it's$nl" --matrix= -t -x --drain-timeout=5m --lab=1 node -LN -- -m
t_rc 0 "gpudrv_opts under dash"
t_out "splits what it should, keeps every byte, puts -- before the first operand" \
	"[-L][-N][-m][it's" "][--matrix][][-t][-x][--drain-timeout][5m][--lab=1][--][node][-LN][--][-m]"
t_run dash opts.sh "$BIN/../lib/gpudrv" -- -LN
t_out "nothing after --" "[--][-LN]"
t_run dash opts.sh "$BIN/../lib/gpudrv" -L
t_out "a -- after the last option" "[-L][--]"
t_run dash opts.sh "$BIN/../lib/gpudrv" -L -m
t_out "but none after an option still waiting for its value" "[-L][-m]"
t_run dash opts.sh "$BIN/../lib/gpudrv" -m --
t_out "which may be --" "[-m][--][--]"
t_done
