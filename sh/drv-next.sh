#!/bin/sh
# shellcheck source-path=SCRIPTDIR/lib
# drv-next.sh: will the kernel this host boots next have its precompiled
# driver image?  Node-local: it reads the host's files, not the cluster, and
# leaves the tag to labels2tag (the one function that builds it).
set -eu

prog=drv-next.sh
usage_line="usage: $prog [-R root] [-b branch] [-m matrix | -r repository [-I]]"
# The library, in ../lib/gpudrv from this script's real directory (links
# followed): runtime.sh first, then what the script uses.
lib=$(dirname -- "$(readlink -f -- "$0")")/../lib/gpudrv
if [ -r "$lib/runtime.sh" ]; then . "$lib/runtime.sh"; else echo "$prog: $lib/runtime.sh not found: install gpudrv whole (make install)" >&2 && exit 2; fi
. "$lib/options.sh"; . "$lib/node.sh"; . "$lib/api.sh"

root=
root_given=
branch=
matrix=${GPUDRV_MATRIX:-$default_matrix}
matrix_given=
repo=
insecure=
eval "set -- $(gpudrv_opts 'R:root b:branch m:matrix r:registry' "$@")"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-R | --root) need_arg "$@"; check_file "$1" "$2"; root=$2; root_given=1; shift ;;
	-b | --branch) need_arg "$@"; check_value "$1" "$2" "a driver branch (550)"; branch=$2; shift ;;
	-m | --matrix | -r | --registry) source_option "$@"; shift ;;
	-I | --insecure) insecure=1 ;;
	*) other_option "$1" ;;
	esac
	shift
done
[ $# -eq 0 ] || usage
[ -n "$matrix_given$repo" ] || check_file GPUDRV_MATRIX "$matrix"
labels2tag=$(find_tool labels2tag) || finish 2
matrix_grep=$(find_tool matrix-grep) || finish 2
image_source
if [ -n "$root_given" ]; then
	[ -d "$root" ] || die "-R $root: not a directory (the root of a host's file tree)"
	# Paths are "$root/etc/...": the root itself without its trailing slashes.
	while :; do case $root in */) root=${root%/} ;; *) break ;; esac; done
fi
# One request at most (-r): a run that hangs past GPUDRV_TIMEOUT gives up.
gpudrv_start 120 0

# at PATH: $p, where the host finds PATH (/etc/os-release): under -R, in
# the root, each symbolic link on the way followed as the host would, but
# inside the root: an absolute target starts again at the root, ".." stops
# there, so that no link in the tree makes this machine's files be read.
# More than 40 links on the way (a loop) is exit 2.
at() {
	p=$1
	[ -n "$root_given" ] || return 0
	at_todo=${1#/} at_done='' at_n=0
	while [ -n "$at_todo" ]; do
		at_c=${at_todo%%/*}
		case $at_todo in */*) at_todo=${at_todo#*/} ;; *) at_todo= ;; esac
		case $at_c in
		'' | .) continue ;;
		..) at_done=${at_done%/*} && continue ;;
		esac
		if [ -L "$root$at_done/$at_c" ]; then
			at_n=$((at_n + 1))
			[ "$at_n" -le 40 ] || die "$root$1: more than 40 symbolic links on the way (a loop?); nothing was checked"
			at_t=$(readlink -- "$root$at_done/$at_c") || die "cannot read the symbolic link $root$at_done/$at_c"
			case $at_t in /*) at_done= ;; esac
			at_todo=$at_t${at_todo:+/$at_todo}
		else
			at_done=$at_done/$at_c
		fi
	done
	p=$root$at_done
}

# safe TEXT: TEXT fit for a message: one line, printable, at most 120 characters.
safe() {
	printf '%s' "$1" | tr -c '[:print:]' '?' | cut -c1-120
}

# is_kernel NAME: 0 when NAME reads as a kernel release, as uname -r prints
# it: a version (5.15.0) then, optionally, the rest (-119-generic,
# -427.13.1.el9_4.x86_64).  The image tag allows fewer characters; labels2tag
# judges that.
is_kernel() {
	case $1 in *[!A-Za-z0-9._+~-]* | '') return 1 ;; esac
	printf '%s\n' "$1" | grep -Eqx '[0-9]+\.[0-9]+(\.[0-9]+)*([-+~._][A-Za-z0-9._+~-]*)?'
}

# version_of KERNEL: the version part that orders kernels: the numbers up to
# the flavour (5.15.0-119 of 5.15.0-119-generic, 5.14.0-427.13.1 of
# 5.14.0-427.13.1.el9_4.x86_64).
version_of() {
	printf '%s\n' "$1" | sed 's/^\([0-9][0-9.]*\(-[0-9][0-9.]*\)*\).*/\1/; s/\.*$//'
}

# newer KERNEL: 0 when KERNEL's version is above the running kernel's, as
# sort -V orders versions (5.15.0-119 above 5.15.0-99; not as strings).
newer() {
	nw_v=$(version_of "$1")
	[ "$nw_v" != "$running_v" ] &&
		[ "$(printf '%s\n%s\n' "$running_v" "$nw_v" | sort -V | tail -n 1)" = "$nw_v" ]
}

# read_line FILE WHAT: FILE's first line in $line, or exit 2 saying WHAT it is.
read_line() {
	if ! [ -f "$1" ] || ! [ -r "$1" ]; then die "cannot read $1 ($2)"; fi
	line=$(sed -n '1{p;q;}' "$1" 2>/dev/null) || die "cannot read $1 ($2)"
}

# --- the running kernel: uname -r, or what uname reads under -R
if [ -n "$root_given" ]; then
	at /proc/sys/kernel/osrelease
	read_line "$p" "the running kernel, as uname -r prints it"
	running=$line
	running_from=$p
else
	running=$(uname -r) || die "uname -r failed: the running kernel is unknown"
	running_from="uname -r"
fi
is_kernel "$running" || die "$running_from: '$(safe "$running")' is not a kernel release (e.g. 5.15.0-107-generic); nothing was checked"
running_v=$(version_of "$running")

# --- the OS: ID and VERSION_ID make the OS tag; ID and ID_LIKE the family
at /usr/lib/os-release
usr_osr=$p
at /etc/os-release
osr=$p
[ -e "$osr" ] || [ -L "$root/etc/os-release" ] || ! [ -e "$usr_osr" ] || osr=$usr_osr
if ! [ -f "$osr" ] || ! [ -r "$osr" ]; then
	die "cannot read $osr (nor $usr_osr): the OS tag (ID, VERSION_ID) is unknown; nothing was checked"
fi
# osr_value KEY: KEY's value in os-release (the last assignment), one pair
# of outer quotes taken off; empty when there is none.
osr_value() {
	ov=$(sed -n "s/^$1=//p" "$osr" | tail -n 1)
	case $ov in
	\"*\") ov=${ov#\"} && ov=${ov%\"} ;;
	\'*\') ov=${ov#\'} && ov=${ov%\'} ;;
	esac
	printf '%s\n' "$ov"
}
# label_value KEY VALUE: exits 2 unless VALUE can be a node label's value
# (what node-feature-discovery would publish, what the tag is built from).
label_value() {
	[ -n "$2" ] || die "$osr has no $1= line: not an os-release file (os-release(5)); the OS tag is unknown"
	case $2 in
	*[!A-Za-z0-9._-]* | [!A-Za-z0-9]* | *[!A-Za-z0-9]) lv_bad=1 ;;
	*) lv_bad= ;;
	esac
	[ "${#2}" -le 63 ] || lv_bad=1
	[ -z "$lv_bad" ] ||
		die "$osr: $1 '$(safe "$2")' cannot be part of an image tag (at most 63 of letters, digits, '_', '.' and '-', a letter or digit at each end); nothing was checked"
}
os_id=$(osr_value ID)
os_version=$(osr_value VERSION_ID)
os_like=$(osr_value ID_LIKE)
label_value ID "$os_id"
label_value VERSION_ID "$os_version"
family=
# The words of ID and ID_LIKE, never file names (ID_LIKE='*').
set -f
for w in $os_id $os_like; do
	case $w in
	debian | ubuntu) family=debian && break ;;
	rhel | centos | fedora | rocky | almalinux | ol) family=rhel && break ;;
	esac
done
set +f
[ -n "$family" ] ||
	die "$osr: ID=$os_id: not of the Debian nor the RHEL family, whose way to the next kernel $prog knows; nothing was checked"

# --- the driver branch: -b, or the loaded module's
at /sys/module/nvidia/version
mod=$p
driver=
if [ -z "$branch" ]; then
	[ -e "$mod" ] ||
		die "no NVIDIA kernel module is loaded (no $mod): the driver branch is unknown; name it with -b (e.g. -b 550)"
	read_line "$mod" "the loaded NVIDIA driver's version"
	driver=$line
	case $driver in
	*[!0-9.]* | .* | *. | *..* | '') driver_bad=1 ;;
	*.*) driver_bad= ;;
	*) driver_bad=1 ;;
	esac
	[ -z "$driver_bad" ] ||
		die "$mod: '$(safe "$driver")' is not a driver version (e.g. 550.90.07); name the branch with -b"
	branch=${driver%%.*}
fi

# --- the kernels this host may boot next that are newer than the running one
: >"$tmp/next"
# add_kernel NAME WHERE: NAME, found at WHERE, is a kernel; kept if newer.
add_kernel() {
	is_kernel "$1" ||
		die "$2: '$(safe "$1")' is not a kernel release (as uname -r prints it, e.g. 5.15.0-119-generic); nothing was checked"
	found=1
	! newer "$1" || printf '%s\n' "$1" >>"$tmp/next"
}
found=
if [ "$family" = debian ]; then
	# Every kernel installed: /boot/vmlinuz-*, /lib/modules/*, and those the
	# package manager names in reboot-required.pkgs; GRUB's default (0)
	# boots the newest.
	at /boot
	for f in "$p"/vmlinuz-*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		add_kernel "${f##*/vmlinuz-}" "$f"
	done
	at /lib/modules
	for d in "$p"/*; do
		at "/lib/modules/${d##*/}"
		[ -d "$p" ] || continue
		add_kernel "${d##*/}" "$d"
	done
	# (/var/run is a link to /run, absolute: under -R, the tree's own /run.)
	at /var/run/reboot-required.pkgs
	pkgs=$p
	if [ -e "$pkgs" ]; then
		[ -r "$pkgs" ] || die "cannot read $pkgs (the packages that want a reboot)"
		sed -n 's/^linux-image-\(unsigned-\)\{0,1\}\([0-9].*\)$/\2/p' "$pkgs" >"$tmp/pkgs"
		while IFS= read -r k; do
			add_kernel "$k" "$pkgs"
		done <"$tmp/pkgs"
	fi
	[ -n "$found" ] ||
		die "no kernel found in $root/boot (vmlinuz-*) nor $root/lib/modules: is ${root:-/} the host's root?; nothing was checked"
	none="no kernel newer than the running $running is installed: no reboot into a new kernel is pending"
else
	# The default boot entry, as grubby --default-kernel reads it: GRUB's
	# GRUB_DEFAULT (saved: grubenv's next_entry, else its saved_entry), a
	# BLS entry id in /boot/loader/entries, or an index in the entries
	# newest first.
	bls=/boot/loader/entries
	at "$bls"
	entries=$p
	[ -d "$entries" ] ||
		die "no directory $entries: the boot entries (BLS, RHEL 8 and later) are unknown; nothing was checked"
	at /etc/default/grub
	grub=$p
	def=0
	if [ -e "$grub" ]; then
		[ -r "$grub" ] || die "cannot read $grub (GRUB_DEFAULT)"
		def=$(sed -n 's/^[[:space:]]*GRUB_DEFAULT=//p' "$grub" | tail -n 1)
		case $def in
		\"*\") def=${def#\"} && def=${def%\"} ;;
		\'*\') def=${def#\'} && def=${def%\'} ;;
		esac
		def=${def:-0}
	fi
	from="GRUB_DEFAULT=$def in $grub"
	if [ "$def" = saved ]; then
		at /boot/grub2/grubenv
		env=$p
		if ! [ -f "$env" ] || ! [ -r "$env" ]; then
			die "cannot read $env (GRUB_DEFAULT=saved in $grub: the saved entry is there)"
		fi
		def=$(sed -n 's/^next_entry=//p' "$env" | tail -n 1)
		from="next_entry in $env"
		if [ -z "$def" ]; then
			def=$(sed -n 's/^saved_entry=//p' "$env" | tail -n 1)
			from="saved_entry in $env"
		fi
		def=${def:-0}
	fi
	case $def in
	*[!0-9]*)
		case $def in
		*/* | .* | *[![:print:]]*) id_bad=1 ;;
		*) id_bad= ;;
		esac
		[ -n "$id_bad" ] || at "$bls/$def.conf"
		[ -n "$id_bad" ] || [ -f "$p" ] || id_bad=1
		[ -z "$id_bad" ] ||
			die "$from: '$(safe "$def")' names no entry in $entries (an entry's id is its file name without .conf); set the default with grubby --set-default; nothing was checked"
		entry=$p
		;;
	*)
		# By index: GRUB lists the entries newest first.
		: >"$tmp/entries"
		for e in "$entries"/*.conf; do
			at "$bls/${e##*/}"
			e=$p
			[ -f "$e" ] || continue
			[ -r "$e" ] || die "cannot read $e (a boot entry); nothing was checked"
			v=$(sed -n 's/^version[[:space:]][[:space:]]*//p' "$e" | tail -n 1)
			printf '%s %s\n' "${v:-0}" "$e" >>"$tmp/entries"
		done
		idx=${def#"${def%%[!0]*}"}
		entry=$(sort -V -r "$tmp/entries" | sed -n "$((${idx:-0} + 1)){s/^[^ ]* //;p;}")
		[ -n "$entry" ] ||
			die "$from: no entry number $def in $entries; nothing was checked"
		;;
	esac
	[ -r "$entry" ] || die "cannot read $entry (the default boot entry)"
	k=$(sed -n 's/^version[[:space:]][[:space:]]*//p' "$entry" | tail -n 1)
	[ -n "$k" ] || k=$(sed -n 's|^linux[[:space:]][[:space:]]*\(.*/\)\{0,1\}vmlinuz-\([^[:space:]]*\).*|\2|p' "$entry" | tail -n 1)
	[ -n "$k" ] || die "$entry: no version line nor linux /vmlinuz-... line: which kernel it boots is unknown; nothing was checked"
	case $k in 0-rescue-*) die "$entry: the default boot entry is the rescue kernel ($(safe "$k")): set the default with grubby --set-default; nothing was checked" ;; esac
	add_kernel "$k" "$entry"
	none="the default boot entry, $k ($entry), is not newer than the running $running: no reboot into a new kernel is pending"
fi
sort -V -u "$tmp/next" >"$tmp/next.sorted"

if ! [ -s "$tmp/next.sorted" ]; then
	say "$none"
	echo OK >"$tmp/out"
	emit "$tmp/out" 0
	finish 0
fi

# --- each next kernel's tag and matrix row, built by labels2tag from the
# labels node-feature-discovery and gpu-feature-discovery would give this
# host.  Every value was checked above: nothing in the JSON needs escaping.
{
	printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"localhost","labels":{'
	printf '"%s":"%s",' "$L_KERNEL" "$running" "$L_OSID" "$os_id"
	printf '"%s":"%s"' "$L_OSVER" "$os_version"
	if [ -n "$driver" ]; then
		dr=${driver#*.}
		printf ',"%s":"%s"' "$L_MAJOR" "$branch" "$L_MINOR" "${dr%%.*}"
		case $dr in *.*) printf ',"%s":"%s"' "$L_REV" "${dr#*.}" ;; esac
	fi
	printf '}}}\n'
} >"$tmp/node.json"
# -b given: labels2tag judges the branch (a module's is its major label).
set --
[ -n "$driver" ] || set -- -b "$branch"
: >"$tmp/tags"
: >"$tmp/map"
n=0
while IFS= read -r k; do
	n=$((n + 1))
	"$labels2tag" -N "$@" -k "$k" "$tmp/node.json" >"$tmp/tag" || finish 2
	"$labels2tag" -N -c "$@" -k "$k" "$tmp/node.json" >"$tmp/row" || finish 2
	# matrix-grep takes node names: the kernel is k<N> there.
	printf 'k%s %s\n' "$n" "$(cat "$tmp/tag")" >>"$tmp/tags"
	printf 'k%s %s %s %s\n' "$n" "$k" "$(cat "$tmp/tag")" "$(cat "$tmp/row")" >>"$tmp/map"
done <"$tmp/next.sorted"

if [ -n "$repo" ]; then
	registry_tags "$tmp/tags.json" || die "nothing was checked"
	matrix=$tmp/tags.json
fi
[ -r "$matrix" ] || die "cannot read the matrix $matrix (-m or GPUDRV_MATRIX names another); nothing was checked"

rc=0
"$matrix_grep" -m "$matrix" "$tmp/tags" >"$tmp/mg" || rc=$?
[ "$rc" -le 1 ] || die "nothing was checked (matrix-grep exit $rc)"
: >"$tmp/out"
while read -r name word tag; do
	if [ "$word" != MISSING ]; then
		printf '%s\n' "$name" >>"$tmp/out"
		continue
	fi
	m=$(awk -v n="$name" '$1 == n { print $2, $4 }' "$tmp/map")
	k=${m% *}
	row=${m#* }
	printf '%s MISSING %s\n' "$k" "$tag" >>"$tmp/out"
	if [ -n "$repo" ]; then
		say "kernel $k: $repo has no tag $tag: build and push $repo:$tag before this host reboots into it (the support-matrix row: $row)"
	else
		say "kernel $k: no image $tag in $matrix: build it before this host reboots into it, then add the row $row"
	fi
done <"$tmp/mg"
emit "$tmp/out" "$rc"
finish "$rc"
