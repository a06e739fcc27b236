// /healthz and /readyz of a node's HTTP endpoint: what decides 200 or 503,
// and the short JSON body that says what is wrong. Kept apart from the
// server so that the rules are tested without one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/cluster_view.hpp"

namespace outbox {

struct health_rules {
  bool joins_status = false;   ///< the node joins a status node elsewhere
  int64_t stuck_after_ms = 0;  ///< an actor without a pass for longer is stuck
};

struct health_verdict {
  bool ok = false;
  std::vector<std::string> problems; ///< our own wording, no peer's text
};

/// Alive: the agent answered (`report` is set: the actor system runs) and
/// none of the node's actors has terminated.
health_verdict liveness(const std::optional<node_report>& report);

/// Ready: alive, every actor's last pass reached its database and broker,
/// the status node is joined (when the node joins one) and no actor has
/// gone without a pass for longer than `stuck_after_ms`.
health_verdict readiness(const std::optional<node_report>& report,
                         const health_rules& rules, int64_t now_ms);

/// {"ok": true|false, "problems": [...]}.
std::string health_json(const health_verdict& v);

} // namespace outbox
