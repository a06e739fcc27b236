// outboxctl's verbs that talk to a running cluster through its status node
// (--connect HOST:PORT, mutual TLS with the --tls-* flags): status, and
// drain NODE. Every wait on the network is bounded.
#pragma once

#include <string>

#include <caf/actor_system_config.hpp>

#include "actors/cluster_view.hpp"
#include "cli/tls_flags.hpp"

namespace outbox {

/// Where and how to reach the status node.
struct cluster_target {
  std::string connect; ///< HOST:PORT; "" = 127.0.0.1 and the default port
  tls_flags tls;
};

/// Prints a status as the table or as JSON.
void print_status(const cluster_status& s, bool json, bool with_nodes);

/// outboxctl status: asks the status node; returns the exit code.
int status_from_cluster(caf::actor_system_config& cfg,
                        const cluster_target& target, bool json);

/// outboxctl drain NODE: asks the status node to drain the node of that
/// name (as `outboxctl status` shows it); it stops claiming, finishes what
/// it has in flight, hands its leaderships on and exits, as on SIGTERM.
/// Returns the exit code.
int drain_node(caf::actor_system_config& cfg, const cluster_target& target,
               const std::string& node);

} // namespace outbox
