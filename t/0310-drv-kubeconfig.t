#!/bin/sh
# drv-kubeconfig.sh: the server, CA, token and expiry it copies into the
# kubeconfig it makes are judged as whole values: one that carries a second
# line (YAML of its own: insecure-skip-tls-verify, proxy-url) or anything
# else that means something in YAML is refused, exit 2, nothing written, no
# token minted.  (t/0960 runs it against the sandbox.)
. "$(dirname "$0")/lib.sh"

# The stand-in: the admin's context and the API server, from the files in
# ./kc (printed as kubectl -o jsonpath prints: no final newline of its own).
mkdir kc dest
t_standin
t_serve config/view <<STUB
#!/bin/sh
case \$* in
*"jsonpath={.clusters[0].name}") cat "$PWD/kc/name" ;;
*"jsonpath={.clusters[0].cluster.server}") cat "$PWD/kc/server" ;;
*"jsonpath={.clusters[0].cluster.certificate-authority-data}") cat "$PWD/kc/ca" ;;
*"jsonpath={.clusters[0].cluster.insecure-skip-tls-verify}") cat "$PWD/kc/insecure" ;;
*) exit 1 ;;
esac
STUB
echo serviceaccount/auditor | t_serve get/serviceaccount/auditor
mkdir -p "$STANDIN/create/token"
ln -s "$PWD/kc/token" "$STANDIN/create/token/auditor"
# whoami: the token of the kubeconfig --kubeconfig names must be the good one.
t_serve auth/whoami <<STUB
#!/bin/sh
for a; do case \$a in --kubeconfig=*) k=\${a#--kubeconfig=} ;; esac; done
grep -q "^    token: \"\$(cat "$PWD/kc/good")\"\\\$" "\$k" || { echo 'error: You must be logged in to the server (Unauthorized)' >&2; exit 1; }
printf '%s' system:serviceaccount:gpudrv:auditor
STUB
chmod +x "$STANDIN/config/view" "$STANDIN/auth/whoami"
K=$BIN/drv-kubeconfig.sh
TOKEN=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhdWRpdG9yIn0.c2ln
# context NAME SERVER CA INSECURE EXPIRY TOKEN: what ./kubectl answers.
context() {
	printf '%s' "$1" >kc/name
	printf '%s' "$2" >kc/server
	printf '%s' "$3" >kc/ca
	printf '%s' "$4" >kc/insecure
	printf '%s %s' "$5" "$6" >kc/token
	printf '%s' "$TOKEN" >kc/good
	: >kubectl.log
}
good() { context lab https://127.0.0.1:6443 QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN"; }
# nothing_written DESC: no file in dest/, the kubeconfig nor a temporary one.
nothing_written() {
	t_run ls -A dest
	t_out "$1: nothing written, no temporary file left"
}
nl='
'

good
t_run dash "$K" auditor dest/cron.kubeconfig
t_rc 0 "a clean context, under dash"
t_out "says the file, the account, the server and the expiry" \
	"dest/cron.kubeconfig: system:serviceaccount:gpudrv:auditor on https://127.0.0.1:6443; token expires 2026-12-31T00:00:00Z; make the file again before then"
t_err "nothing on stderr"
cat >expected.kc <<EOF
apiVersion: v1
kind: Config
clusters:
- name: "lab"
  cluster:
    server: "https://127.0.0.1:6443"
    certificate-authority-data: "QUJDRA=="
users:
- name: "system:serviceaccount:gpudrv:auditor"
  user:
    token: "$TOKEN"
contexts:
- name: "auditor@lab"
  context:
    cluster: "lab"
    user: "system:serviceaccount:gpudrv:auditor"
    namespace: "gpudrv"
current-context: "auditor@lab"
EOF
t_cmp "the kubeconfig, exactly" expected.kc dest/cron.kubeconfig
t_run ls -l dest/cron.kubeconfig
t_grep "mode 0600" out '^-rw------- '
t_run ls -A dest
t_out "no temporary file left beside it" cron.kubeconfig
rm dest/cron.kubeconfig

# A server of four lines, the last a fine URL: written between quotes, the
# others would close the quote and be YAML of their own (kubectl reads that
# file as insecure-skip-tls-verify: true, proxy-url: http://203.0.113.9:3128
# https://127.0.0.1:6443).
context lab "https://127.0.0.1:6443\"${nl}    insecure-skip-tls-verify: true${nl}    proxy-url: \"http://203.0.113.9:3128${nl}https://127.0.0.1:6443" QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "a server value of four lines"
t_out "prints nothing on stdout"
t_err "refuses it, shown on one line" \
	"drv-kubeconfig.sh: the current context's server is not an https URL of one line: 'https://127.0.0.1:6443??????insecure-skip-tls-verify:?true?????proxy-url:??http:'; nothing was written"
nothing_written "a server of four lines"
t_run grep -c -e 'create token' -e 'get serviceaccount' kubectl.log
t_out "no token was asked for" 0
context lab "https://127.0.0.1:6443$nl" QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "a server value that ends in a newline"
nothing_written "a server ending in a newline"

context lab https://127.0.0.1:6443 "QUJDRA==${nl}    insecure-skip-tls-verify: true" '' 2026-12-31T00:00:00Z "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "certificate-authority-data of two lines, the first base64"
t_err "is refused" "drv-kubeconfig.sh: the current context's certificate-authority-data is not base64 of one line; nothing was written"
nothing_written "a CA of two lines"

context lab https://127.0.0.1:6443 QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN${nl}    proxy-url: http://203.0.113.9:3128"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "a token of two lines, the first a token"
t_err "is refused" "drv-kubeconfig.sh: the API server returned no usable token for gpudrv/auditor; nothing was written"
nothing_written "a token of two lines"

context lab https://127.0.0.1:6443 QUJDRA== '' "2026-12-31T00:00:00Z${nl}forged" "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "an expiry of two lines"
t_out "prints no line of it on stdout"
t_err "is refused, shown on one line" "drv-kubeconfig.sh: the API server returned no usable expiry for the token of gpudrv/auditor: '2026-12-31T00:00:00Z?forged'; nothing was written"
nothing_written "an expiry of two lines"

context "lab${nl}- name: evil" https://127.0.0.1:6443 QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 0 "a cluster name of two lines"
t_grep "is only a name: the file says cluster instead" dest/cron.kubeconfig '^- name: "cluster"$'
t_run grep -c evil dest/cron.kubeconfig
t_out "and has nothing of the second line" 0
rm dest/cron.kubeconfig

for v in true "false${nl}true" yes; do
	context lab https://127.0.0.1:6443 QUJDRA== "$v" 2026-12-31T00:00:00Z "$TOKEN"
	shown=$(printf '%s' "$v" | tr '\n' '?')
	t_run "$K" auditor dest/cron.kubeconfig
	t_rc 2 "insecure-skip-tls-verify '$shown'"
	t_err "refuses to send a token so" \
		"drv-kubeconfig.sh: the current context does not verify the server's certificate (insecure-skip-tls-verify); refusing to write a kubeconfig that sends a token so"
	nothing_written "insecure-skip-tls-verify '$shown'"
done

# A file of that name already there stays as it was when the run refuses.
echo kept >dest/cron.kubeconfig
context lab "https://127.0.0.1:6443${nl}x" QUJDRA== '' 2026-12-31T00:00:00Z "$TOKEN"
t_run "$K" auditor dest/cron.kubeconfig
t_rc 2 "refused over an existing file"
t_run cat dest/cron.kubeconfig
t_out "which is unchanged" kept
t_run ls -A dest
t_out "and alone" cron.kubeconfig

# A name planted beside the file is never written through: the new file
# replaces the link itself, and the link's target is untouched.
rm dest/cron.kubeconfig
echo precious >victim
ln -s ../victim dest/cron.kubeconfig
good
t_run "$K" auditor dest/cron.kubeconfig
t_rc 0 "the file named is a symlink"
t_run cat victim
t_out "what it pointed to is unchanged" precious
t_cmp "the file is the kubeconfig" expected.kc dest/cron.kubeconfig
if [ -h dest/cron.kubeconfig ]; then t_ok 1 "and no longer a link"; else t_ok 0 "and no longer a link"; fi
t_done
