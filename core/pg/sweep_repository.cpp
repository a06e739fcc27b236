#include "core/pg/sweep_repository.hpp"

#include "core/pg/delivery_decision.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// Dispatched deliveries past their deadline via the partial timeout index,
// but none of a queue whose result handlers are stalled now ($2), and a
// deadline moved by the part of each ended outage of its queue ($3 queue,
// $4 microseconds since it ended, $5 how long it lasted) that came after
// the delivery's dispatch (core/domain/relay_stalls.hpp).
constexpr const char* timed_out_sql = R"sql(
SELECT {{decision_columns}} FROM {{deliveries}} d
WHERE status = 'dispatched' AND delivery_timeout_at <= now()
  AND queue <> ALL($2::text[])
  AND delivery_timeout_at + (
    SELECT coalesce(sum(greatest(interval '0',
             (now() - interval '1 microsecond' * o.ended_us)
             - greatest(d.dispatched_at,
                        now() - interval '1 microsecond'
                                * (o.ended_us + o.lasted_us)))), interval '0')
    FROM unnest($3::text[], $4::bigint[], $5::bigint[])
         AS o(queue, ended_us, lasted_us)
    WHERE o.queue = d.queue) <= now()
ORDER BY delivery_timeout_at
LIMIT $1
FOR UPDATE SKIP LOCKED
)sql";

// The holds as the statement's parameters $2 to $5.
std::vector<pg_param> hold_params(const sweep_holds& h) {
  std::vector<pg_param> stalled, queues;
  std::vector<int64_t> ended, lasted;
  for (auto& q : h.stalled)
    stalled.push_back(q);
  for (auto& o : h.outages) {
    queues.push_back(o.queue);
    ended.push_back(static_cast<int64_t>(o.ended_seconds_ago * 1e6));
    lasted.push_back(static_cast<int64_t>(o.lasted_seconds * 1e6));
  }
  return {pg_text_array(stalled), pg_text_array(queues), pg_int_array(ended),
          pg_int_array(lasted)};
}

// Pending deliveries past their TTL via the partial expiry index.
constexpr const char* expire_sql = R"sql(
WITH x AS (
  SELECT id FROM {{deliveries}}
  WHERE status = 'pending' AND expires_at <= now()
  ORDER BY expires_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE {{deliveries}} d
SET handed = false, status = 'expired', finished_at = now(),
    last_error = 'time to live ran out before sending'
FROM x WHERE d.id = x.id
RETURNING d.id, d.event_id, d.job, d.queue, d.attempts, d.ordered
)sql";

// The sends of ordered deliveries $1 that are timing out now, as late
// sends (schema/020_late_sends.sql): the worker may still be running one,
// so its key stays held until its result or one more delivery timeout.
// Before the timeout's update, which clears the dispatch id of a retry.
constexpr const char* record_late_sql = R"sql(
INSERT INTO {{deliveries}}_late (dispatch_id, delivery_id, coalesce_key, job,
                                 queue, late_until)
SELECT dispatch_id, id, coalesce_key, job, queue,
       now() + make_interval(secs => delivery_timeout_seconds)
FROM {{deliveries}}
WHERE id = ANY($1::bigint[]) AND ordered AND status = 'dispatched'
  AND dispatch_id IS NOT NULL AND coalesce_key IS NOT NULL
ON CONFLICT (dispatch_id) DO NOTHING
RETURNING delivery_id
)sql";

// Late sends whose time came without a result, and their keys handed on.
// A statement of its own: release_keys takes its key locks in one order
// per transaction, and the sweep's transaction releases keys already.
constexpr const char* expire_late_sql = R"sql(
SELECT {{deliveries}}_expire_late($1::integer)
)sql";

// How often (in sweeps) the sweep also looks for ordered keys whose
// hand-over was lost (key_release::release_stuck): about every half
// minute at the idle pace.
constexpr int stuck_check_every = 30;

} // namespace

sweep_repository::sweep_repository(const schema_names& names)
  : timed_out_sql_(fill_names(with_decision_columns(timed_out_sql), names)),
    expire_sql_(fill_names(expire_sql, names)),
    record_late_sql_(fill_names(record_late_sql, names)),
    expire_late_sql_(fill_names(expire_late_sql, names)),
    update_sql_(transition_update_sql(names)), release_(names) {
}

caf::expected<sweep_result> sweep_repository::sweep(pg_connection& conn,
                                                    const sweep_request& req) {
  auto batch_size = req.batch_size;
  auto swept = in_transaction<sweep_result>(conn, [&]() -> caf::expected<sweep_result> {
    sweep_result out;
    std::vector<int64_t> ordered;
    if (auto err = time_out(conn, req, out, ordered))
      return err;
    if (auto err = expire(conn, batch_size, out, ordered))
      return err;
    if (++sweeps_ % stuck_check_every == 1) {
      auto stuck = release_.stuck(conn, batch_size);
      if (!stuck)
        return stuck.error();
      ordered.insert(ordered.end(), stuck->begin(), stuck->end());
    }
    auto released = release_.release(conn, ordered);
    if (!released)
      return released.error();
    out.released = *released;
    return out;
  });
  if (!swept)
    return swept;
  auto ended = conn.exec_prepared("expire_late", expire_late_sql_,
                                  {std::to_string(batch_size)});
  if (!ended)
    return ended.error();
  if (ended->size() > 0)
    swept->late_ended = ended->int64(0, 0);
  return swept;
}

caf::error sweep_repository::time_out(pg_connection& conn,
                                      const sweep_request& req, sweep_result& out,
                                      std::vector<int64_t>& ordered) {
  auto params = hold_params(req.holds);
  params.insert(params.begin(), std::to_string(req.batch_size));
  auto rows = conn.exec_prepared("find_timed_out", timed_out_sql_, params);
  if (!rows)
    return rows.error();
  auto locked = read_locked(*rows, "find_timed_out");
  if (!locked)
    return locked.error();
  auto late = ordered_ids(*locked);
  if (!late.empty()) {
    auto recorded = conn.exec_prepared("record_late", record_late_sql_,
                                       {pg_int_array(late)});
    if (!recorded)
      return recorded.error();
    out.late_held = recorded->size();
  }
  transition_batch batch;
  for (auto& d : *locked) {
    ++out.timed_out;
    count_failure(batch.add_failure(d, "no result before the delivery timeout"),
                  out.retried, out.failed, out.expired);
  }
  if (auto err = apply_transitions(conn, "apply_timeouts", update_sql_, batch))
    return err;
  ordered.insert(ordered.end(), late.begin(), late.end());
  out.transitions = batch.take_done();
  return caf::none;
}

caf::error sweep_repository::expire(pg_connection& conn, int32_t batch_size,
                                    sweep_result& out,
                                    std::vector<int64_t>& ordered) {
  auto rows = conn.exec_prepared("expire_pending", expire_sql_,
                                 {std::to_string(batch_size)});
  if (!rows)
    return rows.error();
  column_finder col{*rows, "expire_pending"};
  int id = col("id"), event_id = col("event_id"), job = col("job"),
      queue = col("queue"), attempts = col("attempts"),
      ordered_col = col("ordered");
  if (col.error())
    return col.error();
  out.expired += rows->size();
  for (int i = 0; i < rows->size(); ++i) {
    if (rows->text(i, ordered_col) == "t")
      ordered.push_back(rows->int64(i, id));
    out.transitions.push_back(
      {rows->int64(i, event_id), rows->int64(i, id), rows->text(i, job),
       rows->text(i, queue), delivery_status::expired,
       static_cast<int32_t>(rows->int64(i, attempts)), std::nullopt, std::nullopt, {}});
  }
  return caf::none;
}

} // namespace outbox
