// A dispatcher of one queue: claims ready deliveries (committed before
// anything is sent), publishes them with confirms, and sends every delivery
// the broker did not take down its retry-or-fail path at once
// (docs/design.md "Claim and dispatch").
#pragma once

#include <memory>
#include <string>

#include "actors/pass_loop.hpp"
#include "core/stores.hpp"

namespace outbox {

/// Spawn with caf::detached when the store and publisher are real.
pass_actor::behavior_type
dispatcher(pass_actor::stateful_pointer<pass_state> self,
           std::shared_ptr<delivery_store> store,
           std::shared_ptr<job_publisher> publisher, std::string queue,
           int32_t batch_size, pass_settings settings, node_agent_actor agent);

} // namespace outbox
