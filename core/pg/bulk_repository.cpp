#include "core/pg/bulk_repository.hpp"

#include <algorithm>

#include "core/pg/pg_connection.hpp"
#include "core/pg/routing_repository.hpp"

namespace outbox {

namespace {

// The route comes as the routing statement's JSON (routes_to_json), so its
// rules are copied the way routing copies them. The events are routed
// already: the routing cursor moves past them (a router would otherwise
// look at each of them again, finding its delivery made).
constexpr const char* backlog_sql = R"sql(
WITH r AS (SELECT * FROM {{routes}}), e AS (
  INSERT INTO {{events}} (event_type, payload)
  SELECT r.event_type, $2 FROM r, generate_series(1, $3::int)
  RETURNING id
), moved AS (
  UPDATE {{events}}_routing SET position = (SELECT max(id) FROM e),
    scanned = NULL, open_ranges = NULL
  WHERE name = 'cursor' AND position < (SELECT max(id) FROM e)
)
INSERT INTO {{deliveries}} (event_id, job, queue, retry_delays,
  repeat_last_delay, delivery_timeout_seconds, merge, available_at)
SELECT e.id, r.job, r.queue, r.retry_delays, r.repeat_last_delay,
       r.delivery_timeout_seconds, r.merge,
       statement_timestamp() + make_interval(secs => $4)
FROM e, r
)sql";

// Events without deliveries, and their place among the set-aside ones.
constexpr const char* delete_sql = R"sql(
WITH gone AS (
  DELETE FROM {{events}} e
  WHERE e.event_type = $1
    AND NOT EXISTS (SELECT 1 FROM {{deliveries}} d WHERE d.event_id = e.id)
  RETURNING e.id
)
DELETE FROM {{events}}_unrouted u USING gone WHERE u.event_id = gone.id
)sql";

constexpr const char* settle_sql = "ANALYZE {{deliveries}}; CHECKPOINT";

constexpr int64_t backlog_chunk = 50000;

} // namespace

bulk_repository::bulk_repository(schema_names names)
  : backlog_sql_(fill_names(with_routes(backlog_sql), names)),
    delete_sql_(fill_names(delete_sql, names)),
    settle_sql_(fill_names(settle_sql, names)) {
}

caf::error bulk_repository::insert_backlog(pg_connection& conn, const route& r,
                                           const std::string& payload,
                                           int64_t n, int64_t ready_in_seconds) {
  auto route_json = routes_to_json({r});
  for (int64_t done = 0; done < n; done += backlog_chunk) {
    auto chunk = std::min(backlog_chunk, n - done);
    auto rows = conn.exec("backlog", backlog_sql_,
                          {route_json, payload, std::to_string(chunk),
                           std::to_string(ready_in_seconds)});
    if (!rows)
      return rows.error();
  }
  return {};
}

caf::error bulk_repository::delete_unrouted(pg_connection& conn,
                                            const std::string& event_type) {
  auto rows = conn.exec("delete_unrouted", delete_sql_, {event_type});
  return rows ? caf::error{} : rows.error();
}

caf::error bulk_repository::settle(pg_connection& conn) {
  return conn.exec_script("settle", settle_sql_);
}

} // namespace outbox
