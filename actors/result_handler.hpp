// A result handler of one queue: takes result messages from
// `<queue>.results`, applies them in one transaction per batch and acks
// them only after the commit (docs/design.md "Results"). Malformed results,
// unknown deliveries, wrong jobs and stale dispatch ids change nothing:
// each is logged, counted and acked.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "actors/pass_loop.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// Spawn with caf::detached when the store and source are real. A pass
/// waits up to `wait` for the first result.
pass_actor::behavior_type
result_handler(pass_actor::stateful_pointer<pass_state> self,
               std::shared_ptr<delivery_store> store,
               std::shared_ptr<result_source> source, std::string queue,
               int32_t batch_size, std::chrono::milliseconds wait,
               pass_settings settings, node_agent_actor agent);

} // namespace outbox
