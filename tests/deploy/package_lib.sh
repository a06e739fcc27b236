# The helpers of tests/deploy/package.sh (and install.sh): checks on an
# unpacked package and a node started from it the way its systemd unit
# would. Source it.

source "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/free_port.sh"

step() { echo "==> $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, or fail after
# SECONDS.
wait_for() {
  local limit=$(($1 * 10)) what=$2 tries=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ $tries -lt $limit ] || fail "$what: not within $((limit / 10)) s"
    sleep 0.1
  done
}

pkg_gone() { ! kill -0 "$1" 2>/dev/null; }

# pkg_check_installed DEPENDS: every entry of a Depends field (a, b (>= v),
# c | d) is installed here in a version that satisfies it, as dpkg -i would
# demand, without asking dpkg to install anything.
pkg_check_installed() {
  local dep alt name op ver have ok deps alts
  IFS=',' read -ra deps <<<"$1"
  for dep in "${deps[@]}"; do
    ok=0
    IFS='|' read -ra alts <<<"$dep"
    for alt in "${alts[@]}"; do
      read -r name op ver <<<"${alt//[()]/ }"
      have=$(dpkg-query -W -f='${Status} ${Version}\n' "$name" 2>/dev/null \
             | awk '$3 == "installed" {print $4; exit}')
      if [ -n "$have" ]; then
        [ -z "$op" ] || dpkg --compare-versions "$have" "$op" "$ver" || continue
        ok=1
      elif [ -z "$op" ] && pkg_provided "$name"; then
        ok=1
      fi
    done
    [ $ok = 1 ] || fail "the dependency '${dep# }' is not installed here"
  done
}

# pkg_dpkg ROOT ARGS...: dpkg on the package database of ROOT (made if
# missing). The maintainer scripts run outside a chroot with DPKG_ROOT=ROOT
# (ours then touch only ROOT); the dependencies are checked against this
# machine by pkg_check_installed, not against ROOT's empty database.
pkg_dpkg() {
  local root=$1 out
  shift
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status"
  out=$(dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root \
          --log=/dev/null "$@" 2>&1) || fail "dpkg $*: $out"
}

# pkg_provided NAME: an installed package provides the virtual package NAME
# (libspdlog1.10 provides libspdlog1.10-fmt9).
pkg_provided() {
  dpkg-query -W -f='${Status}|${Provides}\n' | awk -F'|' -v name="$1" '
    $1 ~ / installed$/ { n = split($2, p, /, */)
                         for (i = 1; i <= n; i++) { sub(/ .*/, "", p[i]); if (p[i] == name) found = 1 } }
    END { exit !found }'
}

# pkg_verify_units ROOT: systemd-analyze verify of an instance of the
# template and of the target inside ROOT, given the machine's own units for
# the targets they name. It must say nothing: a bad key is only a warning.
pkg_verify_units() {
  local root=$1 out
  cp -rn /lib/systemd/system/. "$root/usr/lib/systemd/system/"
  out=$(systemd-analyze verify --root="$root" outboxd@status.service outbox.target 2>&1) \
    || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
}

# pkg_point_config ROOT NAMES: the installed example config with its
# /etc/outbox paths moved into ROOT, tables and function named NAMES_*,
# queues NAMES.<queue>, and
# URL files (mode 0640, as docs/operations.md tells) for the test servers.
pkg_point_config() {
  local etc=$1/etc/outbox names=$2
  /usr/bin/python3 - "$etc/outbox.json" "$etc" "$names" <<'PY'
import json, sys
path, etc, names = sys.argv[1:]
cfg = json.load(open(path))
for key in ("databaseUrlFile", "amqpUrlFile"):
    cfg[key] = cfg[key].replace("/etc/outbox", etc, 1)
for routes in cfg["routes"].values():
    for route in routes:
        route["queue"] = names + "." + route["queue"]
for key, suffix in (("eventsTableName", "events"), ("deliveriesTableName", "deliveries"),
                    ("migrationsTableName", "migrations"), ("publishFunctionName", "publish")):
    cfg[key] = names + "_" + suffix
json.dump(cfg, open(path, "w"), indent=2)
PY
  (umask 027
   pkg_database_url >"$etc/database.url"
   echo "$OUTBOX_TEST_AMQP_URL" >"$etc/amqp.url")
}

# The key=value URL of the OUTBOX_TEST_DB_* server, as the C++ tests make it.
pkg_database_url() {
  local url="host=$OUTBOX_TEST_DB_HOST port=$OUTBOX_TEST_DB_PORT"
  url+=" dbname=${OUTBOX_TEST_DB_DATABASE:-postgres} user=${OUTBOX_TEST_DB_USERNAME:-postgres}"
  url+=" connect_timeout=5"
  [ -z "${OUTBOX_TEST_DB_PASSWORD:-}" ] || url+=" password=$OUTBOX_TEST_DB_PASSWORD"
  echo "$url"
}

# pkg_instance_files LAYOUT ETC FROM TO EXTRA: ETC/NAME.conf for each node
# of a cluster layout file, by the sed line of docs/operations.md (step 4),
# then with the address FROM replaced by TO, /etc/outbox by ETC, and EXTRA
# added to the flags.
pkg_instance_files() {
  local layout=$1 etc=$2 from=$3 to=$4 extra=$5 name
  grep -q -- "--listen $from" "$layout" || fail "$layout: no --listen $from"
  # shellcheck disable=SC2094 # the loop and sed both only read the layout
  while read -r name _; do
    case "$name" in ''|'#'*) continue ;; esac
    sed -n "s/^$name  *\(.*\)/OUTBOX_FLAGS=\"\1\"/p" "$layout" \
      | sed -e "s|$from|$to|g" -e "s|/etc/outbox/|$etc/|g" -e "s|\"\$| $extra\"|" >"$etc/$name.conf"
  done <"$layout"
}

# pkg_status_is FILE CONDITION OUTBOXCTL...: the status (--json, saved in
# FILE) meets CONDITION, a Python expression on it as `s`.
pkg_status_is() {
  local file=$1 condition=$2
  shift 2
  "$@" >"$file" || return 1
  /usr/bin/python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$file" "$condition"
}

# pkg_delete_queues CONFIG: deletes each queue CONFIG routes to and its
# results queue from the broker of OUTBOX_TEST_AMQP_URL.
pkg_delete_queues() {
  /usr/bin/python3 - "$1" <<'PY'
import json, os, sys
import pika
queues = {r["queue"] for rs in json.load(open(sys.argv[1]))["routes"].values() for r in rs}
conn = pika.BlockingConnection(pika.URLParameters(os.environ["OUTBOX_TEST_AMQP_URL"]))
channel = conn.channel()
for q in sorted(queues):
    channel.queue_delete(q)
    channel.queue_delete(q + ".results")
conn.close()
PY
}

# pkg_tls_flags DIR NAME: the --tls-* flags of certificate NAME in DIR.
pkg_tls_flags() {
  echo "--tls-cert $1/$2.pem --tls-key $1/$2.key --tls-ca $1/ca.pem"
}

# pkg_exec_start ROOT UNIT INSTANCE: runs the unit's ExecStart= for
# INSTANCE as systemd would, its /usr/bin and /etc/outbox paths inside
# ROOT: the EnvironmentFile= (its %i replaced) sets the variables, and an
# unbraced $VAR word becomes the words of its value.
pkg_exec_start() {
  local root=$1 unit=$2 instance=$3 line word args=()
  line=$(sed -n 's/^EnvironmentFile=//p' "$unit")
  line=${line//%i/$instance}
  set -a
  # shellcheck disable=SC1090 # the instance's file, in systemd's simple KEY="value" form
  source "$root$line"
  set +a
  line=$(sed -n 's/^ExecStart=//p' "$unit")
  for word in $line; do
    case "$word" in
      '$'*) pkg_split_into args "${word#\$}" ;;
      /usr/bin/*|/etc/outbox/*) args+=("$root$word") ;;
      *) args+=("$word") ;;
    esac
  done
  exec "${args[@]}"
}

# pkg_split_into ARRAY VAR: appends the words of $VAR to ARRAY, split on
# white space as systemd splits an unbraced $VAR of ExecStart=.
pkg_split_into() {
  local -n into=$1
  local words
  read -ra words <<<"${!2}"
  into+=("${words[@]}")
}

# pkg_drop_schema NAMES: drops what `outboxctl migrate` made under NAMES_*
# (as core/pg/migrations.cpp drop_schema), then checks that nothing is left.
pkg_drop_schema() {
  local n=$1 left
  pkg_psql -c "DROP TABLE IF EXISTS ${n}_deliveries, ${n}_events, ${n}_migrations CASCADE;
    DROP FUNCTION IF EXISTS ${n}_publish, ${n}_publish_check_headers, ${n}_events_notify,
      ${n}_events_merge_patch, ${n}_events_mark_inserting, ${n}_deliveries_complete_ordered,
      ${n}_deliveries_release_deliveries, ${n}_deliveries_release_keys CASCADE;" \
    || return 1
  left=$(pkg_psql -t -A -c "SELECT count(*) FROM pg_class WHERE relname LIKE '${n}\_%'")
  left=$((left + $(pkg_psql -t -A -c "SELECT count(*) FROM pg_proc WHERE proname LIKE '${n}\_%'")))
  [ "$left" = 0 ]
}

pkg_psql() {
  PGPASSWORD=${OUTBOX_TEST_DB_PASSWORD:-} PGCONNECT_TIMEOUT=5 \
    PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 \
    -h "$OUTBOX_TEST_DB_HOST" -p "$OUTBOX_TEST_DB_PORT" \
    -U "${OUTBOX_TEST_DB_USERNAME:-postgres}" -d "${OUTBOX_TEST_DB_DATABASE:-postgres}" "$@"
}
