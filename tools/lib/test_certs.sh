# Test certificates made with openssl, for the TLS tests only: a CA, and
# certificates it signs for 127.0.0.1/localhost (servers and nodes) or a
# client name. Source this file, then call:
#   test_ca DIR                      -> DIR/ca.pem, DIR/ca.key
#   test_cert DIR NAME [CN]          -> DIR/NAME.pem, DIR/NAME.key, signed by DIR's CA,
#                                       subjectAltName IP:127.0.0.1, DNS:localhost
# Keys are unencrypted EC P-256; everything is valid for 2 days.

test_ca() {
  local dir=$1
  mkdir -p "$dir"
  [ -f "$dir/ca.pem" ] && return 0
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 \
    -subj "/CN=outbox test CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

test_cert() {
  local dir=$1 name=$2 cn=${3:-$2}
  [ -f "$dir/$name.pem" ] && return 0
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "/CN=$cn" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    "extendedKeyUsage=serverAuth,clientAuth" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/$name.pem" -days 2 -extfile "$dir/$name.ext" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
  chmod 644 "$dir/$name.pem" "$dir/$name.key"
}
