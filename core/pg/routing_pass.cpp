// One routing transaction (routing_repository::route_pass): the lead, the
// look, the routing statement, and in the same transaction the notices,
// the coalescing and the release of keys.
#include "core/pg/routing_repository.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/domain/ready_notice.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/routing_sql.hpp"

namespace outbox {

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
      open = col("open_ranges"), q = col("last_event_id"), holders = col("holders"),
      floor = col("handed_floor"), lost = col("handed_lost");
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
  if (!rows->is_null(0, floor))
    out.handed_floor = rows->int64(0, floor);
  out.handed_lost = rows->text(0, lost) == "t";
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
    routing_result res;
    if (lead->handed_lost) {
      auto recovered = recover_handed(conn, *lead);
      if (!recovered)
        return recovered.error();
      res = std::move(*recovered);
    }
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
       pg_int_array(store ? to_ranges(store->open) : std::vector<int64_t>{}),
       "false"});
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
  if (!targets.keys.empty() || !ordered.empty())
    if (auto err = conn.exec_script("plans_by_values", routing_detail::plans_by_values_sql))
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

caf::error routing_repository::coalesce(pg_connection& conn,
                                        const coalesce_targets& t,
                                        routing_result& out) {
  if (t.keys.empty())
    return caf::none;
  // Not prepared, and after plans_by_values_sql in this transaction:
  // planned with this batch's keys each time (the routing session's own
  // setting would give an unnamed statement a generic plan too). A generic
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
  auto sent = conn.exec_prepared("notify_ready", routing_detail::notify_sql,
                                 {notify_->channel, pg_text_array(payloads)});
  if (!sent)
    return sent.error();
  return caf::none;
}

} // namespace outbox
