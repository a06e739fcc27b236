# Test certificates, for the TLS tests only: a CA, and certificates it signs
# for 127.0.0.1/localhost (servers and nodes) or a client name. Source this
# file, then call:
#   test_ca DIR                      -> DIR/ca.pem, DIR/ca.key
#   test_cert DIR NAME [CN]          -> DIR/NAME.pem, DIR/NAME.key, signed by DIR's CA,
#                                       subjectAltName IP:127.0.0.1, DNS:localhost
# Keys are unencrypted EC P-256 and readable by all (the test servers run as
# other users); everything is valid for 2 days.

source "$(dirname "${BASH_SOURCE[0]}")/certs.sh"

test_ca() {
  certs_ca "$1" 2 "outbox test CA"
}

test_cert() {
  local dir=$1 name=$2
  certs_cert "$dir" "$name" "${3:-$name}" 2 "IP:127.0.0.1,DNS:localhost" || return 1
  chmod 644 "$dir/$name.pem" "$dir/$name.key"
}
