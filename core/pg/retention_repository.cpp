#include "core/pg/retention_repository.hpp"

#include <cstdio>

#include "core/pg/delivery_sql.hpp"
#include "core/pg/key_hold_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

const char* const retention_lock_keys
  = "hashtext('outbox_retention'), hashtext($1)";

namespace {

// The deliveries that retention and `outboxctl prune` may delete, once
// their status's window has passed: final ones only, never one a pass still
// works on. The one place for that rule: a delivery that must outlive its
// window (one that still holds back the deliveries of its key, say) is one
// more condition here.
constexpr const char* deletable_delivery
  = "d.status IN ('completed', 'failed', 'expired', 'superseded')";

// By the finished index (schema/012_retention.sql): status and finished_at
// lead it, so a batch reads only the rows it deletes. The events go in the
// same statement: the snapshot of a statement does not see its own
// deletes, hence the deleted ids are excluded from "any delivery left" by
// hand. A routed event gets no delivery again, so none can appear
// meanwhile: deliveries of events above the routing cursor's stored
// position stay (a router that takes over walks those events again, and a
// delivery deleted there would be made anew). Nor those at or above the
// floor of the handed deliveries (schema/021): a recovery after a crash of
// PostgreSQL routes those events again, with the same effect.
constexpr const char* finished_sql = R"sql(
WITH doomed AS (
  SELECT d.id FROM {{deliveries}} d
  WHERE d.status = $1
    AND d.finished_at < now() - make_interval(secs => $2::float8)
    AND {{deletable}}
    AND d.event_id <= (SELECT LEAST(position, handed_floor - 1)
                       FROM {{events}}_routing WHERE name = 'cursor')
  LIMIT $3
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM {{deliveries}} d USING doomed WHERE d.id = doomed.id
  RETURNING d.id, d.event_id
), events_gone AS (
  DELETE FROM {{events}} e
  WHERE e.id IN (SELECT event_id FROM gone)
    AND NOT EXISTS (SELECT 1 FROM {{deliveries}} o
                    WHERE o.event_id = e.id
                      AND o.id NOT IN (SELECT id FROM gone))
  RETURNING e.id
)
SELECT (SELECT count(*) FROM gone) AS deliveries,
       (SELECT count(*) FROM events_gone) AS events
)sql";

// The completion log's rows past the window (schema/016), by its BRIN
// index, and the events this leaves without any delivery (their other
// completed deliveries may still be in the log: it needs no event). As in
// finished_sql, an event above the routing cursor's stored position stays,
// and so does a log row at or above the floor of the handed deliveries.
// The rows go by their physical address, which the log has no index for:
// one partition of the ring (schema/022) at a time, {{log}}, since an
// address is a partition's own (the same one names a row in each).
constexpr const char* logged_sql = R"sql(
WITH kept AS (
  SELECT LEAST(position, handed_floor - 1) AS below
  FROM {{events}}_routing WHERE name = 'cursor'
), gone AS (
  DELETE FROM {{log}} l
  WHERE l.ctid = ANY(ARRAY(
    SELECT ctid FROM {{log}}
    WHERE completed_at < now() - make_interval(secs => $1::float8)
      AND event_id <= (SELECT below FROM kept)
    LIMIT $2))
  RETURNING l.event_id
), events_gone AS (
  DELETE FROM {{events}} e
  WHERE e.id IN (SELECT event_id FROM gone)
    AND e.id <= (SELECT below FROM kept)
    AND NOT EXISTS (SELECT 1 FROM {{deliveries}} o WHERE o.event_id = e.id)
  RETURNING e.id
)
SELECT (SELECT count(*) FROM gone) AS deliveries,
       (SELECT count(*) FROM events_gone) AS events
)sql";

// By the quarantined index (schema/009): such events stay few. They have
// no deliveries; the guard that keeps one that has any (and so its
// deliveries, which the delete would cascade to) looks up each event of
// the batch by key, outside the batch's subquery, where stale statistics
// of the quarantined index could make it a walk over every delivery.
constexpr const char* quarantined_sql = R"sql(
DELETE FROM {{events}} e WHERE e.id IN (
  SELECT q.id FROM {{events}} q
  WHERE q.quarantined_at < now() - make_interval(secs => $1::float8)
  LIMIT $2
  FOR UPDATE SKIP LOCKED)
  AND NOT EXISTS (SELECT 1 FROM {{deliveries}} d WHERE d.event_id = e.id)
RETURNING e.id
)sql";

// Seconds as SQL reads them back exactly enough: microseconds count.
std::string seconds_text(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", seconds);
  return buf;
}

} // namespace

retention_repository::retention_repository(schema_names names)
  : names_(std::move(names)) {
  finished_sql_ = fill_names(finished_sql, names_);
  // Nor one that blocks its key (core/pg/key_hold_sql.hpp): deleting it
  // would hand the key on by nobody's decision.
  fill_slot(finished_sql_, "{{deletable}}",
            std::string{deletable_delivery} + " AND NOT " + blocks_key_sql);
  quarantined_sql_ = fill_names(quarantined_sql, names_);
  for (int p = 0; p < ring_partitions; ++p) {
    auto sql = fill_names(logged_sql, names_);
    auto log = names_.deliveries + "_completed_p" + std::to_string(p);
    for (size_t at; (at = sql.find("{{log}}")) != std::string::npos;)
      sql.replace(at, 7, log);
    logged_sql_[p] = std::move(sql);
  }
}

caf::expected<bool> retention_repository::try_lead(pg_connection& conn) {
  auto rows = conn.exec("retention_lock",
                        std::string{"SELECT pg_try_advisory_lock("}
                          + retention_lock_keys + ")",
                        {names_.deliveries});
  if (!rows)
    return rows.error();
  return rows->text(0, 0) == "t";
}

namespace {

caf::expected<deleted_rows> read_deleted(const pg_rows& rows, const char* statement) {
  column_finder col{rows, statement};
  int deliveries = col("deliveries"), events = col("events");
  if (col.error())
    return col.error();
  return deleted_rows{rows.int64(0, deliveries), rows.int64(0, events)};
}

} // namespace

caf::expected<deleted_rows>
retention_repository::delete_finished(pg_connection& conn,
                                      delivery_status status, double seconds,
                                      int32_t batch, logged_completions logged) {
  auto rows = conn.exec_prepared("retention_delete_finished", finished_sql_,
                                 {std::string{to_string(status)},
                                  seconds_text(seconds), std::to_string(batch)});
  if (!rows)
    return rows.error();
  auto out = read_deleted(*rows, "retention_delete_finished");
  if (!out || status != delivery_status::completed
      || logged != logged_completions::row_by_row)
    return out;
  // The log has only its BRIN index, which PostgreSQL reads by a bitmap
  // scan: the relay's sessions disable those (db_stores.cpp), and ranked
  // with a full scan under a LIMIT the full scan would win, reading the
  // whole log on every pass that finds nothing old enough.
  auto more = in_transaction<deleted_rows>(conn, [&]() -> caf::expected<deleted_rows> {
    if (auto err = conn.exec_script("retention_bitmap_on",
                                    "SET LOCAL enable_bitmapscan = on"))
      return err;
    static const char* const statement[ring_partitions]
      = {"retention_delete_logged_p0", "retention_delete_logged_p1",
         "retention_delete_logged_p2", "retention_delete_logged_p3"};
    deleted_rows sum;
    for (int p = 0; p < ring_partitions; ++p) {
      auto logged = conn.exec_prepared(statement[p], logged_sql_[p],
                                       {seconds_text(seconds), std::to_string(batch)});
      if (!logged)
        return logged.error();
      auto rows = read_deleted(*logged, statement[p]);
      if (!rows)
        return rows.error();
      sum.deliveries += rows->deliveries;
      sum.events += rows->events;
    }
    return sum;
  });
  if (!more)
    return more.error();
  out->deliveries += more->deliveries;
  out->events += more->events;
  return out;
}

caf::expected<int64_t>
retention_repository::delete_quarantined_events(pg_connection& conn,
                                                double seconds, int32_t batch) {
  auto rows = conn.exec_prepared("retention_delete_quarantined", quarantined_sql_,
                                 {seconds_text(seconds), std::to_string(batch)});
  if (!rows)
    return rows.error();
  return static_cast<int64_t>(rows->size());
}

} // namespace outbox
