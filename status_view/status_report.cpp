#include "status_view/status_report.hpp"

#include <cstdio>
#include <sstream>

#include "core/base/text.hpp"
#include "core/domain/delivery_status.hpp"

namespace outbox {

namespace {

std::string age(double seconds) {
  char buf[32];
  if (seconds < 60)
    std::snprintf(buf, sizeof(buf), "%.1fs", seconds);
  else if (seconds < 3600)
    std::snprintf(buf, sizeof(buf), "%.1fm", seconds / 60);
  else
    std::snprintf(buf, sizeof(buf), "%.1fh", seconds / 3600);
  return buf;
}

std::string since(int64_t now_ms, int64_t then_ms) {
  if (then_ms == 0)
    return "never";
  return age(static_cast<double>(now_ms - then_ms) / 1000.0) + " ago";
}

std::string joined(const std::vector<std::string>& xs) {
  return xs.empty() ? "-" : join(xs, ",");
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s + " ";
}

int64_t count(const std::map<std::string, int64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

// Ordered keys that wait for an operator: the line says what to run.
void write_blocked_keys(std::ostringstream& out, const status_counts& c) {
  int64_t blocked = 0;
  for (auto& [q, qc] : c.per_queue)
    blocked += qc.blocked_keys;
  if (blocked > 0)
    out << "blocked keys: " << blocked
        << " (onFailure: block; see outboxctl blocked)\n";
}

// Queues an operator paused: since when, by whom, why, until when.
void write_pauses(std::ostringstream& out, const status_counts& c) {
  if (c.paused.empty())
    return;
  out << "paused queues: " << c.paused.size() << " (outboxctl resume QUEUE)\n";
  for (auto& [q, p] : c.paused) {
    out << "  " << pad(q, 24) << "paused " << age(p.paused_seconds) << " ago by "
        << quoted_text(p.paused_by) << ", "
        << (p.ends_in_seconds < 0 ? std::string{"until resumed"}
                                  : "resumes in " + age(p.ends_in_seconds));
    if (!p.reason.empty())
      out << ": " << quoted_text(p.reason);
    out << "\n";
  }
}

void write_nodes(std::ostringstream& out, const cluster_status& s) {
  out << "\nnodes: " << s.nodes.size() << "\n";
  for (auto& n : s.nodes) {
    out << "  " << pad(n.name, 28) << pad(n.up ? "up" : "DOWN", 5)
        << "roles " << joined(n.roles) << "  queues " << joined(n.queues);
    if (!n.up)
      out << "  down since " << since(s.now_ms, n.down_ms);
    else if (n.draining)
      out << "  DRAINING (outboxctl drain: it finishes what is in flight and exits)";
    out << "\n";
    if (!n.wakeups_degraded.empty())
      out << "    wake-ups DEGRADED (dispatchers wait for their timers): "
          << n.wakeups_degraded << "\n";
    if (!n.lifecycle.empty()) {
      out << "    lifecycle events since start:";
      for (auto& [kind, k] : n.lifecycle)
        out << " " << kind << " " << k;
      out << "\n";
    }
    for (auto& a : n.actors) {
      auto& m = a.metrics;
      out << "    " << pad(m.name, 30) << pad(a.up ? "up" : "DOWN", 5)
          << "passes " << pad(std::to_string(m.passes), 8) << "rows "
          << pad(std::to_string(m.rows), 8) << "errors "
          << pad(std::to_string(m.errors), 5) << "last pass "
          << pad(since(s.now_ms, m.last_pass_ms), 12)
          << (m.connected ? "connected" : "DISCONNECTED");
      if (!m.connected && !m.last_error.empty())
        out << " (" << m.last_error << ")";
      out << "\n";
    }
  }
}

} // namespace

namespace {

// One database's side: its counts, or why there are none.
void write_database(std::ostringstream& out, const database_status& db) {
  if (!db.leaders.empty()) {
    out << "leaders:";
    for (auto& [role, node] : db.leaders)
      out << " " << role << " " << node;
    out << "\n";
  }
  if (!db.ok) {
    out << "database: unavailable (" << db.error << ")\n";
    return;
  }
  auto& c = db.counts;
  out << "unrouted events: " << c.unrouted_events << " (oldest "
      << age(c.oldest_unrouted_age_seconds) << ")\n";
  out << "deliveries:";
  for (auto& st : delivery_statuses())
    out << " " << st << " " << count(c.per_status, st);
  out << "\noldest open delivery: " << age(c.oldest_open_age_seconds) << "\n";
  int64_t connections = 0;
  for (auto& [_, n] : c.connections)
    connections += n;
  out << "relay connections: " << connections;
  const char* sep = " (";
  for (auto& [node, n] : c.connections) {
    out << sep << node << " " << n;
    sep = ", ";
  }
  out << (c.connections.empty() ? "\n" : ")\n");
  out << "\n" << pad("queue", 24);
  for (auto& st : delivery_statuses())
    out << pad(st, 10);
  out << pad("oldest open", 12) << pad("blocked", 8) << "longest held\n";
  for (auto& [q, qc] : c.per_queue) {
    out << pad(c.paused.count(q) ? q + " (paused)" : q, 24);
    for (auto& st : delivery_statuses())
      out << pad(std::to_string(count(qc.per_status, st)), 10);
    out << pad(age(qc.oldest_open_age_seconds), 12)
        << pad(std::to_string(qc.blocked_keys), 8)
        << age(qc.longest_held_key_seconds) << "\n";
  }
  if (c.per_queue.empty())
    out << "(no deliveries yet)\n";
  write_blocked_keys(out, c);
  write_pauses(out, c);
}

} // namespace

std::string status_table(const cluster_status& s, bool with_nodes) {
  std::ostringstream out;
  // A cluster of several databases shows each under its name.
  bool several = s.databases.size() > 1;
  for (size_t i = 0; i < s.databases.size(); ++i) {
    if (several)
      out << (i > 0 ? "\n" : "") << "== database " << s.databases[i].name
          << " ==\n";
    write_database(out, s.databases[i]);
  }
  if (with_nodes)
    write_nodes(out, s);
  return out.str();
}

} // namespace outbox
