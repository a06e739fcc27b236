// Whether the router still needs its wake-ups. Under sustained load its
// passes come by themselves (a full batch, or the linger), and every probe
// of its event watcher is pure cost: a statement on the database every few
// milliseconds for a router that ignores the wake-ups it brings. After
// `pause_after` such passes in a row the router stops the watcher; the
// first pass that waits for work again starts it, and the watcher then
// wakes it once for what committed meanwhile.
#pragma once

#include <optional>

namespace outbox {

class listen_demand {
public:
  /// `pause_after` <= 0: never stop listening.
  explicit listen_demand(int pause_after) : pause_after_(pause_after) {}

  /// Feeds one pass: `self_paced` when the next pass comes without a
  /// wake-up. Returns the new demand when it changed.
  std::optional<bool> after_pass(bool self_paced);

  bool wanted() const { return wanted_; }

private:
  int pause_after_;
  int streak_ = 0; ///< self-paced passes in a row
  bool wanted_ = true;
};

} // namespace outbox
