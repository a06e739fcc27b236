// The benchmark's producers: P connections, each committing one event per
// transaction through the producer API, as fast as they can or at a fixed
// total rate.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/domain/schema_names.hpp"

namespace outbox::bench {

struct commit {
  int64_t event_id;
  double at; ///< seconds since the epoch, right after COMMIT returned
};

struct production {
  std::vector<commit> commits;
  double seconds = 0; ///< wall time of the whole run
  int64_t errors = 0;
  /// The lowest event id committed (0 for none): ids of one run are
  /// increasing, so its events are those after first_id() - 1 and before
  /// the next run.
  int64_t first_id() const;
};

/// Writes `total` events of `event_type` with `payload` over `producers`
/// connections; `rate` events/s in all (0: as fast as possible). With
/// `keys` > 0 the events take the keys "k0" .. "k<keys-1>" in turn. Once
/// `*stop` is true the producers commit no more (a soak that fails ends
/// at once, not after its minutes).
production produce(const std::string& url, const schema_names& names,
                   const std::string& event_type, const std::string& payload,
                   int producers, int64_t total, double rate, int64_t keys = 0,
                   const std::atomic<bool>* stop = nullptr);

/// Seconds since the epoch.
double now_seconds();

} // namespace outbox::bench
