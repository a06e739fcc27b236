#include "core/domain/leader_assignment.hpp"

#include <algorithm>

namespace outbox {

namespace {

bool has(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

bool can_lead(const leader_candidate& n, const std::string& role,
              const std::string& database) {
  return n.up && has(n.roles, role)
         && (n.databases.empty() || has(n.databases, database));
}

bool fit(const leader_candidate& n, const std::string& role,
         const std::string& database) {
  return !has(n.unfit, role + "@" + database);
}

} // namespace

const std::vector<std::string>& led_roles() {
  static const std::vector<std::string> roles{"router", "sweeper"};
  return roles;
}

leader_map assign_leaders(std::vector<std::string> databases,
                          const std::vector<leader_candidate>& nodes) {
  std::sort(databases.begin(), databases.end());
  leader_map out;
  for (auto& role : led_roles()) {
    std::map<std::string, size_t> load; // by node name: ordered ties
    for (auto& db : databases) {
      const leader_candidate* best = nullptr;
      bool any_fit = false;
      for (auto& n : nodes)
        any_fit = any_fit || (can_lead(n, role, db) && fit(n, role, db));
      for (auto& n : nodes) {
        if (!can_lead(n, role, db) || (any_fit && !fit(n, role, db)))
          continue;
        if (!best || load[n.node] < load[best->node]
            || (load[n.node] == load[best->node] && n.node < best->node))
          best = &n;
      }
      if (!best)
        continue;
      ++load[best->node];
      out[db][role] = best->node;
    }
  }
  return out;
}

} // namespace outbox
