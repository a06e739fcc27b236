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
  /// Null for a database this node does not serve (--databases): its
  /// results are parked for a node that does.
  std::shared_ptr<delivery_store> store;
  /// Its name, for a parked result's queue and its lifecycle lines; ""
  /// for the one database of a config without `databases`.
  std::string database;
};

/// Spawn with caf::detached when the stores and source are real. A pass
/// waits up to `wait` for the first result. With several targets (a queue
/// that several databases route to), each result goes to the database its
/// dispatch id's tag names; the part of a database that fails is parked
/// with `parker` (in that database's own queue, which a handler of that
/// database alone drains), so that one database down holds no other's
/// results. A batch is acked once every part was applied or parked; when
/// parking fails too, the whole batch is kept, as with one database.
pass_actor::behavior_type
result_handler(pass_actor::stateful_pointer<pass_state> self,
               std::vector<result_target> targets,
               std::shared_ptr<result_source> source, std::string queue,
               int32_t batch_size, std::chrono::milliseconds wait,
               pass_settings settings, node_agent_actor agent,
               std::shared_ptr<result_parker> parker);

} // namespace outbox
