#include "core/pg/progress_repository.hpp"

#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// Each EXISTS stops at its index's first entry; the extra conditions are
// the partial indexes' own, so the planner takes them. Events above the
// routing cursor's stored position are still to be routed.
constexpr const char* open_sql = R"sql(
SELECT EXISTS (SELECT 1 FROM {{events}}
               WHERE id > (SELECT position FROM {{events}}_routing
                           WHERE name = 'cursor')
                 AND quarantined_at IS NULL)
    OR EXISTS (SELECT 1 FROM {{deliveries}}
               WHERE status = 'pending' AND available_at IS NOT NULL)
    OR EXISTS (SELECT 1 FROM {{deliveries}}
               WHERE status = 'dispatched' AND delivery_timeout_at IS NOT NULL)
)sql";

// Completed deliveries are in the completion log too (schema/016).
constexpr const char* count_sql = R"sql(
SELECT (SELECT count(*) FROM {{deliveries}} WHERE status = $1)
       + CASE WHEN $1 = 'completed'
              THEN (SELECT count(*) FROM {{deliveries}}_completed) ELSE 0 END
)sql";

constexpr const char* last_id_sql
  = "SELECT coalesce(max(id), 0) FROM {{events}}";

// Deliveries of events after $1 that a dispatcher claimed. One the router
// handed over already dispatched (core/domain/handoff.hpp) got its
// dispatch time in the transaction that created it, so both times are
// that transaction's start; a claim comes in a later transaction.
constexpr const char* claimed_sql = R"sql(
SELECT (SELECT count(*) FROM {{deliveries}}
        WHERE event_id > $1 AND dispatched_at <> created_at)
       + (SELECT count(*) FROM {{deliveries}}_completed
          WHERE event_id > $1 AND dispatched_at <> created_at)
)sql";

constexpr const char* events_sql = R"sql(
SELECT e.id, extract(epoch FROM e.created_at), extract(epoch FROM min(d.created_at)),
       extract(epoch FROM max(d.dispatched_at)),
       extract(epoch FROM max(d.completed_at))
FROM {{events}} e JOIN (
  SELECT event_id, created_at, dispatched_at, completed_at FROM {{deliveries}}
  UNION ALL
  SELECT event_id, created_at, dispatched_at, completed_at
  FROM {{deliveries}}_completed) d ON d.event_id = e.id
WHERE e.id > $1
GROUP BY e.id, e.created_at ORDER BY e.id
)sql";

// The statistics' tuple counts lag the tables (each backend reports its
// changes when it goes idle, at most once a second, and one that went idle
// sooner than that 10 s later); the sizes and the counts are exact.
// The deliveries are the table's and the completion log's.
constexpr const char* sample_sql = R"sql(
SELECT e.bytes, e.n_live_tup, e.n_dead_tup,
       (SELECT count(*) FROM {{events}}),
       d.bytes + c.bytes, d.n_live_tup + c.n_live_tup, d.n_dead_tup + c.n_dead_tup,
       (SELECT count(*) FROM {{deliveries}})
       + (SELECT count(*) FROM {{deliveries}}_completed),
       (SELECT count(*) FROM {{deliveries}}
        WHERE status = 'completed' AND completed_at >= to_timestamp($1)
          AND completed_at < to_timestamp($2))
       + (SELECT count(*) FROM {{deliveries}}_completed
          WHERE completed_at >= to_timestamp($1)
            AND completed_at < to_timestamp($2)),
       pg_current_wal_lsn() - '0/0'::pg_lsn
FROM {{events_stats}} e, {{deliveries_stats}} d, {{completed_stats}} c
)sql";

constexpr const char* writes_sql = R"sql(
SELECT pg_current_wal_lsn() - '0/0'::pg_lsn,
       e.n_tup_ins, e.n_tup_upd, e.n_tup_hot_upd, e.n_tup_del,
       d.n_tup_ins, d.n_tup_upd, d.n_tup_hot_upd, d.n_tup_del,
       c.n_tup_ins, c.n_tup_upd, c.n_tup_hot_upd, c.n_tup_del
FROM {{events_stats}} e, {{deliveries_stats}} d, {{completed_stats}} c
)sql";

// A table's figures: the sums over its partitions (the deliveries by
// handed, schema/021; the events and the completion log by time,
// schema/022), as one row with pg_stat_user_tables' column names.
constexpr const char* tree_stats = R"sql((
  SELECT sum(pg_total_relation_size(s.relid))::bigint AS bytes,
         sum(s.n_live_tup)::bigint AS n_live_tup,
         sum(s.n_dead_tup)::bigint AS n_dead_tup,
         sum(s.n_tup_ins)::bigint AS n_tup_ins,
         sum(s.n_tup_upd)::bigint AS n_tup_upd,
         sum(s.n_tup_hot_upd)::bigint AS n_tup_hot_upd,
         sum(s.n_tup_del)::bigint AS n_tup_del
  FROM pg_stat_user_tables s
  WHERE s.relid IN (SELECT relid FROM pg_partition_tree('{{table}}')))
)sql";

std::string with_tree_stats(std::string sql) {
  for (auto [slot, table] : {std::pair{"{{events_stats}}", "{{events}}"},
                             std::pair{"{{deliveries_stats}}", "{{deliveries}}"},
                             std::pair{"{{completed_stats}}", "{{deliveries}}_completed"}}) {
    std::string stats = tree_stats;
    fill_slot(stats, "{{table}}", table);
    fill_slot(sql, slot, stats);
  }
  return sql;
}

double seconds(const pg_rows& rows, int r, int c) {
  return rows.is_null(r, c) ? 0 : std::stod(rows.text(r, c));
}

} // namespace

progress_repository::progress_repository(schema_names names)
  : open_sql_(fill_names(open_sql, names)),
    count_sql_(fill_names(count_sql, names)),
    last_id_sql_(fill_names(last_id_sql, names)),
    claimed_sql_(fill_names(claimed_sql, names)),
    events_sql_(fill_names(events_sql, names)),
    sample_sql_(fill_names(with_tree_stats(sample_sql), names)),
    writes_sql_(fill_names(with_tree_stats(writes_sql), names)) {
}

caf::expected<bool> progress_repository::anything_open(pg_connection& conn) {
  auto rows = conn.exec_prepared("progress_open", open_sql_);
  if (!rows)
    return rows.error();
  return rows->text(0, 0) == "t";
}

caf::expected<int64_t>
progress_repository::count_status(pg_connection& conn,
                                  delivery_status status) {
  auto rows = conn.exec_prepared("progress_count", count_sql_,
                                 {to_string(status)});
  if (!rows)
    return rows.error();
  return rows->int64(0, 0);
}

caf::expected<int64_t> progress_repository::last_event_id(pg_connection& conn) {
  auto rows = conn.exec("progress_last_id", last_id_sql_);
  if (!rows)
    return rows.error();
  return rows->int64(0, 0);
}

caf::expected<std::vector<event_progress>>
progress_repository::events_after(pg_connection& conn, int64_t after_event_id) {
  auto rows = conn.exec("progress_events", events_sql_,
                        {std::to_string(after_event_id)});
  if (!rows)
    return rows.error();
  std::vector<event_progress> out;
  out.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i)
    out.push_back({rows->int64(i, 0), seconds(*rows, i, 1),
                   seconds(*rows, i, 2), seconds(*rows, i, 3),
                   seconds(*rows, i, 4)});
  return out;
}

caf::expected<tables_sample>
progress_repository::sample_tables(pg_connection& conn, double from, double to) {
  auto rows = conn.exec("progress_sample", sample_sql_,
                        {std::to_string(from), std::to_string(to)});
  if (!rows)
    return rows.error();
  auto table = [&](int c) {
    return table_stats{rows->int64(0, c), rows->int64(0, c + 1),
                       rows->int64(0, c + 2), rows->int64(0, c + 3)};
  };
  return tables_sample{table(0), table(4), rows->int64(0, 8),
                       static_cast<int64_t>(std::stod(rows->text(0, 9)))};
}

caf::expected<int64_t>
progress_repository::claimed_after(pg_connection& conn, int64_t after_event_id) {
  auto rows = conn.exec("progress_claimed", claimed_sql_,
                        {std::to_string(after_event_id)});
  if (!rows)
    return rows.error();
  return rows->int64(0, 0);
}

caf::expected<write_counters>
progress_repository::sample_writes(pg_connection& conn) {
  auto rows = conn.exec("progress_writes", writes_sql_);
  if (!rows)
    return rows.error();
  auto table = [&](int c) {
    return table_writes{rows->int64(0, c), rows->int64(0, c + 1),
                        rows->int64(0, c + 2), rows->int64(0, c + 3)};
  };
  return write_counters{rows->int64(0, 0), table(1), table(5), table(9)};
}

write_counters writes_between(const write_counters& earlier,
                              const write_counters& later) {
  auto table = [](const table_writes& a, const table_writes& b) {
    return table_writes{b.inserted - a.inserted, b.updated - a.updated,
                        b.hot_updated - a.hot_updated, b.deleted - a.deleted};
  };
  return write_counters{later.wal_bytes - earlier.wal_bytes,
                        table(earlier.events, later.events),
                        table(earlier.deliveries, later.deliveries),
                        table(earlier.completed, later.completed)};
}

} // namespace outbox
