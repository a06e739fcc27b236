#include "tools/status_report.hpp"

#include <cstdio>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/text.hpp"

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

void write_nodes(std::ostringstream& out, const cluster_status& s) {
  out << "\nnodes: " << s.nodes.size() << "\n";
  for (auto& n : s.nodes) {
    out << "  " << pad(n.name, 28) << pad(n.up ? "up" : "DOWN", 5)
        << "roles " << joined(n.roles) << "  queues " << joined(n.queues);
    if (!n.up)
      out << "  down since " << since(s.now_ms, n.down_ms);
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

std::string status_table(const cluster_status& s, bool with_nodes) {
  std::ostringstream out;
  if (!s.database_ok) {
    out << "database: unavailable (" << s.database_error << ")\n";
  } else {
    auto& c = s.counts;
    out << "unrouted events: " << c.unrouted_events << " (oldest "
        << age(c.oldest_unrouted_age_seconds) << ")\n";
    out << "deliveries:";
    for (auto& st : delivery_statuses())
      out << " " << st << " " << count(c.per_status, st);
    out << "\noldest open delivery: " << age(c.oldest_open_age_seconds) << "\n";
    out << "\n" << pad("queue", 24);
    for (auto& st : delivery_statuses())
      out << pad(st, 10);
    out << "oldest open\n";
    for (auto& [q, qc] : c.per_queue) {
      out << pad(q, 24);
      for (auto& st : delivery_statuses())
        out << pad(std::to_string(count(qc.per_status, st)), 10);
      out << age(qc.oldest_open_age_seconds) << "\n";
    }
    if (c.per_queue.empty())
      out << "(no deliveries yet)\n";
  }
  if (with_nodes)
    write_nodes(out, s);
  return out.str();
}

std::string status_json(const cluster_status& s, bool with_nodes) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  auto str = [&](const std::string& x) {
    w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
  };
  auto counts = [&](const std::map<std::string, int64_t>& m) {
    w.StartObject();
    for (auto& st : delivery_statuses()) {
      str(st);
      w.Int64(count(m, st));
    }
    w.EndObject();
  };
  auto int_map = [&](const std::map<std::string, int64_t>& m) {
    w.StartObject();
    for (auto& [k, v] : m) {
      str(k);
      w.Int64(v);
    }
    w.EndObject();
  };
  auto list = [&](const std::vector<std::string>& xs) {
    w.StartArray();
    for (auto& x : xs)
      str(x);
    w.EndArray();
  };
  w.StartObject();
  w.Key("database");
  w.StartObject();
  w.Key("ok");
  w.Bool(s.database_ok);
  if (!s.database_ok) {
    w.Key("error");
    str(s.database_error);
  }
  w.EndObject();
  if (s.database_ok) {
    auto& c = s.counts;
    w.Key("unroutedEvents");
    w.Int64(c.unrouted_events);
    w.Key("oldestUnroutedAgeSeconds");
    w.Double(c.oldest_unrouted_age_seconds);
    w.Key("deliveries");
    counts(c.per_status);
    w.Key("oldestOpenAgeSeconds");
    w.Double(c.oldest_open_age_seconds);
    w.Key("queues");
    w.StartObject();
    for (auto& [q, qc] : c.per_queue) {
      str(q);
      w.StartObject();
      w.Key("deliveries");
      counts(qc.per_status);
      w.Key("oldestOpenAgeSeconds");
      w.Double(qc.oldest_open_age_seconds);
      w.EndObject();
    }
    w.EndObject();
  }
  if (with_nodes) {
    w.Key("nodes");
    w.StartArray();
    for (auto& n : s.nodes) {
      w.StartObject();
      w.Key("name");
      str(n.name);
      w.Key("up");
      w.Bool(n.up);
      w.Key("roles");
      list(n.roles);
      w.Key("queues");
      list(n.queues);
      w.Key("wakeupsOk");
      w.Bool(n.wakeups_degraded.empty());
      if (!n.wakeups_degraded.empty()) {
        w.Key("wakeupsDegraded");
        str(n.wakeups_degraded);
      }
      w.Key("actors");
      w.StartArray();
      for (auto& a : n.actors) {
        auto& m = a.metrics;
        w.StartObject();
        w.Key("name");
        str(m.name);
        w.Key("role");
        str(m.role);
        w.Key("queue");
        str(m.queue);
        w.Key("up");
        w.Bool(a.up);
        w.Key("passes");
        w.Int64(m.passes);
        w.Key("rows");
        w.Int64(m.rows);
        w.Key("errors");
        w.Int64(m.errors);
        w.Key("lastPassMs");
        w.Int64(m.last_pass_ms);
        w.Key("connected");
        w.Bool(m.connected);
        w.Key("counters");
        int_map(m.counters);
        w.EndObject();
      }
      w.EndArray();
      w.Key("lifecycle");
      int_map(n.lifecycle);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return sb.GetString();
}

} // namespace outbox
