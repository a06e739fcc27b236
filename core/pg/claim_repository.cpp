#include "core/pg/claim_repository.hpp"

#include <algorithm>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/event_headers.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// A delivery to send as a row of the claim's (and the handed read's):
// `c` the delivery, `e` its event. It names and types every column; the
// claim's other kinds of rows fill them by position.
constexpr const char* send_columns = R"sql(SELECT 'send'::text AS kind, c.id AS id, c.event_id AS event_id,
       c.job AS job, c.queue AS queue, c.dispatch_id::text AS dispatch_id,
       e.event_type AS event_type,
       COALESCE(c.payload_override, e.payload) AS payload,
       e.content_type AS content_type,
       COALESCE(e.headers::text, '') AS headers, c.attempts AS attempts,
       c.retry_delays::text AS retry_delays,
       c.repeat_last_delay AS repeat_last_delay,
       {{unix_micros:c.expires_at}} AS expires_us,
       (extract(epoch FROM now()) * 1000000)::bigint AS now_us,
       NULL::bigint AS next_ready_us, NULL::bigint AS room,
       NULL::text AS cursor_available_at,
       (extract(epoch FROM now() - e.created_at) * 1000000)::bigint AS event_age_us,
       c.delivery_timeout_seconds AS timeout_seconds,
       NULL::bigint AS in_flight, NULL::bigint AS cohort_left)sql";

// Fills the send columns' slot of `sql`.
std::string with_send_columns(std::string sql) {
  fill_slot(sql, "{{send_columns}}", send_columns);
  fill_slot(sql, "{{unix_micros:c.expires_at}}", unix_micros("c.expires_at"));
  return sql;
}

// Ready deliveries of one queue via the partial ready index; SKIP LOCKED
// keeps concurrent dispatchers of a queue apart. Rows past their TTL expire
// here instead of being sent (those of ordered keys hand their key on in
// a statement after the claim's); the rest get a fresh dispatch id. The scan
// starts after the cursor ($3, $4). Besides a row per delivery taken
// ('send', 'expired') it returns, each in a row of its own kind and column
// of its own: when the next pending delivery (a retry, say) becomes ready
// ('next_ready', so a pass needs no second round trip to time the next),
// the last key taken ('cursor') and how many more the queue's in-flight
// limit let this claim take ('room', which also reports what the
// in-flight window measures: in_flight, cohort_left, the shortest timeout
// among those out and the database's clock). The first branch names and
// types every column; the others fill them by position.
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
{{send_columns}}
FROM claimed c JOIN {{events}} e ON e.id = c.event_id
UNION ALL
SELECT 'expired', id, event_id, job, queue, NULL, NULL, NULL, NULL, NULL,
       attempts, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM expired
UNION ALL
SELECT 'next_ready', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL,
       (extract(epoch FROM min(available_at) - now()) * 1000000)::bigint,
       NULL, NULL, NULL, NULL, NULL, NULL
FROM {{deliveries}}
WHERE queue = $1 AND status = 'pending' AND available_at > now()
UNION ALL
(SELECT 'cursor', id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, available_at::text, NULL, NULL,
        NULL, NULL
 FROM ready ORDER BY available_at DESC, id DESC LIMIT 1)
UNION ALL
SELECT 'room', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, now_us, NULL, n, NULL, NULL, timeout_seconds,
       in_flight, cohort_left
FROM room
ORDER BY id
)sql";

// How many more deliveries of queue $1 may be out at once: the limit
// ({{max}}) less those dispatched, read via the partial timeout index,
// which only dispatched rows enter. It counts in the database so that the
// limit holds for every dispatcher of the queue, on any node; claims that
// run at the same moment each see the same count, so together they may
// exceed it by up to a batch each. From the same rows, for the in-flight
// window (core/domain/in_flight_window.hpp): how many of those dispatched
// at or before the cohort's start ({{cohort}}, the database's clock in
// microseconds, compared as such so that a row dispatched at that very
// instant counts) are still out, and the shortest timeout among them.
constexpr const char* room_sql = R"sql(
  SELECT greatest(0, {{max}}::bigint - count(*)) AS n, count(*) AS in_flight,
         count(*) FILTER (WHERE {{unix_micros:dispatched_at}}
                                <= coalesce({{cohort}}::bigint, -1)) AS cohort_left,
         min(delivery_timeout_seconds) AS timeout_seconds,
         (extract(epoch FROM now()) * 1000000)::bigint AS now_us
  FROM {{deliveries}}
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

// The job messages of deliveries a router inserted dispatched and handed
// over (core/domain/handoff.hpp): $1 their ids, $2 the dispatch ids it gave
// them. One no longer dispatched with that id (timed out meanwhile, say)
// is left out, and so is one whose time to live ran out in the meantime. The claim's columns, so that a row reads as a claim's send.
constexpr const char* handed_sql = R"sql(
{{send_columns}}
FROM unnest($1::bigint[], $2::uuid[]) AS h(id, dispatch_id)
JOIN {{deliveries}} c ON c.id = h.id AND c.dispatch_id = h.dispatch_id
                     AND c.status = 'dispatched'
                     AND (c.expires_at IS NULL OR c.expires_at > now())
JOIN {{events}} e ON e.id = c.event_id
ORDER BY c.id
)sql";

// Handed deliveries that were not published back to pending, ready at
// once, with no attempt counted (the dispatcher could not publish them).
constexpr const char* release_handed_sql = R"sql(
UPDATE {{deliveries}} d
SET status = 'pending', dispatch_id = NULL, dispatched_at = NULL,
    delivery_timeout_at = NULL, available_at = now()
FROM unnest($1::bigint[], $2::uuid[]) AS h(id, dispatch_id)
WHERE d.id = h.id AND d.dispatch_id = h.dispatch_id AND d.status = 'dispatched'
RETURNING d.id
)sql";

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
  std::string sql = with_send_columns(claim_sql);
  fill_slot(sql, "{{room}}", room_sql);
  fill_slot(sql, "{{max}}", max);
  fill_slot(sql, "{{cohort}}", cohort);
  fill_slot(sql, "{{unix_micros:dispatched_at}}", unix_micros("dispatched_at"));
  fill_slot(sql, "{{ready}}", ready);
  return fill_names(std::move(sql), n);
}

/// What a row of the claim reports (its `kind` column).
enum class claim_row { send, expired, next_ready, cursor, room };

std::optional<claim_row> parse_claim_row(const std::string& kind) {
  if (kind == "send") return claim_row::send;
  if (kind == "expired") return claim_row::expired;
  if (kind == "next_ready") return claim_row::next_ready;
  if (kind == "cursor") return claim_row::cursor;
  if (kind == "room") return claim_row::room;
  return std::nullopt;
}

// The claim's columns, looked up by name once per result.
struct claim_columns {
  int kind, id, event_id, job, queue, dispatch_id, event_type, payload,
    content_type, headers, attempts, retry_delays, repeat_last_delay,
    expires_us, now_us, next_ready_us, room, cursor_available_at, event_age_us,
    timeout_seconds, in_flight, cohort_left;

  static caf::expected<claim_columns> of(const pg_rows& rows,
                                         const char* statement) {
    column_finder col{rows, statement};
    claim_columns c{col("kind"), col("id"), col("event_id"), col("job"),
                    col("queue"), col("dispatch_id"), col("event_type"),
                    col("payload"), col("content_type"), col("headers"),
                    col("attempts"), col("retry_delays"),
                    col("repeat_last_delay"), col("expires_us"),
                    col("now_us"), col("next_ready_us"), col("room"),
                    col("cursor_available_at"), col("event_age_us"),
                    col("timeout_seconds"), col("in_flight"),
                    col("cohort_left")};
    if (col.error())
      return col.error();
    return c;
  }
};

job_to_send read_send(const pg_rows& rows, int i, const claim_columns& c) {
  job_to_send j;
  j.delivery_id = rows.int64(i, c.id);
  j.event_id = rows.int64(i, c.event_id);
  j.job = rows.text(i, c.job);
  j.queue = rows.text(i, c.queue);
  j.dispatch_id = rows.text(i, c.dispatch_id);
  j.event_type = rows.text(i, c.event_type);
  j.payload = rows.text(i, c.payload);
  j.content_type = rows.text(i, c.content_type);
  j.headers = headers_from_json(rows.text(i, c.headers));
  j.attempts = static_cast<int32_t>(rows.int64(i, c.attempts));
  j.event_age_seconds = static_cast<double>(rows.int64(i, c.event_age_us)) / 1e6;
  delivery_rules rules;
  rules.retry_delays_seconds = parse_pg_int_array(rows.text(i, c.retry_delays));
  rules.repeat_last_delay = rows.text(i, c.repeat_last_delay) == "t";
  rules.delivery_timeout_seconds = static_cast<int32_t>(rows.int64(i, c.timeout_seconds));
  auto now = from_unix_micros(rows.int64(i, c.now_us));
  auto expires_at = optional_micros(rows, i, c.expires_us);
  j.last_attempt = is_last_attempt(rules, j.attempts, now, expires_at);
  j.expiration_ms = message_lifetime_ms(rules, now, expires_at);
  return j;
}

delivery_transition read_expired(const pg_rows& rows, int i,
                                 const claim_columns& c) {
  return {rows.int64(i, c.event_id), rows.int64(i, c.id), rows.text(i, c.job),
          rows.text(i, c.queue), delivery_status::expired,
          static_cast<int32_t>(rows.int64(i, c.attempts)), std::nullopt, std::nullopt};
}

// What one claim statement returned, row by row.
struct claim_rows {
  int64_t taken = 0; ///< sends and expiries
  std::optional<claim_cursor> last; ///< the last key taken, if any
};

// Reads a claim's rows into `out`.
caf::expected<claim_rows> read_claim(const pg_rows& rows, claim_result& out,
                                     const char* statement) {
  auto c = claim_columns::of(rows, statement);
  if (!c)
    return c.error();
  claim_rows got;
  for (int i = 0; i < rows.size(); ++i) {
    auto kind = parse_claim_row(rows.text(i, c->kind));
    if (!kind)
      return make_error(errc::database_error,
                        std::string{statement} + ": unknown row kind");
    switch (*kind) {
      case claim_row::send:
        ++got.taken;
        out.jobs.push_back(read_send(rows, i, *c));
        break;
      case claim_row::expired:
        ++got.taken;
        ++out.expired;
        out.transitions.push_back(read_expired(rows, i, *c));
        break;
      case claim_row::next_ready:
        out.next_ready_seconds.reset();
        if (!rows.is_null(i, c->next_ready_us))
          out.next_ready_seconds
            = std::max(0.0, rows.int64(i, c->next_ready_us) / 1e6);
        break;
      case claim_row::cursor:
        got.last = claim_cursor{rows.text(i, c->cursor_available_at),
                                rows.int64(i, c->id)};
        break;
      case claim_row::room:
        out.room = rows.int64(i, c->room);
        out.window = window_sample{
          rows.int64(i, c->now_us), rows.int64(i, c->in_flight),
          rows.int64(i, c->cohort_left),
          rows.is_null(i, c->timeout_seconds)
            ? 0.0
            : static_cast<double>(rows.int64(i, c->timeout_seconds))};
        break;
    }
  }
  return got;
}

} // namespace

claim_repository::claim_repository(const schema_names& names)
  : claim_sql_(claim_statement(names, batch_ready, "$5", "$6")),
    claim_one_sql_(claim_statement(names, one_ready, "$3", "$4")),
    candidates_sql_(fill_names(candidates_sql, names)),
    quarantine_sql_(fill_names(quarantine_sql, names)),
    release_handed_sql_(fill_names(release_handed_sql, names)), release_(names) {
  handed_sql_ = fill_names(with_send_columns(handed_sql), names);
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
  if (auto got = read_claim(*rows, out, "fetch_handed"); !got)
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
  auto got = read_claim(*rows, out, "claim_batch");
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
      if (auto got = read_claim(*rows, out, "claim_one"); !got)
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
     static_cast<int32_t>(q->int64(0, attempts_col)), std::nullopt, std::nullopt});
  logger("dispatcher")
    ->error("event=delivery_quarantined outboxDeliveryId={} outboxEventId={} "
            "queue={} pass=claim sqlstate={}",
            id, q->text(0, event_col), kv(req.queue), state);
  return caf::none;
}

} // namespace outbox
