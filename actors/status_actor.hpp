// The interface of the status actor: nodes join it and send their figures,
// `outboxctl status` and the sweeper's relay-stall view ask it, and
// `outboxctl drain NODE` drains a node through it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/actor_metrics.hpp"
#include "actors/atoms.hpp"
#include "actors/cluster_view.hpp"
#include "actors/node_agent_actor.hpp"
#include "core/domain/leader_assignment.hpp"

namespace outbox {

using status_actor = caf::typed_actor<
  caf::reacts_to<join_atom, node_info>,
  caf::reacts_to<metrics_atom, std::string, std::vector<actor_metrics>>,
  caf::reacts_to<lifecycle_atom, std::string, std::map<std::string, int64_t>>,
  caf::reacts_to<wakeup_atom, std::string, std::string>,
  caf::replies_to<status_atom>::with<cluster_status>,
  caf::reacts_to<tick_atom, uint64_t>,
  caf::replies_to<liveness_atom>::with<std::map<std::string, int64_t>>,
  caf::replies_to<leaders_atom>::with<leader_map>,
  caf::replies_to<drain_atom, std::string>::with<std::string>>;

} // namespace outbox
