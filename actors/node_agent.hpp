// A node's agent: the one actor of a node that talks to the status actor.
// Local actors push their metrics here; the agent forwards what changed
// twice a second. When the status node is unreachable the node keeps
// working on its own, and the agent joins again as soon as it can.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "actors/status_actor.hpp"
#include "actors/leadership_view.hpp"
#include "actors/results_view.hpp"
#include "core/domain/failure_streak.hpp"

namespace outbox {

/// Where the status actor is: in this process, at host:port, or nowhere.
struct status_address {
  status_actor local;
  std::string host;
  uint16_t port = 0;
};

struct node_agent_state {
  node_info info;
  status_address target;
  status_actor status; ///< null while not joined
  bool connecting = false;
  failure_streak connect_failures; ///< its backoff, and which get a log line
  int64_t next_connect_ms = 0;
  std::map<std::string, actor_metrics> metrics;
  std::set<std::string> changed; ///< names whose metrics are not sent yet
  std::map<std::string, int64_t> lifecycle; ///< events seen, per kind
  std::map<std::string, std::map<std::string, int64_t>> lifecycle_by_queue;
  std::set<std::string> terminated; ///< names of local actors that ended
  int64_t started_ms = 0;
  bool lifecycle_changed = false;
  std::string wakeups_degraded; ///< node_view::wakeups_degraded
  /// Each ready listener's reason ("" = its wake-ups work), by sender: a
  /// node of several databases has one per database.
  std::map<caf::actor_addr, std::string> wakeup_reasons;
  bool wakeups_changed = false;
  /// Where the node's sweeper reads which queues have a live result
  /// handler; null on a node without a sweeper.
  std::shared_ptr<results_view> results;
  /// Where the node's routers, sweepers and retention read who leads each
  /// database; null where the config names no databases.
  std::shared_ptr<leadership_view> leadership;
  /// Stops the node as SIGTERM does (node_settings::drain); empty: the
  /// node cannot be drained by an operator.
  std::function<void()> drain;
  bool draining = false;
  static const char* name;
};

/// The node as its agent sees it (node_report).
node_report local_report(const node_agent_state& st);

/// With `results`, the agent also fetches the status node's view of live
/// result handlers on every tick (results_view), and with `leadership` who
/// leads each database (leadership_view). `drain` is node_settings::drain.
node_agent_actor::behavior_type
node_agent(node_agent_actor::stateful_pointer<node_agent_state> self,
           status_address target, std::shared_ptr<results_view> results,
           std::function<void()> drain,
           std::shared_ptr<leadership_view> leadership);

} // namespace outbox
