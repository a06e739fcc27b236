#include "tools/benchmark/report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace outbox::bench {

namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

std::string verdict(bool ok) {
  return ok ? "met" : "MISSED";
}

// A ratio to two decimals, cut rather than rounded, so that the figure
// printed beside a target never reads as met when it is not (0.797 is
// 0.79, not 0.80).
std::string ratio_text(double r) {
  return fmt("%.2f", std::floor(r * 100) / 100);
}

std::string tenths_text(const drain_figures& d) {
  std::string out;
  for (auto r : d.tenths)
    out += (out.empty() ? "" : " ") + fmt("%.0f", r);
  return out;
}

} // namespace

std::string report::table() const {
  std::ostringstream out;
  double ratio = baseline_a > 0 ? completed_events_per_s / baseline_a : 0;
  out << "\nknobs:";
  for (auto& [k, v] : knobs)
    out << " " << k << "=" << v;
  out << " cluster=" << cluster << "\n\n";
  out << "measure                                   value                     target\n";
  auto row = [&](const std::string& name, const std::string& value,
                 const std::string& target = "") {
    std::string n = name, v = value;
    n.resize(42, ' ');
    if (v.size() < 26) // a long value (the drain's tenths) is not cut
      v.resize(26, ' ');
    out << n << v << target << "\n";
  };
  row("A  producers only (events/s)", fmt("%.0f", baseline_a));
  row("B  RabbitMQ only (messages/s, " + std::to_string(envelope_bytes) + " B)",
      fmt("%.0f", baseline_b));
  row("pipeline producers (events/s)", fmt("%.0f", producers_in_pipeline));
  row("pipeline routed (events/s)", fmt("%.0f", routed_per_s));
  row("pipeline dispatched (deliveries/s)", fmt("%.0f", dispatched_per_s));
  row("pipeline completed (deliveries/s)", fmt("%.0f", completed_per_s));
  row("completed events/s divided by A", ratio_text(ratio),
      ">= 0.60 " + verdict(ratio >= 0.6));
  row("latency rate (events/s)", fmt("%.0f", latency_rate));
  row("commit->published p50/p95/p99 (ms)",
      fmt("%.1f", published_ms[0]) + " / " + fmt("%.1f", published_ms[1]) + " / "
        + fmt("%.1f", published_ms[2]),
      "p50 <= 5, p99 <= 50 "
        + verdict(published_ms[0] <= 5 && published_ms[2] <= 50));
  row("  p50 to routed / dispatched / received",
      fmt("%.1f", published_split_ms[0]) + " / " + fmt("%.1f", published_split_ms[1])
        + " / " + fmt("%.1f", published_split_ms[2]));
  row("commit->completed p50/p95/p99 (ms)",
      fmt("%.1f", completed_ms[0]) + " / " + fmt("%.1f", completed_ms[1]) + " / "
        + fmt("%.1f", completed_ms[2]));
  if (!pipeline_cpu_per_1000.empty()) {
    auto get = [](const std::map<std::string, double>& m, const char* k) {
      auto it = m.find(k);
      return it == m.end() ? 0.0 : it->second;
    };
    row("machine CPU s per 1,000 events: A", fmt("%.3f", get(a_cpu_per_1000, "machine")));
    row("machine CPU s per 1,000 events: pipeline",
        fmt("%.3f", get(pipeline_cpu_per_1000, "machine")));
    for (const char* g : {"postgres", "rabbitmq", "outboxd", "bench", "other"})
      row(std::string{"  of which "} + g, fmt("%.3f", get(pipeline_cpu_per_1000, g)));
    row("machine CPU busy in the pipeline", fmt("%.0f%%", pipeline_busy * 100));
  }
  row("outboxd peak RSS (MiB)", fmt("%.1f", peak_rss_mib),
      "<= 64 " + verdict(peak_rss_mib <= 64));
  row("outboxd CPU s per 1,000 deliveries", fmt("%.3f", cpu_per_1000));
  if (drain.first() > 0) {
    row("backlog drain first 10% (deliveries/s)", fmt("%.0f", drain.first()));
    row("backlog drain last 10% (deliveries/s)", fmt("%.0f", drain.last()),
        "last/first " + ratio_text(drain.ratio()) + " >= 0.80 "
          + verdict(drain.ratio() >= 0.8));
    row("backlog drain overall (deliveries/s)", fmt("%.0f", drain.overall));
    row("  by tenths", tenths_text(drain));
    if (warm_drain.first() > 0) {
      row("again, relay already running: by tenths", tenths_text(warm_drain));
      row("  last/first", ratio_text(warm_drain.ratio()));
    }
    row("outboxd peak RSS in the drain (MiB)", fmt("%.1f", backlog_rss_mib),
        "<= 64 " + verdict(backlog_rss_mib <= 64));
  }
  return out.str();
}

std::string report::json() const {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  w.Key("knobs");
  w.StartObject();
  for (auto& [k, v] : knobs) {
    w.Key(k.c_str());
    w.Int64(v);
  }
  w.Key("cluster");
  w.String(cluster.c_str());
  w.EndObject();
  auto num = [&](const char* k, double v) {
    w.Key(k);
    w.Double(v);
  };
  num("baselineAEventsPerS", baseline_a);
  num("baselineBMessagesPerS", baseline_b);
  w.Key("envelopeBytes");
  w.Int64(envelope_bytes);
  num("pipelineProducersPerS", producers_in_pipeline);
  num("routedPerS", routed_per_s);
  num("dispatchedPerS", dispatched_per_s);
  num("completedPerS", completed_per_s);
  num("completedEventsPerS", completed_events_per_s);
  num("completedOverBaselineA", baseline_a > 0 ? completed_events_per_s / baseline_a : 0);
  num("latencyRateEventsPerS", latency_rate);
  auto triple = [&](const char* k, const std::array<double, 3>& v) {
    w.Key(k);
    w.StartObject();
    num("p50", v[0]);
    num("p95", v[1]);
    num("p99", v[2]);
    w.EndObject();
  };
  triple("commitToPublishedMs", published_ms);
  triple("commitToCompletedMs", completed_ms);
  w.Key("commitToPublishedSplitP50Ms");
  w.StartObject();
  num("commitToRouted", published_split_ms[0]);
  num("routedToDispatched", published_split_ms[1]);
  num("dispatchedToReceived", published_split_ms[2]);
  w.EndObject();
  num("outboxdPeakRssMiB", peak_rss_mib);
  num("outboxdCpuSecondsPer1000", cpu_per_1000);
  num("drainFirst10PerS", drain.first());
  num("drainLast10PerS", drain.last());
  num("drainOverallPerS", drain.overall);
  auto array = [&](const char* k, const std::vector<double>& v) {
    w.Key(k);
    w.StartArray();
    for (auto x : v)
      w.Double(x);
    w.EndArray();
  };
  array("drainTenthsPerS", drain.tenths);
  num("warmDrainFirst10PerS", warm_drain.first());
  num("warmDrainLast10PerS", warm_drain.last());
  array("warmDrainTenthsPerS", warm_drain.tenths);
  num("drainPeakRssMiB", backlog_rss_mib);
  auto groups = [&](const char* k, const std::map<std::string, double>& m) {
    w.Key(k);
    w.StartObject();
    for (auto& [g, v] : m)
      num(g.c_str(), v);
    w.EndObject();
  };
  groups("cpuSecondsPer1000EventsA", a_cpu_per_1000);
  groups("cpuSecondsPer1000EventsPipeline", pipeline_cpu_per_1000);
  num("pipelineMachineBusy", pipeline_busy);
  w.EndObject();
  return sb.GetString();
}

} // namespace outbox::bench
