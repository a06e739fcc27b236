#!/usr/bin/env bash
# integration.install: the libraries an application links, as `cmake
# --install` puts them (into a temporary root with DESTDIR, under the
# package's /usr prefix: the install also writes /etc/outbox, which must not
# touch this machine). Checks the installed files, then builds a small
# application outside the tree (tests/deploy/consumer_app) against them
# only, once with find_package(Outbox CONFIG) and once through pkg-config.
# On the test servers the application migrates its own uniquely named
# tables, publishes one event in a transaction through the producer API,
# the installed outboxd routes it to a queue, and the application's worker
# runs that job and exits; the delivery must complete. The application also
# uses the fake event store once. Removes what it made, also on failure.
#
#   install.sh SOURCE_DIR BUILD_DIR      (needs the OUTBOX_TEST_* servers)
set -euo pipefail
SRC=$1 BUILD=$2
: "${OUTBOX_TEST_DB_HOST:?run through tools/test}" "${OUTBOX_TEST_AMQP_URL:?run through tools/test}"
source "$SRC/tests/deploy/package_lib.sh"
# The config's URL files name the servers; nothing from the caller's
# environment overrides them.
unset OUTBOX_DATABASE_URL OUTBOX_AMQP_URL

TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-install.XXXXXX")
PREFIX=$TMP/root/usr APP=$TMP/app/consumer_app APP_PC=$TMP/app-pc CONFIG=$TMP/outbox.json
LIBDIR=$PREFIX/lib/$(c++ -print-multiarch)
# This run's tables, function and queue (the servers are shared).
NAMES=inst$$_$RANDOM
QUEUE=$NAMES.mail.send
NODE_PID=
cleanup() {
  [ -z "$NODE_PID" ] || kill -9 "$NODE_PID" 2>/dev/null || true
  pkg_drop_schema "$NAMES" || echo "warning: could not drop the ${NAMES}_* tables" >&2
  [ ! -f "$CONFIG" ] || pkg_delete_queues "$CONFIG" \
    || echo "warning: could not delete the ${NAMES}.* queues" >&2
  rm -rf "$TMP"
}
trap cleanup EXIT

# run LOG WHAT COMMAND...: COMMAND's output into LOG; its tail and a
# failure naming WHAT if it fails.
run() {
  local log=$1 what=$2
  shift 2
  "$@" >"$log" 2>&1 || { tail -30 "$log" >&2; fail "$what"; }
}

step "cmake --install into a temporary root"
DESTDIR=$TMP/root run "$TMP/install.log" "cmake --install failed" \
  cmake --install "$BUILD" --prefix /usr
for f in include/outbox/core/producer/event_store.hpp include/outbox/core/producer/producer.hpp \
         include/outbox/worker/worker.hpp include/outbox/core/testing/fake_event_store.hpp; do
  [ -f "$PREFIX/$f" ] || fail "the install lacks /usr/$f"
done
for f in liboutbox_producer.a liboutbox_pg.a liboutbox_worker.a liboutbox_testing.a \
         cmake/Outbox/OutboxConfig.cmake cmake/Outbox/OutboxConfigVersion.cmake \
         cmake/Outbox/OutboxTargets.cmake cmake/Outbox/FindCAF.cmake \
         pkgconfig/outbox-producer.pc pkgconfig/outbox-worker.pc pkgconfig/outbox-testing.pc; do
  [ -f "$LIBDIR/$f" ] || fail "the install lacks ${LIBDIR#"$TMP/root"}/$f"
done
# Every include between the installed headers resolves among them.
while read -r inc; do
  [ -f "$PREFIX/include/outbox/$inc" ] || fail "an installed header includes \"$inc\", not installed"
done < <(grep -rhoE '^#include "[^"]+"' "$PREFIX/include/outbox" | cut -d'"' -f2 | sort -u)
# The migrations are compiled into outbox_pg (cmake/embed_schema.cmake).
# (grep reads all of nm's output: -q would end the pipe early, and
# pipefail would take nm's SIGPIPE for a failure.)
nm -C "$LIBDIR/liboutbox_pg.a" | grep ' T outbox::migrations()' >/dev/null \
  || fail "the installed liboutbox_pg.a lacks the embedded schema"

step "the application built with find_package(Outbox CONFIG)"
run "$TMP/cmake.log" "the application does not configure" \
  cmake -S "$SRC/tests/deploy/consumer_app" -B "$TMP/app" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_PREFIX_PATH="$PREFIX"
grep -qxF "Outbox_DIR:PATH=$LIBDIR/cmake/Outbox" "$TMP/app/CMakeCache.txt" \
  || fail "find_package(Outbox) took another Outbox than the temporary install"
run "$TMP/build.log" "the application does not build" cmake --build "$TMP/app" -j1

step "the application built through pkg-config alone"
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
[ "$(realpath "$(pkg-config --variable=libdir outbox-producer)")" = "$LIBDIR" ] \
  || fail "pkg-config found another outbox-producer than the temporary install"
read -ra PC_FLAGS <<<"$(pkg-config --cflags --libs outbox-worker outbox-testing libpq)"
run "$TMP/pc.log" "the application does not build through pkg-config" \
  "${CXX:-c++}" -std=c++17 -o "$APP_PC" "$SRC/tests/deploy/consumer_app/main.cpp" "${PC_FLAGS[@]}"

step "the fake event store"
run "$TMP/fake.log" "the fake event store" "$APP_PC" fake

step "an event from the application's transaction to its worker"
(umask 077
 pkg_database_url >"$TMP/database.url"
 echo "$OUTBOX_TEST_AMQP_URL" >"$TMP/amqp.url")
cat >"$CONFIG" <<EOF
{
  "databaseUrlFile": "$TMP/database.url",
  "amqpUrlFile": "$TMP/amqp.url",
  "eventsTableName": "${NAMES}_events",
  "deliveriesTableName": "${NAMES}_deliveries",
  "migrationsTableName": "${NAMES}_migrations",
  "publishFunctionName": "${NAMES}_publish",
  "routes": {
    "order.placed": [{"job": "SendConfirmationJob", "queue": "$QUEUE", "retryDelaysSeconds": []}]
  }
}
EOF
run "$TMP/migrate.log" "the application's migration" "$APP" migrate "$CONFIG"
# The installed relay; its status node on a port of its own.
"$PREFIX/bin/outboxd" --config "$CONFIG" --listen "127.0.0.1:$(free_port)" >"$TMP/outboxd.log" 2>&1 &
NODE_PID=$!
run "$TMP/publish.log" "the application's publish" "$APP_PC" publish "$CONFIG"
ID=$(sed -n 's/^published event \([0-9]*\)$/\1/p' "$TMP/publish.log")
[ -n "$ID" ] || fail "publish printed no event id: $(cat "$TMP/publish.log")"
run "$TMP/work.log" "the application's worker" timeout 60 "$APP" work "$CONFIG" "$QUEUE"
grep -qx "job ran: order o-1 event $ID" "$TMP/work.log" \
  || { cat "$TMP/work.log" >&2; fail "the worker did not run the job of event $ID"; }
completed() {
  # A completed delivery moves to the completion log (schema/016).
  [ "$(pkg_psql -t -A -c "SELECT count(*) FROM ${NAMES}_deliveries_completed
                           WHERE event_id = $ID")" = 1 ]
}
wait_for 60 "the delivery of event $ID completes" completed

step "SIGTERM stops outboxd with 0; no log holds a URL"
kill -TERM "$NODE_PID"
wait_for 30 "outboxd exits" pkg_gone "$NODE_PID"
rc=0; wait "$NODE_PID" || rc=$?
NODE_PID=
[ $rc = 0 ] || { tail -20 "$TMP/outboxd.log" >&2; fail "outboxd exited $rc"; }
for log in "$TMP"/*.log; do
  for f in "$TMP/database.url" "$TMP/amqp.url"; do
    if grep -qF -f "$f" "$log"; then fail "$(basename "$log") holds the content of $(basename "$f")"; fi
  done
done
echo "PASS"
