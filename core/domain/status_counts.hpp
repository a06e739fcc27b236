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
  /// Keys of ordered routes whose head failed or expired on a route with
  /// `onFailure: block` and waits for an operator (`outboxctl blocked`).
  int64_t blocked_keys = 0;
  /// Seconds the oldest delivery waiting for its key (parked) has waited
  /// since it was made, 0 when none waits: how long the longest-held key
  /// of the queue has kept a delivery back, blocked or busy.
  double longest_held_key_seconds = 0;
};

struct status_counts {
  int64_t unrouted_events = 0;
  double oldest_unrouted_age_seconds = 0;
  std::map<std::string, int64_t> per_status; ///< every status, zeros included
  double oldest_open_age_seconds = 0;
  std::map<std::string, queue_counts> per_queue;
};

} // namespace outbox
