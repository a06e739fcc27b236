// Which queues' timeouts the sweep must leave alone because the relay, not
// the worker, is the one that stalled: no result handler of the queue is
// alive (its node stopped, paused or cut off), so results the workers sent
// wait unread (docs/design.md "Timeouts and expiry"). While a queue has
// none, its deliveries do not time out; once one is back, a delivery's
// deadline moves by the part of the outage it was out during.
//
// Who is alive comes from the status node (results_liveness), which hears
// every node's agent twice a second. A view that is late (the sweeper's own
// node was paused, or the status node is slow to answer) holds every queue
// until a fresh one comes, and the gap between two views counts as an
// outage of every queue: nobody could tell meanwhile. A view missing for
// a minute (the status node is gone) is no view: the sweep goes on as if
// every queue had its handler, since a timeout is what catches a worker
// that never answers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/domain/delivery_passes.hpp"

namespace outbox {

/// The status node's view: per queue, milliseconds since a live result
/// handler of it was last heard; a queue without one is absent.
using results_liveness = std::map<std::string, int64_t>;

struct stall_settings {
  /// A handler not heard for longer than this counts as stalled (its
  /// node's agent reports every 500 ms).
  std::chrono::milliseconds stale_after{2000};
  /// A view older than this is late: every queue is held until a fresh
  /// one, and the gap counts as an outage of every queue.
  std::chrono::milliseconds view_late_after{2000};
  /// A view older than this is no view: no queue is held.
  std::chrono::milliseconds view_expires_after{60000};
  /// How long an ended outage still moves deadlines: longer than any
  /// delivery timeout a route may sensibly have.
  std::chrono::seconds keep_outages{3600};
  /// The most ended outages kept per queue (the oldest go first).
  size_t max_outages = 16;
};

class relay_stalls {
public:
  using clock = std::chrono::steady_clock;

  /// `queues`: every queue the sweep may time out deliveries of.
  explicit relay_stalls(std::vector<std::string> queues, stall_settings s = {});

  /// A view of the status node, received at `at`.
  void observe(const results_liveness& view, clock::time_point at);

  /// What the sweep leaves alone at `now`: the queues stalled now, and the
  /// ended outages with how long ago each ended and how long it lasted.
  sweep_holds holds(clock::time_point now);

  /// Queues held right now (for the status figures and the log).
  std::vector<std::string> stalled() const;

private:
  struct outage {
    clock::time_point from, to;
  };
  struct queue_state {
    bool stalled = false;
    bool ever_seen = false;         ///< a live handler was seen once
    clock::time_point last_alive{}; ///< when one was last heard
    clock::time_point stalled_since{};
    std::vector<outage> ended;
  };

  void end_stall(queue_state& q, clock::time_point at);
  void add_outage(queue_state& q, clock::time_point from, clock::time_point to);

  stall_settings s_;
  std::map<std::string, queue_state> queues_;
  clock::time_point view_at_{};
  bool any_view_ = false;
};

} // namespace outbox
