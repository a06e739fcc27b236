// The routing pass's SQL: turns unrouted events into deliveries, one per
// route, and coalesces waiting deliveries of the same key.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/route.hpp"
#include "core/domain/routing_horizon.hpp"
#include "core/domain/routing_result.hpp"
#include "core/domain/schema_names.hpp"
#include "core/pg/key_release.hpp"

namespace outbox {

class pg_connection;

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
  routing_repository(const schema_names& names, const std::vector<route>& routes,
                     std::optional<ready_notify> notify = std::nullopt);

  /// Routes up to `batch_size` unrouted events that have routes, in one
  /// transaction: claims them (FOR UPDATE SKIP LOCKED), inserts every route's
  /// delivery with the rules copied in (an event gets all its deliveries or
  /// none; running twice never duplicates one), coalesces, marks them routed.
  /// Events of types without routes are left alone and block nothing.
  /// When the batch fails on the data of some row (is_data_error), it
  /// routes the same events one at a time, each in its own transaction,
  /// and quarantines those that still fail (schema/009_quarantine.sql):
  /// the others are routed in the same pass. When every event fails alone
  /// too, only the first is quarantined per pass.
  caf::expected<routing_result> route_batch(pg_connection& conn,
                                            int32_t batch_size);

  /// The coalescing statement ($1..$3: keys, jobs, queues as text[]), for
  /// tests that look at its plan.
  const std::string& coalescing_statement() const { return coalesce_sql_; }

private:
  // One transaction of the routing statement `sql` (its claim takes a
  // batch size or an event id) and the coalescing.
  caf::expected<routing_result> route_claimed(pg_connection& conn,
                                              const char* name,
                                              const std::string& sql,
                                              const std::string& limit_or_id);

  // The keys a routing statement asked to coalesce, as parallel arrays.
  struct coalesce_targets;

  // Supersedes the older waiting deliveries of `t`'s keys.
  caf::error coalesce(pg_connection& conn, const coalesce_targets& t,
                      routing_result& out);

  // The id up to which this transaction may route ordered events; -1 when
  // another router routes them now (routing_horizon.hpp).
  caf::expected<int64_t> ordered_safe_id(pg_connection& conn);

  // NOTIFYs the queues of `per_queue` in the current transaction.
  caf::error notify_ready(pg_connection& conn,
                          const std::map<std::string, int64_t>& per_queue);

  caf::expected<routing_result> route_one_by_one(pg_connection& conn,
                                                 int32_t batch_size,
                                                 const std::string& batch_state);

  std::optional<ready_notify> notify_;
  std::string routes_json_;
  std::string routed_types_; // the routes' event types as a text[] literal
  std::string ordered_types_; // those of ordered routes
  bool any_ordered_;
  routing_horizon horizon_; // this router's samples: its own memory
  std::string horizon_sql_;
  key_release release_;
  std::string route_sql_;
  std::string route_one_sql_;
  std::string candidates_sql_;
  std::string quarantine_sql_;
  std::string coalesce_sql_;
};

/// Serializes routes as the JSON the routing statement reads.
std::string routes_to_json(const std::vector<route>& routes);

/// Returns `sql` with {{routes}} replaced by the rows `r` of the routes
/// that routes_to_json wrote, given as $1.
std::string with_routes(std::string sql);

} // namespace outbox
