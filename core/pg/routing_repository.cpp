#include "core/pg/routing_repository.hpp"

#include <algorithm>
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

// Claims unrouted events with routes (partial index on unrouted ids; SKIP
// LOCKED lets routers run side by side), inserts one delivery per route in
// event order, marks the events routed. Routes arrive as one JSON parameter
// so the statement stays prepared-shaped whatever the config. The routed
// event types come as an array as well: a filter on the index scan keeps it
// in id order, so the scan stops after the batch; a join with the routes
// would make the planner read every unrouted event and sort them. For the
// same reason the claimed events are marked by an id list (primary key
// lookups), not by a join the planner could turn into a full scan.
constexpr const char* route_sql = R"sql(
WITH routes AS (SELECT * FROM {{routes}}), claimed AS ({{claim}}), inserted AS (
  INSERT INTO {{deliveries}} (event_id, job, queue, retry_delays,
    repeat_last_delay, delivery_timeout_seconds, merge, expires_at, coalesce_key,
    ordered, block_on_failure, available_at)
  SELECT c.id, r.job, r.queue, r.retry_delays, r.repeat_last_delay,
         r.delivery_timeout_seconds, r.merge,
         CASE WHEN r.ttl_seconds > 0
              THEN LEAST(c.expires_at, c.created_at + make_interval(secs => r.ttl_seconds))
              ELSE c.expires_at END,
         c.key, o.ordered, o.ordered AND r.on_failure = 'block',
         CASE WHEN o.ordered THEN NULL ELSE now() END
  FROM claimed c JOIN routes r ON r.event_type = c.event_type
  CROSS JOIN LATERAL (SELECT r.ordering = 'key' AND c.key IS NOT NULL) AS o(ordered)
  ORDER BY c.id, r.job, r.queue
  ON CONFLICT (event_id, job, queue) DO NOTHING
  RETURNING id, queue, coalesce_key, job, merge, ordered
), marked AS (
  UPDATE {{events}} e SET routed_at = now()
  WHERE e.id = ANY (ARRAY(SELECT id FROM claimed))
  RETURNING e.id
)
SELECT 'queue' AS kind, queue, NULL AS job, count(*), NULL AS coalesce_key
FROM inserted GROUP BY queue
UNION ALL
SELECT DISTINCT 'key', queue, job, 0, coalesce_key FROM inserted
  WHERE coalesce_key IS NOT NULL AND merge <> 'none'
UNION ALL
SELECT 'ordered', NULL, NULL, id, NULL FROM inserted WHERE ordered
UNION ALL
SELECT 'events', NULL, NULL, count(*), NULL FROM marked
UNION ALL
-- Whether an ordered event waits for the horizon (routing_horizon.hpp);
-- $5 < 0: this router does not route ordered events in this pass.
SELECT 'held', NULL, NULL, count(*), NULL FROM (
  SELECT 1 FROM {{events}} e
  WHERE cardinality($4::text[]) > 0 AND $5::bigint >= 0
    AND e.routed_at IS NULL AND e.id > $5::bigint AND e.key IS NOT NULL
    AND e.event_type = ANY($4::text[])
  LIMIT 1) h
)sql";

// The claim of route_sql in a pass: the next batch ($2 rows) in id order.
constexpr const char* batch_claim = R"sql(
  SELECT e.id, e.event_type, e.key, e.expires_at, e.created_at
  FROM {{events}} e
  WHERE e.routed_at IS NULL AND e.event_type = ANY($3::text[])
    AND {{not_held}}
  ORDER BY e.id
  LIMIT $2
  FOR UPDATE OF e SKIP LOCKED
)sql";

// The claim of route_sql when a batch failed on its data: the one event $2,
// so that the failing one is found and the others are routed.
constexpr const char* one_claim = R"sql(
  SELECT e.id, e.event_type, e.key, e.expires_at, e.created_at
  FROM {{events}} e
  WHERE e.id = $2::bigint AND e.routed_at IS NULL
    AND e.event_type = ANY($3::text[])
    AND {{not_held}}
  FOR UPDATE OF e SKIP LOCKED
)sql";

// The events a failed batch would have claimed, read without computing
// anything from their columns (ordered ones that wait for the horizon are
// not among them: they would fill the list and hide the failing one).
constexpr const char* candidates_sql = R"sql(
SELECT e.id FROM {{events}} e
WHERE e.routed_at IS NULL AND e.event_type = ANY($2::text[])
  AND {{not_held}}
ORDER BY e.id
LIMIT $1
)sql";

// Takes an event out of routing for good (see schema/009_quarantine.sql).
constexpr const char* quarantine_sql = R"sql(
UPDATE {{events}}
SET quarantined_at = now(), quarantine_reason = $2, routed_at = now()
WHERE id = $1 AND routed_at IS NULL
RETURNING id, event_type
)sql";

// One notification per payload: a routing transaction sends one per queue,
// never one per event (NOTIFY serializes committing transactions on a
// cluster-wide lock).
constexpr const char* notify_sql = R"sql(
SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p
)sql";

// The filter {{not_held}}: the event is not one an ordered route must
// hold back (routing_horizon.hpp): no key, not a type of an ordered route
// (the text[] `types`), or at most the safe id `safe` (-1: another router
// routes them now).
std::string with_held_filter(std::string sql, const char* types,
                             const char* safe) {
  fill_slot(sql, "{{not_held}}",
            std::string{"(e.key IS NULL OR e.id <= "} + safe
              + "::bigint OR NOT e.event_type = ANY(" + types + "::text[]))");
  return sql;
}

std::string with_claim(const char* claim, const schema_names& names) {
  auto sql = with_routes(route_sql);
  const std::string slot = "{{claim}}";
  sql.replace(sql.find(slot), slot.size(), claim);
  return fill_names(with_held_filter(std::move(sql), "$4", "$5"), names);
}

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

// The routing transaction's first statement when routes are ordered
// (core/domain/routing_horizon.hpp): the newest event id taken, read from
// the id's sequence by a sub-select that runs before the rest (a plain
// read: pg_sequence_last_value() would take the lock read next), then the
// transactions that hold the sequence's ROW EXCLUSIVE lock. nextval()
// takes it before it hands out an id and keeps it until the top-level
// transaction ends (schema/014_no_insert_trigger.sql), so whoever took an
// id up to the newest one and has not ended is among them, and nobody
// else: no trigger of the producer's has to say so. Only one router at a
// time routes ordered events (routers skip each other's locked events,
// which would let a later event of a key overtake an earlier one): the one
// that gets the transaction-scoped lock.
constexpr const char* horizon_sql = R"sql(
SELECT s.q AS last_event_id,
       array_to_string(ARRAY(
         SELECT l.virtualtransaction FROM pg_locks l
         WHERE l.locktype = 'relation'
           AND l.database = (SELECT oid FROM pg_database
                             WHERE datname = current_database())
           AND l.relation = '{{events}}_id_seq'::regclass
           AND l.mode = 'RowExclusiveLock'
           AND l.granted
           -- a prepared transaction's locks show no pid: it counts
           AND l.pid IS DISTINCT FROM pg_backend_pid()), ' ') AS holders,
       pg_try_advisory_xact_lock(
         hashtextextended('{{events}} ordered routing', 0)) AS leads
FROM (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS q
      FROM {{events}}_id_seq OFFSET 0) s
)sql";

// The routes' event types as a text[] literal (the claim's $3); with
// `ordered_only`, those of ordered routes (its $4).
std::string routed_types(const std::vector<route>& routes,
                         bool ordered_only = false) {
  std::vector<pg_param> types;
  for (auto& r : routes)
    if (!ordered_only || r.rules.ordering == key_ordering::key)
      types.push_back(r.event_type);
  return pg_text_array(types);
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
    ordered_types_(routed_types(routes, true)),
    any_ordered_(std::any_of(routes.begin(), routes.end(), [](const route& r) {
      return r.rules.ordering == key_ordering::key;
    })),
    horizon_sql_(fill_names(horizon_sql, names)),
    release_(names),
    route_sql_(with_claim(batch_claim, names)),
    route_one_sql_(with_claim(one_claim, names)),
    candidates_sql_(fill_names(with_held_filter(candidates_sql, "$3", "$4"), names)),
    quarantine_sql_(fill_names(quarantine_sql, names)),
    coalesce_sql_(fill_names(coalesce_sql, names)) {
}

caf::expected<routing_result>
routing_repository::route_batch(pg_connection& conn, int32_t batch_size) {
  auto routed = route_claimed(conn, "route_batch", route_sql_,
                              std::to_string(batch_size));
  if (!routed) {
    if (!is_data_error(routed.error()))
      return routed;
    // Only after a failure: the hot path never runs more than the batch.
    return route_one_by_one(conn, batch_size, sqlstate_of(routed.error()));
  }
  // Ordered events this transaction only took a sample for: the next one,
  // a moment later, usually finds the older transactions ended and routes
  // them in this pass (routing_horizon.hpp).
  // Under load (it routed some) the next wake-up comes soon anyway, and a
  // bigger batch then costs less per event than a second transaction now.
  if (routed->held_back && horizon_.progressed() && routed->events_routed == 0) {
    auto more = route_claimed(conn, "route_batch", route_sql_,
                              std::to_string(batch_size));
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

caf::expected<routing_result>
routing_repository::route_claimed(pg_connection& conn, const char* name,
                                  const std::string& sql,
                                  const std::string& limit_or_id) {
  return in_transaction<routing_result>(conn, [&]() -> caf::expected<routing_result> {
    auto safe = ordered_safe_id(conn);
    if (!safe)
      return safe.error();
    auto rows = conn.exec_prepared(name, sql,
                                   {routes_json_, limit_or_id, routed_types_,
                                    ordered_types_, std::to_string(*safe)});
    if (!rows)
      return rows.error();
    routing_result out;
    coalesce_targets targets;
    std::vector<int64_t> ordered;
    for (int i = 0; i < rows->size(); ++i) {
      auto kind = rows->text(i, 0);
      if (kind == "events") {
        out.events_routed = rows->int64(i, 3);
      } else if (kind == "queue") {
        out.per_queue[rows->text(i, 1)] = rows->int64(i, 3);
        out.deliveries_created += rows->int64(i, 3);
      } else if (kind == "ordered") {
        ordered.push_back(rows->int64(i, 3));
      } else if (kind == "held") {
        // Another router leads ordered routing: it waits for them.
        out.held_back = rows->int64(i, 3) > 0;
      } else {
        targets.queues.push_back(rows->text(i, 1));
        targets.jobs.push_back(rows->text(i, 2));
        targets.keys.push_back(rows->text(i, 4));
      }
    }
    if (auto err = notify_ready(conn, out.per_queue))
      return err;
    if (out.held_back)
      out.held_retry_ms = horizon_.retry_delay(std::chrono::seconds{1}).count();
    if (auto err = coalesce(conn, targets, out))
      return err;
    // After coalescing: a superseded head frees its key for the newest.
    auto released = release_.release(conn, ordered);
    if (!released)
      return released.error();
    out.deliveries_released = *released;
    return out;
  });
}

caf::expected<int64_t>
routing_repository::ordered_safe_id(pg_connection& conn) {
  if (!any_ordered_)
    return 0; // no ordered route: $5 filters nothing
  auto rows = conn.exec_prepared("routing_horizon", horizon_sql_, {});
  if (!rows)
    return rows.error();
  column_finder col{*rows, "routing_horizon"};
  int q = col("last_event_id"), holders = col("holders"), leads = col("leads");
  if (col.error())
    return col.error();
  if (rows->size() != 1)
    return make_error(errc::database_error, "routing_horizon: no row");
  horizon_sample now{rows->int64(0, q), {}};
  std::istringstream words{rows->text(0, holders)};
  for (std::string vxid; words >> vxid;)
    now.holders.insert(vxid);
  auto safe = horizon_.advance(std::move(now));
  return rows->text(0, leads) == "t" ? safe : int64_t{-1};
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
routing_repository::route_one_by_one(pg_connection& conn, int32_t batch_size,
                                     const std::string& batch_state) {
  auto log = logger("router");
  log->warn("event=routing_batch_failed sqlstate={} action=route_one_by_one",
            batch_state);
  auto ids = conn.exec("route_candidates", candidates_sql_,
                       {std::to_string(batch_size), routed_types_,
                        ordered_types_, std::to_string(horizon_.safe_id())});
  if (!ids)
    return ids.error();
  routing_result out;
  bool any_routed = false;
  std::vector<std::pair<std::string, std::string>> failing; // id, SQLSTATE
  for (int i = 0; i < ids->size(); ++i) {
    auto id = ids->text(i, 0);
    auto one = route_claimed(conn, "route_one", route_one_sql_, id);
    if (one) {
      any_routed = true;
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
    auto q = conn.exec("quarantine_event", quarantine_sql_, {id, reason});
    if (!q)
      return q.error();
    if (q->size() == 0)
      continue; // routed or quarantined by another router meanwhile
    ++out.events_quarantined;
    log->error("event=event_quarantined outboxEventId={} eventType={} pass=routing "
               "sqlstate={}",
               id, kv(q->text(0, 1)), state);
  }
  return out;
}

} // namespace outbox
