#include "actors/node_options.hpp"

#include <algorithm>
#include <set>

#include "core/base/errors.hpp"
#include "core/base/text.hpp"

namespace outbox {

namespace {

const std::vector<std::string>& all_roles() {
  static const std::vector<std::string> roles{"status", "router", "dispatcher",
                                              "results", "sweeper"};
  return roles;
}

// CAF reads "--roles=a,b" as one or several strings: accept both.
std::vector<std::string> split_list(const std::vector<std::string>& xs) {
  std::vector<std::string> out;
  for (auto& x : xs) {
    size_t start = 0;
    while (start <= x.size()) {
      auto end = x.find(',', start);
      if (end == std::string::npos)
        end = x.size();
      auto item = x.substr(start, end - start);
      if (!item.empty())
        out.push_back(item);
      start = end + 1;
    }
  }
  return out;
}

} // namespace

bool node_options::has(const std::string& role) const {
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

caf::expected<host_port> parse_host_port(const std::string& text,
                                         const std::string& default_host) {
  host_port out;
  std::string port_text = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    out.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (out.host.empty())
      return make_error(errc::config_invalid, "host must not be empty");
  } else {
    out.host = default_host;
  }
  if (port_text.empty() || port_text.size() > 5
      || !std::all_of(port_text.begin(), port_text.end(),
                      [](char c) { return c >= '0' && c <= '9'; }))
    return make_error(errc::config_invalid, "port must be a number 1..65535");
  auto port = std::stoi(port_text);
  if (port < 1 || port > 65535)
    return make_error(errc::config_invalid, "port must be a number 1..65535");
  out.port = static_cast<uint16_t>(port);
  return out;
}

caf::expected<node_options> make_node_options(const node_flags& flags,
                                              const config& cfg) {
  node_options out;
  std::vector<std::string> problems;
  out.roles = split_list(flags.roles);
  if (out.roles.empty())
    out.roles = all_roles();
  std::set<std::string> seen;
  for (auto& r : out.roles) {
    if (std::find(all_roles().begin(), all_roles().end(), r) == all_roles().end())
      problems.push_back("--roles: unknown role \"" + r
                         + "\" (known: status, router, dispatcher, results, "
                           "sweeper)");
    else if (!seen.insert(r).second)
      problems.push_back("--roles: \"" + r + "\" is given twice");
  }
  auto configured = cfg.queues();
  out.queues = split_list(flags.queues);
  if (out.queues.empty())
    out.queues = configured;
  std::set<std::string> seen_queues;
  for (auto& q : out.queues) {
    if (std::find(configured.begin(), configured.end(), q) == configured.end())
      problems.push_back("--queues: \"" + q + "\" is not the queue of any route");
    // Two dispatchers of one queue in one node would only compete.
    else if (!seen_queues.insert(q).second)
      problems.push_back("--queues: \"" + q + "\" is given twice");
  }
  if (!flags.queues.empty() && !out.has("dispatcher") && !out.has("results"))
    problems.push_back("--queues: needs the dispatcher or results role");
  if (flags.sleep < 1 || flags.sleep > 3600)
    problems.push_back("--sleep: must be an integer number of seconds, 1..3600");
  out.sleep_seconds = static_cast<int>(flags.sleep);
  out.once = flags.once;
  if (!flags.listen.empty()) {
    if (!out.has("status"))
      problems.push_back("--listen: only a node with the status role listens");
    else if (auto hp = parse_host_port(flags.listen, "127.0.0.1"))
      out.listen = *hp;
    else
      problems.push_back("--listen: " + context_of(hp.error()));
  } else if (out.has("status") && !out.once) {
    out.listen = host_port{"127.0.0.1", default_status_port};
  }
  if (!flags.join.empty()) {
    if (out.has("status"))
      problems.push_back("--join: the status node is the one others join");
    else if (auto hp = parse_host_port(flags.join, "127.0.0.1"))
      out.join = *hp;
    else
      problems.push_back("--join: " + context_of(hp.error()));
  }
  if (!problems.empty())
    return make_error(errc::config_invalid, join(problems, "\n"));
  return out;
}

} // namespace outbox
