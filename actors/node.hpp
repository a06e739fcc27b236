// The node bootstrap: spawns this process's roles (each actor that blocks
// on libpq or rabbitmq-c detached, on its own thread), publishes the status
// actor or joins the cluster's, and stops them all on request.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/messages.hpp"
#include "actors/node_options.hpp"
#include "core/config/config.hpp"

namespace outbox {

class node {
public:
  /// Starts every role of `opts`. Fails when the status port cannot be
  /// opened; lost servers later are failures of single actors, retried.
  static caf::expected<std::unique_ptr<node>>
  start(caf::actor_system& sys, const config& cfg, const node_options& opts);

  ~node();

  /// --once: one pass of each local role (router first, then dispatchers,
  /// result handlers, sweeper); returns the first error, if any.
  caf::error run_once();

  /// Stops every actor: no new pass, the current one finishes.
  void stop();

  /// Waits until every actor of this node has terminated (after stop());
  /// false if some were still running after `limit`.
  bool await_stopped(std::chrono::seconds limit);

  /// The port the status actor listens on (0 when this node has none).
  uint16_t status_port() const { return status_port_; }

private:
  node(caf::actor_system& sys) : sys_(sys) {}

  /// Router first, then dispatchers, result handlers and the sweeper: the
  /// order of one pass of the whole pipeline.
  template <class F>
  void for_each_pass_actor(F f) {
    if (router_)
      f(pass_actor{router_});
    for (auto* group : {&dispatchers_, &result_handlers_, &sweepers_})
      for (auto& a : *group)
        f(a);
  }

  caf::actor_system& sys_;
  status_actor status_;
  uint16_t status_port_ = 0;
  node_agent_actor agent_;
  router_actor router_;
  caf::actor listener_;       ///< NOTIFY of events: wakes the router
  caf::actor ready_listener_; ///< NOTIFY of deliveries: wakes dispatchers
  std::vector<pass_actor> dispatchers_, result_handlers_, sweepers_;
  bool stopped_ = false;
};

} // namespace outbox
