#include "actors/node_settings.hpp"

#include <algorithm>

namespace outbox {

namespace {

struct role_row {
  node_role role;
  const char* name;
  bool per_queue;
};

// The one table of roles: a new role is a row here (and its spawn function
// in node_roles.cpp).
constexpr role_row role_table[] = {
  {node_role::status, "status", false},
  {node_role::router, "router", false},
  {node_role::dispatcher, "dispatcher", true},
  {node_role::results, "results", true},
  {node_role::sweeper, "sweeper", false},
};

const role_row& row_of(node_role r) {
  for (auto& row : role_table)
    if (row.role == r)
      return row;
  return role_table[0]; // unreachable: every enumerator has a row
}

} // namespace

const std::vector<node_role>& all_node_roles() {
  static const std::vector<node_role> roles = [] {
    std::vector<node_role> out;
    for (auto& row : role_table)
      out.push_back(row.role);
    return out;
  }();
  return roles;
}

const char* to_string(node_role r) {
  return row_of(r).name;
}

std::vector<std::string> role_names(const std::vector<node_role>& roles) {
  std::vector<std::string> out;
  for (auto r : roles)
    out.emplace_back(to_string(r));
  return out;
}

std::optional<node_role> parse_node_role(const std::string& name) {
  for (auto& row : role_table)
    if (name == row.name)
      return row.role;
  return std::nullopt;
}

bool runs_per_queue(node_role r) {
  return row_of(r).per_queue;
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]"
         || host.compare(0, 4, "127.") == 0;
}

bool node_settings::has(node_role r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end();
}

bool node_settings::has_queue_roles() const {
  return std::any_of(roles.begin(), roles.end(), runs_per_queue);
}

} // namespace outbox
