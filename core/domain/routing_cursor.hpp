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
// lowest open one. The database stores C, A and G in every routing
// transaction that changes them (schema/016_completion_log.sql): a router
// that starts, or takes over from another, resumes exactly there, and no
// event is routed twice (a completed delivery leaves the deliveries table,
// so the unique (event, job, queue) key could not tell).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

/// What the database stores of a cursor: C, A and G.
struct cursor_state {
  int64_t done = 0;
  int64_t scanned = 0;
  std::set<int64_t> open;

  bool operator==(const cursor_state& x) const {
    return done == x.done && scanned == x.scanned && open == x.open;
  }
  bool operator!=(const cursor_state& x) const { return !(*this == x); }
};

/// G as [first, last] pairs, flattened (a rolled-back transaction's ids
/// are one pair however many it took).
std::vector<int64_t> to_ranges(const std::set<int64_t>& ids);

/// The ids of such pairs; nullopt when they are malformed (odd count, a
/// pair out of order, or more ids than routing_cursor::max_open).
std::optional<std::set<int64_t>> from_ranges(const std::vector<int64_t>& ranges);

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

  /// Takes up what the database stores (read in the routing transaction
  /// that follows): the memory of the router that stored it, this one's
  /// or another's. A stored A below C counts as C; open ids up to C or
  /// above A are dropped.
  void resume(const cursor_state& stored);

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

  /// What the database should store after `step` commits, or nullopt:
  /// the same as it holds.
  std::optional<cursor_state> to_store(const routing_step& step) const;

private:
  bool restarted_ = false; ///< moved by restart, not stored yet
  int64_t done_ = 0;       ///< C
  int64_t scanned_ = 0;    ///< A
  std::set<int64_t> open_;
};

} // namespace outbox
