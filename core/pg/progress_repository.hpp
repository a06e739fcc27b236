// Read-only progress of the relay over events and deliveries, for what
// waits on it and measures it (the benchmark, load tests): whether anything
// is still open, how many deliveries have a status, and when each event
// moved. Counts and times only: never a payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/delivery_status.hpp"

#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

/// When one event moved, by the database's clock: seconds since the epoch,
/// 0 while it has not.
struct event_progress {
  int64_t event_id = 0;
  double created = 0, routed = 0;
  double last_dispatched = 0, last_completed = 0; ///< over its deliveries
};

class progress_repository {
public:
  explicit progress_repository(schema_names names);

  /// True while an event is unrouted or a delivery pending or dispatched.
  /// Asks the partial indexes the relay itself uses, so its cost does not
  /// grow with the final deliveries (a count of them would read them all).
  caf::expected<bool> anything_open(pg_connection& conn);

  /// Deliveries with `status` (reads every one of them).
  caf::expected<int64_t> count_status(pg_connection& conn,
                                      delivery_status status);

  /// The newest event's id, 0 for none.
  caf::expected<int64_t> last_event_id(pg_connection& conn);

  /// Every event after `after_event_id` that has deliveries, in id order.
  caf::expected<std::vector<event_progress>>
  events_after(pg_connection& conn, int64_t after_event_id);

private:
  std::string open_sql_, count_sql_, last_id_sql_, events_sql_;
};

} // namespace outbox
