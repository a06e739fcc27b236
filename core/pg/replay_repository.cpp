#include "core/pg/replay_repository.hpp"

#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// The next matching events after $1 (by id, at most $2), of the types $3,
// and whether each still has a delivery of job $4 on queue $5 in the table
// (the unique key's index answers). {{which}}: the events' own condition.
constexpr const char* candidates_sql = R"sql(
SELECT e.id, EXISTS (SELECT 1 FROM {{deliveries}} d
                     WHERE d.event_id = e.id AND d.job = $4 AND d.queue = $5)
       AS has_delivery
FROM {{events}} e
WHERE e.id > $1::bigint AND e.event_type = ANY($3::text[])
  AND e.quarantined_at IS NULL AND {{which}}
ORDER BY e.id
LIMIT $2
)sql";

std::string candidates(const schema_names& names, const char* which) {
  std::string sql = candidates_sql;
  fill_slot(sql, "{{which}}", which);
  return fill_names(std::move(sql), names);
}

} // namespace

replay_repository::replay_repository(const schema_names& names,
                                     std::vector<route> routes,
                                     std::optional<ready_notify> notify)
  : routes_(std::move(routes)),
    routing_(names, routes_, std::move(notify), /*replay*/ true),
    by_time_sql_(candidates(names, "e.created_at >= $6::timestamptz"
                                   " AND ($7::timestamptz IS NULL"
                                   " OR e.created_at < $7::timestamptz)")),
    by_id_sql_(candidates(names, "e.id = ANY($6::bigint[])")) {
}

caf::expected<replay_counts>
replay_repository::replay(pg_connection& conn, const replay_selection& what,
                          bool dry_run, int32_t batch) {
  std::vector<pg_param> types;
  for (auto& r : routes_)
    if (!what.event_type || *what.event_type == r.event_type)
      types.push_back(r.event_type);
  replay_counts out;
  if (types.empty() || routes_.empty())
    return out;
  auto& job = routes_.front().job;
  auto& queue = routes_.front().queue;
  bool by_id = !what.event_ids.empty();
  int64_t after = 0;
  for (;;) {
    std::vector<pg_param> params{std::to_string(after), std::to_string(batch),
                                 pg_text_array(types), job, queue};
    if (by_id)
      params.push_back(pg_int_array(what.event_ids));
    else {
      params.push_back(what.since.value_or("-infinity"));
      params.push_back(what.until ? pg_param{*what.until} : pg_param{});
    }
    auto rows = conn.exec("replay_candidates", by_id ? by_id_sql_ : by_time_sql_,
                          params);
    if (!rows)
      return rows.error();
    if (rows->size() == 0)
      return out;
    std::vector<int64_t> fresh;
    for (int i = 0; i < rows->size(); ++i) {
      after = rows->int64(i, 0);
      ++out.events;
      if (rows->text(i, 1) == "t")
        ++out.skipped;
      else
        fresh.push_back(after);
    }
    if (!dry_run && !fresh.empty()) {
      // One routing transaction per batch: short, and no routing lead.
      auto routed = routing_.route_events(conn, fresh);
      if (!routed)
        return routed.error();
      out.created += routed->deliveries_created;
      // A router that routed one of them meanwhile made its delivery first.
      out.skipped += static_cast<int64_t>(fresh.size()) - routed->events_routed;
    }
    if (rows->size() < batch)
      return out;
  }
}

} // namespace outbox
