// The spawning half of the node bootstrap: one function per role (and per
// helper a role needs: the node agent, the NOTIFY listeners), run in the
// order their handles are needed. A new role is a row of the table of roles
// (node_settings.cpp) and a spawn function here; a knob touches the spawn
// function of its role.
#pragma once

#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/error.hpp>

#include "actors/status_actor.hpp"
#include "actors/node_settings.hpp"
#include "actors/pass_loop.hpp"
#include "actors/leadership_view.hpp"
#include "actors/results_view.hpp"
#include "core/domain/handoff.hpp"
#include "core/config/config.hpp"

namespace outbox {

/// One database's actors that wake each other: its router and listeners
/// wake its own dispatchers, never another database's.
struct database_actors {
  std::string database;
  router_actor router;
  caf::actor listener;       ///< NOTIFY of events: wakes the router
  caf::actor ready_listener; ///< NOTIFY of deliveries: wakes dispatchers
  /// This node's dispatchers of this database by queue: its router and
  /// ready listener wake them.
  std::vector<dispatcher_entry> local_dispatchers;
  /// Their handoff boxes, when this node's router hands deliveries over
  /// (core/domain/handoff.hpp).
  std::vector<std::shared_ptr<handoff_box>> handoffs;
};

/// Everything a node spawned; the node stops and awaits them.
struct node_actors {
  status_actor status;
  uint16_t status_port = 0; ///< 0 when this node publishes no status actor
  node_agent_actor agent;
  std::vector<database_actors> databases; ///< one per database served
  /// Every pass actor but the routers (database_actors), each database's
  /// in turn; a result handler serves its queue for every database.
  std::vector<pass_actor> dispatchers, result_handlers, sweepers, retentions;
};

/// What the spawn functions read, and where they put what they spawned.
struct node_bootstrap {
  caf::actor_system& sys;
  const cluster_config& all; ///< every database of the config
  const node_settings& settings;
  node_actors& actors;
  node_info info;    ///< what the agent joins with; each spawn adds its actors
  pass_settings pass; ///< the loop of every pass actor
  /// Tags this node's NOTIFYs of new deliveries: its own router wakes its
  /// dispatchers directly, its ready listener skips them.
  std::string origin;
  /// Filled by the agent for the sweeper (null without a sweeper).
  std::shared_ptr<results_view> results;
  /// Filled by the agent for the led roles, when the config names its
  /// databases (null otherwise: each node takes its turn under the
  /// database's locks).
  std::shared_ptr<leadership_view> leadership;
};

/// The databases a node serves: those --databases names, else every one.
std::vector<const config*> served_databases(const cluster_config& all,
                                            const node_settings& settings);

/// Spawns every role of `b.settings` and the helpers they need. Fails only
/// when the status port cannot be opened (the caller stops what was
/// spawned); lost servers later are failures of single actors, retried.
caf::error spawn_node_roles(node_bootstrap& b);

} // namespace outbox
