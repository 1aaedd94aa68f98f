# options.sh: one way for every script to read its options, and the
# checks of their values (POSIX sh; sourced after runtime.sh).
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# Where the support matrix is unless -m or GPUDRV_MATRIX says otherwise.
default_matrix=/etc/gpudrv/support-matrix.csv

# seconds VALUE OPTION: an option's time, secs' forms, 0 allowed; else the
# usage, naming OPTION.
seconds() {
	secs "$1" 0 && return 0
	misuse "$2 takes seconds (300, 300s, 5m, 1h), not '$1'"
}
# --- options: one way for every script ---
# Each script reads its options so, every option with a short and a long
# form:
#
#	eval "set -- $(gpudrv_opts 'b:branch' "$@")"
#	while [ $# -gt 0 ]; do
#		case $1 in
#		--) shift; break ;;
#		-b | --branch) need_arg "$@"; branch=$2; shift ;;
#		*) other_option "$1" ;;
#		esac
#		shift
#	done
#	[ $# -eq 1 ] || usage

# gpudrv_opts VALUED ARGS...: ARGS quoted for eval, each option a word of
# its own, as getopts reads short ones: -LN is -L -N; -m550 is -m 550 and
# --matrix=FILE is --matrix FILE when VALUED, the options that take a value
# (letter:long-name, blank-separated: 'm:matrix t:drain-timeout'), has them.
# The word after such an option is its value, whatever it holds.  The
# options end at --, or before the first operand, where a -- is put: the
# words after it stay as they are.
gpudrv_opts() {
	gpudrv_valued=" $1 "
	shift
	gpudrv_rest=0  # 1 from -- or the first operand on
	gpudrv_value=0 # 1 when this word is the value of the option before
	for gpudrv_a; do
		if [ "$gpudrv_rest$gpudrv_value" != 00 ]; then
			gpudrv_value=0
			gpudrv_word "$gpudrv_a"
			continue
		fi
		case $gpudrv_a in
		--)
			gpudrv_rest=1
			gpudrv_word --
			;;
		--*=*)
			gpudrv_l=${gpudrv_a%%=*}
			case $gpudrv_valued in
			*":${gpudrv_l#--} "*) gpudrv_word "$gpudrv_l" && gpudrv_word "${gpudrv_a#*=}" ;;
			*) gpudrv_word "$gpudrv_a" ;;
			esac
			;;
		--*)
			gpudrv_word "$gpudrv_a"
			case $gpudrv_valued in *":${gpudrv_a#--} "*) gpudrv_value=1 ;; esac
			;;
		-?*)
			gpudrv_r=${gpudrv_a#-}
			while [ -n "$gpudrv_r" ]; do
				gpudrv_c=${gpudrv_r%"${gpudrv_r#?}"}
				gpudrv_r=${gpudrv_r#?}
				gpudrv_word "-$gpudrv_c"
				case $gpudrv_valued in
				*" $gpudrv_c:"*)
					if [ -n "$gpudrv_r" ]; then gpudrv_word "$gpudrv_r"; else gpudrv_value=1; fi
					break
					;;
				esac
			done
			;;
		*)
			gpudrv_rest=1
			gpudrv_word --
			gpudrv_word "$gpudrv_a"
			;;
		esac
	done
	# (An option still waiting for its value has none: need_arg says so.)
	[ "$gpudrv_rest$gpudrv_value" != 00 ] || gpudrv_word --
}
# gpudrv_word WORD: WORD quoted for the shell, then a blank (every byte
# kept: a final newline too, which shq's $(...) would drop).
gpudrv_word() {
	gpudrv_w=$1
	gpudrv_q=
	while :; do
		case $gpudrv_w in
		*\'*)
			gpudrv_q=$gpudrv_q${gpudrv_w%%\'*}\'\\\'\'
			gpudrv_w=${gpudrv_w#*\'}
			;;
		*) break ;;
		esac
	done
	printf "'%s%s' " "$gpudrv_q" "$gpudrv_w"
}

# need_arg OPTION ARGS...: the usage, saying so, unless OPTION (the option
# the loop is at: "$@") has a value after it.
need_arg() {
	[ $# -ge 2 ] && return 0
	misuse "$1 takes a value"
}

# other_option OPTION: an option the script's loop does not take: -h or
# --help, the usage on standard output; --version, the version; any other,
# the usage, naming it.
other_option() {
	gpudrv_b=$(printf '%s' "$1" | tr -c '[:print:]' '?' | cut -c1-60)
	case $1 in
	-h | --help) show_usage ;;
	--version)
		printf '%s (gpudrv) %s\n' "$prog" "$gpudrv_version" 2>/dev/null || die "cannot write to standard output"
		finish 0
		;;
	--*=*) say "${gpudrv_b%%=*} is not an option that takes a value: $gpudrv_b" ;;
	*) say "unknown option $gpudrv_b" ;;
	esac
	usage
}

# shw WORD: WORD as a person types it for a shell: as it is when it holds
# nothing a shell reads, else quoted (shq).
shw() {
	case $1 in
	'' | *[!A-Za-z0-9_./=:%,@+-]*) shq "$1" ;;
	*) printf '%s' "$1" ;;
	esac
}

# shq STRING: STRING quoted for a shell.
shq() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# driver_version VERSION: sets major, minor and rev from a driver version
# (branch.minor.rev, 550.90.07), or exits 2 saying it is not one.
driver_version() {
	case $1 in
	*.*.*.* | *..* | .* | *.) major=bad ;;
	*.*.*) major=${1%%.*} ;;
	*) major=bad ;;
	esac
	gpudrv_r=${1#*.}
	minor=${gpudrv_r%%.*}
	rev=${gpudrv_r#*.}
	for gpudrv_p in "$major" "$minor" "$rev"; do
		case $gpudrv_p in
		'' | *[!0-9]*) die "not a driver version (branch.minor.rev, e.g. 550.90.07): '$1'" ;;
		esac
	done
}



# check_node NAME: exits 2 unless NAME can be a node name (a DNS subdomain's
# characters), before it reaches kubectl; the message shows it made safe.
check_node() {
	case $1 in
	'' | -* | *[!a-z0-9.-]*)
		die "not a node name: '$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '?' | cut -c1-80)'"
		;;
	esac
}











# check_value OPTION VALUE WHAT: exits 2 naming VALUE, shown safe on one
# line, unless it is non-empty printable text (a selector, a namespace, a
# kernel: a newline must not vanish on its way to the API server, where
# a=b, newline, c!=d became a=bc!=d); WHAT says what OPTION takes.  The API
# server judges the rest, before anything is changed.  check_file OPTION
# VALUE: the same for a file name, which may hold anything but control
# characters.
check_value() {
	case $2 in
	'' | *[![:print:]]*) die "$1 takes $3, not '$(printf '%s' "$2" | tr -c '[:print:]' '?' | cut -c1-120)'" ;;
	esac
}
check_file() {
	case $2 in
	'' | *[[:cntrl:]]*) die "$1 takes a file name without control characters, not '$(printf '%s' "$2" | tr '[:cntrl:]' '?' | cut -c1-120)'" ;;
	esac
}

# source_option OPTION VALUE...: -m or -r ("$@" at the option), where the
# images that exist are listed, checked and held: -m matrix (a file name;
# matrix_given set), -r repo (a repository; image_source judges it whole).
source_option() {
	need_arg "$@"
	case $1 in
	-m | --matrix) check_file "$1" "$2" && matrix=$2 && matrix_given=1 ;;
	-r | --registry) check_value "$1" "$2" "a repository (registry/path/name)" && repo=$2 ;;
	esac
}

# upgrade_option OPTION VALUE...: one of drv-upgrade.sh's options that
# drv-rollout.sh takes too, to pass it on ("$@" at the option), its value
# checked by its kind, before any request, and held in the variable named
# for it: drain_timeout (-t, at least 1), validate_timeout (-g), budget_wait
# (-w) and wait_timeout (-J), in seconds; wait_sel (-j) and driver_sel (-s),
# label selectors; driver_ns (-n).  upgrade_options_end after the loop.
upgrade_option() {
	need_arg "$@"
	case $1 in
	-t | --drain-timeout)
		drain_timeout=$(seconds "$2" "$1") || finish 2
		[ "$drain_timeout" -gt 0 ] || { misuse "the drain timeout must be at least 1 second"; }
		;;
	-g | --validate-timeout) validate_timeout=$(seconds "$2" "$1") || finish 2 ;;
	-w | --budget-wait) budget_wait=$(seconds "$2" "$1") || finish 2 ;;
	-J | --wait-timeout) wait_timeout=$(seconds "$2" "$1") || finish 2 ;;
	-j | --wait-for) check_value "$1" "$2" "a label selector (job=train, 'app in (a,b)')" && wait_sel=$2 ;;
	-s | --driver-selector) check_value "$1" "$2" "a label selector (app=nvidia-driver-daemonset)" && driver_sel=$2 ;;
	-n | --driver-namespace) check_value "$1" "$2" "a namespace" && driver_ns=$2 ;;
	esac
}
# policy_option OPTION VALUE...: -U FIELD=VALUE ("$@" at the option), a
# field of the upgradePolicy set by a flag, appended to $policy_u as quoted
# words for upgrade-policy (policy_check judges them all, before any
# request), and to $policy_r as a person would type them (the command that
# resumes).
policy_option() {
	need_arg "$@"
	check_value "$1" "$2" "FIELD=VALUE (drain.enable=true)"
	policy_u="$policy_u$(gpudrv_word -U)$(gpudrv_word "$2")"
	policy_r="${policy_r:-} -U $(shq "$2")"
}
# policy_flags: $policy_set, the flags that set fields of the upgradePolicy,
# as quoted words for upgrade-policy: those of the options that name one
# (-p, -u, -j, -J, -t: $max_parallel, $max_unavailable, $wait_sel,
# $wait_timeout, $drain_timeout, where set), then every -U ($policy_u),
# which wins.
policy_flags() {
	policy_set=
	[ -z "${max_parallel:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "maxParallelUpgrades=$max_parallel")"
	[ -z "${max_unavailable:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "maxUnavailable=$max_unavailable")"
	[ -z "${wait_sel:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "waitForCompletion.podSelector=$wait_sel")"
	[ -z "${wait_timeout:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "waitForCompletion.timeoutSeconds=$wait_timeout")"
	[ -z "${drain_timeout:-}" ] || policy_set="$policy_set$(gpudrv_word -U)$(gpudrv_word "podDeletion.timeoutSeconds=$drain_timeout")$(gpudrv_word -U)$(gpudrv_word "drain.timeoutSeconds=$drain_timeout")"
	policy_set=$policy_set${policy_u:-}
}
# policy_check: the flags of $policy_set (quoted words) judged by
# upgrade-policy ($upgrade_policy), on no object: the usage, saying why,
# when one is not a field or not a value it takes.
policy_check() {
	gpudrv_pc=$(
		eval "set -- $policy_set"
		printf '{"kind":"List","apiVersion":"v1","items":[]}\n' |
			"$upgrade_policy" "$@" - 2>&1 >/dev/null
	) && return 0
	misuse "${gpudrv_pc#upgrade-policy: }"
}
# upgrade_options_end: the usage when -J came without -j.
upgrade_options_end() {
	[ -z "$wait_timeout" ] || [ -n "$wait_sel" ] && return 0
	misuse "-J is how long to wait for the pods -j selects: give -j too"
}


# image_source: after the options, -m matrix_given, -r repo and -I insecure
# checked together (the usage when they clash); repo without docker://.
image_source() {
	if [ -n "$repo" ] && [ -n "$matrix_given" ]; then
		misuse "-m names a matrix, -r a registry: one or the other"
	fi
	if [ -n "$insecure" ] && [ -z "$repo" ]; then
		misuse "-I goes with -r"
	fi
	case $repo in docker://*) repo=${repo#docker://} ;; esac
	case $repo in
	'' | */*) ;;
	*) die "-r $repo: not a repository (registry/path/name, e.g. registry.example/nvidia/driver)" ;;
	esac
}




