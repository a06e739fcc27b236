// The cluster as the status actor sees it: each node's view and its own
// report, and the answer to `outboxctl status`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "actors/actor_metrics.hpp"
#include "core/domain/status_counts.hpp"

namespace outbox {

struct actor_view {
  actor_metrics metrics;
  bool up = true;
};

struct node_view {
  std::string name;
  std::vector<std::string> roles, queues;
  bool up = true;
  int64_t joined_ms = 0;
  int64_t down_ms = 0; ///< when it was seen down, 0 while up
  std::vector<actor_view> actors;
  /// Lifecycle events its actors sent since it started, per kind
  /// ("published", "completed", ...).
  std::map<std::string, int64_t> lifecycle;
  /// Why its dispatchers miss wake-ups and wait for their timers, e.g. its
  /// LISTEN connection is down; "" while they do not.
  std::string wakeups_degraded;
  /// An operator drained it (outboxctl drain): it stops claiming, finishes
  /// what it has in flight and exits.
  bool draining = false;
};

/// A node's own report (its HTTP endpoint's /metrics and /readyz): what it
/// sends the status actor, and what only it knows.
struct node_report {
  node_view view; ///< `up` false for an actor of the node that terminated
  /// It has joined the status actor (a status node: its own).
  bool status_joined = false;
  /// Lifecycle events since it started, per kind and then queue ("" for
  /// `stored`, which has none).
  std::map<std::string, std::map<std::string, int64_t>> lifecycle_by_queue;
  int64_t started_ms = 0; ///< when the agent started
};

/// One database's side of the status: its counts, or why there are none.
struct database_status {
  std::string name = "default"; ///< as the config names it
  bool ok = false;
  std::string error; ///< safe text when ok is false
  status_counts counts;
  /// role -> the node that leads it for this database, in a cluster of
  /// several databases (core/domain/leader_assignment.hpp); empty otherwise.
  std::map<std::string, std::string> leaders;
};

/// The answer to `outboxctl status`.
struct cluster_status {
  int64_t now_ms = 0;
  /// Every database of the config, by name (one, "default", for a config
  /// without `databases`).
  std::vector<database_status> databases;
  std::vector<node_view> nodes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_view& x) {
  return f(caf::meta::type_name("actor_view"), x.metrics, x.up);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_view& x) {
  return f(caf::meta::type_name("node_view"), x.name, x.roles, x.queues, x.up,
           x.joined_ms, x.down_ms, x.actors, x.lifecycle, x.wakeups_degraded,
           x.draining);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_report& x) {
  return f(caf::meta::type_name("node_report"), x.view, x.status_joined,
           x.lifecycle_by_queue, x.started_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, queue_counts& x) {
  return f(caf::meta::type_name("queue_counts"), x.per_status,
           x.oldest_open_age_seconds, x.blocked_keys,
           x.longest_held_key_seconds);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, queue_pause& x) {
  return f(caf::meta::type_name("queue_pause"), x.paused_seconds, x.paused_at,
           x.paused_by, x.reason, x.ends_in_seconds);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status_counts& x) {
  return f(caf::meta::type_name("status_counts"), x.unrouted_events,
           x.oldest_unrouted_age_seconds, x.per_status,
           x.oldest_open_age_seconds, x.per_queue, x.paused, x.connections);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, database_status& x) {
  return f(caf::meta::type_name("database_status"), x.name, x.ok, x.error,
           x.counts, x.leaders);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_status& x) {
  return f(caf::meta::type_name("cluster_status"), x.now_ms, x.databases,
           x.nodes);
}

} // namespace outbox
