// The claim repository: its statements built once, and the claim, the
// handed deliveries' read and release, and the one-by-one claim and
// quarantine after a claim failed on its data.
#include "core/pg/claim_repository.hpp"

#include <algorithm>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/pg/claim_rows.hpp"
#include "core/pg/claim_sql.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// Fills the send columns' slot of `sql`.
std::string with_send_columns(std::string sql) {
  fill_slot(sql, "{{send_columns}}", claim_detail::send_columns);
  fill_slot(sql, "{{unix_micros:c.expires_at}}", unix_micros("c.expires_at"));
  fill_slot(sql, "{{unix_micros:c.delivery_timeout_at}}",
            unix_micros("c.delivery_timeout_at"));
  return sql;
}

// The two parallel arrays of handed deliveries ($1, $2).
std::vector<pg_param> handed_params(const std::vector<handed_delivery>& ds) {
  std::vector<int64_t> ids;
  std::vector<pg_param> dispatch_ids;
  for (auto& d : ds) {
    ids.push_back(d.id);
    dispatch_ids.push_back(d.dispatch_id);
  }
  return {pg_int_array(ids), pg_text_array(dispatch_ids)};
}

// The cohort's start as a parameter: NULL when the request names none.
pg_param cohort_param(const claim_request& req) {
  if (!req.cohort_start_us)
    return std::nullopt;
  return std::to_string(*req.cohort_start_us);
}

// `ready` picks the rows; `max` and `cohort` are the parameters of the
// in-flight limit and of the window's cohort.
std::string claim_statement(const schema_names& n, const char* ready,
                            const char* max, const char* cohort) {
  std::string sql = with_send_columns(claim_detail::claim_sql);
  fill_slot(sql, "{{room}}", claim_detail::room_sql);
  fill_slot(sql, "{{max}}", max);
  fill_slot(sql, "{{cohort}}", cohort);
  fill_slot(sql, "{{unix_micros:dispatched_at}}", unix_micros("dispatched_at"));
  fill_slot(sql, "{{ready}}", ready);
  return fill_names(std::move(sql), n);
}

} // namespace

claim_repository::claim_repository(const schema_names& names)
  : claim_sql_(claim_statement(names, claim_detail::batch_ready, "$5", "$6")),
    claim_one_sql_(claim_statement(names, claim_detail::one_ready, "$3", "$4")),
    candidates_sql_(fill_names(claim_detail::candidates_sql, names)),
    quarantine_sql_(fill_names(claim_detail::quarantine_sql, names)),
    release_handed_sql_(fill_names(claim_detail::release_handed_sql, names)), release_(names) {
  handed_sql_ = fill_names(with_send_columns(claim_detail::handed_sql), names);
}

caf::expected<claim_result>
claim_repository::fetch_handed(pg_connection& conn,
                               const std::vector<handed_delivery>& ds) {
  claim_result out;
  if (ds.empty())
    return out;
  auto rows = conn.exec_prepared("fetch_handed", handed_sql_, handed_params(ds));
  if (!rows)
    return rows.error();
  if (auto got = claim_detail::read_claim(*rows, out, "fetch_handed"); !got)
    return got.error();
  return out;
}

caf::expected<int64_t>
claim_repository::release_handed(pg_connection& conn,
                                 const std::vector<handed_delivery>& ds) {
  if (ds.empty())
    return int64_t{0};
  auto rows = conn.exec_prepared("release_handed", release_handed_sql_,
                                 handed_params(ds));
  if (!rows)
    return rows.error();
  return static_cast<int64_t>(rows->size());
}

caf::expected<claim_result>
claim_repository::claim_batch(pg_connection& conn, const claim_request& req) {
  // One statement in autocommit: it commits before anything is published.
  // Its plan may be cached: the ready index is in the claim's order
  // (schema/006), so any plan walks it and stops after the batch.
  auto rows = conn.exec_prepared("claim_batch", claim_sql_,
                                 {req.queue, std::to_string(req.batch_size),
                                  req.from.available_at,
                                  std::to_string(req.from.id),
                                  std::to_string(req.max_in_flight),
                                  cohort_param(req)});
  if (!rows) {
    if (!is_data_error(rows.error()))
      return rows.error();
    // Only after a failure: the hot path never runs more than the claim.
    // The next claim starts from the beginning (resume stays at the start).
    return claim_one_by_one(conn, req, sqlstate_of(rows.error()));
  }
  claim_result out;
  auto got = claim_detail::read_claim(*rows, out, "claim_batch");
  if (!got)
    return got.error();
  if (auto err = release_ended(conn, out))
    return err;
  // What this claim could take at most: the batch, or less at the limit.
  auto allowed = std::min<int64_t>(req.batch_size,
                                   out.room.value_or(req.batch_size));
  out.at_limit = allowed < req.batch_size && got->taken >= allowed;
  // A claim that took all it could: probably more behind it, and the next
  // claim goes on from here. One that could take nothing learnt nothing
  // and keeps the cursor. Anything else: the next claim starts from the
  // beginning again.
  if (allowed == 0)
    out.resume = req.from;
  else if (got->taken >= allowed)
    out.resume = got->last.value_or(claim_cursor{});
  return out;
}

caf::expected<claim_result>
claim_repository::claim_one_by_one(pg_connection& conn, const claim_request& req,
                                   const std::string& batch_state) {
  logger("dispatcher")
    ->warn("event=claim_failed queue={} sqlstate={} action=claim_one_by_one",
           kv(req.queue), batch_state);
  auto ids = conn.exec("claim_candidates", candidates_sql_,
                       {req.queue, std::to_string(req.batch_size)});
  if (!ids)
    return ids.error();
  claim_result out;
  bool any_claimed = false;
  std::vector<std::pair<std::string, std::string>> failing; // id, SQLSTATE
  for (int i = 0; i < ids->size(); ++i) {
    auto id = ids->text(i, 0);
    // Each alone in autocommit, as the batch would have been.
    auto rows = conn.exec_prepared("claim_one", claim_one_sql_,
                                   {req.queue, id,
                                    std::to_string(req.max_in_flight),
                                    cohort_param(req)});
    if (rows) {
      any_claimed = true;
      if (auto got = claim_detail::read_claim(*rows, out, "claim_one"); !got)
        return got.error();
      if (out.room && *out.room == 0) {
        out.at_limit = true; // the rest wait for room as a batch would
        break;
      }
      continue;
    }
    if (!is_data_error(rows.error()))
      return rows.error(); // the connection, say: the pass fails as any other
    failing.emplace_back(id, sqlstate_of(rows.error()));
  }
  // Every delivery failing alone too looks like our SQL rather than the
  // rows: only the first is taken out, so such an error costs one per pass.
  if (!any_claimed && failing.size() > 1)
    failing.resize(1);
  for (auto& [id, state] : failing)
    if (auto err = quarantine(conn, req, id, state, out))
      return err;
  if (auto err = release_ended(conn, out))
    return err;
  return out;
}

caf::error claim_repository::release_ended(pg_connection& conn,
                                           const claim_result& out) const {
  // Expired or quarantined: those of ordered keys hand the key on. Its own
  // statement after the claim's (both autocommit, as the claim is): a
  // crash between them leaves the key to the sweep's backstop.
  std::vector<int64_t> ended;
  for (auto& t : out.transitions)
    ended.push_back(t.delivery_id);
  if (auto released = release_.release(conn, ended); !released)
    return released.error();
  return caf::none;
}

caf::error claim_repository::quarantine(pg_connection& conn,
                                        const claim_request& req,
                                        const std::string& id,
                                        const std::string& state,
                                        claim_result& out) {
  auto q = conn.exec("quarantine_delivery", quarantine_sql_,
                     {id, "quarantined: the claim failed on this delivery "
                          "with SQLSTATE " + state});
  if (!q)
    return q.error();
  if (q->size() == 0)
    return caf::none; // claimed by another dispatcher meanwhile
  column_finder col{*q, "quarantine_delivery"};
  int id_col = col("id"), event_col = col("event_id"), job_col = col("job"),
      queue_col = col("queue"), attempts_col = col("attempts");
  if (col.error())
    return col.error();

  ++out.quarantined;
  out.transitions.push_back(
    {q->int64(0, event_col), q->int64(0, id_col), q->text(0, job_col),
     q->text(0, queue_col), delivery_status::failed,
     static_cast<int32_t>(q->int64(0, attempts_col)), std::nullopt, std::nullopt, {}});
  logger("dispatcher")
    ->error("event=delivery_quarantined outboxDeliveryId={} outboxEventId={} "
            "queue={} pass=claim sqlstate={}",
            id, q->text(0, event_col), kv(req.queue), state);
  return caf::none;
}

} // namespace outbox
