// The counts the status view shows (never payloads): what the status store
// reads, whatever implements it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace outbox {

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

} // namespace outbox
