#include "core/pg/result_repository.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/pg/delivery_decision.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// Results lock their deliveries in id order (no deadlock between handlers).
constexpr const char* lock_sql = R"sql(
SELECT {{decision_columns}} FROM {{deliveries}}
WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE
)sql";

// Completions, the common result, in one statement and one round trip: a
// delivery completes only if it is still dispatched under the result's
// dispatch id and job. It leaves the table for the completion log
// (schema/016_completion_log.sql): a delete writes no index entry, where
// an update of its status wrote a new row version and three. Deliveries of
// ordered keys are left to {{deliveries}}_complete_ordered (schema/011),
// which hands their keys on in the same statement. For the results that
// changed nothing the rows as they were before the statement say why (no
// such delivery, stale, wrong job). Dispatch ids are compared as text:
// they come from workers, and a malformed one must be a stale result, not
// a failed statement. The status is compared with a sub-select: a
// constant would let the planner read the whole partial timeout index
// instead of the primary key (see core/pg/delivery_decision.cpp).
constexpr const char* complete_sql = R"sql(
WITH r AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
    AS r(id, dispatch_id, job)
), completed AS (
  DELETE FROM {{deliveries}} d
  USING r
  WHERE d.id = r.id AND d.dispatch_id::text = r.dispatch_id AND d.job = r.job
    AND d.status = (SELECT 'dispatched') AND NOT d.ordered
  RETURNING d.id, d.event_id, d.job, d.queue, d.attempts, d.created_at,
    d.dispatched_at,
    (extract(epoch FROM now() - d.dispatched_at) * 1000000)::bigint AS since_dispatch_us
), logged AS (
  INSERT INTO {{deliveries}}_completed (id, event_id, job, queue, attempts,
                                        created_at, dispatched_at)
  SELECT id, event_id, job, queue, attempts, created_at, dispatched_at
  FROM completed
)
SELECT true AS completed, id, event_id, job, queue, attempts,
       NULL::text AS status_before, NULL::text AS dispatch_id_before,
       since_dispatch_us, false AS ordered
FROM completed
UNION ALL
SELECT false, d.id, d.event_id, d.job, d.queue, d.attempts, d.status,
       COALESCE(d.dispatch_id::text, ''), NULL, d.ordered
FROM {{deliveries}} d
WHERE d.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT 1 FROM completed c WHERE c.id = d.id)
)sql";

// Of the deliveries $1, those in the completion log: a result for one of
// them came late or twice. By the log's BRIN index; only asked when some
// result found no delivery.
constexpr const char* logged_sql = R"sql(
SELECT DISTINCT id FROM {{deliveries}}_completed WHERE id = ANY($1::bigint[])
)sql";

// Late sends (schema/020_late_sends.sql) among the dispatch ids $1 of
// results that applied to nothing: their result came, so the send no
// longer runs and its key may go on.
constexpr const char* end_late_sql = R"sql(
SELECT {{deliveries}}_end_late($1::text[])
)sql";

// A locked delivery a result of this batch was decided for already: a
// duplicate of the result is stale instead of applied twice.
struct candidate {
  locked_delivery delivery;
  bool decided = false;
};

// Checks one result against its locked delivery and, if it still applies,
// adds its transition.
result_verdict decide_result(const send_result& r, candidate& c,
                             transition_batch& batch, apply_result& out) {
  auto& d = c.delivery;
  if (c.decided || d.status != delivery_status::dispatched
      || d.dispatch_id != r.dispatch_id)
    return result_verdict::stale;
  if (d.job != r.job)
    return result_verdict::wrong_job;
  c.decided = true;
  pg_param reason = r.reason.empty() ? std::nullopt : pg_param{r.reason};
  switch (r.result) {
    case outcome::completed:
      batch.add(d, delivery_status::completed, d.attempts, std::nullopt,
                std::nullopt);
      ++out.completed;
      break;
    case outcome::failed: // not retryable: final whatever retries are left
      batch.add(d, delivery_status::failed, d.attempts + 1, std::nullopt,
                reason ? reason : pg_param{"failed"});
      ++out.failed;
      break;
    case outcome::retry:
      count_failure(batch.add_failure(d, reason ? *reason : "retry"),
                    out.retried, out.failed, out.expired);
      break;
  }
  return result_verdict::applied;
}

bool all_completions(const std::vector<send_result>& rs) {
  return std::all_of(rs.begin(), rs.end(), [](const send_result& r) {
    return r.result == outcome::completed;
  });
}

// The columns of complete_sql.
struct completion_columns {
  int completed, id, event_id, job, queue, attempts, status_before,
    dispatch_id_before, since_dispatch_us, ordered;
};

caf::expected<completion_columns> completion_columns_of(const pg_rows& rows) {
  column_finder col{rows, "apply_completions"};
  completion_columns c{col("completed"),     col("id"),
                       col("event_id"),      col("job"),
                       col("queue"),         col("attempts"),
                       col("status_before"), col("dispatch_id_before"),
                       col("since_dispatch_us"), col("ordered")};
  if (col.error())
    return col.error();
  return c;
}

// The verdict on a completion the statement did not apply, from its row as
// it was before (the same order of checks as decide_result).
result_verdict unapplied_verdict(const send_result& r, const pg_rows& rows,
                                 int i, const completion_columns& c) {
  if (parse_delivery_status(rows.text(i, c.status_before))
        != delivery_status::dispatched
      || rows.text(i, c.dispatch_id_before) != r.dispatch_id)
    return result_verdict::stale;
  if (rows.text(i, c.job) != r.job)
    return result_verdict::wrong_job;
  return result_verdict::stale; // changed by someone else meanwhile
}

} // namespace

result_repository::result_repository(const schema_names& names)
  : complete_sql_(fill_names(complete_sql, names)),
    logged_sql_(fill_names(logged_sql, names)),
    lock_sql_(fill_names(with_decision_columns(lock_sql), names)),
    update_sql_(transition_update_sql(names)),
    complete_ordered_sql_(fill_names(
      "SELECT * FROM {{deliveries}}_complete_ordered($1::bigint[], $2::text[],"
      " $3::text[])",
      names)),
    end_late_sql_(fill_names(end_late_sql, names)), release_(names) {
}

caf::expected<apply_result>
result_repository::apply_results(pg_connection& conn,
                                 const std::vector<send_result>& rs) {
  if (rs.empty())
    return apply_result{};
  auto out = all_completions(rs)
               ? apply_completions(conn, rs)
               : in_transaction<apply_result>(
                   conn, [&]() -> caf::expected<apply_result> {
                     return apply_decided(conn, rs);
                   });
  if (!out)
    return out;
  if (auto err = end_late(conn, rs, *out))
    return err;
  return out;
}

caf::error result_repository::end_late(pg_connection& conn,
                                       const std::vector<send_result>& rs,
                                       apply_result& out) {
  std::vector<pg_param> late;
  for (size_t k = 0; k < rs.size(); ++k)
    if (out.verdicts[k] != result_verdict::applied)
      late.push_back(rs[k].dispatch_id);
  if (late.empty())
    return caf::none;
  // After the results' own statements, in autocommit: it takes key locks
  // of its own (one release per transaction keeps their order).
  auto rows = conn.exec_prepared("end_late", end_late_sql_,
                                 {pg_text_array(late)});
  if (!rows)
    return rows.error();
  out.released += rows->size();
  return caf::none;
}

caf::expected<apply_result>
result_repository::apply_decided(pg_connection& conn,
                                 const std::vector<send_result>& rs) {
  std::vector<int64_t> ids;
  for (auto& r : rs)
    ids.push_back(r.delivery_id);
  auto rows = conn.exec_prepared("lock_for_results", lock_sql_,
                                 {pg_int_array(ids)});
  if (!rows)
    return rows.error();
  auto locked = read_locked(*rows, "lock_for_results");
  if (!locked)
    return locked.error();
  std::map<int64_t, candidate> by_id;
  for (auto& d : *locked)
    by_id.emplace(d.id, candidate{std::move(d)});
  apply_result out;
  out.verdicts.assign(rs.size(), result_verdict::unknown_delivery);
  transition_batch batch;
  for (size_t i = 0; i < rs.size(); ++i)
    if (auto it = by_id.find(rs[i].delivery_id); it != by_id.end())
      out.verdicts[i] = decide_result(rs[i], it->second, batch, out);
  if (auto err = apply_transitions(conn, "apply_results", update_sql_, batch))
    return err;
  if (auto err = settle_logged(conn, rs, out))
    return err;
  out.transitions = batch.take_done();
  auto released = release_.release(conn, ordered_ids(*locked));
  if (!released)
    return released.error();
  out.released = *released;
  return out;
}

caf::expected<apply_result>
result_repository::apply_completions(pg_connection& conn,
                                     const std::vector<send_result>& rs) {
  std::vector<int64_t> ids;
  std::vector<pg_param> dispatch_ids, jobs;
  for (auto& r : rs) {
    ids.push_back(r.delivery_id);
    dispatch_ids.push_back(r.dispatch_id);
    jobs.push_back(r.job);
  }
  // One statement in autocommit: atomic on its own.
  auto rows = conn.exec_prepared("apply_completions", complete_sql_,
                                 {pg_int_array(ids), pg_text_array(dispatch_ids),
                                  pg_text_array(jobs)});
  if (!rows)
    return rows.error();
  auto c = completion_columns_of(*rows);
  if (!c)
    return c.error();
  std::map<int64_t, int> completed, before; // delivery id -> row
  for (int i = 0; i < rows->size(); ++i)
    (rows->text(i, c->completed) == "t" ? completed
                                        : before)[rows->int64(i, c->id)] = i;
  apply_result out;
  out.verdicts.assign(rs.size(), result_verdict::unknown_delivery);
  std::set<int64_t> applied;
  std::vector<size_t> ordered; // results of ordered deliveries, by index
  for (size_t k = 0; k < rs.size(); ++k) {
    auto id = rs[k].delivery_id;
    if (auto it = completed.find(id); it != completed.end()) {
      if (!applied.insert(id).second) { // a duplicate in this batch
        out.verdicts[k] = result_verdict::stale;
        continue;
      }
      int i = it->second;
      out.transitions.push_back(
        {rows->int64(i, c->event_id), id, rows->text(i, c->job),
         rows->text(i, c->queue), delivery_status::completed,
         static_cast<int32_t>(rows->int64(i, c->attempts)), std::nullopt,
         static_cast<double>(rows->int64(i, c->since_dispatch_us)) / 1e6, {}});
      out.verdicts[k] = result_verdict::applied;
      ++out.completed;
    } else if (auto b = before.find(id); b != before.end()) {
      if (rows->text(b->second, c->ordered) == "t")
        ordered.push_back(k);
      else
        out.verdicts[k] = unapplied_verdict(rs[k], *rows, b->second, *c);
    }
  }
  if (auto err = settle_logged(conn, rs, out))
    return err;
  if (ordered.empty())
    return out;
  if (auto err = apply_ordered(conn, rs, ordered, out))
    return err;
  return out;
}

caf::error result_repository::settle_logged(pg_connection& conn,
                                            const std::vector<send_result>& rs,
                                            apply_result& out) {
  std::vector<int64_t> unknown;
  for (size_t k = 0; k < rs.size(); ++k)
    if (out.verdicts[k] == result_verdict::unknown_delivery)
      unknown.push_back(rs[k].delivery_id);
  if (unknown.empty())
    return caf::none;
  auto rows = conn.exec_prepared("logged_deliveries", logged_sql_,
                                 {pg_int_array(unknown)});
  if (!rows)
    return rows.error();
  std::set<int64_t> logged;
  for (int i = 0; i < rows->size(); ++i)
    logged.insert(rows->int64(i, 0));
  for (size_t k = 0; k < rs.size(); ++k)
    if (out.verdicts[k] == result_verdict::unknown_delivery
        && logged.count(rs[k].delivery_id) > 0)
      out.verdicts[k] = result_verdict::stale;
  return caf::none;
}

caf::error result_repository::apply_ordered(pg_connection& conn,
                                            const std::vector<send_result>& rs,
                                            const std::vector<size_t>& which,
                                            apply_result& out) {
  std::vector<int64_t> ids;
  std::vector<pg_param> dispatch_ids, jobs;
  for (auto k : which) {
    ids.push_back(rs[k].delivery_id);
    dispatch_ids.push_back(rs[k].dispatch_id);
    jobs.push_back(rs[k].job);
  }
  // One statement in autocommit: the completions and their hand-over.
  auto rows = conn.exec_prepared("complete_ordered", complete_ordered_sql_,
                                 {pg_int_array(ids), pg_text_array(dispatch_ids),
                                  pg_text_array(jobs)});
  if (!rows)
    return rows.error();
  column_finder col{*rows, "complete_ordered"};
  int id_col = col("id"), event_col = col("event_id"), job_col = col("job"),
      queue_col = col("queue"), attempts_col = col("attempts"),
      since_col = col("since_dispatch_us");
  if (col.error())
    return col.error();
  std::map<int64_t, int> completed; // delivery id -> row
  for (int i = 0; i < rows->size(); ++i)
    completed[rows->int64(i, id_col)] = i;
  for (auto k : which) {
    auto it = completed.find(rs[k].delivery_id);
    if (it == completed.end() || it->second < 0) {
      // Changed since the first statement looked, or a duplicate.
      out.verdicts[k] = result_verdict::stale;
      continue;
    }
    int i = it->second;
    it->second = -1;
    out.transitions.push_back(
      {rows->int64(i, event_col), rs[k].delivery_id, rows->text(i, job_col),
       rows->text(i, queue_col), delivery_status::completed,
       static_cast<int32_t>(rows->int64(i, attempts_col)), std::nullopt,
       static_cast<double>(rows->int64(i, since_col)) / 1e6, {}});
    out.verdicts[k] = result_verdict::applied;
    ++out.completed;
  }
  return caf::none;
}

} // namespace outbox
