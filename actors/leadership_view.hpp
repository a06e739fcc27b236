// The status node's latest word on which node leads each database's
// routing and sweeping (core/domain/leader_assignment.hpp), as a node's
// agent fetched it for the node's routers, sweepers and retention. The
// agent writes it, the pass actors read it: actors on their own threads,
// hence the lock.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "core/domain/leader_assignment.hpp"

namespace outbox {

class leadership_view {
public:
  using clock = std::chrono::steady_clock;

  /// Without a word from the status node for this long, every node runs
  /// the passes again, as a cluster of one database does: the database's
  /// locks keep them apart (a lost status node must not stop routing).
  static constexpr std::chrono::seconds stale_after{5};

  void update(leader_map leaders, clock::time_point at) {
    std::lock_guard<std::mutex> guard{mutex_};
    latest_ = snapshot{std::move(leaders), at};
  }

  /// Whether `node` runs `role`'s passes of `database` now: when it leads
  /// them, and when the word is missing or stale, or names no leader.
  bool leads(const std::string& role, const std::string& database,
             const std::string& node, clock::time_point now) const {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!latest_ || now - latest_->at > stale_after)
      return true;
    auto db = latest_->leaders.find(database);
    if (db == latest_->leaders.end())
      return true;
    auto leader = db->second.find(role);
    return leader == db->second.end() || leader->second == node;
  }

private:
  struct snapshot {
    leader_map leaders;
    clock::time_point at;
  };
  mutable std::mutex mutex_;
  std::optional<snapshot> latest_;
};

} // namespace outbox
