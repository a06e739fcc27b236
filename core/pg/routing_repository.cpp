// The routing repository: its statements built from the routes, and
// route_batch, with the one-by-one routing and quarantine after a batch
// failed on its data (the transaction itself: routing_pass.cpp).
#include "core/pg/routing_repository.hpp"

#include <algorithm>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/routing_sql.hpp"

namespace outbox {

namespace {

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
              " merge text, ordering text, on_failure text, replay boolean)");
  return sql;
}

namespace {

// The routing statement, everyday or the recovery's (routing_sql.hpp).
std::string route_statement(bool recovery) {
  std::string sql = routing_detail::route_sql;
  fill_slot(sql, "{{recovered_only}}",
            recovery ? routing_detail::recovered_only_sql : "");
  return with_routes(std::move(sql));
}

} // namespace

std::string routes_to_json(const std::vector<route>& routes, bool replay) {
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
    if (replay) { // left out otherwise: NULL, a routed delivery
      w.Key("replay");
      w.Bool(true);
    }
    w.EndObject();
  }
  w.EndArray();
  return sb.GetString();
}

routing_repository::routing_repository(const schema_names& names,
                                       const std::vector<route>& routes,
                                       std::optional<ready_notify> notify,
                                       bool replay)
  : notify_(std::move(notify)), routes_json_(routes_to_json(routes, replay)),
    routed_types_(routed_types(routes)),
    any_ordered_(std::any_of(routes.begin(), routes.end(), [](const route& r) {
      return r.rules.ordering == key_ordering::key;
    })),
    lead_sql_(fill_names(routing_detail::lead_sql, names)),
    look_sql_(fill_names(routing_detail::look_sql, names)),
    release_(names),
    route_sql_(fill_names(route_statement(false), names)),
    recovery_route_sql_(fill_names(route_statement(true), names)),
    quarantine_sql_(fill_names(routing_detail::quarantine_sql, names)),
    quarantine_held_sql_(fill_names(with_routes(routing_detail::quarantine_held_sql),
                                    names)),
    coalesce_sql_(fill_names(routing_detail::coalesce_sql, names)),
    recovery_look_sql_(fill_names(routing_detail::recovery_look_sql, names)),
    handed_alive_sql_(fill_names(routing_detail::handed_alive_sql, names)) {
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

caf::expected<routing_result>
routing_repository::route_one(pg_connection& conn, int64_t id) {
  // Nothing handed (no handoff queues): the pass after this one routes
  // the batch again, and only a delivery still in the table is a no-op.
  return route_events(conn, {id});
}

caf::expected<routing_result>
routing_repository::route_events(pg_connection& conn,
                                 const std::vector<int64_t>& ids) {
  return in_transaction<routing_result>(conn, [&]() -> caf::expected<routing_result> {
    return route_ids(conn, ids, false);
  });
}

caf::expected<routing_result>
routing_repository::route_ids(pg_connection& conn, const std::vector<int64_t>& ids,
                              bool recovering) {
  // The cursor stays (-1), nothing is set aside and nothing handed.
  auto rows = conn.exec_prepared(recovering ? "route_recovery" : "route",
                                 recovering ? recovery_route_sql_ : route_sql_,
                                 {routes_json_, pg_int_array(ids),
                                  pg_int_array({}), "-1", "{}", "{}", "0", "{}",
                                  recovering ? "true" : "false"});
  if (!rows)
    return rows.error();
  return finish(conn, *rows, routing_result{});
}

caf::expected<routing_result>
routing_repository::route_one_by_one(pg_connection& conn,
                                     const std::string& batch_state) {
  auto log = logger("router");
  log->warn("event=routing_batch_failed sqlstate={} action=route_one_by_one",
            batch_state);
  auto ids = std::move(tried_);
  tried_.clear();
  // In event order, each failing event quarantined before the next one is
  // routed: an ordered key's later event must find the earlier one's
  // place taken (quarantine_held_sql), not a free key.
  std::sort(ids.begin(), ids.end());
  routing_result out;
  out.more = true;
  bool any_routed = false;
  bool any_failed = false;
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
    // A second failure before any event routed looks like our SQL rather
    // than the rows: one event per pass is taken out, and the rest wait for
    // the next pass, so such an error cannot empty the table.
    if (any_failed && !any_routed)
      return out;
    any_failed = true;
    auto state = sqlstate_of(one.error());
    auto q = quarantine(conn, id, "routing failed on this event with SQLSTATE " + state);
    if (!q)
      return q.error();
    if (!*q)
      continue; // quarantined by another router meanwhile
    ++out.events_quarantined;
    log->error("event=event_quarantined outboxEventId={} eventType={} pass=routing "
               "sqlstate={} held_keys={}",
               id, kv((*q)->event_type), state, (*q)->held_keys);
  }
  return out;
}

caf::expected<std::optional<routing_repository::quarantined>>
routing_repository::quarantine(pg_connection& conn, int64_t id,
                               const std::string& reason) {
  auto read = [](const pg_rows& rows) -> std::optional<quarantined> {
    if (rows.size() == 0)
      return std::nullopt;
    return quarantined{rows.text(0, 1), rows.int64(0, 2)};
  };
  auto held = conn.exec("quarantine_event_held", quarantine_held_sql_,
                        {routes_json_, std::to_string(id), reason});
  if (held)
    return read(*held);
  if (!is_data_error(held.error()))
    return held.error();
  // Its key (or another column copied) fails too: no event of such a key
  // can be routed, so there is no order left to keep.
  auto alone = conn.exec("quarantine_event", quarantine_sql_,
                         {std::to_string(id), reason});
  if (!alone)
    return alone.error();
  return read(*alone);
}

} // namespace outbox
