// What a node's /metrics shows, as Prometheus text: its own actors, its
// lifecycle counters and its process; a status node adds the cluster-wide
// figures from the database and the node list. Labels are roles, queues,
// statuses and kinds only: never an id, a key or a payload.
#pragma once

#include <optional>
#include <string>

#include "actors/cluster_view.hpp"
#include "cluster_port/handshake_table.hpp"
#include "http/process_stats.hpp"

namespace outbox {

struct metrics_input {
  node_report node;
  process_stats process;
  int64_t now_ms = 0;
  std::string version; ///< outbox_build_info's label
  /// A status node's view (database counts and nodes); nullopt elsewhere.
  std::optional<cluster_status> cluster;
  /// This node's cluster port: refusals by kind, unfinished handshakes;
  /// nullopt on a node that listens for none.
  std::optional<cluster_port::port_figures> cluster_port;
};

std::string render_node_metrics(const metrics_input& in);

} // namespace outbox
