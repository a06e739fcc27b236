#!/usr/bin/env bash
# unit.make_certs: tools/make-certs makes a CA and certificates it signs
# (CN and DNS name the node's name, both TLS usages), keys only the owner
# reads, encrypted with --passphrase-file; a second run keeps what exists
# and signs new names with the same CA; bad arguments exit 2.
#
#   make_certs.sh SOURCE_DIR
set -euo pipefail
MAKE=$1/tools/make-certs
TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-make-certs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
D=$TMP/certs

"$MAKE" --dir "$D" --days 3 status work-2 >/dev/null
for name in status work-2; do
  openssl verify -CAfile "$D/ca.pem" -purpose sslserver "$D/$name.pem" >/dev/null || fail "$name: not signed for servers"
  openssl verify -CAfile "$D/ca.pem" -purpose sslclient "$D/$name.pem" >/dev/null || fail "$name: not signed for clients"
  [[ "$(openssl x509 -in "$D/$name.pem" -noout -subject)" == *"CN = $name" ]] || fail "$name: CN"
  [[ "$(openssl x509 -in "$D/$name.pem" -noout -ext subjectAltName)" == *"DNS:$name"* ]] || fail "$name: DNS name"
  [ "$(stat -c %a "$D/$name.key")" = 600 ] || fail "$name.key is not 0600"
  openssl pkey -in "$D/$name.key" -passin pass: -noout 2>/dev/null || fail "$name.key is encrypted"
done
[ "$(stat -c %a "$D/ca.key")" = 600 ] || fail "ca.key is not 0600"
openssl x509 -in "$D/status.pem" -noout -checkend $((2 * 86400)) >/dev/null || fail "--days 3: ends sooner"
if openssl x509 -in "$D/status.pem" -noout -checkend $((4 * 86400)) >/dev/null; then fail "--days 3: ends later"; fi

# Again: the CA and status kept, a new name signed by the same CA, its key encrypted.
sum=$(cat "$D/ca.pem" "$D/status.pem" "$D/status.key" | md5sum)
echo "a passphrase" >"$TMP/pass"
out=$("$MAKE" --dir "$D" --passphrase-file "$TMP/pass" status operator)
[[ "$out" == *"status.pem exists: kept"* ]] || fail "status not said to be kept: $out"
[ "$(cat "$D/ca.pem" "$D/status.pem" "$D/status.key" | md5sum)" = "$sum" ] || fail "the second run changed the CA or status"
openssl verify -CAfile "$D/ca.pem" "$D/operator.pem" >/dev/null || fail "operator: not signed by the same CA"
if openssl pkey -in "$D/operator.key" -passin pass: -noout 2>/dev/null; then fail "operator.key is not encrypted"; fi
openssl pkey -in "$D/operator.key" -passin "file:$TMP/pass" -noout || fail "operator.key: not with the passphrase"

for args in "" "--days 0 x" "--days" "--bogus x" "ca" "'bad name'" "../x" "--passphrase-file $TMP/none x"; do
  rc=0; eval "\"$MAKE\" --dir \"$TMP/bad\" $args" >/dev/null 2>&1 || rc=$?
  [ $rc = 2 ] || fail "make-certs $args: exit $rc, not 2"
done
[ ! -e "$TMP/bad" ] || fail "a refused call made files"
echo PASS
