# files.sh: files replaced whole, never in part, the directories a run may
# write in, and the Prometheus text and quoted strings they may hold (POSIX
# sh; sourced after runtime.sh): drv-audit.sh -p, drv-rollout.sh -M, -o
# and -N, drv-upgrade.sh -d and its Events, drv-kubeconfig.sh, the
# rollout's lock.
# shellcheck shell=sh disable=SC2154,SC2034 # the caller's variables, set or read here

# writable FILE: 0 when FILE can be replaced (by a rename in its directory);
# else 1 and $why says why not.  Asked before any work, so that a run never
# does the work and then cannot record it.
writable() {
	gpudrv_d=$(dirname -- "$1")
	if [ -d "$1" ]; then
		why="it is a directory"
	elif ! [ -d "$gpudrv_d" ]; then
		why="no directory $gpudrv_d"
	elif ! gpudrv_p=$(mktemp "$gpudrv_d/.gpudrv.XXXXXX" 2>/dev/null); then
		why="cannot create a file in $gpudrv_d"
	else
		rm -f "$gpudrv_p"
		return 0
	fi
	return 1
}

# own_path PATH WHAT: 0 when PATH is a directory (WHAT directory) or a
# regular file (WHAT file) of the user's, not a symbolic link (PATH/. for
# a directory a link leads to), that only the user can write; else 1 and
# $why says why not.  In such a directory nobody else can plant a name, a
# link to a file of the user's, for a run to write through.
own_path() {
	gpudrv_o=$(ls -ldn -- "$1" 2>/dev/null) || {
		why="cannot be read"
		return 1
	}
	gpudrv_om=${gpudrv_o%% *}
	gpudrv_ou=$(printf '%s\n' "$gpudrv_o" | awk '{ print $3 }')
	case $2:$gpudrv_om in
	*:l*) why="is a symbolic link" ;;
	directory:d* | file:-*) why= ;;
	*) why="is not a $2" ;;
	esac
	[ -n "$why" ] || [ "$gpudrv_ou" = "$(id -u)" ] || why="belongs to uid $gpudrv_ou, not to you (uid $(id -u))"
	[ -n "$why" ] || case $gpudrv_om in ?????w* | ????????w*) why="can be written by group or others ($gpudrv_om)" ;; esac
	[ -z "$why" ]
}

gpudrv_new= # put_file's new file while it is not yet renamed into place
# (and removed on the way out, a signal's too)
gpudrv_hooks="$gpudrv_hooks drop_new"

# put_file SRC DEST MODE: DEST replaced, atomically, by a copy of SRC with
# MODE (at most 666: 644 for a file others read, 600 for a secret); after
# gpudrv_start.  The copy is a new file beside DEST (the same file system:
# the rename is atomic), .DEST.XXXXXXXXXX, created and written in one open
# that fails when anything has that name already (the shell's noclobber,
# O_EXCL): a name planted in DEST's directory, a symlink above all, is never
# opened, so nothing is ever written through one.  The copy has MODE from its
# creation on and its data on disk (fsync) before the rename makes it DEST:
# after a crash DEST is the old file or the whole new one.  The rename (mv
# -T) replaces DEST itself, a symlink or not, never what DEST points to.
# Status 0, or 1 with $why saying why not, and no file of its own left
# behind; a script that can be stopped in between (a signal) calls drop_new
# on its way out.
put_file() {
	gpudrv_pd=$(dirname -- "$2")
	gpudrv_pu=$(printf '%03o' $((0666 & ~0$3)))
	gpudrv_pe=$gpudrv_tmp/put_file.err
	gpudrv_pn=0
	while :; do
		# A name nobody can foresee; taken only if free (a clash is retried).
		gpudrv_new=$(mktemp -u "$gpudrv_pd/.${2##*/}.XXXXXXXXXX") || {
			gpudrv_new=
			why="cannot make a file name in $gpudrv_pd"
			return 1
		}
		gpudrv_ps=0
		(
			set +e -C
			umask "$gpudrv_pu"
			{ dd if="$1" conv=fsync status=none || exit 4; exit 0; } >"$gpudrv_new"
			# shellcheck disable=SC2317 # reached when the redirection fails
			exit 3
		) 2>"$gpudrv_pe" || gpudrv_ps=$?
		[ "$gpudrv_ps" = 0 ] && break
		if [ "$gpudrv_ps" = 3 ]; then
			# Not made: what has the name is not this run's to remove.
			if { [ -e "$gpudrv_new" ] || [ -h "$gpudrv_new" ]; } && [ "$gpudrv_pn" -lt 5 ]; then
				gpudrv_pn=$((gpudrv_pn + 1))
				continue
			fi
			gpudrv_new=
			why="cannot create a file in $gpudrv_pd: $(sed -n '$s/.*: //p' "$gpudrv_pe")"
			return 1
		fi
		drop_new
		why="cannot write a file in $gpudrv_pd: $(tail -n 1 "$gpudrv_pe")"
		return 1
	done
	if ! mv -f -T -- "$gpudrv_new" "$2" 2>"$gpudrv_pe"; then
		drop_new
		why="cannot rename a new file to $2: $(tail -n 1 "$gpudrv_pe")"
		return 1
	fi
	gpudrv_new=
}

# drop_new: put_file's new file removed, if one is left (a signal came
# between its creation and its rename).
drop_new() {
	[ -z "$gpudrv_new" ] || rm -f -- "$gpudrv_new"
	gpudrv_new=
}

# gauge NAME HELP [VALUE]: a gauge in the Prometheus text format (the
# node_exporter's textfile collector, a Pushgateway): its HELP and TYPE
# lines, then "NAME VALUE" when VALUE is given (else the caller prints the
# samples, labelled).
gauge() {
	printf '# HELP %s %s\n# TYPE %s gauge\n' "$1" "$2" "$1"
	[ $# -lt 3 ] || printf '%s %s\n' "$1" "$3"
}

# quoted TEXT [MAX]: TEXT made the inside of a double-quoted string of JSON
# or of a curl config file: one line, every byte that is not printable a
# space, at most MAX characters (cut before the escapes, so that none is cut
# in two), \ and " escaped.  Printable ASCII with neither, short enough
# (a state's Event, a URL), is itself: no process.
quoted() {
	case $1 in
	*[!\ -~]* | *[\\\"]*) ;;
	*) [ "${#1}" -gt "${2:-100000}" ] || { printf '%s' "$1" && return; } ;;
	esac
	printf '%s' "$1" | tr -c '[:print:]' ' ' | cut -c1-"${2:-100000}" | sed 's/[\\"]/\\&/g'
}
