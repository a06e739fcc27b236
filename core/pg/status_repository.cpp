#include "core/pg/status_repository.hpp"

#include "core/pg/delivery_sql.hpp"
#include "core/pg/key_hold_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

void add_zeros(std::map<std::string, int64_t>& m) {
  for (auto& s : delivery_statuses())
    m.emplace(s, 0);
}

} // namespace

status_repository::status_repository(schema_names n)
  // Unrouted events: those above the routing cursor's stored position (by
  // the primary key; the router stores it in each routing transaction; an
  // event routed ahead of an open one counts until the cursor passes both)
  // and those set aside for lack of routes.
  : events_sql_(fill_names(
      "SELECT count(*), COALESCE(extract(epoch FROM now() - min(created_at)), 0)"
      " FROM (SELECT e.created_at FROM {{events}} e WHERE e.id > (SELECT"
      " position FROM {{events}}_routing WHERE name = 'cursor')"
      " AND e.quarantined_at IS NULL"
      " UNION ALL SELECT e.created_at FROM {{events}}_unrouted u"
      " JOIN {{events}} e ON e.id = u.event_id) x",
      n)),
    // Per queue and status: one pass over the table (the ages need every
    // open row, and an index of every status would cost each change of
    // status an entry: schema/005), and one over the completion log
    // (schema/016), whose rows are completed deliveries too.
    deliveries_sql_(fill_names(
      "SELECT queue, status, count(*), COALESCE(extract(epoch FROM now() - "
      "min(created_at) FILTER (WHERE status IN ('pending', 'dispatched'))), 0) "
      "FROM {{deliveries}} GROUP BY queue, status"
      " UNION ALL SELECT queue, 'completed', count(*), 0"
      " FROM {{deliveries}}_completed GROUP BY queue ORDER BY 1, 2",
      n)),
    // Per queue, the ordered keys: only the rows of the partial index
    // {{deliveries}}_ordered_idx (its predicate, spelled as it is), so
    // unordered queues cost nothing. One holder per key: a key with a
    // blocking delivery is blocked.
    keys_sql_(fill_names(
      std::string{"SELECT queue, count(DISTINCT (coalesce_key, job)) FILTER"
                  " (WHERE "}
        + blocks_key_sql
        + "), COALESCE(extract(epoch FROM now() - min(created_at) FILTER"
          " (WHERE "
        + parked_sql + ")), 0) FROM {{deliveries}} WHERE " + ordered_index_sql
        + " GROUP BY queue",
      n)),
    // The relay's connections to this database, by node: outboxd names
    // them `outboxd <node>` (set_fallback_application_name). Other
    // sessions' application_name is readable without extra privileges.
    connections_sql_(
      "SELECT substr(application_name, 9), count(*) FROM pg_stat_activity"
      " WHERE datname = current_database() AND application_name LIKE 'outboxd %'"
      " GROUP BY 1 ORDER BY 1"),
    pauses_(n) {
}

caf::expected<status_counts> status_repository::read(pg_connection& conn) {
  // One snapshot for both statements, so the figures agree with each other.
  if (auto err = conn.exec_script(
        "status_begin", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
    return err;
  auto events = conn.exec_prepared("status_events", events_sql_);
  auto deliveries = events ? conn.exec_prepared("status_deliveries", deliveries_sql_)
                           : caf::expected<pg_rows>{events.error()};
  auto keys = deliveries ? conn.exec_prepared("status_keys", keys_sql_)
                         : caf::expected<pg_rows>{deliveries.error()};
  auto paused = keys ? pauses_.paused(conn)
                     : caf::expected<std::map<std::string, queue_pause>>{
                       keys.error()};
  auto connections = paused ? conn.exec_prepared("status_connections", connections_sql_)
                            : caf::expected<pg_rows>{paused.error()};
  conn.rollback();
  if (!connections)
    return connections.error();
  status_counts out;
  out.paused = std::move(*paused);
  for (int i = 0; i < connections->size(); ++i)
    out.connections[connections->text(i, 0)] = connections->int64(i, 1);
  out.unrouted_events = events->int64(0, 0);
  out.oldest_unrouted_age_seconds = std::stod(events->text(0, 1));
  add_zeros(out.per_status);
  for (int i = 0; i < deliveries->size(); ++i) {
    auto queue = deliveries->text(i, 0);
    // Keyed by the database's spelling: the counts travel to other nodes
    // and out as JSON. A status outside the table's CHECK is our bug.
    auto status = read_status(*deliveries, i, 1, "status_deliveries");
    if (!status)
      return status.error();
    auto n = deliveries->int64(i, 2);
    auto age = std::stod(deliveries->text(i, 3));
    auto& q = out.per_queue[queue];
    if (q.per_status.empty())
      add_zeros(q.per_status);
    q.per_status[to_string(*status)] += n;
    q.oldest_open_age_seconds = std::max(q.oldest_open_age_seconds, age);
    out.per_status[to_string(*status)] += n;
    out.oldest_open_age_seconds = std::max(out.oldest_open_age_seconds, age);
  }
  // Every queue with such rows has deliveries, so it is in per_queue.
  for (int i = 0; i < keys->size(); ++i) {
    auto& q = out.per_queue[keys->text(i, 0)];
    if (q.per_status.empty())
      add_zeros(q.per_status);
    q.blocked_keys = keys->int64(i, 1);
    q.longest_held_key_seconds = std::stod(keys->text(i, 2));
  }
  // A paused queue shows also before its first delivery.
  for (auto& [queue, pause] : out.paused) {
    auto& q = out.per_queue[queue];
    if (q.per_status.empty())
      add_zeros(q.per_status);
  }
  return out;
}

} // namespace outbox
