// The router: turns unrouted events into deliveries and wakes the
// dispatchers of every queue that received some (DESIGN.md "Routing").
#pragma once

#include <memory>
#include <vector>

#include "actors/pass_loop.hpp"
#include "core/stores.hpp"

namespace outbox {

/// Spawn with caf::detached when `store` is the database.
/// `local` are the dispatchers of this node; the status actor adds the
/// cluster's through peers messages. With `wake_dispatchers` false
/// (deliverImmediately: false) the dispatchers are left to their timers.
router_actor::behavior_type
router(router_actor::stateful_pointer<pass_state> self,
       std::shared_ptr<routing_store> store, int32_t batch_size,
       std::vector<dispatcher_entry> local, pass_settings settings,
       node_agent_actor agent, bool wake_dispatchers);

} // namespace outbox
