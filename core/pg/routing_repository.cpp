#include "core/pg/routing_repository.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/domain/ready_notice.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

// The first statement of a routing transaction: whether this router leads
// (one router routes at a time: the cursor is one position), the stored
// cursor (C, A and G as ranges), and, when $1, a sample of the routing horizon
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
constexpr const char* look_sql = R"sql(
SELECT e.id, e.event_type, e.key IS NOT NULL AS keyed,
       e.quarantined_at IS NOT NULL AS quarantined, false AS set_aside
FROM (SELECT id FROM {{events}} WHERE id > $1::bigint
        AND NOT EXISTS (SELECT 1 FROM {{events}}_unrouted u
                        JOIN {{events}} e ON e.id = u.event_id
                        WHERE u.event_type = ANY($4::text[]))
      ORDER BY id LIMIT $2) n
JOIN {{events}} e ON e.id = n.id
UNION ALL
SELECT e.id, e.event_type, e.key IS NOT NULL, e.quarantined_at IS NOT NULL, false
FROM {{events}} e WHERE e.id = ANY($3::bigint[])
UNION ALL
SELECT e.id, e.event_type, e.key IS NOT NULL, false, true
FROM (SELECT event_id FROM {{events}}_unrouted
      WHERE event_type = ANY($4::text[]) ORDER BY event_id LIMIT $2) u
JOIN {{events}} e ON e.id = u.event_id
)sql";

// Routes the events $2 (ids the look decided on): inserts one delivery per
// route with the rules copied in, in event order (the unique key of
// (event, job, queue) guards against routing one twice while its
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
constexpr const char* route_sql = R"sql(
WITH routes AS (SELECT * FROM {{routes}}), claimed AS (
  SELECT e.id, e.event_type, e.key, e.expires_at, e.created_at
  FROM {{events}} e
  WHERE e.id = ANY($2::bigint[]) AND e.quarantined_at IS NULL
), handoff AS (
  SELECT h.queue, h.room FROM unnest($5::text[], $6::bigint[]) AS h(queue, room)
), made AS (
  SELECT c.id AS event_id, r.job, r.queue, r.retry_delays, r.repeat_last_delay,
         r.delivery_timeout_seconds, r.merge, x.expires_at, c.key, o.ordered,
         o.ordered AND r.on_failure = 'block' AS block_on_failure,
         NOT o.ordered AND (c.key IS NULL OR r.merge = 'none')
           AND (x.expires_at IS NULL OR x.expires_at > now()) AS handable
  FROM claimed c JOIN routes r ON r.event_type = c.event_type
  CROSS JOIN LATERAL (SELECT r.ordering = 'key' AND c.key IS NOT NULL) AS o(ordered)
  CROSS JOIN LATERAL (SELECT CASE WHEN r.ttl_seconds > 0
      THEN LEAST(c.expires_at, c.created_at + make_interval(secs => r.ttl_seconds))
      ELSE c.expires_at END) AS x(expires_at)
), handed AS (
  SELECT m.*, m.handable AND row_number() OVER (
           PARTITION BY m.queue, m.handable ORDER BY m.event_id, m.job)
         <= coalesce(h.room, 0) AS hand
  FROM made m LEFT JOIN handoff h ON h.queue = m.queue
), inserted AS (
  INSERT INTO {{deliveries}} (event_id, job, queue, retry_delays,
    repeat_last_delay, delivery_timeout_seconds, merge, expires_at, coalesce_key,
    ordered, block_on_failure, available_at, status, dispatch_id, dispatched_at,
    delivery_timeout_at)
  SELECT m.event_id, m.job, m.queue, m.retry_delays, m.repeat_last_delay,
         m.delivery_timeout_seconds, m.merge, m.expires_at, m.key, m.ordered,
         m.block_on_failure,
         CASE WHEN m.ordered THEN NULL ELSE now() END,
         CASE WHEN m.hand THEN 'dispatched' ELSE 'pending' END,
         CASE WHEN m.hand THEN gen_random_uuid() END,
         CASE WHEN m.hand THEN now() END,
         CASE WHEN m.hand
              THEN now() + make_interval(secs => m.delivery_timeout_seconds) END
  FROM handed m
  ORDER BY m.event_id, m.job, m.queue
  ON CONFLICT (event_id, job, queue) DO NOTHING
  RETURNING id, event_id, queue, coalesce_key, job, merge, ordered, status,
            dispatch_id
), taken AS (
  DELETE FROM {{events}}_unrouted u WHERE u.event_id = ANY($2::bigint[])
), aside AS (
  INSERT INTO {{events}}_unrouted (event_id, event_type)
  SELECT e.id, e.event_type FROM {{events}} e WHERE e.id = ANY($3::bigint[])
  ON CONFLICT (event_id) DO NOTHING
), moved AS (
  UPDATE {{events}}_routing
  SET position = $4::bigint, scanned = $7::bigint,
      open_ranges = NULLIF($8::bigint[], '{}')
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

// Takes an event out of routing for good (see schema/009_quarantine.sql).
constexpr const char* quarantine_sql = R"sql(
UPDATE {{events}}
SET quarantined_at = now(), quarantine_reason = $2
WHERE id = $1 AND quarantined_at IS NULL
RETURNING id, event_type
)sql";

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

// The routes' event types as a text[] literal (the look's $4).
std::string routed_types(const std::vector<route>& routes) {
  std::vector<pg_param> types;
  for (auto& r : routes)
    types.push_back(r.event_type);
  return pg_text_array(types);
}

// The queues a routing statement may hand deliveries to, as its $5 and $6.
std::pair<std::string, std::string>
handoff_params(const std::vector<handoff_queue>& handoff) {
  std::vector<pg_param> queues;
  std::vector<int64_t> rooms;
  for (auto& h : handoff) {
    queues.push_back(h.queue);
    rooms.push_back(h.room);
  }
  return {pg_text_array(queues), pg_int_array(rooms)};
}

// Adds what a later routing transaction of the same pass did to `into`.
void add_to(routing_result& into, routing_result&& from) {
  into.events_routed += from.events_routed;
  into.deliveries_created += from.deliveries_created;
  into.deliveries_superseded += from.deliveries_superseded;
  into.deliveries_released += from.deliveries_released;
  into.events_quarantined += from.events_quarantined;
  for (auto& s : from.superseded)
    into.superseded.push_back(std::move(s));
  for (auto& [queue, n] : from.per_queue)
    into.per_queue[queue] += n;
  for (auto& [queue, ds] : from.handed)
    for (auto& d : ds)
      into.handed[queue].push_back(std::move(d));
  into.more = into.more || from.more;
  into.due_ms = from.due_ms;
  if (from.held_back) {
    into.held_back = true;
    into.held_retry_ms = from.held_retry_ms;
  }
}

} // namespace

std::string with_routes(std::string sql) {
  const std::string slot = "{{routes}}";
  sql.replace(sql.find(slot), slot.size(),
              "jsonb_to_recordset($1::jsonb) AS r(event_type text, job text,"
              " queue text, retry_delays integer[], repeat_last_delay boolean,"
              " delivery_timeout_seconds integer, ttl_seconds bigint,"
              " merge text, ordering text, on_failure text)");
  return sql;
}

std::string routes_to_json(const std::vector<route>& routes) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartArray();
  for (auto& r : routes) {
    w.StartObject();
    w.Key("event_type");
    w.String(r.event_type.c_str());
    w.Key("job");
    w.String(r.job.c_str());
    w.Key("queue");
    w.String(r.queue.c_str());
    w.Key("retry_delays");
    w.StartArray();
    for (auto d : r.rules.retry_delays_seconds)
      w.Int(d);
    w.EndArray();
    w.Key("repeat_last_delay");
    w.Bool(r.rules.repeat_last_delay);
    w.Key("delivery_timeout_seconds");
    w.Int(r.rules.delivery_timeout_seconds);
    w.Key("ttl_seconds");
    w.Int64(r.rules.ttl_seconds);
    w.Key("merge");
    w.String(to_string(r.rules.merge));
    w.Key("ordering");
    w.String(to_string(r.rules.ordering));
    w.Key("on_failure");
    w.String(to_string(r.rules.on_failure));
    w.EndObject();
  }
  w.EndArray();
  return sb.GetString();
}

routing_repository::routing_repository(const schema_names& names,
                                       const std::vector<route>& routes,
                                       std::optional<ready_notify> notify)
  : notify_(std::move(notify)), routes_json_(routes_to_json(routes)),
    routed_types_(routed_types(routes)),
    any_ordered_(std::any_of(routes.begin(), routes.end(), [](const route& r) {
      return r.rules.ordering == key_ordering::key;
    })),
    lead_sql_(fill_names(lead_sql, names)),
    look_sql_(fill_names(look_sql, names)),
    release_(names),
    route_sql_(fill_names(with_routes(route_sql), names)),
    quarantine_sql_(fill_names(quarantine_sql, names)),
    coalesce_sql_(fill_names(coalesce_sql, names)) {
  for (auto& r : routes) {
    routed_.insert(r.event_type);
    if (r.rules.ordering == key_ordering::key)
      ordered_.insert(r.event_type);
  }
}

caf::expected<routing_result>
routing_repository::route_batch(pg_connection& conn, int32_t batch_size,
                                const std::vector<handoff_queue>& handoff) {
  handoff_params_ = handoff_params(handoff);
  auto routed = route_pass(conn, batch_size);
  if (!routed) {
    if (!is_data_error(routed.error()) || tried_.empty())
      return routed;
    // Only after a failure: the hot path never runs more than the batch.
    auto one_by_one = route_one_by_one(conn, sqlstate_of(routed.error()));
    if (!one_by_one)
      return one_by_one;
    // The same look again moves the cursor past them: the routed ones
    // have their deliveries, the quarantined ones are passed. Should it
    // fail, the next pass tries again.
    if (auto after = route_pass(conn, batch_size))
      add_to(*one_by_one, std::move(*after));
    return one_by_one;
  }
  // Events this transaction only took a sample for: the next one, a moment
  // later, usually finds the older transactions ended and routes them in
  // this pass (routing_horizon.hpp). Under load (it routed some) the next
  // wake-up comes soon anyway, and a bigger batch then costs less per event
  // than a second transaction now.
  if (routed->held_back && horizon_.progressed() && routed->events_routed == 0) {
    auto more = route_pass(conn, batch_size);
    // The first transaction committed: its work is reported either way. A
    // failure here comes back in the next pass, which handles it.
    if (more)
      add_to(*routed, std::move(*more));
    else
      routed->held_retry_ms = 2;
  }
  return routed;
}

struct routing_repository::coalesce_targets {
  std::vector<pg_param> keys, jobs, queues;
};

caf::expected<routing_repository::lead>
routing_repository::read_lead(pg_connection& conn, bool sample) {
  auto rows = conn.exec_prepared("routing_lead", lead_sql_,
                                 {sample ? "true" : "false"});
  if (!rows)
    return rows.error();
  column_finder col{*rows, "routing_lead"};
  int leads = col("leads"), position = col("position"), scanned = col("scanned"),
      open = col("open_ranges"), q = col("last_event_id"), holders = col("holders");
  if (col.error())
    return col.error();
  if (rows->size() != 1 || rows->is_null(0, position))
    return make_error(errc::database_error,
                      "routing_lead: no routing cursor (schema/015)");
  lead out;
  out.leads = rows->text(0, leads) == "t";
  out.stored.done = rows->int64(0, position);
  out.stored.scanned = rows->is_null(0, scanned) ? out.stored.done
                                                 : rows->int64(0, scanned);
  std::vector<int64_t> ranges;
  std::istringstream bounds{rows->text(0, open)};
  for (int64_t id; bounds >> id;)
    ranges.push_back(id);
  auto open_ids = from_ranges(ranges);
  if (!open_ids)
    return make_error(errc::database_error,
                      "routing_lead: the stored cursor's open_ranges in "
                      "<events>_routing are malformed (an even count of "
                      "[first, last] pairs, at most 10,000 ids, is expected): "
                      "routing waits until it is mended");
  out.stored.open = std::move(*open_ids);
  out.sample.last_event_id = rows->int64(0, q);
  std::istringstream words{rows->text(0, holders)};
  for (std::string vxid; words >> vxid;)
    out.sample.holders.insert(vxid);
  return out;
}

caf::expected<routing_repository::look_result>
routing_repository::look(pg_connection& conn, int32_t limit) {
  std::vector<int64_t> open{cursor_.open().begin(), cursor_.open().end()};
  auto rows = conn.exec_prepared(
    "routing_look", look_sql_,
    {std::to_string(cursor_.scanned()),
     std::to_string(cursor_.may_look_ahead() ? limit : 0), pg_int_array(open),
     routed_types_});
  if (!rows)
    return rows.error();
  look_result out;
  for (int i = 0; i < rows->size(); ++i) {
    seen_event e;
    e.id = rows->int64(i, 0);
    auto type = rows->text(i, 1);
    e.routable = routed_.count(type) > 0;
    e.ordered = rows->text(i, 2) == "t" && ordered_.count(type) > 0;
    e.quarantined = rows->text(i, 3) == "t";
    e.set_aside = rows->text(i, 4) == "t";
    if (!e.set_aside && e.id > cursor_.scanned())
      ++out.ahead;
    out.events.push_back(e);
  }
  return out;
}

caf::expected<routing_result>
routing_repository::route_pass(pg_connection& conn, int32_t batch_size) {
  tried_.clear();
  routing_step step;
  auto out = in_transaction<routing_result>(conn, [&]() -> caf::expected<routing_result> {
    // Without ordered routes and open ids the horizon is not needed: a gap
    // the look finds waits for the next pass, which samples it. The first
    // pass samples too: events deleted before the router started (below
    // the newest id taken, with nobody inserting) are then settled at once.
    bool sample = any_ordered_ || !cursor_.open().empty() || first_pass_;
    first_pass_ = false;
    auto lead = read_lead(conn, sample);
    if (!lead)
      return lead.error();
    if (!lead->leads)
      return routing_result{}; // another router routes now
    // What is stored is what committed: routing commits are asynchronous,
    // so after a crash of the server it is all that is left, and another
    // router may have moved it since this one's last pass.
    cursor_.resume(lead->stored);
    if (lead->sample.last_event_id < cursor_.done()) {
      // The newest id taken is below the cursor: the sequence went back (a
      // database restored without its routing table, a reset). Ids the
      // cursor passed may be handed out again, and which is unknown: it
      // starts over (routing an event again creates nothing twice).
      logger("router")->warn("event=routing_cursor_reset position={} last_event_id={}",
                             cursor_.done(), lead->sample.last_event_id);
      cursor_.restart(0);
      horizon_.reset(); // its safe id may be above ids now taken again
    }
    auto safe = sample ? horizon_.advance(std::move(lead->sample))
                       : horizon_.safe_id();
    auto seen = look(conn, batch_size);
    if (!seen)
      return seen.error();
    step = cursor_.decide(std::move(seen->events), safe);
    // Routed one by one since the look that failed: not again (their
    // deliveries may have completed and left the table meanwhile).
    step.route.erase(std::remove_if(step.route.begin(), step.route.end(),
                                    [&](int64_t id) {
                                      return routed_alone_.count(id) > 0;
                                    }),
                     step.route.end());
    routing_result res;
    res.more = seen->ahead >= batch_size;
    // Stored in the transaction that routes: a router that takes over
    // resumes exactly where this one is after the commit.
    auto store = cursor_.to_store(step);
    if (step.route.empty() && step.set_aside.empty() && !store)
      return res;
    tried_ = step.route;
    auto rows = conn.exec_prepared(
      "route", route_sql_,
      {routes_json_, pg_int_array(step.route), pg_int_array(step.set_aside),
       store ? std::to_string(store->done) : "-1", handoff_params_.first,
       handoff_params_.second, std::to_string(store ? store->scanned : 0),
       pg_int_array(store ? to_ranges(store->open) : std::vector<int64_t>{})});
    if (!rows)
      return rows.error();
    return finish(conn, *rows, std::move(res));
  });
  if (!out)
    return out;
  if (step.held > 0) {
    // Ordered events above the horizon: look again soon.
    out->held_back = true;
    out->held_retry_ms = horizon_.retry_delay(std::chrono::seconds{1}).count();
  } else if (!step.open.empty()) {
    // Only gaps: no event waits for them (the commit of one wakes the
    // router), only the cursor's position.
    out->due_ms = routing_result::store_ms;
  }
  cursor_.commit(std::move(step));
  routed_alone_.clear();
  return out;
}

caf::expected<routing_result>
routing_repository::finish(pg_connection& conn, const pg_rows& rows,
                           routing_result out) {
  coalesce_targets targets;
  std::vector<int64_t> ordered;
  for (int i = 0; i < rows.size(); ++i) {
    auto kind = rows.text(i, 0);
    if (kind == "events") {
      out.events_routed = rows.int64(i, 3);
    } else if (kind == "queue") {
      out.per_queue[rows.text(i, 1)] = rows.int64(i, 3);
      out.deliveries_created += rows.int64(i, 3);
    } else if (kind == "handed") {
      out.handed[rows.text(i, 1)].push_back({rows.int64(i, 3), rows.text(i, 2)});
      ++out.deliveries_created;
    } else if (kind == "ordered") {
      ordered.push_back(rows.int64(i, 3));
    } else {
      targets.queues.push_back(rows.text(i, 1));
      targets.jobs.push_back(rows.text(i, 2));
      targets.keys.push_back(rows.text(i, 4));
    }
  }
  if (auto err = notify_ready(conn, out.per_queue))
    return err;
  if (auto err = coalesce(conn, targets, out))
    return err;
  // After coalescing: a superseded head frees its key for the newest.
  auto released = release_.release(conn, ordered);
  if (!released)
    return released.error();
  out.deliveries_released = *released;
  return out;
}

caf::expected<routing_result>
routing_repository::route_one(pg_connection& conn, int64_t id) {
  return in_transaction<routing_result>(conn, [&]() -> caf::expected<routing_result> {
    // Nothing handed (no handoff queues): the pass after this one routes
    // the batch again, and only a delivery still in the table is a no-op.
    auto rows = conn.exec_prepared("route", route_sql_,
                                   {routes_json_, pg_int_array({id}),
                                    pg_int_array({}), "-1", "{}", "{}", "0",
                                    "{}"});
    if (!rows)
      return rows.error();
    return finish(conn, *rows, routing_result{});
  });
}

caf::error routing_repository::coalesce(pg_connection& conn,
                                        const coalesce_targets& t,
                                        routing_result& out) {
  if (t.keys.empty())
    return caf::none;
  // Not prepared: planned with this batch's keys each time. A generic
  // plan made while the tables were small scans the whole coalesce index
  // and joins the events by hash (found by tests/integration/query_plans).
  auto superseded = conn.exec(
    "coalesce", coalesce_sql_,
    {pg_text_array(t.keys), pg_text_array(t.jobs), pg_text_array(t.queues)});
  if (!superseded)
    return superseded.error();
  out.deliveries_superseded = superseded->size();
  for (int i = 0; i < superseded->size(); ++i)
    out.superseded.push_back({superseded->int64(i, 1), superseded->int64(i, 0),
                              superseded->text(i, 2), superseded->text(i, 3),
                              superseded->int64(i, 4),
                              superseded->text(i, 5) == "json-merge"});
  return caf::none;
}

caf::error
routing_repository::notify_ready(pg_connection& conn,
                                 const std::map<std::string, int64_t>& per_queue) {
  if (!notify_ || per_queue.empty())
    return caf::none;
  std::vector<pg_param> payloads;
  for (auto& [queue, _] : per_queue)
    payloads.push_back(ready_payload(notify_->origin, queue));
  auto sent = conn.exec_prepared("notify_ready", notify_sql,
                                 {notify_->channel, pg_text_array(payloads)});
  if (!sent)
    return sent.error();
  return caf::none;
}

caf::expected<routing_result>
routing_repository::route_one_by_one(pg_connection& conn,
                                     const std::string& batch_state) {
  auto log = logger("router");
  log->warn("event=routing_batch_failed sqlstate={} action=route_one_by_one",
            batch_state);
  auto ids = std::move(tried_);
  tried_.clear();
  routing_result out;
  bool any_routed = false;
  std::vector<std::pair<int64_t, std::string>> failing; // id, SQLSTATE
  for (auto id : ids) {
    auto one = route_one(conn, id);
    if (one) {
      any_routed = true;
      routed_alone_.insert(id);
      add_to(out, std::move(*one));
      continue;
    }
    if (!is_data_error(one.error()))
      return one.error(); // the connection, say: the pass fails as any other
    failing.emplace_back(id, sqlstate_of(one.error()));
  }
  // Every event failing alone too looks like our SQL rather than the rows:
  // only the first is taken out, so such an error costs an event per pass.
  if (!any_routed && failing.size() > 1)
    failing.resize(1);
  for (auto& [id, state] : failing) {
    auto reason = "routing failed on this event with SQLSTATE " + state;
    auto q = conn.exec("quarantine_event", quarantine_sql_,
                       {std::to_string(id), reason});
    if (!q)
      return q.error();
    if (q->size() == 0)
      continue; // quarantined by another router meanwhile
    ++out.events_quarantined;
    log->error("event=event_quarantined outboxEventId={} eventType={} pass=routing "
               "sqlstate={}",
               id, kv(q->text(0, 1)), state);
  }
  out.more = true;
  return out;
}

} // namespace outbox
