// Claim on route: the router inserts a delivery already dispatched and
// hands it to a dispatcher of its own node, which publishes it without a
// claim of its own. A delivery so handed is written once between its
// insert and its result (the claim's update, its row lock and its index
// entries are saved); one that is never published (the node died, say)
// times out and is sent again, as a claimed one would be.
//
// The box is shared by one queue's router and dispatcher in one process:
// the router puts in what it inserted dispatched, the dispatcher takes it
// out and says whether it can publish at all (its broker connection is
// up), so that nothing is handed to a dispatcher that would only let it
// time out.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace outbox {

/// A delivery the router inserted as dispatched, with the dispatch id it
/// gave it: the dispatcher publishes it only while it still has that id.
struct handed_delivery {
  int64_t id = 0;
  std::string dispatch_id;
};

/// What the router may hand to one queue's dispatcher: at most
/// `max_in_flight` dispatched deliveries of the queue in all (counted in
/// the database, as the claim counts them).
struct handoff_queue {
  std::string queue;
  int32_t max_in_flight = 0;
};

class handoff_box {
public:
  handoff_box(std::string queue, int32_t max_in_flight);

  const std::string& queue() const { return queue_; }

  /// Whether the dispatcher can publish now: the router hands nothing
  /// otherwise (it inserts pending deliveries, as without a box).
  bool accepting() const { return accepting_.load(); }
  handoff_queue offer() const { return {queue_, max_in_flight_}; }

  /// The dispatcher, after each look at its broker connection.
  void set_accepting(bool yes) { accepting_.store(yes); }

  /// The router, after the routing transaction committed.
  void put(std::vector<handed_delivery> ds);

  /// The dispatcher: everything handed so far, in the order handed.
  std::vector<handed_delivery> take();

  /// How many wait to be taken (status and tests).
  size_t waiting() const;

private:
  const std::string queue_;
  const int32_t max_in_flight_;
  std::atomic<bool> accepting_{false};
  mutable std::mutex mutex_;
  std::vector<handed_delivery> waiting_;
};

} // namespace outbox
