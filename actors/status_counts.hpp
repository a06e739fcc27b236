// Each database's counts for the status view, read by an actor of its own:
// a database that is slow or unreachable holds up its own reader, never the
// status actor (joins, metrics, the leaders' and results' views) nor the
// other databases' counts (docs/design.md "Status").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/cluster_view.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// Reads one database's counts when asked: name, ok, error and counts.
using counts_reader_actor
  = caf::typed_actor<caf::replies_to<status_atom>::with<database_status>>;

/// Spawn with caf::detached (a read blocks on the database).
counts_reader_actor::behavior_type
counts_reader(counts_reader_actor::pointer self, std::string database,
              std::shared_ptr<status_store> store);

/// What the status actor knows of one database's reads, and when it shows
/// what. Times are milliseconds since the epoch.
struct counts_cache {
  /// How long a status answer waits for a read that began after it asked.
  static constexpr int64_t answer_wait_ms = 1500;

  std::optional<database_status> last; ///< the latest read that ended
  int64_t last_started_ms = 0, last_ended_ms = 0;
  bool reading = false;
  int64_t reading_since_ms = 0;

  /// A read that ended has begun at or after `asked_ms`.
  bool fresh_for(int64_t asked_ms) const {
    return last && last_started_ms >= asked_ms;
  }

  /// What the view shows when a read that began after the ask is not in
  /// by the answer's deadline: the last counts if that read ended after
  /// the ask, or if the current read has not run three times as long as
  /// it took (a database that counts slowly); otherwise why not.
  database_status shown(const std::string& name, int64_t asked_ms,
                        int64_t now_ms) const;
};

} // namespace outbox
