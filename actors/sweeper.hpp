// The timeout sweeper: dispatched deliveries past their delivery timeout
// take the retry-or-fail path; pending ones past their time to live expire
// (docs/design.md "Timeouts and expiry"). Deliveries of a queue whose
// result handlers stalled do not time out meanwhile, and their deadlines
// move by the outage (core/domain/relay_stalls.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/pass_loop.hpp"
#include "actors/results_view.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// Spawn with caf::detached when the store is the database. `results`:
/// where the node's agent puts the status node's view of live result
/// handlers of `queues` (null: every queue is swept as if it had one).
pass_actor::behavior_type sweeper(pass_actor::stateful_pointer<pass_state> self,
                                  std::shared_ptr<delivery_store> store,
                                  int32_t batch_size, pass_settings settings,
                                  node_agent_actor agent,
                                  std::shared_ptr<results_view> results,
                                  std::vector<std::string> queues);

} // namespace outbox
