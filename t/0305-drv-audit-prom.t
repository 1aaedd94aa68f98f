#!/bin/sh
# drv-audit.sh -p FILE: the textfile is replaced atomically, and nothing
# another user planted in its directory is ever written through: not a
# symlink at every name the old temporary file could have had (.FILE.<pid>),
# not FILE itself a symlink or a FIFO.  What is left behind is checked after
# a clean run, a failed one, a failed write and SIGTERM: FILE a regular file
# of mode 0644 with the right content, what the links point to unchanged, no
# temporary file of the run's own.
. "$(dirname "$0")/lib.sh"

# The stand-in: the lab's GPU nodes; $STANDIN/fault "down" or "hang"
# while the API server is gone or hangs ($STANDIN/hung once it does).
t_standin
t_serve _any "$DATA/lab-nodes.json"
GPUDRV_MATRIX=$ROOT/lab/support-matrix.csv
export GPUDRV_MATRIX
A=$BIN/drv-audit.sh

# The textfile directory, which another user can write (node_exporter's
# often is), and two files of root's outside it.
mkdir tf
echo "root's own" >secret
echo "root's too" >secret2
cp secret secret.orig
cp secret2 secret2.orig
# plant: a symlink to ../secret at each name the old code could have used
# (.g.prom.<pid>, the 500 pids after this one's); the run's own pid is
# planted for sure by the shell that execs it (planted, below).
plant() {
	p=$$
	i=0
	while [ "$i" -lt 500 ]; do
		ln -s ../secret "tf/.g.prom.$((p + i))" 2>/dev/null
		i=$((i + 1))
	done
}
plant
ls -A tf | sort >planted.list
# planted ARGS...: drv-audit.sh ARGS, from a shell that plants the link at
# its own pid, then execs the script (the same pid), under umask 077.
planted() {
	# shellcheck disable=SC2016 # for the inner sh
	t_run sh -c 'umask 077; ln -s ../secret "tf/.g.prom.$$" 2>/dev/null; exec "$@"' sh "$A" "$@"
}
# left DESC: what the run leaves in tf/: g.prom, a regular file of mode
# 0644, and the planted links, still links to ../secret; ../secret and
# ../secret2 unchanged.
left() {
	t_cmp "$1: the file a planted link points to is unchanged" secret.orig secret
	t_cmp "$1: the file FILE pointed to is unchanged" secret2.orig secret2
	if [ -f tf/g.prom ] && ! [ -h tf/g.prom ]; then t_ok 0 "$1: FILE is a regular file"; else
		t_ok 1 "$1: FILE is a regular file"
		ls -l tf/g.prom | t_diag
	fi
	t_run ls -l tf/g.prom
	t_grep "$1: of mode 0644, whatever the umask" out '^-rw-r--r-- '
	# Every name but g.prom is a planted one, still a link to ../secret.
	ls -A tf | grep -v '^g\.prom$' | sort >now.list
	{ cat planted.list; ls -A tf | grep '^\.g\.prom\.[0-9]*$'; } | sort -u >expect.list
	t_cmp "$1: no file of the run's own is left beside FILE" expect.list now.list
	t_run find tf -name '.g.prom.*' ! -lname ../secret
	t_out "$1: each planted link is as it was"
}
# content: tf/g.prom, its times replaced by T.
content() {
	sed 's/_timestamp_seconds [0-9][0-9]*$/_timestamp_seconds T/' tf/g.prom >content
}

planted -p tf/g.prom
t_rc 0 "-p with a link planted at every .g.prom.<pid>"
t_out "prints OK" OK
t_err "nothing on stderr"
left "a clean run"
content
cat >expected.prom <<'EOF'
# HELP gpudrv_audit_missing A GPU node whose precompiled driver image tag is not in the matrix.
# TYPE gpudrv_audit_missing gauge
# HELP gpudrv_audit_missing_nodes GPU nodes whose tag is not in the matrix.
# TYPE gpudrv_audit_missing_nodes gauge
gpudrv_audit_missing_nodes 0
# HELP gpudrv_audit_unknown_nodes GPU nodes whose labels give no tag.
# TYPE gpudrv_audit_unknown_nodes gauge
gpudrv_audit_unknown_nodes 0
# HELP gpudrv_audit_skipped_nodes GPU nodes that need no precompiled image (-t).
# TYPE gpudrv_audit_skipped_nodes gauge
gpudrv_audit_skipped_nodes 0
# HELP gpudrv_audit_gpu_nodes GPU nodes audited.
# TYPE gpudrv_audit_gpu_nodes gauge
gpudrv_audit_gpu_nodes 3
# HELP gpudrv_audit_exit_status Exit status of the last run: 0 OK, 1 missing images, 2 could not tell.
# TYPE gpudrv_audit_exit_status gauge
gpudrv_audit_exit_status 0
# HELP gpudrv_audit_last_run_timestamp_seconds When the audit last ran.
# TYPE gpudrv_audit_last_run_timestamp_seconds gauge
gpudrv_audit_last_run_timestamp_seconds T
# HELP gpudrv_audit_last_success_timestamp_seconds When the audit last saw the whole fleet.
# TYPE gpudrv_audit_last_success_timestamp_seconds gauge
gpudrv_audit_last_success_timestamp_seconds T
EOF
t_cmp "FILE holds the audit, exactly" expected.prom content

# FILE itself a link to a file of root's: the link is replaced, not followed.
rm tf/g.prom
ln -s ../secret2 tf/g.prom
planted -p tf/g.prom
t_rc 0 "-p FILE, FILE a planted symlink"
left "FILE a symlink"
content
t_cmp "FILE holds the audit" expected.prom content

# A failed run: the textfile says so, and keeps the last success.
sed -i 's/^gpudrv_audit_last_success_timestamp_seconds .*/gpudrv_audit_last_success_timestamp_seconds 1700000000/' tf/g.prom
echo down >"$STANDIN/fault"
planted -p tf/g.prom
rm "$STANDIN/fault"
t_rc 2 "-p when the API is down"
t_out "prints nothing on stdout"
left "a failed run"
t_grep "FILE records exit status 2" tf/g.prom '^gpudrv_audit_exit_status 2$'
t_grep "and the last success" tf/g.prom '^gpudrv_audit_last_success_timestamp_seconds 1700000000$'
# A failed run over a FILE that is a link: nothing is read through it.
rm tf/g.prom
printf 'gpudrv_audit_last_success_timestamp_seconds 1600000000\n' >secret2
cp secret2 secret2.orig
ln -s ../secret2 tf/g.prom
echo down >"$STANDIN/fault"
planted -p tf/g.prom
rm "$STANDIN/fault"
t_rc 2 "-p FILE a link, when the API is down"
left "a failed run, FILE a link"
t_run grep -c last_success tf/g.prom
t_out "no last success is taken from what the link points to" 0

# A FIFO planted as FILE: a failed run neither waits on it nor writes to it.
rm tf/g.prom
mkfifo tf/g.prom
echo down >"$STANDIN/fault"
t_bg sh -c 'umask 077; exec "$@"' sh "$A" -p tf/g.prom
t_wait 20
rm "$STANDIN/fault"
t_rc 2 "-p FILE a FIFO, when the API is down: ends"
left "FILE a FIFO"
# (Whatever that run did, FILE is a file again for what follows.)
if [ -p tf/g.prom ]; then rm tf/g.prom && echo gpudrv_audit_exit_status 2 >tf/g.prom; fi

# The write itself fails (mv cannot rename): the old file stays, nothing of
# the run's is left, and nothing says OK.
mkdir broken
printf '#!/bin/sh\necho "%s: boom" >&2\nexit 1\n' mv >broken/mv
chmod +x broken/mv
cp tf/g.prom kept
P=$PATH
PATH=$PWD/broken:$P
planted -p tf/g.prom
PATH=$P
t_rc 2 "-p when the rename fails"
t_out "prints nothing on stdout, not OK"
t_err "says what it could not write, and why" \
	"drv-audit.sh: cannot write tf/g.prom (-p): cannot rename a new file to tf/g.prom: mv: boom"
t_cmp "FILE is the old one" kept tf/g.prom
left "a failed rename"
# ... or the copy cannot be written (a full disk).
printf '#!/bin/sh\necho "%s: error writing '"'"'standard output'"'"': No space left on device" >&2\nexit 1\n' dd >broken/dd
chmod +x broken/dd
rm broken/mv
PATH=$PWD/broken:$P
planted -p tf/g.prom
PATH=$P
t_rc 2 "-p when the copy cannot be written"
t_out "prints nothing on stdout, not OK"
t_grep "says so" err "^drv-audit.sh: cannot write tf/g.prom (-p): cannot write a file in tf: dd: error writing 'standard output': No space left on device\$"
t_cmp "FILE is the old one" kept tf/g.prom
left "a failed write"

# SIGTERM while kubectl hangs: the textfile records the failure, and
# nothing else is left.
echo hang >"$STANDIN/fault"
t_bg sh -c 'umask 077; ln -s ../secret "tf/.g.prom.$$" 2>/dev/null; exec "$@"' sh "$A" -p tf/g.prom
t_until 10 test -e "$STANDIN/hung"
t_ok $? "kubectl hangs"
kill -TERM "$t_pid"
t_wait 10
rm "$STANDIN/fault"
t_rc 2 "SIGTERM while kubectl hangs"
t_err "says so" "drv-audit.sh: interrupted by SIGTERM"
t_out "prints nothing on stdout"
t_grep "FILE records exit status 2" tf/g.prom '^gpudrv_audit_exit_status 2$'
left "after SIGTERM"
t_done
