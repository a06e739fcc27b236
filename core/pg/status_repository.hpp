// The read-only counts `outboxctl status` shows: never payloads.
#pragma once

#include <cstdint>
#include <map>
#include <vector>
#include <string>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

struct queue_counts {
  /// Every status (to_string(delivery_status)), zeros included.
  std::map<std::string, int64_t> per_status;
  double oldest_open_age_seconds = 0; ///< pending or dispatched
};

struct status_counts {
  int64_t unrouted_events = 0;
  double oldest_unrouted_age_seconds = 0;
  std::map<std::string, int64_t> per_status; ///< every status, zeros included
  double oldest_open_age_seconds = 0;
  std::map<std::string, queue_counts> per_queue;
};

/// The keys of per_status: every delivery status as the database spells it,
/// in lifecycle order (see core/domain/delivery_status.hpp).
const std::vector<std::string>& delivery_statuses();

class status_repository {
public:
  explicit status_repository(schema_names names);

  /// Reads the counts in one snapshot; zeros for empty tables.
  caf::expected<status_counts> read(pg_connection& conn);

private:
  std::string events_sql_, deliveries_sql_;
};

} // namespace outbox
