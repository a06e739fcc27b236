// The status node's latest view of which queues have a live result
// handler, as a node's agent fetched it for the node's sweeper
// (core/domain/relay_stalls.hpp). The agent writes it, the sweeper reads
// it: two actors on their own threads, hence the lock.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

#include "core/domain/relay_stalls.hpp"

namespace outbox {

class results_view {
public:
  using clock = std::chrono::steady_clock;

  struct snapshot {
    results_liveness liveness;
    clock::time_point at;
  };

  void update(results_liveness liveness, clock::time_point at) {
    std::lock_guard<std::mutex> guard{mutex_};
    latest_ = snapshot{std::move(liveness), at};
  }

  /// The latest view; nullopt before the first.
  std::optional<snapshot> latest() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return latest_;
  }

private:
  mutable std::mutex mutex_;
  std::optional<snapshot> latest_;
};

} // namespace outbox
