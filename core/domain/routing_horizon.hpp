// Which events an ordered route may route yet. Events of one key must be
// routed in id order, but ids are taken when a row is inserted and become
// visible when its transaction commits: event 10 may commit while event 9
// is still open. The router therefore routes an event of an ordered route
// only when every transaction that could still add a smaller id has ended.
//
// How that is known (schema/011_key_ordering.sql makes a transaction take
// its transaction id before any event id): a routing transaction reads the
// newest event id taken so far (Q), then takes its own transaction id (R).
// Whoever took an id up to Q held a transaction id before Q was read, so a
// smaller one than R. Once the oldest transaction still running is newer
// than R, all of them have ended, and every event up to Q is visible or
// never will be. Each pass adds a sample (Q, R); a later pass that sees
// them old enough moves the safe id up to their Q.
//
// The cost: an ordered event waits for a routing pass after its commit,
// and any transaction open somewhere in the database (holding a transaction
// id) holds ordered events back until it ends, as it holds back vacuum.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

namespace outbox {

/// One look of a routing transaction at the database.
struct horizon_sample {
  int64_t last_event_id = 0; ///< Q: the newest event id taken so far
  uint64_t xid = 0;          ///< R: the routing transaction's own id
};

class routing_horizon {
public:
  /// Takes a new sample and the oldest transaction id still running
  /// (read after the sample's own): returns the safe id, the highest event
  /// id up to which ordered events may be routed.
  int64_t advance(horizon_sample now, uint64_t oldest_running);

  int64_t safe_id() const { return safe_; }

  /// True when the last advance moved the safe id or took a sample that a
  /// later pass can use: another pass soon can route more.
  bool progressed() const { return progressed_; }

  /// The delay before routing again when ordered events were held back:
  /// 2 ms while the horizon moves, then doubling up to `cap` while an
  /// open transaction keeps it still.
  std::chrono::milliseconds retry_delay(std::chrono::milliseconds cap);

  static constexpr size_t max_samples = 64;

private:
  std::deque<horizon_sample> samples_; ///< oldest first; xids increasing
  int64_t safe_ = 0;
  bool progressed_ = false;
  int stalled_ = 0; ///< passes in a row that held events back in vain
};

} // namespace outbox
