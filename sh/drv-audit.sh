#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-audit.sh: every GPU node whose precompiled driver image was never built.
# One API call for all GPU nodes, then labels2tag | matrix-grep; with -o, the
# images those nodes need instead, listed for a mirror (labels2tag -i).
set -eu

prog=drv-audit.sh
usage_line="usage: $prog [-e] [-m matrix | -r repository [-I]] [-p promfile] [-P url [-c cluster]] [-b version | -t] [-k kernel [-l selector]]
       $prog -o images|skopeo-sync [-eI] [-r repository] [-b version | -t] [-k kernel [-l selector]]"
# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"; . "$lib/files.sh"

matrix=${GPUDRV_MATRIX:-$default_matrix}
prom=
kernel=
selector=
empty=
version=
target=
matrix_given=
repo=
insecure=
push=
cluster=
output=
eval "set -- $(gpudrv_opts 'm:matrix p:prom P:push c:cluster k:kernel l:selector b:driver r:registry o:output' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-m | --matrix | -r | --registry) source_option "$@"; shift ;;
	-p | --prom) need_arg "$@"; check_file "$1" "$2"; prom=$2; shift ;;
	-P | --push) need_arg "$@"; check_value "$1" "$2" "a Pushgateway URL (http://host:9091)"; push=$2; shift ;;
	-c | --cluster) need_arg "$@"; check_value "$1" "$2" "a cluster name"; cluster=$2; shift ;;
	-k | --kernel) need_arg "$@"; check_value "$1" "$2" "a kernel version (uname -r)"; kernel=$2; shift ;;
	-l | --selector) need_arg "$@"; check_value "$1" "$2" "a label selector"; selector=$2; shift ;;
	-e | --allow-empty) empty=-e ;;
	-b | --driver) need_arg "$@"; check_value "$1" "$2" "a driver version (570, 570.86.10)"; version=$2; shift ;;
	-t | --target) target=1 ;;
	-I | --insecure) insecure=1 ;;
	-o | --output) need_arg "$@"; check_value "$1" "$2" "images or skopeo-sync"; output=$2; shift ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 0 ] || usage
[ -n "$matrix_given$repo$output" ] || check_file GPUDRV_MATRIX "$matrix"
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
if [ -n "$selector" ] && [ -z "$kernel" ]; then
	misuse "-l goes with -k (plan a kernel change for some nodes)"
fi
if [ -n "$prom" ] && [ -n "$kernel$version" ]; then
	misuse "-p records the fleet as it is; it does not go with -k or -b"
fi
if [ -n "$push" ] && [ -n "$kernel$version" ]; then
	misuse "-P records the fleet as it is; it does not go with -k or -b"
fi
if [ -n "$cluster" ] && [ -z "$push" ]; then
	misuse "-c names the cluster for -P"
fi
# -P: an http(s) URL, the Pushgateway's base; messages show it without any
# user:password@.
push_at=$(printf '%s' "$push" | sed 's|^\([a-z]*://\)[^/@]*@|\1|' | cut -c1-200)
case $push in
'' | http://?* | https://?*) ;;
*) die "-P takes the Pushgateway's http:// or https:// URL (http://pushgateway.example:9091), not '$push_at'" ;;
esac
case $push in *[[:space:]?#]*)
	die "-P takes the Pushgateway's URL, without spaces, query or fragment, not '$push_at'"
	;;
esac
while :; do case $push in */) push=${push%/} ;; *) break ;; esac; done
push_at=${push_at%"${push_at##*[!/]}"}
if [ -n "$version" ] && [ -n "$target" ]; then
	misuse "-b names the version; -t asks the cluster for it: one or the other"
fi
# -o: a list of images, for a mirror, instead of an audit.  It names each
# image's source, so it needs the repository: the GPU Operator's objects'
# (-t) or -r's; it reads no matrix and no registry, and records nothing.
# -I then means the skopeo-sync file's tls-verify: false, for any registry.
tls_verify=
if [ -n "$output" ]; then
	case $output in
	images | skopeo-sync) ;;
	*) misuse "-o takes images (one reference a line) or skopeo-sync (skopeo sync --src yaml's file), not '$output'" ;;
	esac
	if [ -n "$matrix_given" ] || [ -n "$prom$push" ]; then
		misuse "-o lists the images the GPU nodes need: it reads no matrix (-m) and records no audit (-p, -P)"
	fi
	if [ -z "$target$repo" ]; then
		misuse "-o must name each image's repository: -t (the one the GPU Operator's objects name) or -r repository"
	fi
	if [ -n "$insecure" ] && [ "$output" = images ]; then
		misuse "-I with -o goes with skopeo-sync (its tls-verify: false); for -o images, give skopeo its own --src-tls-verify=false"
	fi
	[ -z "$insecure" ] || tls_verify=false
	insecure=
fi
image_source
# -o -r: the repository checked by labels2tag, the one reader of the grammar,
# before any request.
if [ -n "$output" ] && [ -n "$repo" ] &&
	! printf '{"kind":"NodeList","apiVersion":"v1","items":[]}\n' | "$labels2tag" -i -R "$repo" >/dev/null; then
	die "-r $repo: not a repository the images can be listed in; nothing was asked of the cluster"
fi

# The textfile's directory must take it before the audit, not after.
if [ -n "$prom" ] && ! writable "$prom"; then
	die "cannot write $prom (-p): $why; no audit was made"
fi

# prom_write STATUS: the textfile-collector file, replaced atomically (see
# put_file: nothing planted in its directory is ever written through).  The
# last success time is carried over from the old file when this run failed.
# With -P the same metrics go to the Pushgateway first, once a run; status 1
# when that push failed: the file then records exit status 2.
prom_write() {
	drop_new
	[ -n "$prom$push" ] && [ -n "${tmp:-}" ] || return 0
	now=$(date +%s)
	last=
	if [ "$1" -le 1 ]; then
		last=$now
	elif [ -f "$prom" ] && ! [ -h "$prom" ]; then
		# Only a file of its own, and not for long: never what a planted
		# link points to, nor a FIFO that never ends.
		last=$(timeout 5 sed -n 's/^gpudrv_audit_last_success_timestamp_seconds \([0-9][0-9]*\)$/\1/p' -- "$prom" 2>/dev/null | tail -n 1)
	fi
	{
		if [ "$1" -le 1 ] || [ -s "$tmp/out" ]; then
			gauge gpudrv_audit_missing "A GPU node whose precompiled driver image tag is not in the matrix."
			sed -n 's/^\([^ ]*\) MISSING \([^ ]*\)$/gpudrv_audit_missing{node="\1",tag="\2"} 1/p' "$tmp/out"
			gauge gpudrv_audit_missing_nodes "GPU nodes whose tag is not in the matrix." "$(grep -c ' MISSING ' "$tmp/out" || :)"
			gauge gpudrv_audit_unknown_nodes "GPU nodes whose labels give no tag." "$(grep -c ' UNKNOWN ' "$tmp/out" || :)"
			gauge gpudrv_audit_skipped_nodes "GPU nodes that need no precompiled image (-t)." "$(grep -c ' SKIP ' "$tmp/out" || :)"
			gauge gpudrv_audit_gpu_nodes "GPU nodes audited." "$(grep -c . "$tmp/tags" || :)"
		fi
		gauge gpudrv_audit_exit_status "Exit status of the last run: 0 OK, 1 missing images, 2 could not tell." "$1"
		gauge gpudrv_audit_last_run_timestamp_seconds "When the audit last ran." "$now"
		[ -z "$last" ] ||
			gauge gpudrv_audit_last_success_timestamp_seconds "When the audit last saw the whole fleet." "$last"
	} >"$tmp/prom"
	pw_st=0
	if [ -n "$push" ]; then
		# Cleared first: a deadline or a signal during the push ends in
		# fail, which must not push again.
		push=
		push_group "$1" || pw_st=1
		if [ "$pw_st" = 1 ] && [ "$1" != 2 ]; then
			prom_write 2 || :
			return 1
		fi
	fi
	# Mode 0644: node_exporter reads it, whatever this run's umask.
	[ -z "$prom" ] || put_file "$tmp/prom" "$prom" 644 || die "cannot write $prom (-p): $why"
	return "$pw_st"
}

# push_group STATUS: $tmp/prom to the Pushgateway's group
# job=gpudrv_audit,cluster=NAME ($push_url), in the text format.  After an
# audit, PUT: the group is replaced, so a node fixed since leaves no gauge
# behind.  After a failed run (STATUS 2), POST: only the metrics it carries
# are replaced, so the last success time, and the last audit's gauges, stay.
# Status 1, saying why (curl's words, or the HTTP status and the answer),
# when the push failed.
push_group() {
	if [ "$1" = 2 ]; then pg_m=POST; else pg_m=PUT; fi
	pg_st=0
	push "$tmp/push.code" "$tmp/push.err" -sS -X "$pg_m" -H 'Content-Type: text/plain; version=0.0.4' \
		--data-binary "@$tmp/prom" -o "$tmp/push.body" -w '%{http_code}' "$push_url" || pg_st=$?
	pg_code=$(cat "$tmp/push.code" 2>/dev/null) || pg_code=
	if [ "$pg_st" != 0 ]; then
		pg_why=$(said "$tmp/push.err")
		[ -n "$pg_why" ] || pg_why="nothing (no answer before the run's deadline, $gpudrv_why)"
		say "cannot push the metrics to the Pushgateway $push_at (curl exit $pg_st): curl said: $pg_why; check the URL (-P) and that the Pushgateway is up"
		return 1
	fi
	case $pg_code in [2][0-9][0-9]) return 0 ;; esac
	say "the Pushgateway $push_at refused the metrics: HTTP ${pg_code:-status unknown} to $pg_m $push_path; it said: $(said "$tmp/push.body"); check the URL (-P) and the Pushgateway's log"
	return 1
}

fail() {
	say "$*"
	prom_write 2 || :
	finish 2
}

# mirror_list: from labels2tag -i's lines in $tmp/tags, the images into
# $tmp/list, as -o asks: every reference once, sorted (LC_ALL=C), or
# skopeo sync's YAML (registry: images: {path: [tags]}; tls-verify: false
# with -I).  A node that needs no precompiled image (SKIP) is said on
# standard error and not listed.  A node without a reference (UNKNOWN:
# labels2tag has named it and why), or any other fault labels2tag found,
# and there is no list at all: one without those images would pass for the
# fleet's, and be mirrored as if it were.  No GPU node is an error too
# unless -e (an empty list: nothing, or {}).
mirror_list() {
	ml_bad=$(grep -c ' UNKNOWN ' "$tmp/tags" || :)
	if [ "$ml_bad" -gt 0 ]; then
		if [ "$ml_bad" = 1 ]; then ml_what="1 GPU node has"; else ml_what="$ml_bad GPU nodes have"; fi
		fail "$ml_what no image reference (named above): no list was printed, since one without their images would pass for the whole fleet's"
	fi
	[ "$l2t" -eq 0 ] || fail "the images of the GPU nodes cannot all be named (see above): no list was printed"
	LC_ALL=C awk -v out="$tmp/refs" '
		NF == 2 && $2 !~ /^(SKIP|UNKNOWN)$/ { print $2 >out; next }
		NF == 3 && $2 == "SKIP" { print $1 " needs no precompiled image (" $3 "): not listed"; next }
		{ bad = 1; exit }
		END {
			close(out)
			if (bad) { print "labels2tag -i gave a line that is not <node> <reference>: line " NR; exit 1 }
		}' "$tmp/tags" >"$tmp/skips" || fail "$(tail -n 1 "$tmp/skips"); no list was printed"
	: >>"$tmp/refs"
	while IFS= read -r ml_l; do say "$ml_l"; done <"$tmp/skips"
	if ! grep -q . "$tmp/tags"; then
		[ -n "$empty" ] || fail "no GPU node (labelled $L_PRESENT=true${selector:+, and $selector}): nothing to list (-e accepts that)"
	fi
	if [ "$output" = images ]; then
		LC_ALL=C sort -u "$tmp/refs" >"$tmp/list"
		return 0
	fi
	# registry/path:tag, its registry the part before the first "/" and its
	# tag the part after the last ":" (labels2tag wrote both whole).
	LC_ALL=C awk '{
		i = index($0, "/")
		reg = substr($0, 1, i - 1)
		rest = substr($0, i + 1)
		j = match(rest, /:[^:]*$/)
		print reg "\t" substr(rest, 1, j - 1) "\t" substr(rest, j + 1)
	}' "$tmp/refs" | LC_ALL=C sort -u | LC_ALL=C awk -F '\t' -v tls="$tls_verify" '
		$1 != reg {
			printf "\"%s\":\n", $1
			if (tls != "") printf "  tls-verify: %s\n", tls
			print "  images:"
			reg = $1
			path = ""
		}
		$2 != path { printf "    \"%s\":\n", $2; path = $2 }
		{ printf "      - \"%s\"\n", $3 }
		END { if (NR == 0) print "{}" }' >"$tmp/list"
}
# A signal, the deadline, a write error: the textfile says the run failed.
abort() {
	fail "$1"
}

# What a run that fails did not make.
none="no audit was made"
[ -z "$output" ] || none="no list was printed"

# One request: a whole run that hangs past GPUDRV_TIMEOUT gives up, and says so.
gpudrv_start 120 0
: >"$tmp/out"
: >"$tmp/tags"

# -P: the group's cluster label is -c, else the name of the context kubectl
# uses (config view --minify honours --context), before the audit: a run
# never pushes under a name it guessed.  A value that is not a plain path
# segment goes base64url-encoded (the Pushgateway's @base64 form: a context
# name such as arn:aws:eks:...:cluster/prod holds a slash).
if [ -n "$push" ]; then
	if [ -z "$cluster" ]; then
		if ! kc "$tmp/ctx" "$tmp/ctx.err" config view --minify -o 'jsonpath={.current-context}'; then
			push=
			fail "-P: no cluster name for the Pushgateway's group: kubectl config view said: $(said "$tmp/ctx.err"); name the cluster with -c; no audit was made"
		fi
		cluster=$(cat "$tmp/ctx")
		if [ -n "$gpudrv_in_pod" ]; then
			push=
			fail "-P: no cluster name for the Pushgateway's group: in a pod, with its service account, no context names the cluster; name it with -c; no audit was made"
		fi
		case $cluster in '' | *[![:print:]]*)
			push=
			fail "-P: no cluster name for the Pushgateway's group: the kubeconfig's current context is '$(printf '%s' "$cluster" | tr -c '[:print:]' '?' | cut -c1-120)'; name the cluster with -c; no audit was made"
			;;
		esac
	fi
	case $cluster in
	*[!A-Za-z0-9_.-]* | . | ..) push_path=cluster@base64/$(printf '%s' "$cluster" | base64 -w 0 | tr '+/' '-_' | tr -d '=') ;;
	*) push_path=cluster/$cluster ;;
	esac
	push_path=/metrics/job/gpudrv_audit/$push_path
	push_url=$push$push_path
fi

if [ -n "$output" ]; then
	:
elif [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || fail "no audit was made"
	matrix=$tmp/tags.json
fi
[ -n "$output" ] || [ -r "$matrix" ] || fail "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another)"

# One fresh list call, whose failure must never read as an empty, healthy
# fleet.
gpu_nodes "$tmp/nodes" "$selector" || fail "$none"

# -t: the version the GPU Operator will deploy, from its ClusterPolicy and
# NVIDIADriver objects.
if [ -n "$target" ] && ! get_targets "$tmp/targets"; then
	fail "$none"
fi

set -- -n -u
[ -z "$kernel" ] || set -- "$@" -k "$kernel"
[ -z "$version" ] || set -- "$@" -b "$version"
[ -z "$target" ] || set -- "$@" -t "$tmp/targets"
if [ -n "$output" ]; then
	set -- "$@" -i
	[ -z "$repo" ] || set -- "$@" -R "$repo"
fi
l2t=0
"$labels2tag" "$@" "$tmp/nodes" >"$tmp/tags" || l2t=$?
if [ "$l2t" -ne 0 ] && ! grep -q . "$tmp/tags"; then
	if [ -n "$target" ]; then
		fail "the node list or the GPU Operator's objects could not be read; $none"
	fi
	fail "the node list could not be read; $none"
fi
[ "$l2t" -eq 0 ] || [ "$l2t" -eq 2 ] || fail "labels2tag failed (exit $l2t)"

# -o: the list, whole or not at all.
if [ -n "$output" ]; then
	mirror_list
	emit "$tmp/list" 0
	finish 0
fi

rc=0
"$matrix_grep" ${empty:+"$empty"} -m "$matrix" "$tmp/tags" >"$tmp/out" || rc=$?
[ "$rc" -le 2 ] || rc=2
[ "$l2t" -eq 0 ] || rc=2
prom_write "$rc" || rc=2
# Standard output last: a run that failed to record never printed OK.
emit "$tmp/out" "$rc"
finish "$rc"
