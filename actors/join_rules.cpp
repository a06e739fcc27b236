#include "actors/join_rules.hpp"

#include <algorithm>
#include <set>

#include "actors/node_settings.hpp"
#include "core/base/text.hpp"
#include "core/domain/route.hpp"

namespace outbox {

namespace {

std::string name_refusal(const std::string& name, size_t max_bytes) {
  if (name.empty() || name.size() > max_bytes)
    return "node name empty or longer than " + std::to_string(max_bytes) + " bytes";
  if (!is_valid_utf8(name))
    return "node name not valid UTF-8";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f)
      return "node name has a control character";
  return {};
}

std::string roles_refusal(const std::vector<std::string>& roles) {
  std::set<std::string> seen;
  for (auto& r : roles)
    if (!parse_node_role(r) || !seen.insert(r).second)
      return "unknown or repeated role";
  return {};
}

std::string queues_refusal(const std::vector<std::string>& queues,
                           size_t max_queues) {
  if (queues.size() > max_queues)
    return "more than " + std::to_string(max_queues) + " queues";
  std::set<std::string> seen;
  for (auto& q : queues)
    if (!check_queue_name(q).empty() || !seen.insert(q).second)
      return "a queue name no route could have, or repeated";
  return {};
}

// Database names as the config checks them (config_databases.cpp).
std::string databases_refusal(const std::vector<std::string>& dbs,
                              size_t max_databases) {
  if (dbs.size() > max_databases)
    return "more than " + std::to_string(max_databases) + " databases";
  for (auto& db : dbs)
    if (db.empty() || db.size() > 32
        || !std::all_of(db.begin(), db.end(), [](char c) {
             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
           }))
      return "a bad database name";
  return {};
}

// A node spawns a router, a sweeper and retention per database at most, a
// dispatcher per queue and database, a result handler per queue, and with
// several databases a handler of parked results per queue and database:
// more actors than that are not a node's.
std::string actors_refusal(const node_info& info) {
  auto dbs = std::max<size_t>(info.databases.size(), 1);
  auto queues = info.queues.size();
  auto most = queues * dbs * (dbs > 1 ? 2 : 1) + queues + 3 * dbs;
  if (info.actors.size() > most)
    return std::to_string(info.actors.size()) + " actors for "
           + std::to_string(queues) + " queues and " + std::to_string(dbs)
           + " databases";
  std::set<std::string> names;
  for (auto& a : info.actors)
    if (a.name.size() > 300 || !is_valid_utf8(a.name)
        || !names.insert(a.name).second || !a.handle)
      return "an actor without a handle, or a bad or repeated actor name";
  if (!info.agent)
    return "no node agent";
  return {};
}

} // namespace

bool counts_readable(const std::map<std::string, int64_t>& counts,
                     size_t max_keys) {
  if (counts.size() > max_keys)
    return false;
  for (auto& [name, _] : counts)
    if (name.empty() || name.size() > 64 || !is_valid_utf8(name))
      return false;
  return true;
}

bool metrics_readable(const actor_metrics& m, const join_limits& limits) {
  return m.last_error.size() <= limits.max_error_text_bytes
         && is_valid_utf8(m.last_error)
         && counts_readable(m.counters, limits.max_counters)
         && counts_readable(m.gauges, limits.max_counters)
         && m.histograms.empty(); // a node keeps its latencies to itself
}

std::string join_refusal(const node_info& info, const join_limits& limits) {
  for (auto why : {name_refusal(info.name, limits.max_name_bytes),
                   roles_refusal(info.roles),
                   queues_refusal(info.queues, limits.max_queues),
                   databases_refusal(info.databases, limits.max_databases),
                   actors_refusal(info)})
    if (!why.empty())
      return why;
  return {};
}

} // namespace outbox
