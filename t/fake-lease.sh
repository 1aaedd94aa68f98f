#!/bin/sh
# t/fake-lease.sh DIR KUBECTL-ARGS...: the Lease requests of t_fake_fleet's
# kubectl (t/lib.sh), as the API server answers them, for drv-rollout.sh's
# lock.  The lease is DIR/lease, absent when there is none, one field a
# line: resourceVersion, renewTime, leaseDurationSeconds, acquireTime,
# leaseTransitions, holderIdentity (the order of drv-rollout.sh's jsonpath).
# A create or replace whose resourceVersion is not the lease's is refused
# with 409 Conflict, as the API server refuses it.  Each request is one line
# of DIR/lease.log (get; create HOLDER; replace RV HOLDER RENEWTIME).
# Faults, while the file exists: DIR/lease.deny (the verbs refused, one a
# line: get, create, update), DIR/lease.nons (no namespace), DIR/lease.down
# (no API server), DIR/lease.race (another run takes the lease just before
# the next create or replace; the file is removed).
D=$1
shift
while [ $# -gt 0 ]; do
	case $1 in
	-n) ns=$2; shift ;;
	get | create | replace) verb=$1 ;;
	-f) file=$2; shift ;;
	esac
	shift
done
L=$D/lease
name=gpudrv-rollout
if [ -e "$D/lease.down" ]; then
	echo 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?' >&2
	exit 1
fi
v=$verb
[ "$v" != replace ] || v=update
if [ -f "$D/lease.deny" ] && grep -qx "$v" "$D/lease.deny"; then
	echo "Error from server (Forbidden): leases.coordination.k8s.io${file:+ \"$name\"} is forbidden: User \"system:serviceaccount:gpudrv:upgrader\" cannot $v resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"$ns\"" >&2
	exit 1
fi
field() { sed -n "s/.*\"$1\":\"\\{0,1\\}\\([^\",}]*\\).*/\\1/p" "$file"; }
# resourceVersions: one counter, as the API server's.
next_rv() {
	echo $(($(cat "$L.rvc" 2>/dev/null || echo 0) + 1)) >"$L.rvc"
	cat "$L.rvc"
}
other() { # another run takes it
	printf '%s\n' "$(next_rv)" "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)" 60 \
		"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)" 1 other-host_4242_cafe >"$L.new" && mv "$L.new" "$L"
	rm -f "$D/lease.race"
}
# One request at a time, as the API server's compare-and-swap is atomic (a
# test that changes ./lease holds the same lock: t/0465's lease_is).
exec 7>"$L.lock"
flock 7
case $verb in
get)
	echo get >>"$L.log"
	if ! [ -f "$L" ]; then
		echo "Error from server (NotFound): leases.coordination.k8s.io \"$name\" not found" >&2
		exit 1
	fi
	sed -n 1,5p "$L"
	sed -n 6p "$L" | tr -d '\n'
	;;
create | replace)
	h=$(field holderIdentity)
	echo "$verb $(field resourceVersion) $h $(field renewTime)" | sed 's/  */ /g' >>"$L.log"
	if [ -e "$D/lease.nons" ]; then
		echo "Error from server (NotFound): error when ${verb%e}ing \"$file\": namespaces \"$ns\" not found" >&2
		exit 1
	fi
	[ ! -e "$D/lease.race" ] || other
	if [ "$verb" = create ] && [ -f "$L" ]; then
		echo "Error from server (AlreadyExists): error when creating \"$file\": leases.coordination.k8s.io \"$name\" already exists" >&2
		exit 1
	fi
	if [ "$verb" = replace ] && ! [ -f "$L" ]; then
		echo "Error from server (NotFound): error when replacing \"$file\": leases.coordination.k8s.io \"$name\" not found" >&2
		exit 1
	fi
	if [ "$verb" = replace ] && [ "$(field resourceVersion)" != "$(sed -n 1p "$L")" ]; then
		echo "Error from server (Conflict): error when replacing \"$file\": Operation cannot be fulfilled on leases.coordination.k8s.io \"$name\": the object has been modified; please apply your changes to the latest version and try again" >&2
		exit 1
	fi
	rv=$(next_rv)
	printf '%s\n' "$rv" "$(field renewTime)" "$(field leaseDurationSeconds)" "$(field acquireTime)" \
		"$(field leaseTransitions)" "$h" >"$L.new" && mv "$L.new" "$L"
	printf '%s' "$rv"
	;;
*)
	echo "fake-lease: unexpected: $*" >&2
	exit 3
	;;
esac
