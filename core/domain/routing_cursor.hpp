// Where routing stands, kept without writing to the events. The router
// walks the events by id: every id up to the cursor (C) is routed, taken out
// of routing (quarantined, a type without routes) or will never exist.
// Above it, the router remembers the highest id it has looked at (A) and
// the ids up to A it could not route yet (the open set G):
//
// - an id the look did not see: its transaction was still open (a gap), or
//   it rolled back. Once the routing horizon (routing_horizon.hpp) passes
//   such an id and the id is still not visible, it never will be.
// - an event of an ordered route above the horizon: routed once the
//   horizon passes it, so that an older event of its key comes first.
//
// Events above a gap that are not ordered are routed at once ("ahead"), so
// an open transaction holds back only ordered events. C is the id below the
// lowest open one, and is what the database stores: a router that starts,
// or takes over from another, resumes there, and routing an event again is
// a no-op (a delivery's (event, job, queue) is unique).
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace outbox {

/// One event a routing look saw (visible to its snapshot).
struct seen_event {
  int64_t id = 0;
  bool routable = false;    ///< its type has routes
  bool ordered = false;     ///< it has a key and a route of its type orders by key
  bool quarantined = false; ///< taken out of routing for good
  bool set_aside = false;   ///< read back from the set-aside events (older than C)
};

/// What one routing transaction does with the events it saw, and where the
/// cursor stands once that transaction has committed.
struct routing_step {
  std::vector<int64_t> route;    ///< events to route now, in id order
  std::vector<int64_t> set_aside; ///< events of types without routes
  int64_t done = 0;               ///< C after the commit
  int64_t scanned = 0;            ///< A after the commit
  std::set<int64_t> open;         ///< G after the commit
  std::size_t held = 0;           ///< of them, visible ordered events
};

class routing_cursor {
public:
  /// At most this many open ids: beyond it the router stops looking further
  /// ahead until the horizon settles some (bounded memory and statement).
  static constexpr std::size_t max_open = 10000;

  /// Starts from `stored`, the position the database holds, unless it is
  /// the one this router wrote last: then what it remembers above it holds.
  void resume(int64_t stored);

  /// Forgets what it remembers above the stored position: the next resume
  /// starts from the position the database holds.
  void forget() { known_ = false; }

  /// Starts over from `position`, forgetting what it knew, and wants it
  /// stored (the id sequence went back below it).
  void restart(int64_t position);

  int64_t done() const { return done_; }
  int64_t scanned() const { return scanned_; }
  const std::set<int64_t>& open() const { return open_; }

  /// Whether the next look may read new ids above A.
  bool may_look_ahead() const { return open_.size() < max_open; }

  /// Decides a look: `seen` holds what it read above A (the lowest ids
  /// visible there, in order), the open ids it found visible, and set-aside
  /// events of routed types. `safe` is the horizon's safe id: an id up to it
  /// that the look did not see never will be.
  routing_step decide(std::vector<seen_event> seen, int64_t safe) const;

  /// Takes the step once its transaction committed.
  void commit(routing_step step);

  /// The position the database should store now, or -1: nothing moved
  /// since it was stored.
  int64_t unstored() const { return done_ != stored_ ? done_ : -1; }

  /// The database stores `position` (in the transaction that just
  /// committed).
  void stored(int64_t position) { stored_ = position; }

private:
  bool known_ = false;  ///< false until the first resume
  int64_t done_ = 0;    ///< C
  int64_t scanned_ = 0; ///< A
  int64_t stored_ = -1; ///< what this router last wrote
  std::set<int64_t> open_;
};

} // namespace outbox
