#!/bin/sh
# drv-next.sh on fake host trees (-R): the kernels a host will boot next,
# each one's tag built by labels2tag, checked against the matrix or the
# registry; never OK when it could not look.
. "$(dirname "$0")/lib.sh"

# An installed copy, laid out as make install does, the C filters beside it.
mkdir -p x/bin x/lib/gpudrv
cp "$BIN/drv-next.sh" x/bin/
cp "$BIN"/../lib/gpudrv/*.sh x/lib/gpudrv/
for t in labels2tag matrix-grep; do ln -s "$(command -v "$t")" "x/bin/$t"; done
N=$PWD/x/bin/drv-next.sh

cat >matrix.csv <<'EOF'
driver_branch,kernel,os_tag
550,5.15.0-107-generic,ubuntu22.04
550,5.15.0-119-generic,ubuntu22.04
550,6.8.0-45-generic,ubuntu24.04
550,5.14.0-427.13.1.el9_4.x86_64,rhel9
EOF
M=$PWD/matrix.csv

# debian_host DIR ID VERSION_ID RUNNING DRIVER KERNEL...: a Debian-family
# host's root: its os-release, the running kernel (what uname -r reads),
# the loaded nvidia module's version (none if DRIVER is -), and each KERNEL
# installed (/boot/vmlinuz-KERNEL and /lib/modules/KERNEL).
debian_host() {
	dh=$1
	mkdir -p "$dh/etc" "$dh/proc/sys/kernel" "$dh/boot" "$dh/lib/modules" "$dh/var/run"
	case $2:$3 in
	ubuntu:22.04) printf '%s\n' 'PRETTY_NAME="Ubuntu 22.04.4 LTS"' 'NAME="Ubuntu"' 'VERSION_ID="22.04"' \
		'VERSION="22.04.4 LTS (Jammy Jellyfish)"' VERSION_CODENAME=jammy ID=ubuntu ID_LIKE=debian \
		'HOME_URL="https://www.ubuntu.com/"' UBUNTU_CODENAME=jammy >"$dh/etc/os-release" ;;
	ubuntu:24.04) printf '%s\n' 'PRETTY_NAME="Ubuntu 24.04.1 LTS"' 'NAME="Ubuntu"' 'VERSION_ID="24.04"' \
		'VERSION="24.04.1 LTS (Noble Numbat)"' VERSION_CODENAME=noble ID=ubuntu ID_LIKE=debian \
		UBUNTU_CODENAME=noble LOGO=ubuntu-logo >"$dh/etc/os-release" ;;
	esac
	echo "$4" >"$dh/proc/sys/kernel/osrelease"
	if [ "$5" != - ]; then
		mkdir -p "$dh/sys/module/nvidia"
		echo "$5" >"$dh/sys/module/nvidia/version"
	fi
	shift 5
	for dh_k; do
		: >"$dh/boot/vmlinuz-$dh_k"
		mkdir -p "$dh/lib/modules/$dh_k/kernel"
	done
}

# Ubuntu 22.04 on 5.15.0-107, with an older kernel kept: 5.15.0-99, which
# a string comparison ("99" > "107") would take for newer.
U=$PWD/u22
debian_host "$U" ubuntu 22.04 5.15.0-107-generic 550.90.07 5.15.0-99-generic 5.15.0-107-generic
t_run dash "$N" -R "$U" -m "$M"
t_rc 0 "Ubuntu 22.04, no kernel newer than the running one, under dash"
t_out "prints OK" OK
t_err "says on stderr that none is pending (5.15.0-99 is older: sort -V, not strings)" \
	"drv-next.sh: no kernel newer than the running 5.15.0-107-generic is installed: no reboot into a new kernel is pending"

: >"$U/boot/vmlinuz-5.15.0-119-generic"
mkdir -p "$U/lib/modules/5.15.0-119-generic"
t_run "$N" -R "$U/" -m "$M"
t_rc 0 "one newer kernel (5.15.0-119), its image in the matrix"
t_out "prints OK" OK
t_err "nothing on stderr"

# The second newer kernel only in reboot-required.pkgs, as apt leaves it
# while unpacking; the meta-package and linux-base are not kernels.
printf '%s\n' linux-base linux-image-generic linux-image-5.15.0-125-generic >"$U/var/run/reboot-required.pkgs"
t_run "$N" -R "$U" -m "$M"
t_rc 1 "two newer kernels, one missing in the matrix"
t_out "names the missing one and its tag" "5.15.0-125-generic MISSING 550-5.15.0-125-generic-ubuntu22.04"
t_err "and the matrix row to add, on stderr" \
	"drv-next.sh: kernel 5.15.0-125-generic: no image 550-5.15.0-125-generic-ubuntu22.04 in $M: build it before this host reboots into it, then add the row 550,5.15.0-125-generic,ubuntu22.04"
GPUDRV_MATRIX=$M t_run "$N" -R "$U"
t_rc 1 "GPUDRV_MATRIX names the matrix"
# A newer kernel only in /lib/modules counts too.
rm "$U/var/run/reboot-required.pkgs"
mkdir -p "$U/lib/modules/5.15.0-131-generic"
t_run "$N" -R "$U" -m "$M"
t_rc 1 "a newer kernel only in /lib/modules"
t_out "is checked too" "5.15.0-131-generic MISSING 550-5.15.0-131-generic-ubuntu22.04"
rm -r "$U/lib/modules/5.15.0-131-generic"
# /var/run is a link to /run, absolute, on a real host: under -R, the tree's /run.
mkdir -p "$U/run"
rmdir "$U/var/run"
ln -s /run "$U/var/run"
echo linux-image-5.15.0-125-generic >"$U/run/reboot-required.pkgs"
t_run "$N" -R "$U" -m "$M"
t_rc 1 "-R with /var/run a link to /run: the tree's own /run is read"
t_out "and its reboot-required.pkgs" "5.15.0-125-generic MISSING 550-5.15.0-125-generic-ubuntu22.04"
rm "$U/run/reboot-required.pkgs"

# The driver: the loaded module's branch, else -b.
rm "$U/sys/module/nvidia/version"
t_run "$N" -R "$U" -m "$M"
t_rc 2 "no nvidia module loaded and no -b"
t_out "prints nothing on stdout, never OK"
t_err "says so and what to do" \
	"drv-next.sh: no NVIDIA kernel module is loaded (no $U/sys/module/nvidia/version): the driver branch is unknown; name it with -b (e.g. -b 550)"
t_run "$N" -R "$U" -m "$M" -b 550
t_rc 0 "no module, -b 550"
t_out "prints OK" OK
t_run "$N" -R "$U" -m "$M" -b 535
t_rc 1 "-b 535: the images of another branch"
t_out "are missing" "5.15.0-119-generic MISSING 535-5.15.0-119-generic-ubuntu22.04"
t_run "$N" -R "$U" -m "$M" -b 55x
t_rc 2 "-b with a branch that is not one"
t_out "prints nothing on stdout"
t_err "labels2tag says why" \
	"labels2tag: -b \"55x\": is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)"
echo 'NVRM version: 550' >"$U/sys/module/nvidia/version"
t_run "$N" -R "$U" -m "$M"
t_rc 2 "a module version that is not a driver version"
t_err "names the file" \
	"drv-next.sh: $U/sys/module/nvidia/version: 'NVRM version: 550' is not a driver version (e.g. 550.90.07); name the branch with -b"
echo 535.183.06 >"$U/sys/module/nvidia/version"
t_run "$N" -R "$U" -m "$M"
t_rc 1 "the module's branch (535.183.06: 535), not its full version"
t_out "is the tag's" "5.15.0-119-generic MISSING 535-5.15.0-119-generic-ubuntu22.04"

# Ubuntu 24.04, the next kernel's image not built.
V=$PWD/u24
debian_host "$V" ubuntu 24.04 6.8.0-45-generic 550.90.07 6.8.0-45-generic 6.8.0-52-generic
t_run "$N" -R "$V" -m "$M"
t_rc 1 "Ubuntu 24.04, 6.8.0-52 installed"
t_out "its tag, ubuntu24.04" "6.8.0-52-generic MISSING 550-6.8.0-52-generic-ubuntu24.04"
t_err "and its row" \
	"drv-next.sh: kernel 6.8.0-52-generic: no image 550-6.8.0-52-generic-ubuntu24.04 in $M: build it before this host reboots into it, then add the row 550,6.8.0-52-generic,ubuntu24.04"

# RHEL 9.4: the default boot entry (GRUB_DEFAULT=saved, grubenv's
# saved_entry naming a BLS entry); the OS tag rhel9 (today's rule).
R=$PWD/rhel9
MID=4f1c0de5a7b94c3e8d2f6a1b0c9e7d35
mkdir -p "$R/etc/default" "$R/proc/sys/kernel" "$R/boot/loader/entries" "$R/boot/grub2" "$R/sys/module/nvidia"
printf '%s\n' 'NAME="Red Hat Enterprise Linux"' 'VERSION="9.4 (Plow)"' 'ID="rhel"' 'ID_LIKE="fedora"' \
	'VERSION_ID="9.4"' 'PLATFORM_ID="platform:el9"' 'PRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"' >"$R/etc/os-release"
echo 5.14.0-362.8.1.el9_3.x86_64 >"$R/proc/sys/kernel/osrelease"
echo 550.90.07 >"$R/sys/module/nvidia/version"
for k in 5.14.0-362.8.1.el9_3.x86_64 5.14.0-427.13.1.el9_4.x86_64 5.14.0-503.14.1.el9_5.x86_64 0-rescue-$MID; do
	printf '%s\n' "title Red Hat Enterprise Linux ($k) 9.4 (Plow)" "version $k" "linux /vmlinuz-$k" \
		"initrd /initramfs-$k.img \$tuned_initrd" 'options root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M' \
		'grub_users $grub_users' 'grub_arg --unrestricted' 'grub_class rhel' >"$R/boot/loader/entries/$MID-$k.conf"
done
mv "$R/boot/loader/entries/$MID-0-rescue-$MID.conf" "$R/boot/loader/entries/$MID-0-rescue.conf"
: >"$R/boot/vmlinuz-0-rescue-$MID"
printf '%s\n' GRUB_TIMEOUT=5 'GRUB_DISTRIBUTOR="$(sed '"'"'s, release .*$,,g'"'"' /etc/system-release)"' \
	GRUB_DEFAULT=saved GRUB_DISABLE_SUBMENU=true GRUB_ENABLE_BLSCFG=true >"$R/etc/default/grub"
# grubenv ENTRY [NEXT]: grub2-set-default's file (and grub2-reboot's next_entry).
grubenv() {
	{
		echo '# GRUB Environment Block'
		echo "saved_entry=$1"
		[ -z "${2:-}" ] || echo "next_entry=$2"
		echo 'boot_success=0'
		echo '##################################################'
	} >"$R/boot/grub2/grubenv"
}
grubenv "$MID-5.14.0-427.13.1.el9_4.x86_64"
t_run "$N" -R "$R" -m "$M"
t_rc 0 "RHEL 9.4, saved_entry 5.14.0-427 (a newer 5.14.0-503 installed, not the default)"
t_out "prints OK: only the default entry boots" OK
t_err "nothing on stderr"
grubenv "$MID-5.14.0-503.14.1.el9_5.x86_64"
t_run "$N" -R "$R" -m "$M"
t_rc 1 "saved_entry 5.14.0-503"
t_out "its tag is rhel9, not rhel9.4" "5.14.0-503.14.1.el9_5.x86_64 MISSING 550-5.14.0-503.14.1.el9_5.x86_64-rhel9"
t_err "and its row" \
	"drv-next.sh: kernel 5.14.0-503.14.1.el9_5.x86_64: no image 550-5.14.0-503.14.1.el9_5.x86_64-rhel9 in $M: build it before this host reboots into it, then add the row 550,5.14.0-503.14.1.el9_5.x86_64,rhel9"
grubenv "$MID-5.14.0-503.14.1.el9_5.x86_64" "$MID-5.14.0-427.13.1.el9_4.x86_64"
t_run "$N" -R "$R" -m "$M"
t_rc 0 "next_entry (grub2-reboot) wins over saved_entry"
grubenv "$MID-5.14.0-362.8.1.el9_3.x86_64"
t_run "$N" -R "$R" -m "$M"
t_rc 0 "the default entry is the running kernel"
t_out "prints OK" OK
t_err "says none is pending, naming the entry" \
	"drv-next.sh: the default boot entry, 5.14.0-362.8.1.el9_3.x86_64 ($R/boot/loader/entries/$MID-5.14.0-362.8.1.el9_3.x86_64.conf), is not newer than the running 5.14.0-362.8.1.el9_3.x86_64: no reboot into a new kernel is pending"
grubenv "$MID-5.14.0-999.el9.x86_64"
t_run "$N" -R "$R" -m "$M"
t_rc 2 "saved_entry names no entry"
t_out "prints nothing on stdout"
t_err "says which file and what to do" \
	"drv-next.sh: saved_entry in $R/boot/grub2/grubenv: '$MID-5.14.0-999.el9.x86_64' names no entry in $R/boot/loader/entries (an entry's id is its file name without .conf); set the default with grubby --set-default; nothing was checked"
grubenv ""
t_run "$N" -R "$R" -m "$M"
t_rc 1 "no saved_entry: entry 0, the newest"
t_out "is 5.14.0-503" "5.14.0-503.14.1.el9_5.x86_64 MISSING 550-5.14.0-503.14.1.el9_5.x86_64-rhel9"
sed -i 's/^GRUB_DEFAULT=.*/GRUB_DEFAULT=1/' "$R/etc/default/grub"
t_run "$N" -R "$R" -m "$M"
t_rc 0 "GRUB_DEFAULT=1: the second newest, 5.14.0-427"
t_out "prints OK" OK
sed -i 's/^GRUB_DEFAULT=.*/GRUB_DEFAULT=saved/' "$R/etc/default/grub"
rm "$R/boot/grub2/grubenv"
t_run "$N" -R "$R" -m "$M"
t_rc 2 "GRUB_DEFAULT=saved without grubenv"
t_err "names the file" \
	"drv-next.sh: cannot read $R/boot/grub2/grubenv (GRUB_DEFAULT=saved in $R/etc/default/grub: the saved entry is there)"
grubenv "$MID-5.14.0-427.13.1.el9_4.x86_64"

# -r: what the registry lists (a skopeo stand-in, as t/0300 has).
cat >skopeo <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >>skopeo.log
case ${FAKE_SKOPEO:-ok} in
ok) printf '{"Repository": "registry.example/nvidia/driver", "Tags": ["550-5.15.0-119-generic-ubuntu22.04", "latest"]}\n' ;;
401) echo 'time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"' >&2; exit 1 ;;
esac
STUB
chmod +x skopeo
SKOPEO=$PWD/skopeo
export SKOPEO
echo 550.90.07 >"$U/sys/module/nvidia/version"
echo linux-image-5.15.0-125-generic >"$U/run/reboot-required.pkgs"
t_run "$N" -R "$U" -r registry.example/nvidia/driver
t_rc 1 "-r: the registry has 5.15.0-119's image, not 5.15.0-125's"
t_out "names the missing one" "5.15.0-125-generic MISSING 550-5.15.0-125-generic-ubuntu22.04"
t_err "and the image to push, with its matrix row" \
	"drv-next.sh: kernel 5.15.0-125-generic: registry.example/nvidia/driver has no tag 550-5.15.0-125-generic-ubuntu22.04: build and push registry.example/nvidia/driver:550-5.15.0-125-generic-ubuntu22.04 before this host reboots into it (the support-matrix row: 550,5.15.0-125-generic,ubuntu22.04)"
t_run cat skopeo.log
t_out "one skopeo list-tags, bounded by the request timeout" \
	"--command-timeout=60s list-tags docker://registry.example/nvidia/driver"
rm "$U/run/reboot-required.pkgs"
t_run "$N" -R "$U" -r docker://registry.example/nvidia/driver -I
t_rc 0 "-r: every next kernel's image is there"
t_out "prints OK" OK
t_run sed -n 2p skopeo.log
t_out "-I: no TLS verification" "--command-timeout=60s list-tags --tls-verify=false docker://registry.example/nvidia/driver"
FAKE_SKOPEO=401 t_run "$N" -R "$U" -r registry.example/nvidia/driver
t_rc 2 "-r when the registry refuses"
t_out "prints nothing on stdout, never OK"
t_err "says skopeo's words and that nothing was checked" \
	"drv-next.sh: cannot list the tags of registry.example/nvidia/driver; skopeo said:" \
	'    time="2026-11-30T10:00:00Z" level=fatal msg="Error listing repository tags: fetching tags list: requested access to the resource is denied"' \
	"drv-next.sh: nothing was checked"
t_run "$N" -R "$U" -r registry.example/nvidia/driver -m "$M"
t_rc 2 "-r with -m"
t_run "$N" -R "$U" -I
t_rc 2 "-I without -r"

# Bad input: exit 2, never OK.
B=$PWD/bad
debian_host "$B" ubuntu 22.04 5.15.0-107-generic 550.90.07 5.15.0-107-generic 5.15.0-119-generic
cp "$B/etc/os-release" os-release.good
printf '\177ELF\002\001\001\000\000\000\n' >"$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "an os-release that is garbage"
t_out "prints nothing on stdout"
t_err "says it is not an os-release file" \
	"drv-next.sh: $B/etc/os-release has no ID= line: not an os-release file (os-release(5)); the OS tag is unknown"
sed 's/^ID=.*/ID="ubuntu linux"/' os-release.good >"$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "an ID that cannot be part of a tag"
t_err "names it" \
	"drv-next.sh: $B/etc/os-release: ID 'ubuntu linux' cannot be part of an image tag (at most 63 of letters, digits, '_', '.' and '-', a letter or digit at each end); nothing was checked"
grep -v VERSION_ID os-release.good >"$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "no VERSION_ID"
t_err "says so" \
	"drv-next.sh: $B/etc/os-release has no VERSION_ID= line: not an os-release file (os-release(5)); the OS tag is unknown"
rm "$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "no os-release at all"
t_out "prints nothing on stdout"
t_err "names where it looked" \
	"drv-next.sh: cannot read $B/etc/os-release (nor $B/usr/lib/os-release): the OS tag (ID, VERSION_ID) is unknown; nothing was checked"
mkdir -p "$B/usr/lib"
cp os-release.good "$B/usr/lib/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 0 "without /etc/os-release, /usr/lib/os-release (os-release(5))"
printf '%s\n' 'NAME="SLES"' 'ID="sles"' 'ID_LIKE="suse"' 'VERSION_ID="15.6"' >"$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "an OS of neither family"
t_err "says it does not know how it boots" \
	"drv-next.sh: $B/etc/os-release: ID=sles: not of the Debian nor the RHEL family, whose way to the next kernel drv-next.sh knows; nothing was checked"
# ID_LIKE's words are words, never the names of files here.
printf '%s\n' 'NAME="Plan 9"' 'ID=plan9' "ID_LIKE='*'" 'VERSION_ID=4' >"$B/etc/os-release"
: >ubuntu
t_run "$N" -R "$B" -m "$M"
t_rc 2 "ID_LIKE='*', and a file named ubuntu in the working directory"
t_err "is no family it knows" \
	"drv-next.sh: $B/etc/os-release: ID=plan9: not of the Debian nor the RHEL family, whose way to the next kernel drv-next.sh knows; nothing was checked"
rm ubuntu
# The tree's links are followed inside it, never out to this machine's
# files: an absolute link (/etc/os-release -> /usr/lib/os-release, as on
# many hosts), a relative one that climbs past the root, a loop.
ln -sf /usr/lib/os-release "$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 0 "/etc/os-release, a link to /usr/lib/os-release: the tree's"
t_out "the tree's Ubuntu 22.04, not this machine's OS" OK
ln -sf ../../../../../../../../../../usr/lib/os-release "$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 0 "a relative link that climbs past the root stops at it"
t_out "the tree's Ubuntu 22.04 again" OK
ln -sf /etc/os-release "$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "a link to itself"
t_err "is a loop, said" "drv-next.sh: $B/etc/os-release: more than 40 symbolic links on the way (a loop?); nothing was checked"
rm "$B/etc/os-release"
mv "$B/boot" "$B/boot.real"
mv "$B/lib/modules" "$B/lib/modules.away"
ln -s /boot.real "$B/boot"
cp os-release.good "$B/etc/os-release"
t_run "$N" -R "$B" -m "$M"
t_rc 0 "/boot, an absolute link, and no /lib/modules: the tree's kernels"
t_out "its 5.15.0-119's image is in the matrix" OK
rm "$B/boot" "$B/etc/os-release"
mv "$B/boot.real" "$B/boot"
mv "$B/lib/modules.away" "$B/lib/modules"
cp os-release.good "$B/etc/os-release"
: >"$B/boot/vmlinuz-backup"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "a vmlinuz whose name is not a kernel release"
t_out "prints nothing on stdout, never OK"
t_err "names the file" \
	"drv-next.sh: $B/boot/vmlinuz-backup: 'backup' is not a kernel release (as uname -r prints it, e.g. 5.15.0-119-generic); nothing was checked"
rm "$B/boot/vmlinuz-backup"
echo 'linux-image-5.15.0-125-generic"}],"x":{"' >"$B/var/run/reboot-required.pkgs"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "a package name that makes no kernel release"
t_err "names the file" \
	"drv-next.sh: $B/var/run/reboot-required.pkgs: '5.15.0-125-generic\"}],\"x\":{\"' is not a kernel release (as uname -r prints it, e.g. 5.15.0-119-generic); nothing was checked"
rm "$B/var/run/reboot-required.pkgs"
echo 'Linux version 5.15.0' >"$B/proc/sys/kernel/osrelease"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "a running kernel that is not a kernel release"
t_err "names the file" \
	"drv-next.sh: $B/proc/sys/kernel/osrelease: 'Linux version 5.15.0' is not a kernel release (e.g. 5.15.0-107-generic); nothing was checked"
rm "$B/proc/sys/kernel/osrelease"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "no running kernel in the tree"
t_err "names the file" \
	"drv-next.sh: cannot read $B/proc/sys/kernel/osrelease (the running kernel, as uname -r prints it)"
echo 5.15.0-107-generic >"$B/proc/sys/kernel/osrelease"
rm -r "$B/boot" "$B/lib/modules"
t_run "$N" -R "$B" -m "$M"
t_rc 2 "no kernel found at all: the wrong root?"
t_err "says where it looked" \
	"drv-next.sh: no kernel found in $B/boot (vmlinuz-*) nor $B/lib/modules: is $B the host's root?; nothing was checked"
t_run "$N" -R "$PWD/nosuch" -m "$M"
t_rc 2 "-R that is not a directory"
t_err "says so" "drv-next.sh: -R $PWD/nosuch: not a directory (the root of a host's file tree)"
t_run "$N" -R "$U" -m nosuch.csv
t_rc 2 "a matrix that cannot be read"
t_out "prints nothing on stdout"
t_err "names it" "drv-next.sh: cannot read the matrix nosuch.csv (-m or GPUDRV_MATRIX names another); nothing was checked"
t_run "$N" -R "$U" -m "$M" extra
t_rc 2 "an operand"
t_err "is the usage" "usage: drv-next.sh [-R root] [-b branch] [-m matrix | -r repository [-I]]"
t_run "$N" -h
t_rc 0 "-h"
t_out "prints the usage" "usage: drv-next.sh [-R root] [-b branch] [-m matrix | -r repository [-I]]"

# kured's sentinel (drv-next.sh(1)): a reboot only when one is required and
# every next kernel's image exists.
sentinel() {
	sh -c 'test -e "$1/run/reboot-required" && "$2" -R "$1" -m "$3"' sh "$@"
}
echo linux-image-5.15.0-125-generic >"$U/run/reboot-required.pkgs"
t_run sentinel "$U" "$N" "$M"
t_rc 1 "the sentinel: no reboot-required, no reboot"
: >"$U/run/reboot-required"
t_run sentinel "$U" "$N" "$M"
t_rc 1 "reboot-required, but an image is missing: no reboot"
rm "$U/run/reboot-required.pkgs"
t_run sentinel "$U" "$N" "$M"
t_rc 0 "reboot-required and every image there: reboot"
t_done
