// The interface of each node's agent, and what a node announces of itself
// when it joins the status actor.
#pragma once

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
#include "actors/pass_actor.hpp"
#include "core/domain/lifecycle_event.hpp"

namespace outbox {

/// One actor of a node, as registered with the status actor.
struct actor_entry {
  std::string name, role, queue;
  pass_actor handle;
};

struct node_info;

/// Each node's agent: collects local metrics and the state of its wake-up
/// path, joins the status actor (and joins again after losing it). The join
/// message with the node's own info starts it. Asked for status, it reports
/// its node as the node's HTTP endpoint shows it. Asked to drain, it
/// stops its node as SIGTERM does (false: this node cannot be drained so).
using node_agent_actor
  = caf::typed_actor<caf::replies_to<status_atom>::with<node_report>,
                     caf::reacts_to<metrics_atom, actor_metrics>,
                     caf::reacts_to<wakeup_atom, std::string>,
                     caf::reacts_to<join_atom, node_info>,
                     caf::reacts_to<tick_atom>,
                     caf::reacts_to<lifecycle_event>,
                     caf::replies_to<drain_atom>::with<bool>>;

/// A node's announcement.
struct node_info {
  std::string name; ///< host:pid
  std::vector<std::string> roles;
  std::vector<std::string> queues;
  std::vector<std::string> databases; ///< served by this node
  std::vector<actor_entry> actors;
  node_agent_actor agent;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_entry& x) {
  return f(caf::meta::type_name("actor_entry"), x.name, x.role, x.queue,
           x.handle);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(caf::meta::type_name("node_info"), x.name, x.roles, x.queues,
           x.databases, x.actors, x.agent);
}

} // namespace outbox
