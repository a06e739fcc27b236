# The demo's moving parts: the cluster of a layout file, one example worker
# per queue, the stream of example events, and the check that everything is
# final. Source it; every process started is recorded in RUN/pids.

# Prints a top-level value of the JSON config (or the default).
demo_config_value() {
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], sys.argv[3]))' "$1" "$2" "$3"
}

# Prints every queue named by a route, one per line.
demo_config_queues() {
  /usr/bin/python3 -c 'import json,sys
routes = json.load(open(sys.argv[1])).get("routes", {})
print("\n".join(sorted({r["queue"] for rs in routes.values() for r in rs})))' "$1"
}

demo_psql() {
  psql -X -q -t -A -v ON_ERROR_STOP=1 "$OUTBOX_DATABASE_URL" "$@"
}

# demo_cluster_start RUN BIN CONFIG STATUS LAYOUT HTTP: in the layout's
# flags STATUS becomes the status node's HOST:PORT and HTTP the HOST:PORT of
# its HTTP endpoint; when a line has HTTP, RUN/dashboard holds the
# dashboard's address.
demo_cluster_start() {
  local run=$1 bin=$2 config=$3 status=$4 layout=$5 http=$6 name flags
  while read -r name flags; do
    case "$name" in ''|'#'*) continue ;; esac
    flags=${flags//STATUS/$status}
    if [[ " $flags " == *" HTTP "* ]]; then
      flags=${flags//HTTP/$http}
      echo "http://$http/" >"$run/dashboard"
    fi
    # shellcheck disable=SC2086 # the layout's flags are words on purpose
    "$bin/outboxd" --config "$config" $flags >>"$run/$name.log" 2>&1 &
    echo $! >>"$run/pids"
    echo "    outboxd $flags"
    if [[ " $flags " == *" --roles status "* ]]; then
      local tries=0
      until "$bin/outboxctl" status --connect "$status" >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ $tries -ge 100 ]; then
          echo "the status node did not come up; its log:" >&2
          tail -20 "$run/$name.log" >&2
          return 1
        fi
        sleep 0.2
      done
    fi
  done <"$layout"
  local queue
  for queue in $(demo_config_queues "$config"); do
    "$bin/example_worker" --config "$config" --queue "$queue" --inbox \
      >>"$run/worker-$queue.log" 2>&1 &
    echo $! >>"$run/pids"
    echo "    example_worker --queue $queue"
  done
}

# demo_produce RUN CONFIG EVENTS RATE: EVENTS (0 = endless) example
# events, RATE per second, each in its own transaction, through the SQL
# producer function as an application would. The payload's "scenario" tells
# the example worker what to do with it. A failed write leaves
# RUN/write_failed.
demo_produce() {
  local run=$1 config=$2 events=$3 rate=$4 written=0
  local fn
  fn=$(demo_config_value "$config" publishFunctionName outbox_publish)
  while [ "$events" = 0 ] || [ $written -lt "$events" ]; do
    local sql="" i
    for ((i = 0; i < rate; i++)); do
      [ "$events" != 0 ] && [ $written -ge "$events" ] && break
      local roll=$((RANDOM % 100)) scenario=ok
      if [ $roll -lt 10 ]; then scenario=flaky
      elif [ $roll -lt 16 ]; then scenario=fail
      elif [ $roll -lt 20 ]; then scenario=slow
      elif [ $roll -lt 26 ]; then scenario=busy
      fi
      if [ $((written % 3)) = 2 ]; then
        sql+="BEGIN; SELECT $fn('order.placed', '{\"order\":$written,\"scenario\":\"$scenario\",\"seconds\":3}'); COMMIT;"
      else
        # A few SKUs: a newer change of a waiting one supersedes it.
        sql+="BEGIN; SELECT $fn('stock.available_changed', '{\"sku\":\"sku-$((RANDOM % 25))\",\"available\":$((RANDOM % 9)),\"scenario\":\"$scenario\",\"seconds\":3}', 'sku-$((RANDOM % 25))'); COMMIT;"
      fi
      written=$((written + 1))
    done
    if ! demo_psql -o /dev/null -c "$sql" >>"$run/producer.log" 2>&1; then
      echo "producer: a write failed (see $run/producer.log)" >&2
      touch "$run/write_failed"
    fi
    sleep 1
  done
}

# demo_all_final RUN BIN CONFIG: true once every event was written, none
# is unrouted and no delivery is pending or dispatched, by the counts of
# `outboxctl status --db --json`.
demo_all_final() {
  local run=$1 bin=$2 config=$3 counts
  [ ! -e "$run/write_failed" ] || return 1
  counts=$("$bin/outboxctl" status --db --json --config "$config") || return 1
  /usr/bin/python3 -c 'import json,sys
s = json.loads(sys.argv[1]); d = s["deliveries"]
sys.exit(0 if s["unroutedEvents"] == 0 and d["pending"] == 0 and d["dispatched"] == 0 else 1)' "$counts"
}

# Stops what demo_cluster_start and demo_produce started: SIGTERM, then
# SIGKILL for anything still there after 15 s.
demo_cluster_stop() {
  local run=$1 pid
  [ -f "$run/pids" ] || return 0
  echo "==> stopping the cluster and the workers"
  while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$run/pids"
  for _ in $(seq 1 30); do
    local alive=0
    while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$run/pids"
    [ $alive = 0 ] && break
    sleep 0.5
  done
  while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$run/pids"
  rm -f "$run/pids"
}
