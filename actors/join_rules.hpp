// What the status actor accepts from a joining node. A join is the one
// message that makes the status node hold state for a peer, so it is
// bounded by what a real node can announce: known roles, routed-queue
// names, exactly the actors its roles spawn, and a name no live node holds.
// Even a node the cluster's CA admitted cannot grow the view without limit
// or take over another node's entry.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "actors/node_agent_actor.hpp"

namespace outbox {

struct join_limits {
  size_t max_name_bytes = 512;    ///< CN@host:pid
  size_t max_queues = 1024;       ///< per node
  size_t max_databases = 256;     ///< served by one node
  size_t max_nodes = 256;         ///< in the view, down ones included
  size_t max_lifecycle_kinds = 32;
  size_t max_wakeup_text_bytes = 512;
  size_t max_error_text_bytes = 1024;
  size_t max_counters = 32;
};

/// Whether a map of counts (per lifecycle kind, per counter) fits the view:
/// at most `max_keys`, each name short, non-empty, valid UTF-8.
bool counts_readable(const std::map<std::string, int64_t>& counts,
                     size_t max_keys);

/// Whether an actor's report can go into the view as it is: its texts
/// valid UTF-8 and short, its counters few (the view is written as JSON,
/// which takes neither invalid UTF-8 nor an unbounded object).
bool metrics_readable(const actor_metrics& m, const join_limits& limits);

/// Why `info` may not join, in words for a log line (no value of the
/// message itself); "" when it may. Checks the message alone.
std::string join_refusal(const node_info& info, const join_limits& limits);

/// Whether a view of `nodes` makes room for a node named `name`: its own
/// entry (a rejoin) or a free place. When the view is full, the node seen
/// down the longest is dropped to make room; false when every node is up.
/// `same_agent` says whether a live entry of that name is the joining
/// node's own agent (a rejoin over a connection the status node still
/// thinks is up).
template <class Record>
bool make_room(std::map<std::string, Record>& nodes, const std::string& name,
               bool same_agent, const join_limits& limits) {
  if (auto it = nodes.find(name); it != nodes.end())
    return !it->second.view.up || same_agent;
  if (nodes.size() < limits.max_nodes)
    return true;
  auto oldest = nodes.end();
  for (auto it = nodes.begin(); it != nodes.end(); ++it)
    if (!it->second.view.up
        && (oldest == nodes.end()
            || it->second.view.down_ms < oldest->second.view.down_ms))
      oldest = it;
  if (oldest == nodes.end())
    return false;
  nodes.erase(oldest);
  return true;
}

} // namespace outbox
