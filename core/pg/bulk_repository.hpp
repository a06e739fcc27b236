// Bulk writes made outside the relay's passes, for load tests (the
// benchmark): a backlog of routed events with their pending deliveries,
// the removal of events nobody routes, and settling the tables after such a
// load. Never run against a relay's production tables.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

#include "core/domain/route.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

class bulk_repository {
public:
  explicit bulk_repository(schema_names names);

  /// Inserts `n` events of the route's type with `payload`, already routed,
  /// each with the route's pending delivery (its rules copied in), ready
  /// `ready_in_seconds` from now (0: at once), as after a broker outage:
  /// the backlog is whole before any of it can be claimed. One transaction
  /// per 50,000. The routing cursor moves past them: for a database where
  /// nobody else publishes meanwhile (the benchmark's), since an event
  /// still being published below them would be passed too.
  caf::error insert_backlog(pg_connection& conn, const route& r,
                            const std::string& payload, int64_t n,
                            int64_t ready_in_seconds);

  /// Deletes the events of `event_type` that have no deliveries.
  caf::error delete_unrouted(pg_connection& conn,
                             const std::string& event_type);

  /// ANALYZE of the deliveries and a CHECKPOINT: a bulk load's statistics
  /// are current and its WAL is not charged to whatever runs next.
  caf::error settle(pg_connection& conn);

private:
  std::string backlog_sql_, delete_sql_, settle_sql_;
};

} // namespace outbox
