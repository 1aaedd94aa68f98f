#!/bin/sh
# t/vg-ldso.sh CMD...: CMD (make check-valgrind's prove), where valgrind
# finds the separate debugging symbols of ld.so but not of the C library.
#
# Memcheck needs ld.so's (Debian's libc6-dbg: its redirections of strlen
# and the like); at each start it also reads the C library's, 4 MB of
# DWARF, 0.2 of the 0.5 CPU-s a run costs here, for 1,000 runs a stage.
# Without them a report keeps our code's files and lines, and names a
# frame inside the C library by its exported symbol (as it names one in
# libcjson or libyaml, which have no such symbols).  The C library's file
# is hidden by a mount of /dev/null over it in a mount namespace of CMD's
# own (unshare -m: root, as CI runs); where none can be made, or the file
# is not there, CMD runs as it is.
libc=$(ldd "$(dirname "$0")/../bin/labels2tag" 2>/dev/null | awk '$1 == "libc.so.6" { print $3 }')
id=$(readelf -n "${libc:-/nonexistent}" 2>/dev/null | sed -n 's/^ *Build ID: *//p')
dbg=/usr/lib/debug/.build-id/$(printf %.2s "$id")/${id#??}.debug
if [ -n "$id" ] && [ -f "$dbg" ] && unshare -m true 2>/dev/null; then
	exec unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$dbg" "$@"
fi
exec "$@"
