# Throwaway PostgreSQL 15 and RabbitMQ for tests, the demo and the benchmark.
# Source this file, then call services_start DIR / services_stop DIR.
# Each server runs on loopback on a free port with its data under DIR, so it
# never clashes with another server on the machine; services_stop stops only
# what services_start started (it keeps the pids in DIR).

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
# The Debian wrappers in /usr/sbin force /var/lib/rabbitmq and its logs: call
# the real scripts so that the node lives entirely under our folder.
RMQ_BIN=${RMQ_BIN:-/usr/lib/rabbitmq/bin}
source "$(dirname "${BASH_SOURCE[0]}")/test_certs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/free_port.sh"

# Runs a command as the given service user when we are root (initdb and
# rabbitmq refuse or misbehave as root), as ourselves otherwise.
as_service_user() {
  local user=$1; shift
  if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

service_owner() {
  local user=$1 dir=$2
  if [ "$(id -u)" = 0 ]; then chown -R "$user:" "$dir"; fi
}

# The certificates of the TLS listeners, in DIR/tls (readable by the tests):
# ca.pem (the CA the servers' certificates chain to), server.pem/.key (for
# 127.0.0.1 and localhost), client.pem/.key (a client certificate) and
# other/ca.pem, a CA that signed nothing here (an "untrusted CA").
tls_files() {
  local tls=$1/tls
  { test_ca "$tls" && test_cert "$tls" server localhost && test_cert "$tls" client client \
      && test_ca "$tls/other"; } || { echo "cannot make the test certificates" >&2; return 1; }
  # libpq refuses a client key that others may read.
  chmod 600 "$tls/client.key"
  chmod 755 "$tls" "$tls/other"
}

# Copies the server certificate and key for one server's user: PostgreSQL
# refuses a key not owned by it or readable by others.
tls_server_copy() {
  local user=$1 tls=$2 dest=$3
  mkdir -p "$dest"
  cp "$tls/ca.pem" "$tls/server.pem" "$tls/server.key" "$dest/"
  chmod 600 "$dest/server.key"
  if [ "$(id -u)" = 0 ]; then chown -R "$user:" "$dest"; fi
}

postgres_start() {
  local dir=$1/postgres port fixed=0 tries logged
  # A restart keeps the port, so that clients find the server again.
  if [ -f "$dir/port" ]; then port=$(cat "$dir/port") fixed=1; else port=$(free_port) || return 1; fi
  mkdir -p "$dir"
  tls_files "$1" || return 1
  tls_server_copy postgres "$1/tls" "$dir/tls"
  service_owner postgres "$dir"
  if [ ! -d "$dir/data" ]; then
    as_service_user postgres "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
  fi
  # A first start whose fresh port another test bound a moment before tries
  # another port; a restart must keep its port.
  for tries in 1 2 3; do
    logged=$(stat -c %s "$dir/server.log" 2>/dev/null || echo 0)
    as_service_user postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=${OUTBOX_PG_MAX_CONNECTIONS:-200} -c lc_messages=C \
          -c ssl=on -c ssl_cert_file=$dir/tls/server.pem -c ssl_key_file=$dir/tls/server.key" \
      start >/dev/null && break
    if [ "$fixed" = 1 ] || [ "$tries" = 3 ] \
        || [[ "$(tail -c +$((logged + 1)) "$dir/server.log")" != *"Address already in use"* ]]; then
      tail -20 "$dir/server.log" >&2
      return 1
    fi
    port=$(free_port) || return 1
  done
  echo "$port" >"$dir/port"
  export OUTBOX_TEST_DB_HOST=127.0.0.1 OUTBOX_TEST_DB_PORT=$port \
         OUTBOX_TEST_DB_DATABASE=postgres OUTBOX_TEST_DB_USERNAME=postgres \
         OUTBOX_TEST_DB_PASSWORD= OUTBOX_TEST_TLS_DIR="$1/tls"
}

postgres_stop() {
  local dir=$1/postgres
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_service_user postgres "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

# A crash, as far as the data is concerned: no shutdown checkpoint, so the
# next start runs crash recovery (and empties every unlogged table).
postgres_crash() {
  local dir=$1/postgres
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_service_user postgres "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
}

# The node is named after its AMQP port, so that two runs never share one.
rabbitmq_node() {
  echo "outbox$(cat "$1/rabbitmq/port")@localhost"
}

rabbitmq_env() {
  local dir=$1/rabbitmq
  export RABBITMQ_NODENAME="$(rabbitmq_node "$1")" \
         RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
         RABBITMQ_NODE_PORT="$(cat "$dir/port")" \
         RABBITMQ_DIST_PORT="$(cat "$dir/dist_port")" \
         RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log" \
         RABBITMQ_PID_FILE="$dir/pid" \
         RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
         RABBITMQ_CONFIG_FILE="$dir/rabbitmq" \
         RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
}

rabbitmq_start() {
  local dir=$1/rabbitmq
  mkdir -p "$dir"
  if ! pgrep -x epmd >/dev/null; then touch "$dir/started_epmd"; fi
  # A restart (rabbitmq_halt, then this) keeps the ports.
  [ -f "$dir/port" ] || free_port >"$dir/port" || return 1
  [ -f "$dir/dist_port" ] || free_port >"$dir/dist_port" || return 1
  [ -f "$dir/tls_port" ] || free_port >"$dir/tls_port" || return 1
  tls_files "$1" || return 1
  tls_server_copy rabbitmq "$1/tls" "$dir/tls"
  echo "[]." >"$dir/enabled_plugins"
  # Loopback-only listener; guest may log in from loopback by default.
  echo "loopback_users.guest = true" >"$dir/rabbitmq.conf"
  # Besides the plain listener, a TLS one on loopback: it asks for a client
  # certificate and checks one that is sent, but takes clients without.
  printf '%s\n' "listeners.ssl.1 = 127.0.0.1:$(cat "$dir/tls_port")" \
    "ssl_options.cacertfile = $dir/tls/ca.pem" \
    "ssl_options.certfile = $dir/tls/server.pem" \
    "ssl_options.keyfile = $dir/tls/server.key" \
    "ssl_options.verify = verify_peer" \
    "ssl_options.fail_if_no_peer_cert = false" >>"$dir/rabbitmq.conf"
  # RABBITMQ_TEST_HEARTBEAT: the heartbeat the broker proposes, in seconds
  # (the fault tests lower it to see idle connections survive).
  if [ -n "${RABBITMQ_TEST_HEARTBEAT:-}" ]; then
    echo "heartbeat = $RABBITMQ_TEST_HEARTBEAT" >>"$dir/rabbitmq.conf"
  fi
  echo "[]." >"$dir/advanced.config"
  service_owner rabbitmq "$dir"
  ( rabbitmq_env "$1"
    as_service_user rabbitmq env HOME="$dir" "$RMQ_BIN/rabbitmq-server" >"$dir/server.out" 2>&1 & )
  local node deadline=$((SECONDS + 120))
  node=$(rabbitmq_node "$1")
  # await_startup fails at once while the node is not registered yet: retry.
  until as_service_user rabbitmq env HOME="$dir" "$RMQ_BIN/rabbitmqctl" -n "$node" -q \
        --timeout 60 await_startup >"$dir/await.log" 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "RabbitMQ did not start within 120 s; its output:" >&2
      tail -30 "$dir/server.out" "$dir/await.log" >&2
      return 1
    fi
    sleep 1
  done
  export OUTBOX_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$(cat "$dir/port")/"
  # localhost: rabbitmq-c matches the host name against the certificate's
  # DNS names only, never its IP addresses.
  export OUTBOX_TEST_AMQPS_URL="amqps://guest:guest@localhost:$(cat "$dir/tls_port")/?cacertfile=$1/tls/ca.pem" \
         OUTBOX_TEST_TLS_DIR="$1/tls"
}

# Stops the node but keeps its ports and data for rabbitmq_start.
rabbitmq_halt() {
  local dir=$1/rabbitmq
  [ -f "$dir/port" ] || return 0
  local node pid=""
  node=$(rabbitmq_node "$1")
  [ -f "$dir/pid" ] && pid=$(cat "$dir/pid")
  as_service_user rabbitmq env HOME="$dir" "$RMQ_BIN/rabbitmqctl" -n "$node" -q stop \
    >/dev/null 2>&1 || true
  # "stop" returns before the Erlang VM has exited: wait for it, then make
  # sure, so that nothing we started outlives us.
  if [ -n "$pid" ]; then
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

# A memory alarm of the node under DIR on or off (on: a high watermark so
# low that the node is over it at once; off: RabbitMQ's default of 0.4):
# the broker blocks every publishing connection while it lasts.
rabbitmq_memory_alarm() {
  local dir=$1/rabbitmq mark=0.4
  [ "$2" = on ] && mark=0.00001
  as_service_user rabbitmq env HOME="$dir" "$RMQ_BIN/rabbitmqctl" \
    -n "$(rabbitmq_node "$1")" -q set_vm_memory_high_watermark "$mark" >/dev/null
}

rabbitmq_stop() {
  local dir=$1/rabbitmq
  [ -f "$dir/port" ] || return 0
  rabbitmq_halt "$1"
  if [ -f "$dir/started_epmd" ]; then epmd -kill >/dev/null 2>&1 || true; fi
  rm -f "$dir/port" "$dir/tls_port" "$dir/started_epmd"
}

# Picks the ports of a RabbitMQ node under DIR without starting it, so that
# its URL can be handed out first; rabbitmq_start keeps them.
rabbitmq_ports() {
  local dir=$1/rabbitmq
  mkdir -p "$dir"
  [ -f "$dir/port" ] || free_port >"$dir/port" || return 1
  [ -f "$dir/dist_port" ] || free_port >"$dir/dist_port" || return 1
  [ -f "$dir/tls_port" ] || free_port >"$dir/tls_port" || return 1
}

# A second node for a cluster of two: starts the node under PEER_DIR with the
# Erlang cookie of the running node under DIR (nodes and rabbitmqctl prove
# themselves to each other with it) and joins it to that node's cluster.
# The joining node is reset, so it brings no data; the first keeps its
# queues. Stop it with rabbitmq_halt/rabbitmq_stop PEER_DIR.
rabbitmq_join() {
  local peer=$1/rabbitmq first=$2/rabbitmq node
  mkdir -p "$peer"
  [ -f "$first/.erlang.cookie" ] || { echo "no cookie in $first" >&2; return 1; }
  rm -f "$peer/.erlang.cookie"
  cp "$first/.erlang.cookie" "$peer/.erlang.cookie"
  chmod 400 "$peer/.erlang.cookie"
  # In a subshell: rabbitmq_start exports the peer's URLs, which are not
  # the test's.
  ( rabbitmq_start "$1" ) || return 1
  node=$(rabbitmq_node "$1")
  local ctl=(as_service_user rabbitmq env HOME="$peer" "$RMQ_BIN/rabbitmqctl" -n "$node" -q)
  { "${ctl[@]}" stop_app && "${ctl[@]}" join_cluster "$(rabbitmq_node "$2")" \
      && "${ctl[@]}" start_app && "${ctl[@]}" --timeout 60 await_startup; } \
    >"$peer/join.log" 2>&1 || { echo "the node did not join:" >&2; cat "$peer/join.log" >&2; return 1; }
}

# Starts both servers under DIR and exports the OUTBOX_TEST_* variables.
services_start() {
  postgres_start "$1" && rabbitmq_start "$1"
}

services_stop() {
  rabbitmq_stop "$1"
  postgres_stop "$1"
}
