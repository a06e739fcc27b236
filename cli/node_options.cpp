#include "cli/node_options.hpp"

#include <algorithm>
#include <set>

#include "core/base/errors.hpp"
#include "core/base/text.hpp"

namespace outbox {

namespace {

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

namespace {

using problem_list = std::vector<std::string>;

// The named roles (default all), each known and named once.
std::vector<node_role> read_roles(const node_flags& flags, problem_list& problems) {
  auto names = split_list(flags.roles);
  if (names.empty())
    return all_node_roles();
  std::vector<node_role> out;
  std::set<std::string> seen;
  for (auto& name : names) {
    auto r = parse_node_role(name);
    if (!r)
      problems.push_back("--roles: unknown role \"" + name + "\" (known: "
                         + join(role_names(all_node_roles()), ", ") + ")");
    else if (!seen.insert(name).second)
      problems.push_back("--roles: \"" + name + "\" is given twice");
    else
      out.push_back(*r);
  }
  return out;
}

// The named queues (default every routed one), each routed and named once.
// The named databases (default every one), each of the config and named
// once.
std::vector<std::string> read_databases(const node_flags& flags,
                                        const cluster_config& all,
                                        problem_list& problems) {
  auto out = split_list(flags.databases);
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (auto& db : all.databases)
    names.push_back(db.database);
  for (auto& name : out) {
    if (!all.find(name))
      problems.push_back("--databases: \"" + name
                         + "\" is not a database of the config (it names "
                         + join(names, ", ") + ")");
    else if (!seen.insert(name).second)
      problems.push_back("--databases: \"" + name + "\" is given twice");
  }
  return out;
}

// Every queue a served database routes to, sorted.
std::vector<std::string> routed_queues(const cluster_config& all,
                                       const std::vector<std::string>& served) {
  std::set<std::string> qs;
  for (auto& db : all.databases)
    if (served.empty()
        || std::find(served.begin(), served.end(), db.database) != served.end())
      for (auto& q : db.queues())
        qs.insert(q);
  return {qs.begin(), qs.end()};
}

std::vector<std::string> read_queues(const node_flags& flags,
                                     std::vector<std::string> configured,
                                     problem_list& problems) {
  auto out = split_list(flags.queues);
  if (out.empty())
    out = configured;
  std::set<std::string> seen;
  for (auto& q : out) {
    if (std::find(configured.begin(), configured.end(), q) == configured.end())
      problems.push_back("--queues: \"" + q + "\" is not the queue of any route"
                         + std::string{flags.databases.empty()
                                         ? ""
                                         : " of the databases served"});
    // Two dispatchers of one queue in one node would only compete.
    else if (!seen.insert(q).second)
      problems.push_back("--queues: \"" + q + "\" is given twice");
  }
  return out;
}

// Plain BASP authenticates nobody: whoever reaches the status port can join
// the cluster and get its actors' handles. Off loopback it takes TLS, or
// --insecure to say so on purpose.
void check_exposure(const node_flags& flags, node_settings& out,
                    problem_list& problems) {
  out.insecure = flags.insecure;
  if (flags.insecure && out.tls)
    problems.push_back("--insecure: contradicts the --tls-* flags");
  if (!out.listen || is_loopback_host(out.listen->host) || flags.insecure
      || out.tls)
    return;
  problems.push_back("--listen: " + out.listen->host
                     + " is not a loopback address, and plain BASP lets "
                       "anyone who reaches it join the cluster; give TLS "
                       "certificates, or --insecure to listen without them");
}

// --listen for the status node (loopback by default), --join for the others.
void read_addresses(const node_flags& flags, node_settings& out,
                    problem_list& problems) {
  bool status = out.has(node_role::status);
  if (!flags.listen.empty()) {
    if (!status)
      problems.push_back("--listen: only a node with the status role listens");
    else if (auto hp = parse_host_port(flags.listen, "127.0.0.1"))
      out.listen = *hp;
    else
      problems.push_back("--listen: " + context_of(hp.error()));
  } else if (status && !out.once) {
    out.listen = host_port{"127.0.0.1", default_status_port};
  }
  check_exposure(flags, out, problems);
  if (!flags.join.empty()) {
    if (status)
      problems.push_back("--join: the status node is the one others join");
    else if (auto hp = parse_host_port(flags.join, "127.0.0.1"))
      out.join = *hp;
    else
      problems.push_back("--join: " + context_of(hp.error()));
  }
}

} // namespace

caf::expected<node_settings> make_node_settings(const node_flags& flags,
                                                const config& cfg) {
  cluster_config one;
  one.databases.push_back(cfg);
  return make_node_settings(flags, one);
}

caf::expected<node_settings> make_node_settings(const node_flags& flags,
                                                const cluster_config& all) {
  node_settings out;
  problem_list problems;
  out.roles = read_roles(flags, problems);
  out.databases = read_databases(flags, all, problems);
  out.queues = read_queues(flags, routed_queues(all, out.databases), problems);
  if (!flags.queues.empty() && !out.has_queue_roles())
    problems.push_back("--queues: needs the dispatcher or results role");
  if (flags.sleep < 1 || flags.sleep > 3600)
    problems.push_back("--sleep: must be an integer number of seconds, 1..3600");
  out.sleep_seconds = static_cast<int>(flags.sleep);
  out.once = flags.once;
  if (auto tls = read_tls_flags(flags.tls))
    out.tls = std::move(*tls);
  else
    problems.push_back(context_of(tls.error()));
  read_addresses(flags, out, problems);
  if (!problems.empty())
    return make_error(errc::config_invalid, join(problems, "\n"));
  return out;
}

} // namespace outbox
