// The node bootstrap: spawns this process's roles (each actor that blocks
// on libpq or rabbitmq-c detached, on its own thread), publishes the status
// actor or joins the cluster's, and stops them all on request.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/status_actor.hpp"
#include "actors/node_roles.hpp"
#include "actors/node_settings.hpp"
#include "core/config/config.hpp"

namespace outbox {

class node {
public:
  /// Starts every role of `settings`. Fails when the status port cannot be
  /// opened; lost servers later are failures of single actors, retried.
  static caf::expected<std::unique_ptr<node>>
  start(caf::actor_system& sys, const cluster_config& all,
        const node_settings& settings);

  /// A node of one database (a config without `databases`).
  static caf::expected<std::unique_ptr<node>>
  start(caf::actor_system& sys, const config& cfg, const node_settings& settings);

  ~node();

  /// --once: one pass of each local role (router first, then dispatchers,
  /// result handlers, sweeper, retention); returns the first error, if any.
  caf::error run_once();

  /// Stops every actor: no new pass, the current one finishes.
  void stop();

  /// Waits until every actor of this node has terminated (after stop());
  /// false if some were still running after `limit`.
  bool await_stopped(std::chrono::seconds limit);

  /// The port the status actor listens on (0 when this node has none).
  uint16_t status_port() const { return actors_.status_port; }

  /// This node's agent (its own report) and, on a status node, the status
  /// actor (the cluster view); null elsewhere. For the HTTP endpoint.
  node_agent_actor agent() const { return actors_.agent; }
  status_actor status() const { return actors_.status; }

private:
  node(caf::actor_system& sys) : sys_(sys) {}

  /// Routers first, then dispatchers, result handlers, the sweepers and
  /// retention: the order of one pass of the whole pipeline.
  template <class F>
  void for_each_pass_actor(F f) {
    for (auto& db : actors_.databases)
      if (db.router)
        f(pass_actor{db.router});
    for (auto* group : {&actors_.dispatchers, &actors_.result_handlers,
                        &actors_.sweepers, &actors_.retentions})
      for (auto& a : *group)
        f(a);
  }

  caf::actor_system& sys_;
  node_actors actors_;
  bool stopped_ = false;
};

} // namespace outbox
