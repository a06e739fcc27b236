#include "core/delivery_repository.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/delivery_sql.hpp"
#include "core/errors.hpp"
#include "core/logging.hpp"
#include "core/pg_connection.hpp"
#include "core/timestamp.hpp"

namespace outbox {

namespace {

// Ready deliveries of one queue via the partial ready index; SKIP LOCKED
// keeps concurrent dispatchers of a queue apart. Rows past their TTL expire
// here instead of being sent; the rest get a fresh dispatch id. The last
// row says when the next pending delivery (a retry, say) becomes ready, so
// a pass needs no second round trip to time the next one. The scan starts
// after the key ($3, $4) where a run of full batches left off (see
// claim_cursor), and the 'after' row gives the last key taken. The 'room'
// row says how many more the queue's in-flight limit let this claim take.
constexpr const char* claim_sql = R"sql(
WITH room AS ({{room}}), ready AS ({{ready}}), expired AS (
  UPDATE {{deliveries}} d
  SET status = 'expired', finished_at = now(),
      last_error = 'time to live ran out before sending'
  FROM ready r
  WHERE d.id = r.id AND d.expires_at IS NOT NULL AND d.expires_at <= now()
  RETURNING d.id, d.event_id, d.job, d.queue, d.attempts
), claimed AS (
  UPDATE {{deliveries}} d
  SET status = 'dispatched', dispatch_id = gen_random_uuid(),
      dispatched_at = now(),
      delivery_timeout_at = now() + make_interval(secs => d.delivery_timeout_seconds)
  FROM ready r
  WHERE d.id = r.id AND (d.expires_at IS NULL OR d.expires_at > now())
  RETURNING d.*
)
SELECT 'send', c.id, c.event_id, c.job, c.queue, c.dispatch_id::text,
       e.event_type, COALESCE(c.payload_override, e.payload), e.content_type,
       COALESCE(e.headers::text, ''), c.attempts, c.retry_delays::text,
       c.repeat_last_delay, {{expires_us:c.expires_at}},
       (extract(epoch FROM now()) * 1000000)::bigint
FROM claimed c JOIN {{events}} e ON e.id = c.event_id
UNION ALL
SELECT 'expired', id, event_id, job, queue, NULL, NULL, NULL, NULL, NULL,
       attempts, NULL, NULL, NULL, NULL
FROM expired
UNION ALL
SELECT 'next', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, (extract(epoch FROM min(available_at) - now()) * 1000000)::bigint,
       NULL
FROM {{deliveries}}
WHERE queue = $1 AND status = 'pending' AND available_at > now()
UNION ALL
(SELECT 'after', id, NULL, NULL, NULL, available_at::text, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL
 FROM ready ORDER BY available_at DESC, id DESC LIMIT 1)
UNION ALL
SELECT 'room', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, n, NULL
FROM room
ORDER BY 2
)sql";

// How many more deliveries of queue $1 may be out at once: the limit
// ({{max}}) less those dispatched, read via the partial timeout index,
// which only dispatched rows enter. It counts in the database so that the
// limit holds for every dispatcher of the queue, on any node; claims that
// run at the same moment each see the same count, so together they may
// exceed it by up to a batch each.
constexpr const char* room_sql = R"sql(
  SELECT greatest(0, {{max}}::bigint - count(*)) AS n FROM {{deliveries}}
  WHERE queue = $1 AND status = 'dispatched'
)sql";

// The claim's ready rows in a pass: the next batch of the queue in the
// ready index's order, from the cursor on.
constexpr const char* batch_ready = R"sql(
  SELECT id, available_at FROM {{deliveries}}
  WHERE queue = $1 AND status = 'pending' AND available_at <= now()
    AND (available_at, id) > ($3::timestamptz, $4::bigint)
  ORDER BY available_at, id
  LIMIT least($2::bigint, (SELECT n FROM room))
  FOR UPDATE SKIP LOCKED
)sql";

// The claim's ready row when a batch failed on its data: the one delivery
// $2, so that the failing one is found and the others are sent.
constexpr const char* one_ready = R"sql(
  SELECT id, available_at FROM {{deliveries}}
  WHERE id = $2::bigint AND queue = $1 AND status = 'pending'
    AND available_at <= now() AND (SELECT n FROM room) > 0
  FOR UPDATE SKIP LOCKED
)sql";

// The deliveries a failed claim would have taken, read without computing
// anything from their columns.
constexpr const char* candidates_sql = R"sql(
SELECT id FROM {{deliveries}}
WHERE queue = $1 AND status = 'pending' AND available_at <= now()
ORDER BY available_at, id
LIMIT $2
)sql";

// Takes a delivery out of the claims for good (schema/009_quarantine.sql).
constexpr const char* quarantine_sql = R"sql(
UPDATE {{deliveries}}
SET status = 'failed', failed_at = now(), finished_at = now(), last_error = $2
WHERE id = $1 AND status = 'pending'
RETURNING id, event_id, job, queue, attempts
)sql";

// The columns every retry-or-fail decision needs, for a given id set.
constexpr const char* decision_columns = R"sql(
  id, status, COALESCE(dispatch_id::text, ''), job, attempts,
  retry_delays::text, repeat_last_delay, {{expires_us:expires_at}},
  (extract(epoch FROM now()) * 1000000)::bigint, event_id, queue
)sql";

// Results lock their deliveries in id order (no deadlock between handlers).
constexpr const char* lock_sql = R"sql(
SELECT {{columns}} FROM {{deliveries}}
WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE
)sql";

// Completions, the common result, in one statement and one round trip: a
// delivery completes only if it is still dispatched under the result's
// dispatch id and job. For the results that changed nothing the rows as they
// were before the statement say why (no such delivery, stale, wrong job).
// Dispatch ids are compared as text: they come from workers, and a malformed
// one must be a stale result, not a failed statement. The status is compared
// with a sub-select: a constant would let the planner read the whole partial
// timeout index instead of the primary key (see update_sql).
constexpr const char* complete_sql = R"sql(
WITH r AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
    AS r(id, dispatch_id, job)
), completed AS (
  UPDATE {{deliveries}} d
  SET status = 'completed', completed_at = now(), finished_at = now()
  FROM r
  WHERE d.id = r.id AND d.dispatch_id::text = r.dispatch_id AND d.job = r.job
    AND d.status = (SELECT 'dispatched')
  RETURNING d.id, d.event_id, d.job, d.queue, d.attempts
)
SELECT true, id, event_id, job, queue, attempts, NULL, NULL FROM completed
UNION ALL
SELECT false, d.id, d.event_id, d.job, d.queue, d.attempts, d.status,
       COALESCE(d.dispatch_id::text, '')
FROM {{deliveries}} d
WHERE d.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT 1 FROM completed c WHERE c.id = d.id)
)sql";

// Dispatched deliveries past their deadline via the partial timeout index.
constexpr const char* timed_out_sql = R"sql(
SELECT {{columns}} FROM {{deliveries}}
WHERE status = 'dispatched' AND delivery_timeout_at <= now()
ORDER BY delivery_timeout_at
LIMIT $1
FOR UPDATE SKIP LOCKED
)sql";

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
SET status = 'expired', finished_at = now(),
    last_error = 'time to live ran out before sending'
FROM x WHERE d.id = x.id
RETURNING d.id, d.event_id, d.job, d.queue, d.attempts
)sql";

// Applies decided transitions to rows this transaction locked and checked
// (status `dispatched`, same dispatch id); the dispatch id is checked once
// more as a guard. The status is deliberately not in the WHERE clause: it
// would match the partial timeout index, which the planner then prefers
// over the primary key although it holds an entry for every send not yet
// vacuumed away (thousands under load, for a batch of ten).
constexpr const char* update_sql = R"sql(
UPDATE {{deliveries}} d SET
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

// `max` is the parameter of the in-flight limit in a claim.
std::string with_names(std::string sql, const schema_names& n,
                       const char* ready = batch_ready,
                       const char* max = "$5") {
  fill_slot(sql, "{{columns}}", decision_columns);
  fill_slot(sql, "{{room}}", room_sql);
  fill_slot(sql, "{{max}}", max);
  fill_slot(sql, "{{ready}}", ready);
  for (const char* column : {"c.expires_at", "expires_at"})
    fill_slot(sql, std::string{"{{expires_us:"} + column + "}}",
              unix_micros(column));
  return fill_names(std::move(sql), n);
}

// Saturating: a time_point ends in 2262, the database's times do not.
time_point from_micros(int64_t us) {
  return from_unix_micros(us);
}

// One row of decision_columns.
struct locked_delivery {
  int64_t id, event_id;
  delivery_status status;
  /// A result of this batch was already decided for it: a duplicate of it
  /// is stale rather than applied twice.
  bool decided = false;
  std::string dispatch_id, job, queue;
  int32_t attempts;
  delivery_rules rules;
  std::optional<time_point> expires_at;
  time_point now;
};

caf::expected<locked_delivery> read_locked(const pg_rows& rows, int i,
                                           const char* statement) {
  locked_delivery d;
  d.id = rows.int64(i, 0);
  auto status = read_status(rows, i, 1, statement);
  if (!status)
    return status.error();
  d.status = *status;
  d.dispatch_id = rows.text(i, 2);
  d.job = rows.text(i, 3);
  d.attempts = static_cast<int32_t>(rows.int64(i, 4));
  d.rules.retry_delays_seconds = parse_pg_int_array(rows.text(i, 5));
  d.rules.repeat_last_delay = rows.text(i, 6) == "t";
  d.expires_at = optional_micros(rows, i, 7);
  d.now = from_micros(rows.int64(i, 8));
  d.event_id = rows.int64(i, 9);
  d.queue = rows.text(i, 10);
  return d;
}

// A decided transition, as the update statement's arrays take it.
struct transition_batch {
  std::vector<pg_param> ids, dispatch_ids, statuses, attempts, available, reasons;
  std::vector<delivery_transition> done;

  void add(const locked_delivery& d, delivery_status status, int32_t attempts_now,
           std::optional<time_point> available_at, pg_param reason) {
    ids.push_back(std::to_string(d.id));
    dispatch_ids.push_back(d.dispatch_id);
    statuses.push_back(std::string{to_string(status)});
    attempts.push_back(std::to_string(attempts_now));
    available.push_back(
      available_at ? pg_param{std::to_string(
        std::chrono::duration_cast<std::chrono::microseconds>(
          available_at->time_since_epoch())
          .count())}
                   : std::nullopt);
    reasons.push_back(std::move(reason));
    done.push_back({d.event_id, d.id, d.job, d.queue, status, attempts_now,
                    available_at});
  }

  // Adds the retry-or-fail (or expire) transition after a failed attempt.
  delivery_status add_failure(const locked_delivery& d, std::string reason) {
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

  pg_params params() const {
    return {pg_text_array(ids),      pg_text_array(dispatch_ids),
            pg_text_array(statuses), pg_text_array(attempts),
            pg_text_array(available), pg_text_array(reasons)};
  }
};

void count_status(delivery_status status, int64_t& retried, int64_t& failed,
                  int64_t& expired) {
  if (status == delivery_status::pending)
    ++retried;
  else if (status == delivery_status::failed)
    ++failed;
  else if (status == delivery_status::expired)
    ++expired;
}

// Runs the conditional update for the decided transitions, if any.
caf::error apply_transitions(pg_connection& conn, const char* name,
                             const std::string& update_sql,
                             const transition_batch& batch) {
  if (batch.ids.empty())
    return caf::none;
  auto rows = conn.exec_prepared(name, update_sql, batch.params());
  return rows ? caf::error{} : rows.error();
}

// Checks one result against its locked delivery and, if it still applies,
// adds its transition.
result_verdict decide_result(const send_result& r, locked_delivery& d,
                             transition_batch& batch, apply_result& out) {
  if (d.decided || d.status != delivery_status::dispatched
      || d.dispatch_id != r.dispatch_id)
    return result_verdict::stale;
  if (d.job != r.job)
    return result_verdict::wrong_job;
  d.decided = true;
  pg_param reason = r.reason.empty() ? std::nullopt : pg_param{r.reason};
  switch (r.result) {
    case outcome::completed:
      batch.add(d, delivery_status::completed, d.attempts, std::nullopt, std::nullopt);
      ++out.completed;
      break;
    case outcome::failed: // not retryable: final whatever retries are left
      batch.add(d, delivery_status::failed, d.attempts + 1, std::nullopt,
                reason ? reason : pg_param{"failed"});
      ++out.failed;
      break;
    case outcome::retry:
      count_status(batch.add_failure(d, reason ? *reason : "retry"),
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

// The verdict on a completion the statement did not apply, from its row as
// it was before (the same order of checks as decide_result).
result_verdict unapplied_verdict(const send_result& r, const pg_rows& rows, int i) {
  if (parse_delivery_status(rows.text(i, 6)) != delivery_status::dispatched
      || rows.text(i, 7) != r.dispatch_id)
    return result_verdict::stale;
  if (rows.text(i, 3) != r.job)
    return result_verdict::wrong_job;
  return result_verdict::stale; // changed by someone else meanwhile
}

} // namespace

delivery_repository::delivery_repository(const schema_names& names)
  : claim_sql_(with_names(claim_sql, names)),
    claim_one_sql_(with_names(claim_sql, names, one_ready, "$3")),
    candidates_sql_(with_names(candidates_sql, names)),
    quarantine_sql_(with_names(quarantine_sql, names)),
    complete_sql_(with_names(complete_sql, names)),
    lock_sql_(with_names(lock_sql, names)),
    update_sql_(with_names(update_sql, names)),
    timed_out_sql_(with_names(timed_out_sql, names)),
    expire_sql_(with_names(expire_sql, names)) {
}

caf::expected<claim_result>
delivery_repository::claim_batch(pg_connection& conn, const std::string& queue,
                                 int32_t batch_size, int32_t max_in_flight) {
  // One statement in autocommit: it commits before anything is published.
  // Its plan may be cached: the ready index is in the claim's order
  // (schema/006), so any plan walks it and stops after the batch.
  auto& cursor = cursors_[queue];
  auto rows = conn.exec_prepared("claim_batch", claim_sql_,
                                 {queue, std::to_string(batch_size),
                                  cursor.available_at, std::to_string(cursor.id),
                                  std::to_string(max_in_flight)});
  if (!rows) {
    cursor = claim_cursor{};
    if (!is_data_error(rows.error()))
      return rows.error();
    // Only after a failure: the hot path never runs more than the claim.
    return claim_one_by_one(conn, queue, batch_size, max_in_flight,
                            sqlstate_of(rows.error()));
  }
  claim_result out;
  claim_cursor after;
  auto taken = read_claim(*rows, out, after);
  // What this claim could take at most: the batch, or less at the limit.
  auto allowed = std::min<int64_t>(batch_size, out.room.value_or(batch_size));
  out.at_limit = allowed < batch_size && taken >= allowed;
  // A claim that took all it could: probably more behind it, and the next
  // claim goes on from here. One that could take nothing learnt nothing
  // and keeps the cursor. Anything else: the next claim starts from the
  // beginning again.
  if (allowed > 0)
    cursor = taken >= allowed ? after : claim_cursor{};
  return out;
}

int64_t delivery_repository::read_claim(const pg_rows& rows, claim_result& out,
                                        claim_cursor& after) {
  int64_t taken = 0;
  for (int i = 0; i < rows.size(); ++i) {
    if (rows.text(i, 0) == "after") {
      after = {rows.text(i, 5), rows.int64(i, 1)};
      continue;
    }
    if (rows.text(i, 0) == "room") {
      out.room = rows.int64(i, 13);
      continue;
    }
    if (rows.text(i, 0) == "next") {
      out.next_ready_seconds.reset();
      if (!rows.is_null(i, 13))
        out.next_ready_seconds = std::max(0.0, rows.int64(i, 13) / 1e6);
      continue;
    }
    ++taken; // the rest are sends and expiries
    if (rows.text(i, 0) == "expired") {
      ++out.expired;
      out.transitions.push_back({rows.int64(i, 2), rows.int64(i, 1),
                                 rows.text(i, 3), rows.text(i, 4),
                                 delivery_status::expired,
                                 static_cast<int32_t>(rows.int64(i, 10)),
                                 std::nullopt});
      continue;
    }
    job_to_send j;
    j.delivery_id = rows.int64(i, 1);
    j.event_id = rows.int64(i, 2);
    j.job = rows.text(i, 3);
    j.queue = rows.text(i, 4);
    j.dispatch_id = rows.text(i, 5);
    j.event_type = rows.text(i, 6);
    j.payload = rows.text(i, 7);
    j.content_type = rows.text(i, 8);
    j.headers_json = rows.text(i, 9);
    j.attempts = static_cast<int32_t>(rows.int64(i, 10));
    delivery_rules rules;
    rules.retry_delays_seconds = parse_pg_int_array(rows.text(i, 11));
    rules.repeat_last_delay = rows.text(i, 12) == "t";
    j.last_attempt = is_last_attempt(
      rules, static_cast<int32_t>(rows.int64(i, 10)),
      from_micros(rows.int64(i, 14)), optional_micros(rows, i, 13));
    out.jobs.push_back(std::move(j));
  }
  return taken;
}

caf::expected<claim_result>
delivery_repository::claim_one_by_one(pg_connection& conn,
                                      const std::string& queue,
                                      int32_t batch_size,
                                      int32_t max_in_flight,
                                      const std::string& batch_state) {
  auto log = logger("dispatcher");
  log->warn("event=claim_failed queue={} sqlstate={} action=claim_one_by_one",
            kv(queue), batch_state);
  auto ids = conn.exec("claim_candidates", candidates_sql_,
                       {queue, std::to_string(batch_size)});
  if (!ids)
    return ids.error();
  claim_result out;
  bool any_claimed = false;
  std::vector<std::pair<std::string, std::string>> failing; // id, SQLSTATE
  for (int i = 0; i < ids->size(); ++i) {
    auto id = ids->text(i, 0);
    // Each alone in autocommit, as the batch would have been.
    auto rows = conn.exec_prepared("claim_one", claim_one_sql_,
                                   {queue, id, std::to_string(max_in_flight)});
    if (rows) {
      any_claimed = true;
      claim_cursor ignored;
      read_claim(*rows, out, ignored);
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
  for (auto& [id, state] : failing) {
    auto q = conn.exec("quarantine_delivery", quarantine_sql_,
                       {id, "quarantined: the claim failed on this delivery "
                            "with SQLSTATE " + state});
    if (!q)
      return q.error();
    if (q->size() == 0)
      continue; // claimed by another dispatcher meanwhile
    ++out.quarantined;
    out.transitions.push_back({q->int64(0, 1), q->int64(0, 0), q->text(0, 2),
                               q->text(0, 3), delivery_status::failed,
                               static_cast<int32_t>(q->int64(0, 4)),
                               std::nullopt});
    log->error("event=delivery_quarantined outboxDeliveryId={} outboxEventId={} "
               "queue={} pass=claim sqlstate={}",
               id, q->text(0, 1), kv(queue), state);
  }
  return out;
}

caf::expected<apply_result>
delivery_repository::apply_results(pg_connection& conn,
                                   const std::vector<send_result>& rs) {
  apply_result out;
  out.verdicts.assign(rs.size(), result_verdict::unknown_delivery);
  if (rs.empty())
    return out;
  if (all_completions(rs))
    return apply_completions(conn, rs);
  std::vector<int64_t> ids;
  for (auto& r : rs)
    ids.push_back(r.delivery_id);
  return in_transaction<apply_result>(conn, [&]() -> caf::expected<apply_result> {
    auto rows = conn.exec_prepared("lock_for_results", lock_sql_,
                                   {pg_int_array(ids)});
    if (!rows)
      return rows.error();
    std::map<int64_t, locked_delivery> locked;
    for (int i = 0; i < rows->size(); ++i) {
      auto d = read_locked(*rows, i, "lock_for_results");
      if (!d)
        return d.error();
      locked.emplace(d->id, std::move(*d));
    }
    transition_batch batch;
    for (size_t i = 0; i < rs.size(); ++i)
      if (auto it = locked.find(rs[i].delivery_id); it != locked.end())
        out.verdicts[i] = decide_result(rs[i], it->second, batch, out);
    if (auto err = apply_transitions(conn, "apply_results", update_sql_, batch))
      return err;
    out.transitions = std::move(batch.done);
    return out;
  });
}

caf::expected<apply_result>
delivery_repository::apply_completions(pg_connection& conn,
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
  std::map<int64_t, int> completed, before; // delivery id -> row
  for (int i = 0; i < rows->size(); ++i)
    (rows->text(i, 0) == "t" ? completed : before)[rows->int64(i, 1)] = i;
  apply_result out;
  out.verdicts.assign(rs.size(), result_verdict::unknown_delivery);
  std::set<int64_t> applied;
  for (size_t k = 0; k < rs.size(); ++k) {
    auto id = rs[k].delivery_id;
    if (auto it = completed.find(id); it != completed.end()) {
      if (!applied.insert(id).second) { // a duplicate in this batch
        out.verdicts[k] = result_verdict::stale;
        continue;
      }
      int i = it->second;
      out.transitions.push_back({rows->int64(i, 2), id, rows->text(i, 3),
                                 rows->text(i, 4), delivery_status::completed,
                                 static_cast<int32_t>(rows->int64(i, 5)),
                                 std::nullopt});
      out.verdicts[k] = result_verdict::applied;
      ++out.completed;
    } else if (auto b = before.find(id); b != before.end()) {
      out.verdicts[k] = unapplied_verdict(rs[k], *rows, b->second);
    }
  }
  return out;
}

caf::expected<sweep_result> delivery_repository::sweep(pg_connection& conn,
                                                       int32_t batch_size) {
  return in_transaction<sweep_result>(conn, [&]() -> caf::expected<sweep_result> {
    sweep_result out;
    auto rows = conn.exec_prepared("find_timed_out", timed_out_sql_,
                                   {std::to_string(batch_size)});
    if (!rows)
      return rows.error();
    transition_batch batch;
    for (int i = 0; i < rows->size(); ++i) {
      auto d = read_locked(*rows, i, "find_timed_out");
      if (!d)
        return d.error();
      ++out.timed_out;
      count_status(batch.add_failure(*d, "no result before the delivery timeout"),
                   out.retried, out.failed, out.expired);
    }
    if (auto err = apply_transitions(conn, "apply_timeouts", update_sql_, batch))
      return err;
    out.transitions = std::move(batch.done);
    auto expired = conn.exec_prepared("expire_pending", expire_sql_,
                                      {std::to_string(batch_size)});
    if (!expired)
      return expired.error();
    out.expired += expired->size();
    for (int i = 0; i < expired->size(); ++i)
      out.transitions.push_back({expired->int64(i, 1), expired->int64(i, 0),
                                 expired->text(i, 2), expired->text(i, 3),
                                 delivery_status::expired,
                                 static_cast<int32_t>(expired->int64(i, 4)),
                                 std::nullopt});
    return out;
  });
}

} // namespace outbox
