// The timeout sweeper: dispatched deliveries past their delivery timeout
// take the retry-or-fail path; pending ones past their time to live expire
// (docs/design.md "Timeouts and expiry").
#pragma once

#include <memory>

#include "actors/pass_loop.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// Spawn with caf::detached when the store is the database.
pass_actor::behavior_type sweeper(pass_actor::stateful_pointer<pass_state> self,
                                  std::shared_ptr<delivery_store> store,
                                  int32_t batch_size, pass_settings settings,
                                  node_agent_actor agent);

} // namespace outbox
