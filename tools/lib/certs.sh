# Certificates made with the openssl CLI, one way for tools/make-certs (a
# cluster's own CA and node certificates) and tools/lib/test_certs.sh (the
# tests'). Source it, then call:
#   certs_ca DIR DAYS CN              -> DIR/ca.pem, DIR/ca.key (an existing CA is kept,
#                                        so that more names can be signed later)
#   certs_cert DIR NAME CN DAYS SAN   -> DIR/NAME.pem, DIR/NAME.key, signed by DIR's CA,
#                                        subjectAltName SAN (kept when NAME.pem exists)
# Keys are unencrypted EC P-256 of mode 0600 (callers loosen them if they
# must), certificates 0644. openssl's chatter is shown only when it fails.

# Runs a command quietly; on failure prints what it said and fails.
_certs_quiet() {
  local out
  out=$("$@" 2>&1) || { printf '%s\n' "$out" >&2; return 1; }
}

certs_ca() {
  local dir=$1 days=$2 cn=$3
  mkdir -p "$dir"
  [ -f "$dir/ca.pem" ] && return 0
  (umask 077 && _certs_quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" -days "$days" \
    -subj "/CN=$cn" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign") || return 1
  chmod 644 "$dir/ca.pem"
}

certs_cert() {
  local dir=$1 name=$2 cn=$3 days=$4 san=$5
  [ -f "$dir/$name.pem" ] && return 0
  (umask 077 && _certs_quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "/CN=$cn") || return 1
  # Both usages: a node is the server of its status port and the client of
  # the status node's.
  printf '%s\n' "subjectAltName=$san" \
    "extendedKeyUsage=serverAuth,clientAuth" >"$dir/$name.ext"
  _certs_quiet openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/$name.pem" -days "$days" -extfile "$dir/$name.ext"
  local rc=$?
  rm -f "$dir/$name.csr" "$dir/$name.ext"
  [ $rc = 0 ] && chmod 644 "$dir/$name.pem"
}
