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
//
// Credit keeps the queue within its in-flight limit without a count in
// every routing transaction: each claim of the dispatcher counts the
// queue's dispatched deliveries anyway (claim_result::room), and what that
// count leaves after the claim is the credit the router may hand over
// until the next claim; each handed delivery uses one. The count is a
// moment old when the router uses it: like two claims at the same moment,
// the queue may go over its limit by up to a batch, never more.
#pragma once

#include <atomic>
#include <cstddef>
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

/// What the router may hand to one queue's dispatcher in a routing pass:
/// at most `room` deliveries.
struct handoff_queue {
  std::string queue;
  int64_t room = 0;
};

class handoff_box {
public:
  explicit handoff_box(std::string queue);

  const std::string& queue() const { return queue_; }

  /// The router's offer for its next routing pass: nothing while the
  /// dispatcher cannot publish (deliveries are inserted pending, as
  /// without a box), else the credit left.
  handoff_queue offer() const;

  /// The dispatcher, after each pass: whether it can publish (its broker
  /// connection is up and the pass did not fail). A closed box stays shut.
  void set_accepting(bool yes) { accepting_.store(yes && !closed_.load()); }
  bool accepting() const { return accepting_.load(); }

  /// The dispatcher, as it exits: nothing is handed to it any more.
  void close();

  /// The dispatcher, after each claim: the room its count left.
  void set_credit(int64_t room) { credit_.store(room < 0 ? 0 : room); }
  int64_t credit() const { return credit_.load(); }

  /// The router, after the routing transaction committed: the handed
  /// deliveries, each of which used one credit. False when the box was
  /// closed meanwhile (its dispatcher exited): then they stay dispatched
  /// until their delivery timeout sends them again.
  bool put(std::vector<handed_delivery> ds);

  /// The dispatcher: up to `max` of what was handed, oldest first.
  std::vector<handed_delivery> take(size_t max = SIZE_MAX);

  /// How many wait to be taken (status and tests).
  size_t waiting() const;

private:
  const std::string queue_;
  std::atomic<bool> accepting_{false};
  std::atomic<bool> closed_{false};
  std::atomic<int64_t> credit_{0}; ///< none until the first claim counted
  mutable std::mutex mutex_;
  std::vector<handed_delivery> waiting_;
};

} // namespace outbox
