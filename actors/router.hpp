// The router: turns unrouted events into deliveries and wakes its node's
// dispatchers of every queue that received some (docs/design.md "Routing").
#pragma once

#include <memory>
#include <vector>

#include "actors/pass_loop.hpp"
#include "core/domain/handoff.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// Passes in a row that came without a wake-up (full batches, lingers:
/// about 100 ms at the default linger of 5 ms) after which the router tells
/// its listener to stop listening; the next pass that waits for work tells
/// it to listen again (listen_demand.hpp).
constexpr int listener_pause_after_passes = 20;

/// Spawn with caf::detached when `store` is the database.
/// `local` are the dispatchers of this node, woken after each pass that gave
/// their queue deliveries; the store's NOTIFY wakes those of other nodes.
/// With `wake_dispatchers` false (deliverImmediately: false) the
/// dispatchers are left to their timers.
/// `handoffs` are the boxes of this node's dispatchers that take deliveries
/// the router inserts dispatched (core/domain/handoff.hpp); empty: every
/// delivery is inserted pending.
/// A listener handed over by a listener_atom message gets listen_atom
/// messages with the router's demand for wake-ups.
router_actor::behavior_type
router(router_actor::stateful_pointer<pass_state> self,
       std::shared_ptr<routing_store> store, int32_t batch_size,
       std::vector<dispatcher_entry> local,
       std::vector<std::shared_ptr<handoff_box>> handoffs,
       pass_settings settings, node_agent_actor agent, bool wake_dispatchers);

} // namespace outbox
