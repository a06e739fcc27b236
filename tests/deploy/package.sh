#!/usr/bin/env bash
# integration.package: the Debian package of this build, unpacked into a
# temporary root (nothing is installed on the machine): its control data and
# files, the dependencies this machine must satisfy, the units
# (systemd-analyze verify) and the system user (systemd-sysusers --dry-run).
# Then a TLS status node started as outboxd@.service starts it, from the
# installed binary, unit and example config (pointed at the test servers),
# with certificates of tools/make-certs, answered by the installed outboxctl.
# Removes what it made, also on failure.
#
#   package.sh SOURCE_DIR BUILD_DIR      (needs the OUTBOX_TEST_* servers)
set -euo pipefail
SRC=$1 BUILD=$2
: "${OUTBOX_TEST_DB_HOST:?run through tools/test}" "${OUTBOX_TEST_AMQP_URL:?run through tools/test}"
source "$SRC/tests/deploy/package_lib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-package.XXXXXX")
ROOT=$TMP/root ETC=$TMP/root/etc/outbox NODE_PID=
NAMES=pkg$$_$RANDOM
cleanup() {
  if [ -n "$NODE_PID" ]; then kill -9 "$NODE_PID" 2>/dev/null || true; fi
  pkg_drop_schema "$NAMES" || echo "warning: could not drop the ${NAMES}_* tables" >&2
  rm -rf "$TMP"
}
trap cleanup EXIT

step "cpack"
cpack --config "$BUILD/CPackConfig.cmake" -B "$TMP/pkg" >"$TMP/cpack.log" 2>&1 \
  || { tail -30 "$TMP/cpack.log" >&2; fail "cpack failed"; }
DEB=$(echo "$TMP"/pkg/outbox_*_*.deb)
[ -f "$DEB" ] || fail "no package in $TMP/pkg"

step "control data and files"
[ "$(dpkg-deb --field "$DEB" Package)" = outbox ] || fail "package name"
DEPENDS=$(dpkg-deb --field "$DEB" Depends)
for lib in libcaf-core libcaf-io libcaf-openssl libpq5 librabbitmq4 libspdlog; do
  [[ "$DEPENDS" == *"$lib"* ]] || fail "Depends lacks $lib: $DEPENDS"
done
pkg_check_installed "$DEPENDS"
dpkg-deb -e "$DEB" "$TMP/control"
grep -qx /etc/outbox/outbox.json "$TMP/control/conffiles" \
  || fail "/etc/outbox/outbox.json is not a conffile"
for s in postinst prerm postrm; do sh -n "$TMP/control/$s" || fail "$s does not parse"; done
CONTENTS=$(dpkg-deb --contents "$DEB" | awk '{print $NF}')
for f in ./usr/bin/outboxd ./usr/bin/outboxctl ./etc/outbox/outbox.json \
         ./usr/lib/systemd/system/outboxd@.service ./usr/lib/systemd/system/outbox.target \
         ./usr/lib/sysusers.d/outbox.conf ./usr/share/outbox/python/outbox_worker.py \
         ./usr/share/doc/outbox/examples/cluster-3hosts.conf; do
  grep -qxF "$f" <<<"$CONTENTS" || fail "the package lacks $f"
done
dpkg-deb -x "$DEB" "$ROOT"
for b in outboxd outboxctl; do
  if ldd "$ROOT/usr/bin/$b" | grep -q 'not found'; then fail "$b: a library is missing"; fi
done

UNIT=$ROOT/usr/lib/systemd/system/outboxd@.service
if command -v systemd-analyze >/dev/null; then
  step "systemd-analyze verify, systemd-sysusers --dry-run"
  pkg_verify_units "$ROOT"
  USERS=$(systemd-sysusers --root="$ROOT" --dry-run 2>&1) || fail "systemd-sysusers: $USERS"
  [[ "$USERS" == *"Creating user 'outbox'"* ]] || fail "sysusers.d/outbox.conf makes no user outbox: $USERS"
fi

step "a TLS status node from the installed files"
echo "a test passphrase" >"$TMP/pass"
"$SRC/tools/make-certs" --dir "$ETC/tls" --passphrase-file "$TMP/pass" status operator >/dev/null
pkg_point_config "$ROOT" "$NAMES"
PORT=$(pkg_free_port)
printf 'OUTBOX_FLAGS="--roles status --listen 127.0.0.1:%s %s --tls-key-passphrase-file %s"\n' \
  "$PORT" "$(pkg_tls_flags "$ETC/tls" status)" "$TMP/pass" >"$ETC/status.conf"
"$ROOT/usr/bin/outboxctl" migrate --config "$ETC/outbox.json" >/dev/null
pkg_exec_start "$ROOT" "$UNIT" status >"$TMP/status.log" 2>&1 &
NODE_PID=$!
read -ra OPERATOR_TLS <<<"$(pkg_tls_flags "$ETC/tls" operator)"
STATUS=(status --connect "127.0.0.1:$PORT" "${OPERATOR_TLS[@]}" --tls-key-passphrase-file "$TMP/pass" --json)
wait_for 60 "outboxctl status answers" "$ROOT/usr/bin/outboxctl" "${STATUS[@]}"
"$ROOT/usr/bin/outboxctl" "${STATUS[@]}" >"$TMP/status.json"
/usr/bin/python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
assert s["database"]["ok"], "the status node has no database"
assert [n["name"].split("@")[0] for n in s["nodes"]] == ["status"], s["nodes"]' "$TMP/status.json" \
  || fail "unexpected status: $(cat "$TMP/status.json")"

step "SIGTERM stops the node with 0; its log holds no URL"
kill -TERM "$NODE_PID"
wait_for 30 "the node exits" pkg_gone "$NODE_PID"
rc=0; wait "$NODE_PID" || rc=$?
NODE_PID=
[ $rc = 0 ] || { cat "$TMP/status.log" >&2; fail "the node exited $rc"; }
grep -q 'event=node_started.*tls=mutual identity=status' "$TMP/status.log" \
  || { cat "$TMP/status.log" >&2; fail "no node_started with TLS identity in the log"; }
for f in "$ETC/database.url" "$ETC/amqp.url" "$TMP/pass"; do
  if grep -qF -f "$f" "$TMP/status.log"; then fail "the log holds the content of $f"; fi
done
echo "PASS"
