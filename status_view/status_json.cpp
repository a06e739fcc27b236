// `outboxctl status --json`: the cluster view as JSON, written by the
// core's inspect-driven writer from view types that name its fields once.
// A key that only some views have (database.error, the counts, nodes,
// wakeupsDegraded) is left out rather than null: scripts test for it.
#include "status_view/status_report.hpp"

#include "core/json/field.hpp"
#include "core/json/json_writer.hpp"
#include "core/json/omittable.hpp"
#include "core/domain/delivery_status.hpp"

namespace outbox {

namespace {

using count_map = std::map<std::string, int64_t>;

// Every status, zeros included, whatever the counts hold.
count_map every_status(const count_map& m) {
  count_map out;
  for (auto& st : delivery_statuses()) {
    auto it = m.find(st);
    out[st] = it == m.end() ? 0 : it->second;
  }
  return out;
}

struct database_json {
  bool ok = false;
  omittable<std::string> error;
};

template <class Inspector>
bool inspect(Inspector& f, database_json& x) {
  return f(field("ok", x.ok), field("error", x.error));
}

// An operator's pause of a queue (outboxctl pause).
struct pause_json {
  int64_t paused_at = 0; ///< Unix seconds
  double paused_seconds = 0;
  std::string paused_by, reason;
  omittable<double> ends_in_seconds; ///< left out: until resumed
};

template <class Inspector>
bool inspect(Inspector& f, pause_json& x) {
  return f(field("pausedAt", x.paused_at),
           field("pausedSeconds", x.paused_seconds),
           field("pausedBy", x.paused_by), field("reason", x.reason),
           field("endsInSeconds", x.ends_in_seconds));
}

struct queue_json {
  count_map deliveries;
  double oldest_open_age_seconds = 0;
  int64_t blocked_keys = 0;
  double longest_held_key_seconds = 0;
  omittable<pause_json> paused; ///< left out: not paused
};

template <class Inspector>
bool inspect(Inspector& f, queue_json& x) {
  return f(field("deliveries", x.deliveries),
           field("oldestOpenAgeSeconds", x.oldest_open_age_seconds),
           field("blockedKeys", x.blocked_keys),
           field("longestHeldKeySeconds", x.longest_held_key_seconds),
           field("paused", x.paused));
}

omittable<pause_json> pause_of(const status_counts& c, const std::string& queue) {
  auto it = c.paused.find(queue);
  if (it == c.paused.end())
    return {};
  auto& p = it->second;
  pause_json out{p.paused_at, p.paused_seconds, p.paused_by, p.reason, {}};
  if (p.ends_in_seconds >= 0)
    out.ends_in_seconds = p.ends_in_seconds;
  return out;
}

struct actor_json {
  std::string name, role, queue;
  bool up = false;
  int64_t passes = 0, rows = 0, errors = 0, last_pass_ms = 0;
  bool connected = false;
  count_map counters, gauges;
};

template <class Inspector>
bool inspect(Inspector& f, actor_json& x) {
  return f(field("name", x.name), field("role", x.role),
           field("queue", x.queue), field("up", x.up),
           field("passes", x.passes), field("rows", x.rows),
           field("errors", x.errors), field("lastPassMs", x.last_pass_ms),
           field("connected", x.connected), field("counters", x.counters),
           field("gauges", x.gauges));
}

struct node_json {
  std::string name;
  bool up = false;
  std::vector<std::string> roles, queues;
  bool wakeups_ok = true;
  omittable<std::string> wakeups_degraded;
  bool draining = false;
  std::vector<actor_json> actors;
  count_map lifecycle;
};

template <class Inspector>
bool inspect(Inspector& f, node_json& x) {
  return f(field("name", x.name), field("up", x.up), field("roles", x.roles),
           field("queues", x.queues), field("wakeupsOk", x.wakeups_ok),
           field("wakeupsDegraded", x.wakeups_degraded),
           field("draining", x.draining), field("actors", x.actors), field("lifecycle", x.lifecycle));
}

// One database's side: whether it could be read, and its counts.
struct database_doc {
  database_json database;
  omittable<int64_t> unrouted_events;
  omittable<double> oldest_unrouted_age_seconds;
  omittable<count_map> deliveries;
  omittable<double> oldest_open_age_seconds;
  omittable<std::map<std::string, queue_json>> queues;
  /// node -> its connections to this database.
  omittable<count_map> connections;
  /// role -> leading node, in a cluster of several databases.
  omittable<std::map<std::string, std::string>> leaders;
};

template <class Inspector>
bool inspect(Inspector& f, database_doc& x) {
  return f(field("database", x.database),
           field("unroutedEvents", x.unrouted_events),
           field("oldestUnroutedAgeSeconds", x.oldest_unrouted_age_seconds),
           field("deliveries", x.deliveries),
           field("oldestOpenAgeSeconds", x.oldest_open_age_seconds),
           field("queues", x.queues), field("connections", x.connections),
           field("leaders", x.leaders));
}

// A cluster of one database keeps its side at the top level (as before
// there were several); of several, `databases` holds each by name.
struct status_json_doc {
  omittable<database_json> database;
  omittable<int64_t> unrouted_events;
  omittable<double> oldest_unrouted_age_seconds;
  omittable<count_map> deliveries;
  omittable<double> oldest_open_age_seconds;
  omittable<std::map<std::string, queue_json>> queues;
  omittable<count_map> connections;
  omittable<std::map<std::string, database_doc>> databases;
  omittable<std::map<std::string, std::string>> leaders;
  omittable<std::vector<node_json>> nodes;
};

template <class Inspector>
bool inspect(Inspector& f, status_json_doc& x) {
  return f(field("database", x.database),
           field("unroutedEvents", x.unrouted_events),
           field("oldestUnroutedAgeSeconds", x.oldest_unrouted_age_seconds),
           field("deliveries", x.deliveries),
           field("oldestOpenAgeSeconds", x.oldest_open_age_seconds),
           field("queues", x.queues), field("connections", x.connections),
           field("databases", x.databases),
           field("leaders", x.leaders), field("nodes", x.nodes));
}

actor_json actor_of(const actor_view& a) {
  auto& m = a.metrics;
  return {m.name,   m.role,   m.queue,        a.up,        m.passes,
          m.rows,   m.errors, m.last_pass_ms, m.connected, m.counters,
          m.gauges};
}

node_json node_of(const node_view& n) {
  node_json out;
  out.name = n.name;
  out.up = n.up;
  out.roles = n.roles;
  out.queues = n.queues;
  out.wakeups_ok = n.wakeups_degraded.empty();
  out.draining = n.draining;
  if (!n.wakeups_degraded.empty())
    out.wakeups_degraded = n.wakeups_degraded;
  for (auto& a : n.actors)
    out.actors.push_back(actor_of(a));
  out.lifecycle = n.lifecycle;
  return out;
}

void add_counts(const status_counts& c, database_doc& doc) {
  doc.unrouted_events = c.unrouted_events;
  doc.oldest_unrouted_age_seconds = c.oldest_unrouted_age_seconds;
  doc.deliveries = every_status(c.per_status);
  doc.oldest_open_age_seconds = c.oldest_open_age_seconds;
  doc.queues.emplace();
  for (auto& [q, qc] : c.per_queue)
    (*doc.queues)[q] = {every_status(qc.per_status), qc.oldest_open_age_seconds,
                        qc.blocked_keys, qc.longest_held_key_seconds,
                        pause_of(c, q)};
  doc.connections = c.connections;
}

database_doc database_of(const database_status& db) {
  database_doc out;
  out.database.ok = db.ok;
  if (!db.ok)
    out.database.error = db.error;
  else
    add_counts(db.counts, out);
  if (!db.leaders.empty())
    out.leaders = db.leaders;
  return out;
}

} // namespace

std::string status_json(const cluster_status& s, bool with_nodes) {
  status_json_doc doc;
  if (s.databases.size() == 1) {
    auto one = database_of(s.databases.front());
    doc.database = one.database;
    doc.unrouted_events = one.unrouted_events;
    doc.oldest_unrouted_age_seconds = one.oldest_unrouted_age_seconds;
    doc.deliveries = one.deliveries;
    doc.oldest_open_age_seconds = one.oldest_open_age_seconds;
    doc.queues = one.queues;
    doc.connections = one.connections;
    doc.leaders = one.leaders;
  } else {
    doc.databases.emplace();
    for (auto& db : s.databases)
      (*doc.databases)[db.name] = database_of(db);
  }
  if (with_nodes) {
    doc.nodes.emplace();
    for (auto& n : s.nodes)
      doc.nodes->push_back(node_of(n));
  }
  json_writer w{"status"};
  if (!w.write_document(doc))
    return "{\"error\":\"the status holds a value JSON cannot carry (NaN, "
           "infinity or invalid UTF-8)\"}";
  return w.json();
}

} // namespace outbox
