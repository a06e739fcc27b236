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

/// One database a queue's results go to: its store, and the tag its
/// dispatch ids start with (core/domain/dispatch_tag.hpp; "" for the only
/// database of a config).
struct result_target {
  std::string tag;
  std::shared_ptr<delivery_store> store;
};

/// Spawn with caf::detached when the stores and source are real. A pass
/// waits up to `wait` for the first result. With several targets (a queue
/// that several databases route to), each result goes to the database its
/// dispatch id's tag names; a batch is acked once every database took its
/// part.
pass_actor::behavior_type
result_handler(pass_actor::stateful_pointer<pass_state> self,
               std::vector<result_target> targets,
               std::shared_ptr<result_source> source, std::string queue,
               int32_t batch_size, std::chrono::milliseconds wait,
               pass_settings settings, node_agent_actor agent);

} // namespace outbox
