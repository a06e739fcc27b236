// The routing pass's SQL: turns new events into deliveries, one per route,
// and coalesces waiting deliveries of the same key.
#pragma once

#include <chrono>
#include <map>
#include <utility>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/route.hpp"
#include "core/domain/routing_cursor.hpp"
#include "core/domain/routing_horizon.hpp"
#include "core/domain/routing_result.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/key_release.hpp"

namespace outbox {

class pg_connection;
class pg_rows;

/// Where the routing transaction announces new deliveries
/// (core/domain/ready_notice.hpp).
struct ready_notify {
  std::string channel;
  std::string origin;
};

class routing_repository {
public:
  /// With `notify`, every routing transaction that creates deliveries
  /// NOTIFYs once per queue that got some, delivered at its commit.
  /// With `replay`, the deliveries it makes are marked replayed
  /// (route_events, for outboxctl replay).
  routing_repository(const schema_names& names, const std::vector<route>& routes,
                     std::optional<ready_notify> notify = std::nullopt,
                     bool replay = false);

  /// Routes up to `batch_size` events in one transaction, walking them by
  /// id from the routing cursor (core/domain/routing_cursor.hpp): inserts
  /// every route's delivery with the rules copied in (an event gets all its
  /// deliveries or none; routing an event again never duplicates one),
  /// coalesces, sets aside events of types without routes, and stores the
  /// cursor in the same transaction. Writes nothing to the events. Only one
  /// router routes at a time (a transaction-scoped advisory lock); another
  /// one's pass does nothing. When the batch fails on the data of some row
  /// (is_data_error), it routes the same events one at a time, each in its
  /// own transaction, and quarantines those that still fail
  /// (schema/009_quarantine.sql): the others are routed in the same pass.
  /// When every event fails alone too, only the first is quarantined per
  /// pass.
  ///
  /// Deliveries of the queues in `handoff` are inserted dispatched where
  /// nothing else may touch them before they are sent, up to each queue's
  /// room (core/domain/handoff.hpp); routing_result::handed lists them,
  /// per_queue only the pending ones.
  caf::expected<routing_result>
  route_batch(pg_connection& conn, int32_t batch_size,
              const std::vector<handoff_queue>& handoff = {});

  /// Routes exactly the events `ids` in one transaction, as a routing pass
  /// would (coalescing, ordered keys, NOTIFY), without the routing lead or
  /// the cursor: a router's pass goes on meanwhile. An event that still has
  /// a delivery of a route in the table gets no second one of it.
  caf::expected<routing_result> route_events(pg_connection& conn,
                                             const std::vector<int64_t>& ids);

  /// The coalescing statement ($1..$3: keys, jobs, queues as text[]), for
  /// tests that look at its plan.
  const std::string& coalescing_statement() const { return coalesce_sql_; }

private:
  // The first statement of a routing transaction.
  struct lead {
    bool leads = false;  // this router routes now
    cursor_state stored; // the stored cursor
    horizon_sample sample;
    std::optional<int64_t> handed_floor; // schema/021; none: nothing handed
    bool handed_lost = false; // a crash of PostgreSQL emptied the partition
  };
  caf::expected<lead> read_lead(pg_connection& conn, bool sample);

  // What the look at the events saw.
  struct look_result {
    std::vector<seen_event> events;
    int32_t ahead = 0; // of them, new ones above A
  };
  caf::expected<look_result> look(pg_connection& conn, int32_t limit);

  // One routing transaction; the cursor moves once it committed.
  caf::expected<routing_result> route_pass(pg_connection& conn,
                                           int32_t batch_size);

  // Reads the routing statement's rows into `out`, then notifies,
  // coalesces and releases keys in the same transaction.
  caf::expected<routing_result> finish(pg_connection& conn, const pg_rows& rows,
                                       routing_result out);

  // After a crash of PostgreSQL emptied the unlogged partition of handed
  // deliveries (schema/021): routes again, pending, the deliveries of the
  // stored cursor's events from the floor up that may have been handed and
  // are neither in the table nor in the completion log, then marks the
  // partition alive, in the routing transaction (routing_recovery.cpp).
  caf::expected<routing_result> recover_handed(pg_connection& conn,
                                               const lead& stored);

  // Runs the routing statement on `ids`: nothing handed, the cursor left
  // as it is; `recovering` as recover_handed needs it.
  caf::expected<routing_result> route_ids(pg_connection& conn,
                                          const std::vector<int64_t>& ids,
                                          bool recovering);

  // Routes the one event `id` in its own transaction.
  caf::expected<routing_result> route_one(pg_connection& conn, int64_t id);

  // The keys a routing statement asked to coalesce, as parallel arrays.
  struct coalesce_targets;

  // Supersedes the older waiting deliveries of `t`'s keys.
  caf::error coalesce(pg_connection& conn, const coalesce_targets& t,
                      routing_result& out);

  // NOTIFYs the queues of `per_queue` in the current transaction.
  caf::error notify_ready(pg_connection& conn,
                          const std::map<std::string, int64_t>& per_queue);

  // Routes the events of the failed batch one by one, in event order,
  // quarantining each that fails alone before routing the next.
  caf::expected<routing_result> route_one_by_one(pg_connection& conn,
                                                 const std::string& batch_state);

  // What quarantine() took out: the event's type, and how many failed
  // deliveries keep its place in its key orders.
  struct quarantined {
    std::string event_type;
    int64_t held_keys = 0;
  };

  // Quarantines the event `id` (nullopt: another router did already).
  caf::expected<std::optional<quarantined>>
  quarantine(pg_connection& conn, int64_t id, const std::string& reason);

  std::optional<ready_notify> notify_;
  // This pass's handoff queues and limits as text[] and bigint[] literals.
  std::pair<std::string, std::string> handoff_params_;
  std::string routes_json_;
  std::string routed_types_; // the routes' event types as a text[] literal
  std::set<std::string> routed_, ordered_; // types with routes, ordered routes
  bool any_ordered_;
  routing_horizon horizon_; // this router's samples: its own memory
  routing_cursor cursor_;   // likewise
  bool first_pass_ = true;
  std::vector<int64_t> tried_; // the events the last routing statement routed
  std::set<int64_t> routed_alone_; // routed one by one, the cursor not past them yet
  std::string lead_sql_;
  std::string look_sql_;
  key_release release_;
  std::string route_sql_;
  std::string recovery_route_sql_; ///< route_sql_ with recovered_only_sql
  std::string quarantine_sql_;
  std::string quarantine_held_sql_;
  std::string coalesce_sql_;
  std::string recovery_look_sql_, handed_alive_sql_;
};

/// Serializes routes as the JSON the routing statement reads; with
/// `replay`, the deliveries they make are marked replayed (outboxctl
/// replay).
std::string routes_to_json(const std::vector<route>& routes, bool replay = false);

/// Returns `sql` with {{routes}} replaced by the rows `r` of the routes
/// that routes_to_json wrote, given as $1.
std::string with_routes(std::string sql);

} // namespace outbox
