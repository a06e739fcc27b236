#include "http/node_health.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace outbox {

health_verdict liveness(const std::optional<node_report>& report) {
  health_verdict v;
  if (!report) {
    v.problems.push_back("the node's agent did not answer in time");
    return v;
  }
  for (auto& a : report->view.actors)
    if (!a.up)
      v.problems.push_back(a.metrics.name + " has terminated");
  v.ok = v.problems.empty();
  return v;
}

health_verdict readiness(const std::optional<node_report>& report,
                         const health_rules& rules, int64_t now_ms) {
  auto v = liveness(report);
  if (!report)
    return v;
  for (auto& a : report->view.actors) {
    auto& m = a.metrics;
    if (!m.connected)
      v.problems.push_back(m.name + ": " + (m.last_error.empty()
                                              ? std::string{"not connected"}
                                              : m.last_error));
    auto since = m.last_pass_ms != 0 ? m.last_pass_ms : report->started_ms;
    if (auto it = m.gauges.find("broker_blocked");
        it != m.gauges.end() && it->second != 0)
      v.problems.push_back(m.name + ": the broker blocks publishing (a memory "
                                    "or disk alarm); nothing is sent until it ends");
    if (a.up && rules.stuck_after_ms > 0 && now_ms - since > rules.stuck_after_ms)
      v.problems.push_back(m.name + ": no pass for "
                           + std::to_string((now_ms - since) / 1000) + " s");
  }
  if (rules.joins_status && !report->status_joined)
    v.problems.push_back("not joined to the status node");
  v.ok = v.problems.empty();
  return v;
}

std::string health_json(const health_verdict& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  w.Key("ok");
  w.Bool(v.ok);
  w.Key("problems");
  w.StartArray();
  for (auto& p : v.problems)
    w.String(p.c_str(), static_cast<rapidjson::SizeType>(p.size()));
  w.EndArray();
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()} + "\n";
}

} // namespace outbox
