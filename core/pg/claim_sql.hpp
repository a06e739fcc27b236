// The claim's SQL text: the claim statement and its pieces (send columns,
// in-flight room, ready rows), the candidates and quarantine after a failed
// claim, and the handed deliveries' read and release (claim_repository).
#pragma once

namespace outbox {
namespace claim_detail {

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
       NULL::bigint AS in_flight, NULL::bigint AS cohort_left,
       NULL::bigint AS paused_us, c.replayed_at IS NOT NULL AS replayed,
       CASE WHEN c.ordered THEN {{unix_micros:c.delivery_timeout_at}}
       END AS start_by_us)sql";

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
  SET handed = false, status = 'expired', finished_at = now(),
      last_error = 'time to live ran out before sending'
  FROM ready r
  WHERE d.id = r.id AND d.expires_at IS NOT NULL AND d.expires_at <= now()
  RETURNING d.id, d.event_id, d.job, d.queue, d.attempts
), claimed AS (
  UPDATE {{deliveries}} d
  SET handed = false, status = 'dispatched', dispatch_id = {{new_dispatch_id}},
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
       attempts, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL
FROM expired
UNION ALL
SELECT 'next_ready', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL,
       (extract(epoch FROM min(available_at) - now()) * 1000000)::bigint,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM {{deliveries}}
WHERE queue = $1 AND status = 'pending' AND available_at > now()
UNION ALL
(SELECT 'cursor', id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, available_at::text, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL
 FROM ready ORDER BY available_at DESC, id DESC LIMIT 1)
UNION ALL
SELECT 'room', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, now_us, NULL, n, NULL, NULL, timeout_seconds,
       in_flight, cohort_left, paused_us, NULL, NULL
FROM room
ORDER BY id
)sql";

// How many more deliveries of queue $1 may be out at once: the limit
// ({{max}}) less those dispatched, read via the partial timeout index,
// which only dispatched rows enter; none while an operator has the queue
// paused (schema/018_queue_pauses.sql), whose pause the row reports as
// `paused_us`: NULL when not paused, -1 until resumed, else microseconds
// until it ends by itself. It counts in the database so that the limit
// holds for every dispatcher of the queue, on any node; claims that run at
// the same moment each see the same count, so together they may exceed it
// by up to a batch each. From the same rows, for the in-flight window
// (core/domain/in_flight_window.hpp): how many of those dispatched at or
// before the cohort's start ({{cohort}}, the database's clock in
// microseconds, compared as such so that a row dispatched at that very
// instant counts) are still out, and the shortest timeout among them.
constexpr const char* room_sql = R"sql(
  SELECT CASE WHEN p.paused_us IS NULL
              THEN greatest(0, {{max}}::bigint - o.in_flight) ELSE 0 END AS n,
         o.*, p.paused_us
  FROM (
    SELECT count(*) AS in_flight,
           count(*) FILTER (WHERE {{unix_micros:dispatched_at}}
                                  <= coalesce({{cohort}}::bigint, -1)) AS cohort_left,
           min(delivery_timeout_seconds) AS timeout_seconds,
           (extract(epoch FROM now()) * 1000000)::bigint AS now_us
    FROM {{deliveries}}
    WHERE queue = $1 AND status = 'dispatched') o
  LEFT JOIN (
    SELECT coalesce((extract(epoch FROM resume_at - now()) * 1000000)::bigint,
                    -1) AS paused_us
    FROM {{deliveries}}_paused
    WHERE queue = $1 AND (resume_at IS NULL OR resume_at > now())) p ON true
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
SET handed = false, status = 'failed', failed_at = now(), finished_at = now(),
    last_error = $2
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
// once, with no attempt counted (the dispatcher could not publish them),
// and logged (schema/021): only a send may be an unlogged row.
constexpr const char* release_handed_sql = R"sql(
UPDATE {{deliveries}} d
SET handed = false, status = 'pending', dispatch_id = NULL, dispatched_at = NULL,
    delivery_timeout_at = NULL, available_at = now()
FROM unnest($1::bigint[], $2::uuid[]) AS h(id, dispatch_id)
WHERE d.id = h.id AND d.dispatch_id = h.dispatch_id AND d.status = 'dispatched'
RETURNING d.id
)sql";

} // namespace claim_detail
} // namespace outbox
