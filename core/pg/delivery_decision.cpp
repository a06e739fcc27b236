#include "core/pg/delivery_decision.hpp"

#include "core/base/timestamp.hpp"
#include "core/domain/retry_policy.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"

namespace outbox {

namespace {

// The columns every retry-or-fail decision needs.
constexpr const char* decision_columns = R"sql(
  id, status, COALESCE(dispatch_id::text, '') AS dispatch_id, job, attempts,
  retry_delays::text AS retry_delays, repeat_last_delay,
  {{unix_micros:expires_at}} AS expires_us,
  (extract(epoch FROM now()) * 1000000)::bigint AS now_us, event_id, queue,
  ordered
)sql";

// Applies decided transitions to rows this transaction locked and checked
// (status `dispatched`, same dispatch id); the dispatch id is checked once
// more as a guard. The status is deliberately not in the WHERE clause: it
// would match the partial timeout index, which the planner then prefers
// over the primary key although it holds an entry for every send not yet
// vacuumed away (thousands under load, for a batch of ten). Every
// transition moves a handed row into the logged partition (schema/021):
// what outlives a send must outlive a crash of PostgreSQL.
constexpr const char* update_sql = R"sql(
UPDATE {{deliveries}} d SET
  handed = false,
  status = u.status,
  attempts = u.attempts,
  available_at = COALESCE(to_timestamp(u.available_us / 1000000.0), d.available_at),
  dispatch_id = CASE WHEN u.status = 'pending' THEN NULL ELSE d.dispatch_id END,
  dispatched_at = CASE WHEN u.status = 'pending' THEN NULL ELSE d.dispatched_at END,
  delivery_timeout_at = CASE WHEN u.status = 'pending' THEN NULL
                             ELSE d.delivery_timeout_at END,
  completed_at = CASE WHEN u.status = 'completed' THEN now() END,
  failed_at = CASE WHEN u.status = 'failed' THEN now() END,
  finished_at = CASE WHEN u.status <> 'pending' THEN now() END,
  last_error = COALESCE(u.reason, d.last_error)
FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::integer[],
            $5::bigint[], $6::text[])
     AS u(id, dispatch_id, status, attempts, available_us, reason)
WHERE d.id = u.id AND d.dispatch_id = u.dispatch_id
RETURNING d.id
)sql";

struct decision_index {
  int id, status, dispatch_id, job, attempts, retry_delays, repeat_last_delay,
    expires_us, now_us, event_id, queue, ordered;
};

pg_param micros_param(std::optional<time_point> t) {
  if (!t)
    return std::nullopt;
  return std::to_string(
    std::chrono::duration_cast<std::chrono::microseconds>(t->time_since_epoch())
      .count());
}

} // namespace

std::string with_decision_columns(std::string sql) {
  fill_slot(sql, "{{decision_columns}}", decision_columns);
  fill_slot(sql, "{{unix_micros:expires_at}}", unix_micros("expires_at"));
  return sql;
}

caf::expected<std::vector<locked_delivery>>
read_locked(const pg_rows& rows, const char* statement) {
  column_finder col{rows, statement};
  decision_index c{col("id"),           col("status"),
                   col("dispatch_id"),  col("job"),
                   col("attempts"),     col("retry_delays"),
                   col("repeat_last_delay"), col("expires_us"),
                   col("now_us"),       col("event_id"),
                   col("queue"),        col("ordered")};
  if (col.error())
    return col.error();
  std::vector<locked_delivery> out;
  for (int i = 0; i < rows.size(); ++i) {
    auto status = read_status(rows, i, c.status, statement);
    if (!status)
      return status.error();
    locked_delivery d;
    d.id = rows.int64(i, c.id);
    d.status = *status;
    d.dispatch_id = rows.text(i, c.dispatch_id);
    d.job = rows.text(i, c.job);
    d.attempts = static_cast<int32_t>(rows.int64(i, c.attempts));
    d.rules.retry_delays_seconds = parse_pg_int_array(rows.text(i, c.retry_delays));
    d.rules.repeat_last_delay = rows.text(i, c.repeat_last_delay) == "t";
    d.expires_at = optional_micros(rows, i, c.expires_us);
    d.now = from_unix_micros(rows.int64(i, c.now_us));
    d.event_id = rows.int64(i, c.event_id);
    d.queue = rows.text(i, c.queue);
    d.ordered = rows.text(i, c.ordered) == "t";
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<int64_t> ordered_ids(const std::vector<locked_delivery>& ds) {
  std::vector<int64_t> out;
  for (auto& d : ds)
    if (d.ordered)
      out.push_back(d.id);
  return out;
}

void transition_batch::add(const locked_delivery& d, delivery_status status,
                           int32_t attempts_now,
                           std::optional<time_point> available_at,
                           pg_param reason) {
  ids_.push_back(std::to_string(d.id));
  dispatch_ids_.push_back(d.dispatch_id);
  statuses_.push_back(std::string{to_string(status)});
  attempts_.push_back(std::to_string(attempts_now));
  available_.push_back(micros_param(available_at));
  reasons_.push_back(std::move(reason));
  done_.push_back({d.event_id, d.id, d.job, d.queue, status, attempts_now,
                   available_at, std::nullopt, {}});
}

delivery_status transition_batch::add_failure(const locked_delivery& d,
                                              std::string reason) {
  auto decision = decide_after_failure(d.rules, d.attempts + 1, d.now,
                                       d.expires_at);
  auto status = decision.outcome == failure_outcome::retry
                  ? delivery_status::pending
                : decision.outcome == failure_outcome::fail
                  ? delivery_status::failed
                  : delivery_status::expired;
  add(d, status, d.attempts + 1,
      decision.outcome == failure_outcome::retry
        ? std::optional<time_point>{decision.available_at}
        : std::nullopt,
      std::move(reason));
  return status;
}

pg_params transition_batch::params() const {
  return {pg_text_array(ids_),      pg_text_array(dispatch_ids_),
          pg_text_array(statuses_), pg_text_array(attempts_),
          pg_text_array(available_), pg_text_array(reasons_)};
}

void count_failure(delivery_status status, int64_t& retried, int64_t& failed,
                   int64_t& expired) {
  if (status == delivery_status::pending)
    ++retried;
  else if (status == delivery_status::failed)
    ++failed;
  else if (status == delivery_status::expired)
    ++expired;
}

std::string transition_update_sql(const schema_names& names) {
  return fill_names(update_sql, names);
}

caf::error apply_transitions(pg_connection& conn, const char* name,
                             const std::string& update_sql,
                             const transition_batch& batch) {
  if (batch.empty())
    return caf::none;
  auto rows = conn.exec_prepared(name, update_sql, batch.params());
  return rows ? caf::error{} : rows.error();
}

} // namespace outbox
