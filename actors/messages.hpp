// Every actor interface of the outbox and every message type they exchange.
// Types that cross nodes are registered by register_message_types(); the unit
// tests round-trip each through CAF's serializer and io_dsl.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/latency_histogram.hpp"
#include "core/domain/lifecycle_event.hpp"
#include "core/domain/status_counts.hpp"

namespace outbox {

// -- atoms (CAF 0.17: at most 10 characters) ----------------------------------

/// Work may be waiting: run a pass now (router or NOTIFY → dispatcher,
/// NOTIFY → router).
using wake_atom = caf::atom_constant<caf::atom("wake")>;
/// A scheduled pass; carries the token of the schedule that armed it.
using pass_atom = caf::atom_constant<caf::atom("pass")>;
/// Run passes until no work is left, reply with the rows handled (--once).
using once_atom = caf::atom_constant<caf::atom("once")>;
/// An actor's latest figures.
using metrics_atom = caf::atom_constant<caf::atom("metrics")>;
/// A node announces itself and its actors to the status actor.
using join_atom = caf::atom_constant<caf::atom("join")>;
/// Ask the status actor for the cluster view and the database counts.
using status_atom = caf::atom_constant<caf::atom("status")>;
/// A node's lifecycle event counts since it started, per kind.
using lifecycle_atom = caf::atom_constant<caf::atom("lifecycle")>;
/// The node agent's timer: forward metrics, or try to reach the status node.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// The node hands the router its NOTIFY listener.
using listener_atom = caf::atom_constant<caf::atom("listener")>;
/// Whether the router wants NOTIFY wake-ups (router → listener).
using listen_atom = caf::atom_constant<caf::atom("listen")>;
/// Why a node's dispatchers miss wake-ups ("" = they do not): ready
/// listener → node agent → status actor.
using wakeup_atom = caf::atom_constant<caf::atom("wakeups")>;
/// Which queues have a live result handler, and since when it was last
/// heard (node agent → status actor, for the sweeper's relay_stalls).
using liveness_atom = caf::atom_constant<caf::atom("liveness")>;

// -- actors that run passes ---------------------------------------------------

/// Router, dispatcher, result handler and sweeper all run passes.
using pass_actor = caf::typed_actor<caf::reacts_to<wake_atom>,
                                    caf::reacts_to<pass_atom, uint64_t>,
                                    caf::replies_to<once_atom>::with<int64_t>>;

/// A dispatcher and the queue it serves.
struct dispatcher_entry {
  std::string queue;
  pass_actor dispatcher;
};

/// The router also learns its NOTIFY listener, to tell it when wake-ups
/// are needed (listen_demand.hpp).
using router_actor = pass_actor::extend<caf::reacts_to<listener_atom, caf::actor>>;

/// What an actor reports after each pass. `last_error` is the rendering of
/// one of our own errors (category, code, context), never a server's text.
struct actor_metrics {
  std::string name;  ///< unique in its node, e.g. "dispatcher stock.publish"
  std::string role;  ///< router, dispatcher, results, sweeper
  std::string queue; ///< "" for the router and the sweeper
  int64_t passes = 0;
  int64_t rows = 0;   ///< events routed, deliveries sent, results applied...
  int64_t errors = 0; ///< failed passes
  int64_t last_pass_ms = 0; ///< Unix time in ms of the last pass, 0 = none
  bool connected = true;    ///< its last pass reached the database/broker
  std::string last_error;
  std::map<std::string, int64_t> counters; ///< role-specific, e.g. "stale"
  /// Role-specific values as they are now, e.g. a dispatcher's
  /// "in_flight_window" (its queue's limit) and "completion_rate".
  std::map<std::string, int64_t> gauges;
  /// Latencies by name ("pass", "confirm", ...): for the node's own
  /// /metrics only; the agent leaves them out of what it sends the status
  /// node.
  std::map<std::string, latency_histogram> histograms;
};

// -- nodes --------------------------------------------------------------------

/// One actor of a node, as registered with the status actor.
struct actor_entry {
  std::string name, role, queue;
  pass_actor handle;
};

struct node_info;
struct node_report;

/// Each node's agent: collects local metrics and the state of its wake-up
/// path, joins the status actor (and joins again after losing it). The join
/// message with the node's own info starts it. Asked for status, it reports
/// its node as the node's HTTP endpoint shows it.
using node_agent_actor
  = caf::typed_actor<caf::replies_to<status_atom>::with<node_report>,
                     caf::reacts_to<metrics_atom, actor_metrics>,
                     caf::reacts_to<wakeup_atom, std::string>,
                     caf::reacts_to<join_atom, node_info>,
                     caf::reacts_to<tick_atom>,
                     caf::reacts_to<lifecycle_event>>;

/// A node's announcement.
struct node_info {
  std::string name; ///< host:pid
  std::vector<std::string> roles;
  std::vector<std::string> queues;
  std::vector<actor_entry> actors;
  node_agent_actor agent;
};

// -- the status view ----------------------------------------------------------

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

/// The answer to `outboxctl status`.
struct cluster_status {
  int64_t now_ms = 0;
  bool database_ok = false;
  std::string database_error; ///< safe text when database_ok is false
  status_counts counts;
  std::vector<node_view> nodes;
};

using status_actor = caf::typed_actor<
  caf::reacts_to<join_atom, node_info>,
  caf::reacts_to<metrics_atom, std::string, std::vector<actor_metrics>>,
  caf::reacts_to<lifecycle_atom, std::string, std::map<std::string, int64_t>>,
  caf::reacts_to<wakeup_atom, std::string, std::string>,
  caf::replies_to<status_atom>::with<cluster_status>,
  caf::replies_to<liveness_atom>::with<std::map<std::string, int64_t>>>;

// -- inspection (serialization across nodes, printing in tests) ---------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dispatcher_entry& x) {
  return f(caf::meta::type_name("dispatcher_entry"), x.queue, x.dispatcher);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_metrics& x) {
  return f(caf::meta::type_name("actor_metrics"), x.name, x.role, x.queue,
           x.passes, x.rows, x.errors, x.last_pass_ms, x.connected,
           x.last_error, x.counters, x.gauges, x.histograms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_entry& x) {
  return f(caf::meta::type_name("actor_entry"), x.name, x.role, x.queue,
           x.handle);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(caf::meta::type_name("node_info"), x.name, x.roles, x.queues,
           x.actors, x.agent);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_view& x) {
  return f(caf::meta::type_name("actor_view"), x.metrics, x.up);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_view& x) {
  return f(caf::meta::type_name("node_view"), x.name, x.roles, x.queues, x.up,
           x.joined_ms, x.down_ms, x.actors, x.lifecycle, x.wakeups_degraded);
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
typename Inspector::result_type inspect(Inspector& f, status_counts& x) {
  return f(caf::meta::type_name("status_counts"), x.unrouted_events,
           x.oldest_unrouted_age_seconds, x.per_status,
           x.oldest_open_age_seconds, x.per_queue);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_status& x) {
  return f(caf::meta::type_name("cluster_status"), x.now_ms, x.database_ok,
           x.database_error, x.counts, x.nodes);
}

/// Registers every message type that crosses nodes. Call in the config's
/// constructor on every node (and in outboxctl).
void register_message_types(caf::actor_system_config& cfg);

/// Unix time in milliseconds.
int64_t now_ms();

} // namespace outbox
