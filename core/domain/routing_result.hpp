// What a routing pass did, as the router and the lifecycle events see it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/domain/handoff.hpp"

namespace outbox {

/// A waiting delivery that a newer one of its key replaced or merged into.
struct superseded_delivery {
  int64_t event_id = 0, delivery_id = 0;
  std::string job, queue;
  int64_t superseded_by = 0;
  bool merged = false; ///< json-merge: its payload lives on in the newer one
};

struct routing_result {
  int64_t events_routed = 0;
  int64_t deliveries_created = 0;
  int64_t deliveries_superseded = 0;
  /// Events taken out of routing because they alone made it fail.
  int64_t events_quarantined = 0;
  std::vector<superseded_delivery> superseded;
  /// Deliveries of ordered keys made ready (their key was free).
  int64_t deliveries_released = 0;
  /// Events of ordered routes wait for older transactions to end
  /// (routing_horizon.hpp): route again soon.
  bool held_back = false;
  /// When held back: how soon to route again (2 ms while the horizon
  /// moves, longer while an open transaction keeps it still).
  int64_t held_retry_ms = 0;
  /// The look read as many events as it may, or a failed batch was routed
  /// one by one: more are waiting.
  bool more = false;
  /// Work for a later pass that no event waits for (0: none): gaps below
  /// routed events to settle, or the routing cursor's position to store
  /// (at most every store_ms).
  int64_t due_ms = 0;
  static constexpr int64_t store_ms = 100;
  /// New pending deliveries per queue: the dispatchers to wake.
  std::map<std::string, int64_t> per_queue;
  /// New deliveries inserted dispatched, per queue: for this node's
  /// dispatcher of the queue to publish (core/domain/handoff.hpp).
  std::map<std::string, std::vector<handed_delivery>> handed;
};

} // namespace outbox
