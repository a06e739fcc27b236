// Built-in retention: deletes final deliveries once their status's window
// has passed, and the events left without deliveries, in bounded batches
// (docs/operations.md "Retention"). Every node with the sweeper role runs
// one; only the one whose database session holds the retention lock
// deletes, the others try to take the lock at every pass and lead as soon
// as the leader's session ends.
#pragma once

#include <chrono>
#include <memory>

#include "actors/pass_loop.hpp"
#include "core/domain/retention.hpp"

namespace outbox {

/// Rows one delete statement takes at most: a short transaction.
constexpr int32_t retention_batch_rows = 2000;

/// A standby tries the lock at least this often, whatever --sleep says,
/// so that the lead changes hands within seconds.
constexpr std::chrono::milliseconds retention_max_period{2000};

/// Spawn with caf::detached when the store is the database.
pass_actor::behavior_type
retention(pass_actor::stateful_pointer<pass_state> self,
          std::shared_ptr<retention_store> store, retention_policy policy,
          pass_settings settings, node_agent_actor agent);

} // namespace outbox
