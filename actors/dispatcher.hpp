// A dispatcher of one queue: publishes what its node's router handed over
// already dispatched, claims ready deliveries (committed before anything
// is sent), publishes them with confirms, and sends every delivery
// the broker did not take down its retry-or-fail path at once
// (docs/design.md "Claim and dispatch").
#pragma once

#include <memory>
#include <string>

#include "actors/pass_loop.hpp"
#include "core/domain/handoff.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// How much one dispatcher claims: per pass, and out at once for its queue.
struct dispatch_limits {
  int32_t batch_size = 100;
  /// Config `maxInFlight`: the ceiling of the queue's in-flight window
  /// (core/domain/in_flight_window.hpp), deliveries dispatched at once,
  /// counted over every dispatcher of the queue.
  int32_t max_in_flight = 1000;
};

/// Spawn with caf::detached when the store and publisher are real.
/// With a `box`, each pass first publishes what this node's router handed
/// over (core/domain/handoff.hpp) and tells the router whether it can
/// publish at all; handed deliveries it cannot publish go back to pending.
pass_actor::behavior_type
dispatcher(pass_actor::stateful_pointer<pass_state> self,
           std::shared_ptr<delivery_store> store,
           std::shared_ptr<job_publisher> publisher, std::string queue,
           dispatch_limits limits, pass_settings settings,
           node_agent_actor agent, std::shared_ptr<handoff_box> box = nullptr);

} // namespace outbox
