#include "core/pg/retention_ring.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

double ring_span_seconds(double completed_window_seconds) {
  return completed_window_seconds / 2;
}

namespace {

// The span as the ring table holds it, whether it has held for a whole
// turn of the ring, and the partition the clock comes to next.
constexpr const char* state_sql = R"sql(
SELECT r.span_seconds,
       now() >= r.since + make_interval(secs => 4 * r.span_seconds) AS settled,
       ({{events}}_ring_slot() + 1) % 4 AS target
FROM {{events}}_ring r
)sql";

std::string number_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", x);
  return buf;
}

void replace_all(std::string& sql, const std::string& key, const std::string& with) {
  for (size_t p = 0; (p = sql.find(key, p)) != std::string::npos; p += with.size())
    sql.replace(p, key.size(), with);
}

// The statements of one emptying, for partition {{target}}; rows that
// must stay go to {{keep}}, the partition of the span before it (the
// current one). Literal slots rather than parameters: each statement is
// planned for its partition alone.
//
// Below this bound every event is routed or set aside and out of a
// recovery's reach (schema/021: the floor of the handed sends); no
// cursor row (which no router runs without) reads as 0, nothing routed.
constexpr const char* below_sql
  = "coalesce((SELECT LEAST(position, handed_floor - 1) FROM {{events}}_routing"
    " WHERE name = 'cursor'), 0)";

// Whether the partition still holds what the router has not passed (a
// backlog) or a recovery may need: then it waits for its next turn rather
// than move all that, under its lock; by the primary key and the log's
// event index. And whether the clock has come to the partition since its
// turn was read (clock_timestamp: now() is the transaction's start, from
// before the lock was granted): then inserts may have written it.
constexpr const char* check_sql = R"sql(
SELECT EXISTS (SELECT 1 FROM {{events}}_p{{target}} WHERE id > {{below}})
       OR EXISTS (SELECT 1 FROM {{deliveries}}_completed_p{{target}}
                  WHERE event_id > {{below}}) AS behind,
       (floor(extract(epoch FROM clock_timestamp()) / {{events}}_ring_span())::bigint + 1)
         % 4 <> {{target}} AS moved_on
)sql";

// What must outlive the partition, each by an index, so that the lock is
// held for as long as the rows to keep take, not for a read of every row:
// - events with a delivery in the deliveries table (open, or ended
//   otherwise than by a logged completion and kept by its own window, or
//   made by a replay), among the deliveries of the partition's id range
//   (the deliveries' event key);
// - quarantined events inside the longest window, by their index;
// - set-aside events (of types without routes when the router passed
//   them, core/domain/routing_cursor.hpp) inside the longest window, which
//   a route added meanwhile would still route; a probe per such event;
// - log rows inside the completed window (normally none: the partition
//   was written two spans ago), by the log's BRIN index.
constexpr const char* keep_events_sql[] = {
  "bucket = {{target}} AND id IN (SELECT d.event_id FROM {{deliveries}} d"
  " WHERE d.event_id >= (SELECT min(id) FROM {{events}}_p{{target}})"
  "   AND d.event_id <= (SELECT max(id) FROM {{events}}_p{{target}}))",
  "bucket = {{target}} AND quarantined_at IS NOT NULL AND ({{longest}} = 0"
  " OR quarantined_at >= now() - make_interval(secs => {{longest}}))",
  "bucket = {{target}} AND id IN (SELECT event_id FROM {{events}}_unrouted)"
  " AND ({{longest}} = 0 OR created_at >= now() - make_interval(secs => {{longest}}))",
};

constexpr const char* keep_log_sql
  = "bucket = {{target}} AND completed_at >= now() - make_interval(secs => {{window}})";

// The set-aside places of the events that go: from the small table, a
// probe of the partition's key each.
constexpr const char* forget_set_aside_sql
  = "DELETE FROM {{events}}_unrouted u USING {{events}}_p{{target}} e"
    " WHERE e.id = u.event_id";

// A move to the partition to keep, counted.
std::string move_sql(const std::string& table, const std::string& where) {
  return "WITH moved AS (UPDATE " + table + " SET bucket = {{keep}} WHERE " + where
         + " RETURNING 1) SELECT count(*) FROM moved";
}

} // namespace

retention_ring::retention_ring(schema_names names)
  : names_(std::move(names)), state_sql_(fill_names(state_sql, names_)) {
}

caf::expected<ring_outcome>
retention_ring::turn(pg_connection& conn, double window_seconds,
                     double longest_seconds) {
  auto state = conn.exec_prepared("ring_state", state_sql_);
  if (!state)
    return state.error();
  if (state->size() != 1)
    return make_error(errc::schema_mismatch,
                      names_.events + "_ring must hold one row (schema/022):"
                                      " run outboxctl migrate, or restore the row");
  double span = std::stod(state->text(0, 0));
  double want = ring_span_seconds(window_seconds);
  if (std::fabs(span - want) > 1e-6 * std::max(1.0, want))
    return set_span(conn, want);
  if (state->text(0, 1) != "t")
    return ring_outcome{}; // a partition may still hold another span's rows
  return empty(conn, static_cast<int>(state->int64(0, 2)), window_seconds,
               longest_seconds);
}

caf::expected<ring_outcome> retention_ring::set_span(pg_connection& conn,
                                                     double span) {
  // The insert's default reads the span from a function whose body plans
  // take in as a constant: replacing it makes every session plan again
  // (STABLE, see schema/022), which is what changes the slot of new rows.
  std::string sql = fill_names(
    "CREATE OR REPLACE FUNCTION {{events}}_ring_span() RETURNS float8"
    " LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT {{span}}::float8 $$;"
    " UPDATE {{events}}_ring SET span_seconds = {{span}}, since = now();",
    names_);
  replace_all(sql, "{{span}}", number_text(span));
  return in_transaction<ring_outcome>(conn, [&]() -> caf::expected<ring_outcome> {
    if (auto err = conn.exec_script("ring_set_span", sql))
      return err;
    ring_outcome out;
    out.span_changed = true;
    return out;
  });
}

caf::expected<ring_outcome>
retention_ring::empty(pg_connection& conn, int target, double window_seconds,
                      double longest_seconds) {
  auto slot = [&](std::string sql) {
    replace_all(sql, "{{below}}", below_sql);
    sql = fill_names(std::move(sql), names_);
    replace_all(sql, "{{target}}", std::to_string(target));
    replace_all(sql, "{{keep}}", std::to_string((target + ring_partitions - 1)
                                                % ring_partitions));
    replace_all(sql, "{{window}}", number_text(window_seconds));
    replace_all(sql, "{{longest}}", number_text(longest_seconds));
    return sql;
  };
  // Counted before the lock, which a read of every row would hold too
  // long, and once per turn: no one else writes a partition the clock is
  // not at (the moves out of it are ours).
  if (!counted_ || counted_->target != target) {
    auto counts = conn.exec(
      "ring_count", slot("SELECT (SELECT count(*) FROM {{events}}_p{{target}}),"
                         " (SELECT count(*) FROM {{deliveries}}_completed_p{{target}})"));
    if (!counts)
      return counts.error();
    counted_ = partition_count{target, counts->int64(0, 0), counts->int64(0, 1)};
  }
  if (counted_->events == 0 && counted_->logged == 0)
    return ring_outcome{};
  auto check = conn.exec("ring_check", slot(check_sql));
  if (!check)
    return check.error();
  if (check->text(0, 0) == "t") {
    ring_outcome behind;
    behind.behind = true;
    return behind;
  }
  auto out = in_transaction<ring_outcome>(conn, [&]() -> caf::expected<ring_outcome> {
    // A moment, not a queue: a lock request that waits holds up every
    // statement behind it (the relay's reads of the events among them).
    if (auto err = conn.exec_script(
          "ring_lock",
          slot("SET LOCAL lock_timeout = '200ms'; SET LOCAL enable_bitmapscan = on;"
               " LOCK TABLE {{events}}_p{{target}},"
               " {{deliveries}}_completed_p{{target}} IN ACCESS EXCLUSIVE MODE")))
      return err;
    ring_outcome o;
    // Again under the lock, which no router, recovery or replay holds now.
    auto again = conn.exec("ring_check", slot(check_sql));
    if (!again)
      return again.error();
    if (again->text(0, 0) == "t" || again->text(0, 1) == "t") {
      o.behind = again->text(0, 0) == "t";
      return o; // nothing written: the commit ends the lock
    }
    for (auto where : keep_events_sql) {
      auto moved = conn.exec("ring_keep_events", slot(move_sql("{{events}}", where)));
      if (!moved)
        return moved.error();
      o.kept.events += moved->int64(0, 0);
    }
    auto moved = conn.exec("ring_keep_log",
                           slot(move_sql("{{deliveries}}_completed", keep_log_sql)));
    if (!moved)
      return moved.error();
    o.kept.deliveries = moved->int64(0, 0);
    if (auto err = conn.exec_script("ring_forget_set_aside", slot(forget_set_aside_sql)))
      return err;
    if (auto err = conn.exec_script(
          "ring_truncate", slot("TRUNCATE {{events}}_p{{target}},"
                                " {{deliveries}}_completed_p{{target}}")))
      return err;
    o.emptied = true;
    o.deleted.events = std::max<int64_t>(0, counted_->events - o.kept.events);
    o.deleted.deliveries = std::max<int64_t>(0, counted_->logged - o.kept.deliveries);
    return o;
  });
  if (out && out->emptied)
    counted_ = partition_count{target, 0, 0};
  if (!out && sqlstate_of(out.error()) == "55P03") {
    ring_outcome busy;
    busy.busy = true;
    return busy;
  }
  return out;
}

} // namespace outbox
