// The status actor: the cluster's entry point and directory. Nodes join it
// with their actors; it monitors them (a node or actor that dies stays in
// the view, marked down), keeps their latest metrics and the state of their
// wake-up paths, and answers status requests with the live view and
// the database counts (docs/design.md "Status").
#pragma once

#include <map>
#include <memory>
#include <string>

#include "actors/messages.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

struct status_state {
  struct node_record {
    node_info info;
    node_view view;
  };
  std::shared_ptr<status_store> store; ///< null: no database counts
  std::map<std::string, node_record> nodes;
  static const char* name;
};

/// Spawn with caf::detached when `store` is the database (reads block).
status_actor::behavior_type status(status_actor::stateful_pointer<status_state> self,
                                   std::shared_ptr<status_store> store);

} // namespace outbox
