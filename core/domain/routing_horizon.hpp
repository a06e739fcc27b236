// Which events an ordered route may route yet. Events of one key must be
// routed in id order, but ids are taken when a row is inserted and become
// visible when its transaction commits: event 10 may commit while event 9
// is still open. The router therefore routes an event of an ordered route
// only when every transaction that could still add a smaller id has ended.
//
// How that is known: a transaction that takes an event id holds the id
// sequence's ROW EXCLUSIVE lock from before it gets the id until it ends
// (PostgreSQL's nextval() takes it; schema/014_no_insert_trigger.sql). A
// routing transaction reads the newest id taken so far (Q), then which
// transactions hold that lock (V): whoever took an id up to Q and has not
// ended is in V. Once none of V holds the lock any more, every
// event up to Q is visible or never will be. Each pass adds a sample
// (Q, V); a later pass that finds a sample's holders gone moves the safe
// id up to its Q.
//
// The cost: an ordered event waits for a routing pass after its commit,
// and a transaction that inserted an event and stays open holds ordered
// events back until it ends. Transactions that insert no event never do.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <set>
#include <string>

namespace outbox {

/// One look of a routing transaction at the database.
struct horizon_sample {
  int64_t last_event_id = 0;     ///< Q: the newest event id taken so far
  std::set<std::string> holders; ///< V: the transactions that took event ids
};

class routing_horizon {
public:
  /// Takes a new sample (whose holders are also those that hold the lock
  /// now) and returns the safe id: the highest event id up to which
  /// ordered events may be routed. A sample whose newest id is below what
  /// the horizon has seen (a restored database) starts it afresh.
  int64_t advance(horizon_sample now);

  int64_t safe_id() const { return safe_; }

  /// Forgets every sample and the safe id (the ids were handed out again).
  void reset();

  /// True when the last advance moved the safe id or took a sample that a
  /// later pass can use: another pass soon can route more.
  bool progressed() const { return progressed_; }

  /// The delay before routing again when ordered events were held back:
  /// 2 ms while the horizon moves, then doubling up to `cap` while an open
  /// transaction keeps it still.
  std::chrono::milliseconds retry_delay(std::chrono::milliseconds cap);

  static constexpr size_t max_samples = 64;

private:
  std::deque<horizon_sample> samples_; ///< oldest first
  int64_t safe_ = 0;
  bool progressed_ = false;
  int stalled_ = 0; ///< passes in a row that held events back in vain
};

} // namespace outbox
