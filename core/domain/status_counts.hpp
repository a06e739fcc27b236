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

/// A queue an operator paused (`outboxctl pause`, schema/018_queue_pauses.sql):
/// nothing new is sent to it until it is resumed or the pause ends.
struct queue_pause {
  double paused_seconds = 0;  ///< how long ago it was paused
  int64_t paused_at = 0;      ///< Unix seconds
  std::string paused_by;      ///< who paused it (outboxctl: user@host)
  std::string reason;         ///< the operator's words, maybe empty
  double ends_in_seconds = -1; ///< -1: until `outboxctl resume`
};

struct status_counts {
  int64_t unrouted_events = 0;
  double oldest_unrouted_age_seconds = 0;
  std::map<std::string, int64_t> per_status; ///< every status, zeros included
  double oldest_open_age_seconds = 0;
  std::map<std::string, queue_counts> per_queue;
  /// The queues paused now, by name.
  std::map<std::string, queue_pause> paused;
  /// Each relay node's connections to this database, as the database
  /// counts them (pg_stat_activity): by the node's name, from the
  /// application_name `outboxd <node>` its connections report.
  std::map<std::string, int64_t> connections;
};

} // namespace outbox
