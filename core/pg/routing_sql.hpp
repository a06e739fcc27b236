// The routing pass's SQL text: the lead, the look, the routing statement,
// the quarantine, the notification and the coalescing (routing_repository).
#pragma once

namespace outbox {
namespace routing_detail {

// The first statement of a routing transaction: whether this router leads
// (one router routes at a time: the cursor is one position), the stored
// cursor (C, A and G as ranges) with the floor of the handed deliveries
// and whether a crash emptied their partition (schema/021), and, when $1, a sample of the routing horizon
// (core/domain/routing_horizon.hpp): the newest event id taken, read from
// the id's sequence by a sub-select that runs before the rest (a plain
// read: pg_sequence_last_value() would take the lock read next), then the
// transactions that hold the sequence's ROW EXCLUSIVE lock. nextval()
// takes it before it hands out an id and keeps it until the top-level
// transaction ends (schema/014_no_insert_trigger.sql), so whoever took an
// id up to the newest one and has not ended is among them, and nobody
// else. The look at the events is a later statement, so its snapshot sees
// whatever such a transaction committed.
constexpr const char* lead_sql = R"sql(
SELECT pg_try_advisory_xact_lock(hashtextextended('{{events}} routing', 0))
         AS leads,
       c.position, c.scanned, array_to_string(c.open_ranges, ' ') AS open_ranges,
       c.handed_floor,
       NOT EXISTS (SELECT 1 FROM {{deliveries}}_handed_alive) AS handed_lost,
       s.q AS last_event_id,
       CASE WHEN $1::boolean THEN array_to_string(ARRAY(
         SELECT l.virtualtransaction FROM pg_locks l
         WHERE l.locktype = 'relation'
           AND l.database = (SELECT oid FROM pg_database
                             WHERE datname = current_database())
           AND l.relation = '{{events}}_id_seq'::regclass
           AND l.mode = 'RowExclusiveLock'
           AND l.granted
           -- a prepared transaction's locks show no pid: it counts
           AND l.pid IS DISTINCT FROM pg_backend_pid()), ' ')
       ELSE '' END AS holders
FROM (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS q
      FROM {{events}}_id_seq OFFSET 0) s
LEFT JOIN {{events}}_routing c ON c.name = 'cursor'
)sql";

// The look (core/domain/routing_cursor.hpp): the next events above A ($1,
// at most $2, by the primary key), the open ids again ($3), and set-aside
// events of the routed types ($4). While set-aside events of routed types
// wait, nothing newer is read: they are older, and go first (a set-aside
// row whose event was deleted by hand counts for nothing).
//
// The routing session runs one generic plan of each statement, made at its
// first pass, maybe on empty tables (db_stores.cpp). So no statement of
// routing leaves PostgreSQL a choice that only the tables' size decides
// well: an event is looked up by its id in a sub-select that `OFFSET 0`
// keeps a lookup per row (PostgreSQL neither turns it into a join nor
// hashes the whole table for it), and a set-aside row by its id and the
// routes' types (only an event of a routed type is routed, and its row was
// set aside with its type), which both of its indexes find at once (by the
// id alone, a plan made on empty tables walked the whole type index for
// each). A generic
// plan made on empty tables had joined the events to the set-aside ones by
// reading every event: 60 ms per look with 100,000 events
// (tests/integration/query_plans).
constexpr const char* look_sql = R"sql(
(SELECT e.id, e.event_type, e.key IS NOT NULL AS keyed,
        e.quarantined_at IS NOT NULL AS quarantined, false AS set_aside
 FROM {{events}} e
 WHERE e.id > $1::bigint
   AND NOT EXISTS (SELECT 1 FROM {{events}}_unrouted u
                   WHERE u.event_type = ANY($4::text[])
                     AND EXISTS (SELECT 1 FROM {{events}} x
                                 WHERE x.id = u.event_id OFFSET 0))
 ORDER BY e.id LIMIT $2)
UNION ALL
SELECT e.id, e.event_type, e.key IS NOT NULL, e.quarantined_at IS NOT NULL, false
FROM {{events}} e WHERE e.id = ANY($3::bigint[])
UNION ALL
SELECT e.id, e.event_type, e.key IS NOT NULL, false, true
FROM (SELECT event_id FROM {{events}}_unrouted
      WHERE event_type = ANY($4::text[]) ORDER BY event_id LIMIT $2) u
CROSS JOIN LATERAL (SELECT x.id, x.event_type, x.key FROM {{events}} x
                    WHERE x.id = u.event_id OFFSET 0) e
)sql";

// Routes the events $2 (ids the look decided on): inserts one delivery per
// route with the rules copied in, in event order (the unique key of
// (event, job, queue) of each partition guards against routing one twice while its
// deliveries are there; the stored cursor is what keeps it from
// happening). Sets aside the events $3 (types without routes) and stores
// the cursor: C in $4 (-1: unchanged), A in $7, G as ranges in $8. Routes arrive as one JSON parameter
// so the statement stays prepared-shaped whatever the config. (PostgreSQL
// runs every data-modifying CTE once, referenced or not.)
//
// Claim on route (core/domain/handoff.hpp): a delivery of a queue in $5
// (with the room its dispatcher's credit gives in $6) is inserted
// dispatched, with its dispatch id and timeout, when it would be ready at
// once and nothing else may touch it before it is sent: not of an ordered
// key (parked behind its key's holder), not coalescing (a newer delivery
// of its key supersedes only waiting ones), not past its time to live,
// and no more than the room, in event order. The rest are inserted
// pending, as they all are without a handoff.
//
// Only new events are handed: above the stored cursor's position and not
// set aside. An older one (set aside until its type had a route, a replay,
// one routed alone) may be below what retention already took, and routing
// it changes nothing of the cursor, so the floor would not be stored
// (schema/021); a transaction that routes new events always stores it.
// A handed delivery goes to the unlogged partition (handed = true), and
// when the cursor is stored ($4), so is the floor of the handed events:
// the lowest event id in that partition, counting this statement's own
// (which its snapshot does not see).
//
// Replay (outboxctl replay, replay_repository): routes whose `replay` is
// set mark their deliveries replayed (replayed_at) and count their time to
// live from now, not from the event's creation.
//
// Recovery ($9, routing_recovery.cpp, the statement with
// recovered_only_sql in its slot): the unlogged partition was emptied by a
// crash of PostgreSQL. The events $2 are routed again, nothing handed, for
// the routes whose deliveries may have been handed, leaving out those
// already in the completion log; one in the logged partition is a
// conflict, so nothing. The everyday statement has an empty slot: its
// generic plan (routing_session_settings) then holds no lookup in the
// completion log, which has no B-tree.
constexpr const char* route_sql = R"sql(
WITH routes AS (SELECT * FROM {{routes}}), claimed AS (
  SELECT e.id, e.event_type, e.key, e.expires_at, e.created_at
  FROM {{events}} e
  WHERE e.id = ANY($2::bigint[]) AND e.quarantined_at IS NULL
), stored AS (
  SELECT position FROM {{events}}_routing WHERE name = 'cursor'
), handoff AS (
  SELECT h.queue, h.room FROM unnest($5::text[], $6::bigint[]) AS h(queue, room)
), made AS (
  SELECT c.id AS event_id, r.job, r.queue, r.retry_delays, r.repeat_last_delay,
         r.delivery_timeout_seconds, r.merge, x.expires_at, c.key, o.ordered,
         r.replay,
         o.ordered AND r.on_failure = 'block' AS block_on_failure,
         h.handy AND (x.expires_at IS NULL OR x.expires_at > now())
           AND c.id > (SELECT position FROM stored)
           AND NOT EXISTS (SELECT 1 FROM {{events}}_unrouted u
                           WHERE u.event_id = c.id
                             AND u.event_type = ANY(ARRAY(SELECT event_type FROM routes))
                           OFFSET 0) AS handable
  FROM claimed c JOIN routes r ON r.event_type = c.event_type
  CROSS JOIN LATERAL (SELECT r.ordering = 'key' AND c.key IS NOT NULL) AS o(ordered)
  CROSS JOIN LATERAL (SELECT NOT o.ordered AND (c.key IS NULL OR r.merge = 'none'))
    AS h(handy)
  CROSS JOIN LATERAL (SELECT CASE WHEN r.ttl_seconds > 0
      THEN LEAST(c.expires_at, CASE WHEN r.replay THEN now() ELSE c.created_at END
                               + make_interval(secs => r.ttl_seconds))
      ELSE c.expires_at END) AS x(expires_at)
  WHERE NOT $9::boolean {{recovered_only}}
), handed AS (
  SELECT m.*, m.handable AND row_number() OVER (
           PARTITION BY m.queue, m.handable ORDER BY m.event_id, m.job)
         <= coalesce(h.room, 0) AS hand
  FROM made m LEFT JOIN handoff h ON h.queue = m.queue
), inserted AS (
  INSERT INTO {{deliveries}} (event_id, job, queue, retry_delays,
    repeat_last_delay, delivery_timeout_seconds, merge, expires_at, coalesce_key,
    ordered, block_on_failure, available_at, status, dispatch_id, dispatched_at,
    delivery_timeout_at, replayed_at, handed)
  SELECT m.event_id, m.job, m.queue, m.retry_delays, m.repeat_last_delay,
         m.delivery_timeout_seconds, m.merge, m.expires_at, m.key, m.ordered,
         m.block_on_failure,
         CASE WHEN m.ordered THEN NULL ELSE now() END,
         CASE WHEN m.hand THEN 'dispatched' ELSE 'pending' END,
         CASE WHEN m.hand THEN {{new_dispatch_id}} END,
         CASE WHEN m.hand THEN now() END,
         CASE WHEN m.hand
              THEN now() + make_interval(secs => m.delivery_timeout_seconds) END,
         CASE WHEN m.replay THEN now() END,
         m.hand
  FROM handed m
  -- Each partition's unique key guards only its own rows: a delivery in
  -- the other one (a replay's, or one routed before a cursor reset) is
  -- looked up.
  -- (OFFSET 0: a lookup per row, never the table hashed; see look_sql.)
  WHERE CASE WHEN m.hand
          THEN NOT EXISTS (SELECT 1 FROM {{deliveries}}_logged l
                           WHERE l.event_id = m.event_id AND l.job = m.job
                             AND l.queue = m.queue OFFSET 0)
          ELSE NOT EXISTS (SELECT 1 FROM {{deliveries}}_handed l
                           WHERE l.event_id = m.event_id AND l.job = m.job
                             AND l.queue = m.queue OFFSET 0) END
  ORDER BY m.event_id, m.job, m.queue
  ON CONFLICT DO NOTHING
  RETURNING id, event_id, queue, coalesce_key, job, merge, ordered, status,
            dispatch_id
), taken AS (
  DELETE FROM {{events}}_unrouted u
  WHERE u.event_id = ANY($2::bigint[]) AND NOT $9::boolean
    AND u.event_type = ANY(ARRAY(SELECT event_type FROM routes))
), aside AS (
  INSERT INTO {{events}}_unrouted (event_id, event_type)
  SELECT e.id, e.event_type FROM {{events}} e WHERE e.id = ANY($3::bigint[])
  ON CONFLICT (event_id) DO NOTHING
), moved AS (
  UPDATE {{events}}_routing
  SET position = $4::bigint, scanned = $7::bigint,
      open_ranges = NULLIF($8::bigint[], '{}'),
      handed_floor = LEAST(
        (SELECT event_id FROM {{deliveries}}_handed ORDER BY event_id LIMIT 1),
        (SELECT min(event_id) FROM inserted WHERE status = 'dispatched'))
  WHERE name = 'cursor' AND $4::bigint >= 0
)
SELECT 'queue' AS kind, queue, NULL AS job, count(*), NULL AS coalesce_key
FROM inserted WHERE status = 'pending' GROUP BY queue
UNION ALL
SELECT 'handed', queue, dispatch_id::text, id, NULL FROM inserted
  WHERE status = 'dispatched'
UNION ALL
SELECT DISTINCT 'key', queue, job, 0, coalesce_key FROM inserted
  WHERE coalesce_key IS NOT NULL AND merge <> 'none'
UNION ALL
SELECT 'ordered', NULL, NULL, id, NULL FROM inserted WHERE ordered
UNION ALL
SELECT 'events', NULL, NULL, count(DISTINCT event_id), NULL FROM inserted
)sql";

// What the recovery's routing statement puts in route_sql's slot.
constexpr const char* recovered_only_sql = R"sql(
     OR (h.handy AND NOT EXISTS (
           SELECT 1 FROM {{deliveries}}_completed l
           WHERE l.event_id = c.id AND l.job = r.job AND l.queue = r.queue))
)sql";

// Takes an event out of routing for good (see schema/009_quarantine.sql),
// and keeps its place in each key order it belongs to: for every ordered
// route of its type, an event with a key gets a delivery that is failed
// at once (`last_error` "quarantined: ...", the same mark as a delivery
// the claim quarantines). On a route with `onFailure: block` that row
// holds the key as any failed head does (outboxctl blocked lists it,
// retry, skip and forget act on it); with `continue` it lets the key go
// on and stays in the list of failed deliveries. Without it, the key's
// next event would go out as if this one had never been published. Only
// the rules that need no computation on the event are copied (no time to
// live: the event's data may be what failed). Returns the event's id and
// type, and how many such rows it made.
constexpr const char* quarantine_held_sql = R"sql(
WITH routes AS (SELECT * FROM {{routes}}), q AS (
  UPDATE {{events}}
  SET quarantined_at = now(), quarantine_reason = $3
  WHERE id = $2 AND quarantined_at IS NULL
  RETURNING id, event_type, key
), held AS (
  INSERT INTO {{deliveries}} (event_id, job, queue, retry_delays,
    repeat_last_delay, delivery_timeout_seconds, merge, coalesce_key, ordered,
    block_on_failure, available_at, status, failed_at, finished_at, last_error)
  SELECT q.id, r.job, r.queue, r.retry_delays, r.repeat_last_delay,
         r.delivery_timeout_seconds, r.merge, q.key, true,
         r.on_failure = 'block', now(), 'failed', now(), now(),
         'quarantined: ' || $3
  FROM q JOIN routes r ON r.event_type = q.event_type
  WHERE r.ordering = 'key' AND q.key IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING id
)
SELECT q.id, q.event_type, (SELECT count(*) FROM held) FROM q
)sql";

// The quarantine alone, when the one above failed on the event's data too
// (a key no index can hold, say: then no event of that key routes at all).
constexpr const char* quarantine_sql = R"sql(
UPDATE {{events}}
SET quarantined_at = now(), quarantine_reason = $2
WHERE id = $1 AND quarantined_at IS NULL
RETURNING id, event_type, 0
)sql";

// Before coalescing or releasing keys in a routing transaction: the
// routing session plans every statement generically (db_stores.cpp,
// routing_session_settings); these two are planned for their batch's
// values, as in every other session (a generic coalescing plan made while
// the tables were small scans the whole coalesce index).
constexpr const char* plans_by_values_sql = "SET LOCAL plan_cache_mode = auto";

// One notification per payload: a routing transaction sends one per queue,
// never one per event (NOTIFY serializes committing transactions on a
// cluster-wide lock).
constexpr const char* notify_sql = R"sql(
SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p
)sql";

// For each (key, job, queue) that just received a delivery: the newest
// pending delivery wins, older pending ones become superseded by it; with
// json-merge the winner's payload becomes the RFC 7396 fold of all of them,
// oldest first (the folded ids are listed first and then looked up: an OR
// of the two conditions made PostgreSQL scan both tables whole). The
// triples come as arrays and hit the partial coalesce index. (PostgreSQL
// runs every data-modifying CTE once, referenced or not: `merged` always
// applies.)
constexpr const char* coalesce_sql = R"sql(
WITH targets AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
    AS t(coalesce_key, job, queue)
), newest AS (
  SELECT DISTINCT ON (d.coalesce_key, d.job, d.queue)
         d.id, d.coalesce_key, d.job, d.queue, d.merge
  FROM {{deliveries}} d JOIN targets t USING (coalesce_key, job, queue)
  WHERE d.status = 'pending'
  ORDER BY d.coalesce_key, d.job, d.queue, d.id DESC
), older AS (
  SELECT o.id, n.id AS newest, n.merge
  FROM {{deliveries}} o JOIN newest n USING (coalesce_key, job, queue)
  WHERE o.status = 'pending' AND o.id < n.id
  FOR UPDATE OF o
), merged AS (
  UPDATE {{deliveries}} w SET payload_override = (
    SELECT {{events}}_merge_patch_agg(
             COALESCE(d.payload_override, e.payload)::jsonb ORDER BY d.id)::text
    FROM (SELECT w.id UNION ALL SELECT id FROM older WHERE newest = w.id)
         AS folded(id)
    JOIN {{deliveries}} d ON d.id = folded.id
    JOIN {{events}} e ON e.id = d.event_id)
  FROM newest n
  WHERE w.id = n.id AND n.merge = 'json-merge'
    AND EXISTS (SELECT 1 FROM older WHERE newest = w.id)
  RETURNING w.id
)
UPDATE {{deliveries}} o
SET status = 'superseded', superseded_by = older.newest, finished_at = now()
FROM older
WHERE o.id = older.id
RETURNING o.id, o.event_id, o.job, o.queue, older.newest, older.merge
)sql";

// Recovery (routing_recovery.cpp): the events from the floor $1 up to the
// stored cursor's scanned id $2, by the primary key, but not those set
// aside (their types had no route: nothing of theirs was handed).
constexpr const char* recovery_look_sql = R"sql(
SELECT e.id FROM {{events}} e
WHERE e.id >= $1::bigint AND e.id <= $2::bigint
  AND NOT EXISTS (SELECT 1 FROM {{events}}_unrouted u WHERE u.event_id = e.id)
ORDER BY e.id
)sql";

// The unlogged partition holds what it held again (schema/021).
constexpr const char* handed_alive_sql = R"sql(
INSERT INTO {{deliveries}}_handed_alive DEFAULT VALUES ON CONFLICT DO NOTHING
)sql";

} // namespace routing_detail
} // namespace outbox
