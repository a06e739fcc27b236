#!/usr/bin/env bash
# integration.package: the Debian package of this build: its control data
# and files, the dependencies this machine must satisfy; installed by dpkg
# into a temporary root (nothing is installed on the machine; the scripts
# run with DPKG_ROOT and make the user there); its units checked
# (systemd-analyze verify). Then the installed three-host example layout,
# every node on loopback with mutual TLS and started as outboxd@.service
# starts it, from the installed binary, unit and example config (pointed at
# the test servers), with certificates of tools/make-certs: the installed
# outboxctl shows them all, and an event reaches the installed Python
# worker and completes. Last, dpkg purges the package from the root.
# Removes what it made, also on failure.
#
#   package.sh SOURCE_DIR BUILD_DIR      (needs the OUTBOX_TEST_* servers)
set -euo pipefail
SRC=$1 BUILD=$2
: "${OUTBOX_TEST_DB_HOST:?run through tools/test}" "${OUTBOX_TEST_AMQP_URL:?run through tools/test}"
source "$SRC/tests/deploy/package_lib.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-package.XXXXXX")
ROOT=$TMP/root ETC=$TMP/root/etc/outbox NODE_PIDS=()
# This run's tables, function and queues (the servers are shared).
NAMES=pkg$$_$RANDOM
cleanup() {
  [ ${#NODE_PIDS[@]} = 0 ] || kill -9 "${NODE_PIDS[@]}" 2>/dev/null || true
  pkg_drop_schema "$NAMES" || echo "warning: could not drop the ${NAMES}_* tables" >&2
  [ ! -f "$TMP/queues.json" ] || pkg_delete_queues "$TMP/queues.json" \
    || echo "warning: could not delete the ${NAMES}.* queues" >&2
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
         ./usr/share/doc/outbox/examples/cluster-3hosts.conf \
         ./usr/share/doc/outbox/examples/prometheus/outbox-alerts.yml; do
  grep -qxF "$f" <<<"$CONTENTS" || fail "the package lacks $f"
done
# What an application builds against (cmake/install_libs.cmake; built and
# used by tests/deploy/install.sh): headers, static libraries, the CMake
# package and the pkg-config files, in the multiarch library folder.
LIB=./usr/lib/$(c++ -print-multiarch)
for f in ./usr/include/outbox/core/producer/event_store.hpp ./usr/include/outbox/worker/worker.hpp \
         ./usr/include/outbox/core/testing/fake_event_store.hpp \
         "$LIB/liboutbox_producer.a" "$LIB/liboutbox_worker.a" "$LIB/liboutbox_testing.a" \
         "$LIB/cmake/Outbox/OutboxConfig.cmake" "$LIB/cmake/Outbox/OutboxConfigVersion.cmake" \
         "$LIB/cmake/Outbox/OutboxTargets.cmake" "$LIB/cmake/Outbox/FindCAF.cmake" \
         "$LIB/pkgconfig/outbox-producer.pc" "$LIB/pkgconfig/outbox-worker.pc" \
         "$LIB/pkgconfig/outbox-testing.pc"; do
  grep -qxF "$f" <<<"$CONTENTS" || fail "the package lacks $f"
done

step "dpkg --root: installed into a temporary root, its scripts run there"
HOST_USERS=$(cat /etc/passwd /etc/group | md5sum)
pkg_dpkg "$ROOT" -i "$DEB"
[ "$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status}' outbox)" = "install ok installed" ] \
  || fail "dpkg did not install the package"
dpkg --root="$ROOT" --verify outbox || fail "dpkg --verify: the installed files differ"
if command -v systemd-sysusers >/dev/null; then
  grep -q '^outbox:' "$ROOT/etc/passwd" || fail "postinst made no user outbox in the root"
fi
for b in outboxd outboxctl; do
  if ldd "$ROOT/usr/bin/$b" | grep -q 'not found'; then fail "$b: a library is missing"; fi
done

step "manual pages, --help and --version of the installed binaries"
for page in man1/outboxctl.1.gz man8/outboxd.8.gz; do
  [ -s "$ROOT/usr/share/man/$page" ] || fail "the package lacks /usr/share/man/$page"
  zcat "$ROOT/usr/share/man/$page" | grep -q '^\.TH ' || fail "$page is no manual page"
done
VERSION=$(grep -m1 -o 'project(outbox VERSION [0-9.]*' "$SRC/CMakeLists.txt" | awk '{print $3}')
for b in outboxd outboxctl; do
  "$ROOT/usr/bin/$b" --version | grep -qx "$b $VERSION (schema version [0-9]*)" \
    || fail "$b --version does not say $VERSION"
  "$ROOT/usr/bin/$b" --help | grep -q '^examples:' || fail "$b --help has no examples"
done

UNIT=$ROOT/usr/lib/systemd/system/outboxd@.service
if command -v systemd-analyze >/dev/null && [ -d /lib/systemd/system ]; then
  step "systemd-analyze verify"
  pkg_verify_units "$ROOT"
else
  step "skipped: systemd-analyze verify (not on this machine)"
fi

step "the installed three-host layout on loopback, as its units would run it"
LAYOUT=$ROOT/usr/share/doc/outbox/examples/cluster-3hosts.conf
mapfile -t NODES < <(awk '$1 !~ /^#/ && NF {print $1}' "$LAYOUT")
[ ${#NODES[@]} = 4 ] || fail "the layout has ${#NODES[@]} nodes, not 4"
echo "a test passphrase" >"$TMP/pass"
"$SRC/tools/make-certs" --dir "$ETC/tls" --passphrase-file "$TMP/pass" "${NODES[@]}" operator >/dev/null
pkg_point_config "$ROOT" "$NAMES"
cp "$ETC/outbox.json" "$TMP/queues.json"   # for the cleanup, after the purge
PORT=$(free_port)
pkg_instance_files "$LAYOUT" "$ETC" "10.0.0.1:4250" "127.0.0.1:$PORT" "--tls-key-passphrase-file $TMP/pass"
"$ROOT/usr/bin/outboxctl" migrate --config "$ETC/outbox.json" >/dev/null
for node in "${NODES[@]}"; do
  pkg_exec_start "$ROOT" "$UNIT" "$node" >"$TMP/$node.log" 2>&1 &
  NODE_PIDS+=($!)
done
read -ra OPERATOR_TLS <<<"$(pkg_tls_flags "$ETC/tls" operator)"
STATUS=("$ROOT/usr/bin/outboxctl" status --connect "127.0.0.1:$PORT" "${OPERATOR_TLS[@]}"
        --tls-key-passphrase-file "$TMP/pass" --json)
UP="s['database']['ok'] and sorted(n['name'].split('@')[0] for n in s['nodes'] if n['up']) == sorted('${NODES[*]}'.split())"
wait_for 60 "outboxctl status shows every node up" pkg_status_is "$TMP/status.json" "$UP" "${STATUS[@]}"
/usr/bin/python3 -c 'import json,sys; print("    up:", *[n["name"] for n in json.load(open(sys.argv[1]))["nodes"]])' "$TMP/status.json"

step "an event through the cluster to the installed Python worker and back"
pkg_psql -o /dev/null -c "SELECT ${NAMES}_publish('order.placed', '{\"order\": 1}')"
/usr/bin/python3 "$ROOT/usr/share/outbox/python/outbox_worker.py" --queue "$NAMES.mail.send" \
  --jobs SendConfirmationJob --amqp-url-file "$ETC/amqp.url" --max-jobs 1 >"$TMP/worker.log" 2>&1 &
NODE_PIDS+=($!)
DONE="s['deliveries']['completed'] == 1 and s['unroutedEvents'] == 0"
wait_for 60 "the delivery completes" pkg_status_is "$TMP/status.json" "$DONE" "${STATUS[@]}"
wait_for 30 "the worker exits after its one job" pkg_gone "${NODE_PIDS[-1]}"
rc=0; wait "${NODE_PIDS[-1]}" || rc=$?
unset 'NODE_PIDS[-1]'
[ $rc = 0 ] || { tail -20 "$TMP/worker.log" >&2; fail "the worker exited $rc"; }
if grep -qF -f "$ETC/amqp.url" "$TMP/worker.log"; then fail "the worker's log holds the broker URL"; fi

step "SIGTERM stops each node with 0; the logs hold no secret"
kill -TERM "${NODE_PIDS[@]}"
for i in "${!NODE_PIDS[@]}"; do
  node=${NODES[$i]}
  wait_for 30 "$node exits" pkg_gone "${NODE_PIDS[$i]}"
  rc=0; wait "${NODE_PIDS[$i]}" || rc=$?
  [ $rc = 0 ] || { tail -20 "$TMP/$node.log" >&2; fail "$node exited $rc"; }
  grep -q "event=node_started.*tls=mutual identity=$node" "$TMP/$node.log" \
    || { tail -20 "$TMP/$node.log" >&2; fail "$node logged no node_started with its TLS identity"; }
  for f in "$ETC/database.url" "$ETC/amqp.url" "$TMP/pass"; do
    if grep -qF -f "$f" "$TMP/$node.log"; then fail "the log of $node holds the content of $f"; fi
  done
done
NODE_PIDS=()

step "dpkg --root --purge removes the package from the root; the machine's users unchanged"
pkg_dpkg "$ROOT" --purge outbox
for f in usr/bin/outboxd usr/bin/outboxctl etc/outbox/outbox.json usr/lib/systemd/system/outboxd@.service; do
  [ ! -e "$ROOT/$f" ] || fail "the purge left /$f"
done
[ "$(cat /etc/passwd /etc/group | md5sum)" = "$HOST_USERS" ] || fail "the machine's users or groups changed"
echo "PASS"
