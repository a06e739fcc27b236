#include "tools/benchmark/report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/base/errors.hpp"
#include "core/json/json_writer.hpp"
#include "core/json/omittable.hpp"

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

// Prints each knob as " name=value", in the order inspect lists them.
struct knob_printer {
  std::ostream& out;
  template <class... Ts>
  bool operator()(field_ref<Ts>... fs) {
    ((out << " " << fs.name << "=" << fs.value), ...);
    return true;
  }
};

struct percentiles_json {
  double p50 = 0, p95 = 0, p99 = 0;
};

template <class Inspector>
bool inspect(Inspector& f, percentiles_json& x) {
  return f(field("p50", x.p50), field("p95", x.p95), field("p99", x.p99));
}

struct split_json {
  double to_routed = 0, to_dispatched = 0, to_received = 0;
};

template <class Inspector>
bool inspect(Inspector& f, split_json& x) {
  return f(field("commitToRouted", x.to_routed),
           field("routedToDispatched", x.to_dispatched),
           field("dispatchedToReceived", x.to_received));
}

// The JSON's figures, some derived from the report's.
struct results_json {
  bench_knobs knobs;
  double a = 0, b = 0;
  std::vector<contention_figures> contention;
  int64_t envelope_bytes = 0;
  double producers = 0, routed = 0, dispatched = 0, completed = 0;
  double completed_events = 0, over_a = 0, latency_rate = 0;
  percentiles_json published, completed_ms;
  split_json split;
  double rss = 0, cpu = 0;
  double drain_first = 0, drain_last = 0, drain_overall = 0;
  std::vector<double> drain_tenths;
  double warm_first = 0, warm_last = 0;
  std::vector<double> warm_tenths;
  double drain_rss = 0;
  std::map<std::string, double> cpu_a, cpu_pipeline;
  double busy = 0;
  write_figures writes_a, writes_pipeline;
  scrape_results scraping;
  omittable<idle_start_results> idle_start; ///< left out without phase I
  omittable<soak_results> soak; ///< left out without --soak
};

template <class Inspector>
bool inspect(Inspector& f, results_json& x) {
  return f(field("knobs", x.knobs), field("baselineAEventsPerS", x.a),
           field("baselineBMessagesPerS", x.b),
           field("contention", x.contention),
           field("envelopeBytes", x.envelope_bytes),
           field("pipelineProducersPerS", x.producers),
           field("routedPerS", x.routed), field("dispatchedPerS", x.dispatched),
           field("completedPerS", x.completed),
           field("completedEventsPerS", x.completed_events),
           field("completedOverBaselineA", x.over_a),
           field("latencyRateEventsPerS", x.latency_rate),
           field("commitToPublishedMs", x.published),
           field("commitToCompletedMs", x.completed_ms),
           field("commitToPublishedSplitP50Ms", x.split),
           field("outboxdPeakRssMiB", x.rss),
           field("outboxdCpuSecondsPer1000", x.cpu),
           field("drainFirst10PerS", x.drain_first),
           field("drainLast10PerS", x.drain_last),
           field("drainOverallPerS", x.drain_overall),
           field("drainTenthsPerS", x.drain_tenths),
           field("warmDrainFirst10PerS", x.warm_first),
           field("warmDrainLast10PerS", x.warm_last),
           field("warmDrainTenthsPerS", x.warm_tenths),
           field("drainPeakRssMiB", x.drain_rss),
           field("cpuSecondsPer1000EventsA", x.cpu_a),
           field("cpuSecondsPer1000EventsPipeline", x.cpu_pipeline),
           field("pipelineMachineBusy", x.busy),
           field("databaseWritesPerEventA", x.writes_a),
           field("databaseWritesPerEventPipeline", x.writes_pipeline),
           field("scraping", x.scraping), field("idleStart", x.idle_start),
           field("soak", x.soak));
}

percentiles_json percentiles_of(const std::array<double, 3>& v) {
  return {v[0], v[1], v[2]};
}

results_json results_json_of(const report& r) {
  auto& s = r.published_split_ms;
  results_json out{r.knobs, r.baseline_a, r.baseline_b, r.contention,
          r.envelope_bytes,
          r.producers_in_pipeline, r.routed_per_s, r.dispatched_per_s,
          r.completed_per_s, r.completed_events_per_s,
          r.baseline_a > 0 ? r.completed_events_per_s / r.baseline_a : 0,
          r.latency_rate, percentiles_of(r.published_ms),
          percentiles_of(r.completed_ms), {s[0], s[1], s[2]}, r.peak_rss_mib,
          r.cpu_per_1000, r.drain.first(), r.drain.last(), r.drain.overall,
          r.drain.tenths, r.warm_drain.first(), r.warm_drain.last(),
          r.warm_drain.tenths, r.backlog_rss_mib, r.a_cpu_per_1000,
          r.pipeline_cpu_per_1000, r.pipeline_busy, r.a_writes,
          r.pipeline_writes, r.scraping, {}, {}};
  if (r.idle_start)
    out.idle_start = omittable<idle_start_results>{*r.idle_start};
  if (r.soak)
    out.soak = omittable<soak_results>{*r.soak};
  return out;
}

} // namespace

namespace {

// Rows of name, value and target, in fixed columns.
struct table_rows {
  std::ostringstream& out;
  void operator()(const std::string& name, const std::string& value,
                  const std::string& target = "") {
    std::string n = name, v = value;
    n.resize(42, ' ');
    if (v.size() < 26) // a long value (the drain's tenths) is not cut
      v.resize(26, ' ');
    out << n << v << target << "\n";
  }
};

// "p50 / p95 / p99" to one decimal.
std::string three(const std::array<double, 3>& v) {
  return fmt("%.1f", v[0]) + " / " + fmt("%.1f", v[1]) + " / " + fmt("%.1f", v[2]);
}

void throughput_rows(table_rows& row, const report& r) {
  double ratio = r.baseline_a > 0 ? r.completed_events_per_s / r.baseline_a : 0;
  row("A  producers only (events/s)", fmt("%.0f", r.baseline_a));
  row("B  RabbitMQ only (messages/s, " + std::to_string(r.envelope_bytes) + " B)",
      fmt("%.0f", r.baseline_b));
  row("pipeline producers (events/s)", fmt("%.0f", r.producers_in_pipeline));
  row("pipeline routed (events/s)", fmt("%.0f", r.routed_per_s));
  row("pipeline dispatched (deliveries/s)", fmt("%.0f", r.dispatched_per_s));
  row("pipeline completed (deliveries/s)", fmt("%.0f", r.completed_per_s));
  row("completed events/s divided by A", ratio_text(ratio),
      ">= 0.60 " + verdict(ratio >= 0.6));
}

// C: per client count, the commits of each kind and publish ÷ plain
// against the 0.9.
void contention_rows(table_rows& row, const report& r) {
  for (auto& x : r.contention)
    row("C  business commits/s, " + std::to_string(x.clients)
          + (x.clients == 1 ? " client" : " clients"),
        fmt("%.0f", x.plain_per_s) + " plain, " + fmt("%.0f", x.publish_per_s)
          + " publish",
        "publish/plain " + ratio_text(x.ratio) + " >= 0.90 "
          + verdict(x.ratio >= 0.9));
  for (auto& x : r.contention)
    row("  C++ API, prepared, " + std::to_string(x.clients)
          + (x.clients == 1 ? " client" : " clients"),
        fmt("%.0f", x.api_per_s) + " api",
        "api/plain " + ratio_text(x.api_ratio) + " >= 0.90 "
          + verdict(x.api_ratio >= 0.9));
}

void latency_rows(table_rows& row, const report& r) {
  row("latency rate (events/s)", fmt("%.0f", r.latency_rate));
  row("commit->published p50/p95/p99 (ms)", three(r.published_ms),
      "p50 <= 5, p99 <= 50 "
        + verdict(r.published_ms[0] <= 5 && r.published_ms[2] <= 50));
  row("  p50 to routed / dispatched / received", three(r.published_split_ms));
  row("commit->completed p50/p95/p99 (ms)", three(r.completed_ms));
}

// "a / b / c", each to one decimal.
std::string each(const std::vector<double>& v) {
  std::string out;
  for (auto x : v)
    out += (out.empty() ? "" : " / ") + fmt("%.1f", x);
  return out;
}

// I: each sample's commit→routed, →published and →completed, and the
// slowest publication against the target.
void idle_start_rows(table_rows& row, const report& r) {
  if (!r.idle_start)
    return;
  auto& x = *r.idle_start;
  auto n = std::to_string(x.published_ms.size());
  row("idle start: events after a quiet spell",
      n + " x " + std::to_string(x.quiet_seconds) + " s");
  row("  commit->routed each (ms)", each(x.routed_ms));
  row("  commit->published each (ms)", each(x.published_ms));
  row("  commit->completed each (ms)", each(x.completed_ms));
  row("  commit->published max of " + n + " (ms)", fmt("%.1f", x.max_published_ms),
      "<= " + fmt("%.0f", idle_target_ms) + " "
        + verdict(x.max_published_ms <= idle_target_ms));
}

void cpu_rows(table_rows& row, const report& r) {
  if (r.pipeline_cpu_per_1000.empty())
    return;
  auto get = [](const std::map<std::string, double>& m, const char* k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  row("machine CPU s per 1,000 events: A",
      fmt("%.3f", get(r.a_cpu_per_1000, "machine")));
  row("machine CPU s per 1,000 events: pipeline",
      fmt("%.3f", get(r.pipeline_cpu_per_1000, "machine")));
  for (const char* g : {"postgres", "rabbitmq", "outboxd", "bench", "other"})
    row(std::string{"  of which "} + g, fmt("%.3f", get(r.pipeline_cpu_per_1000, g)));
  row("machine CPU busy in the pipeline", fmt("%.0f%%", r.pipeline_busy * 100));
  auto a = get(r.a_cpu_per_1000, "machine");
  if (a > 0) {
    auto ratio = get(r.pipeline_cpu_per_1000, "machine") / a;
    row("machine CPU per event: pipeline / A", fmt("%.2f", ratio),
        "<= 1.50 " + verdict(ratio <= 1.5));
  }
}

void write_rows(table_rows& row, const report& r) {
  auto& a = r.a_writes;
  auto& p = r.pipeline_writes;
  if (p.wal_bytes <= 0)
    return;
  row("WAL bytes per event: A / pipeline",
      fmt("%.0f", a.wal_bytes) + " / " + fmt("%.0f", p.wal_bytes));
  row("pipeline row writes per event: events",
      fmt("%.2f", p.events_inserted) + " ins, " + fmt("%.2f", p.events_updated)
        + " upd (" + fmt("%.2f", p.events_hot) + " HOT)");
  if (!p.settled || !a.settled)
    row("  (row writes: the statistics had not caught up)", "");
  row("pipeline row writes per event: deliveries",
      fmt("%.2f", p.deliveries_inserted) + " ins, "
        + fmt("%.2f", p.deliveries_updated) + " upd ("
        + fmt("%.2f", p.deliveries_hot) + " HOT), "
        + fmt("%.2f", p.deliveries_deleted) + " del; "
        + fmt("%.2f", p.completions_logged) + " to the completion log");
  row("  of them handed over on route (per event)",
      fmt("%.2f", p.deliveries_handed));
}

void drain_rows(table_rows& row, const report& r) {
  auto& d = r.drain;
  if (d.first() <= 0)
    return;
  row("backlog drain first 10% (deliveries/s)", fmt("%.0f", d.first()));
  row("backlog drain last 10% (deliveries/s)", fmt("%.0f", d.last()),
      "last/first " + ratio_text(d.ratio()) + " >= 0.80 " + verdict(d.ratio() >= 0.8));
  row("backlog drain overall (deliveries/s)", fmt("%.0f", d.overall));
  row("  by tenths", tenths_text(d));
  if (r.warm_drain.first() > 0) {
    row("again, relay already running: by tenths", tenths_text(r.warm_drain));
    row("  last/first", ratio_text(r.warm_drain.ratio()));
  }
  row("outboxd peak RSS in the drain (MiB)", fmt("%.1f", r.backlog_rss_mib),
      "<= 64 " + verdict(r.backlog_rss_mib <= 64));
}

// The rows of the throughput, business-commit, latency, resource and drain
// phases.
void phase_rows(table_rows& row, const report& r) {
  throughput_rows(row, r);
  contention_rows(row, r);
  latency_rows(row, r);
  idle_start_rows(row, r);
  cpu_rows(row, r);
  write_rows(row, r);
  row("outboxd peak RSS (MiB)", fmt("%.1f", r.peak_rss_mib),
      "<= 64 " + verdict(r.peak_rss_mib <= 64));
  row("outboxd CPU s per 1,000 deliveries", fmt("%.3f", r.cpu_per_1000));
  drain_rows(row, r);
  if (r.knobs.scrape_interval_ms > 0)
    row("/metrics scrapes (answered / failed)",
        std::to_string(r.scraping.scrapes) + " / "
          + std::to_string(r.scraping.failures),
        "mean " + fmt("%.1f", r.scraping.mean_ms) + " ms");
}

} // namespace

std::string report::table() const {
  std::ostringstream out;
  out << "\nknobs:";
  knob_printer print{out};
  inspect(print, const_cast<bench_knobs&>(knobs));
  out << "\n\n";
  out << "measure                                   value                     target\n";
  table_rows row{out};
  if (soak_only) // A only: the soak's rate is half of it
    row("A  producers only (events/s)", fmt("%.0f", baseline_a));
  else if (contention_only)
    contention_rows(row, *this);
  else
    phase_rows(row, *this);
  if (soak)
    out << soak_text(*soak);
  return out.str();
}

caf::expected<std::string> report::json() const {
  json_writer w{"results"};
  if (!w.write_document(results_json_of(*this)))
    return make_error(errc::serialize_failed, w.error());
  return w.json();
}

} // namespace outbox::bench
