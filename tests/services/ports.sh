#!/usr/bin/env bash
# integration.service_ports: the test servers' ports. free_port never hands
# out a port of the kernel's range for outgoing connections (a client's
# connection could take it before the server binds); a PostgreSQL whose
# fresh port was bound by someone else a moment before starts on another
# one, while a restart keeps its port and fails rather than move.
#
#   ports.sh SOURCE_DIR
set -euo pipefail
source "$1/tools/lib/services.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/outbox-service-ports.XXXXXX")
HOLDER=
cleanup() {
  [ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null || true
  postgres_stop "$TMP"
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
chmod 755 "$TMP"

read -r low high </proc/sys/net/ipv4/ip_local_port_range
for _ in $(seq 1 200); do
  port=$(free_port)
  { [ "$port" -lt "$low" ] || [ "$port" -gt "$high" ]; } || fail "free_port gave $port, inside $low-$high"
done

taken=$(free_port)
# exec, so that HOLD_PID is the listener itself and the cleanup stops it
# (it holds the test's stderr open).
coproc HOLD { exec /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("ready", flush=True); time.sleep(600)' "$taken"; }
HOLDER=$HOLD_PID
read -r -t 10 ready <&"${HOLD[0]}" && [ "$ready" = ready ] || fail "could not hold port $taken"

# The first pick is the held port, as if another test had bound it just
# after free_port looked.
eval "any_$(declare -f free_port)"
# (It runs in a command substitution: the count lives in a file.)
free_port() {
  echo x >>"$TMP/picks"
  if [ "$(wc -l <"$TMP/picks")" = 1 ]; then echo "$taken"; else any_free_port; fi
}
postgres_start "$TMP" >/dev/null 2>"$TMP/start.err" || { cat "$TMP/start.err" >&2; fail "postgres did not start on another port"; }
[ "$(cat "$TMP/postgres/port")" != "$taken" ] || fail "postgres claims the held port"
[ "$OUTBOX_TEST_DB_PORT" = "$(cat "$TMP/postgres/port")" ] || fail "OUTBOX_TEST_DB_PORT is not the port it runs on"
"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$OUTBOX_TEST_DB_PORT" || fail "postgres does not answer on its port"

# A restart keeps its port: with that port held, it fails and says why.
postgres_stop "$TMP"
echo "$taken" >"$TMP/postgres/port"
logged=$(stat -c %s "$TMP/postgres/server.log")
if postgres_start "$TMP" >/dev/null 2>"$TMP/restart.err"; then fail "a restart moved to another port"; fi
[ "$(cat "$TMP/postgres/port")" = "$taken" ] || fail "a failed restart forgot its port"
# Only what this start logged: the first start's refusal is in the log too.
[[ "$(tail -c +$((logged + 1)) "$TMP/postgres/server.log")" == *"Address already in use"* ]] \
  || fail "the restart did not fail on its held port"
grep -q "Address already in use" "$TMP/restart.err" || fail "the failed restart does not say why"
echo "ok"
