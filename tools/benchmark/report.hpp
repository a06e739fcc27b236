// The benchmark's figures, printed as a table (with the targets of the
// issue beside them) and written as JSON.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/json/field.hpp"
#include "tools/benchmark/contention.hpp"
#include "tools/benchmark/db_writes.hpp"
#include "tools/benchmark/idle_start.hpp"
#include "tools/benchmark/soak.hpp"

namespace outbox::bench {

/// Deliveries/s of a drain in each tenth, in order (whether the cost grows
/// with the drain, or one tenth stands out), and overall.
struct drain_figures {
  std::vector<double> tenths;
  double overall = 0;
  double first() const { return tenths.empty() ? 0 : tenths.front(); }
  double last() const { return tenths.empty() ? 0 : tenths.back(); }
  double ratio() const { return first() > 0 ? last() / first() : 0; }
};

/// The run's knobs, as the table and the JSON name them.
struct bench_knobs {
  int64_t events = 0, producers = 0, payload_bytes = 0, queues = 0,
          routes_per_event = 0, batch_size = 0, dispatchers = 0,
          workers_per_queue = 0, backlog = 0, latency_events = 0,
          router_linger_ms = 0, router_linger_min_events = 0,
          scrape_interval_ms = 0, ordered_keys = 0;
  /// Phase C: its client counts ("4,16") and the seconds of each kind at
  /// each (0: the phase did not run).
  std::string contention_clients;
  int64_t contention_seconds = 0;
  /// "one" or "three", then " polling-only" and " tls" if so
  std::string cluster;
  std::string schema_sql; ///< --schema-sql, empty without
};

template <class Inspector>
bool inspect(Inspector& f, bench_knobs& x) {
  return f(field("events", x.events), field("producers", x.producers),
           field("payloadBytes", x.payload_bytes), field("queues", x.queues),
           field("routesPerEvent", x.routes_per_event),
           field("batchSize", x.batch_size),
           field("dispatchers", x.dispatchers),
           field("workersPerQueue", x.workers_per_queue),
           field("backlog", x.backlog),
           field("latencyEvents", x.latency_events),
           field("routerLingerMs", x.router_linger_ms),
           field("routerLingerMinEvents", x.router_linger_min_events),
           field("scrapeIntervalMs", x.scrape_interval_ms),
           field("orderedKeys", x.ordered_keys),
           field("contentionClients", x.contention_clients),
           field("contentionSeconds", x.contention_seconds),
           field("cluster", x.cluster), field("schemaSql", x.schema_sql));
}

/// The /metrics scrapes of the pipeline and latency phases
/// (--scrape-interval-ms; all zero without).
struct scrape_results {
  int64_t scrapes = 0, failures = 0;
  double mean_ms = 0; ///< mean time of an answered scrape
};

template <class Inspector>
bool inspect(Inspector& f, scrape_results& x) {
  return f(field("scrapes", x.scrapes), field("failures", x.failures),
           field("meanMs", x.mean_ms));
}

struct report {
  bench_knobs knobs;
  double baseline_a = 0; ///< events/s, producers only
  /// C, business commits: plain INSERT and publish per client count (none
  /// with --contention-seconds 0).
  std::vector<contention_figures> contention;
  double baseline_b = 0; ///< messages/s, RabbitMQ only
  int64_t envelope_bytes = 0;
  double producers_in_pipeline = 0; ///< events/s the producers managed meanwhile
  double routed_per_s = 0, dispatched_per_s = 0, completed_per_s = 0;
  double completed_events_per_s = 0;
  double latency_rate = 0;
  std::array<double, 3> published_ms{}; ///< p50, p95, p99 commit→published
  std::array<double, 3> completed_ms{}; ///< p50, p95, p99 commit→completed
  /// p50s of commit→routed, routed→dispatched (the transactions' start
  /// times) and dispatched→received by the worker.
  std::array<double, 3> published_split_ms{};
  double peak_rss_mib = 0, cpu_per_1000 = 0;
  /// A backlog drained by an outboxd started on it, and a second one by
  /// the same outboxd, already running (as after a broker outage).
  drain_figures drain, warm_drain;
  double backlog_rss_mib = 0;
  /// CPU seconds per 1,000 events, per process group and "machine"
  /// (tools/benchmark/machine_cpu.hpp), in A and in the pipeline.
  std::map<std::string, double> a_cpu_per_1000, pipeline_cpu_per_1000;
  double pipeline_busy = 0; ///< share of all cores busy in the pipeline
  /// The database's writes per event in A and in the pipeline.
  write_figures a_writes, pipeline_writes;
  scrape_results scraping;
  /// I: the first event after each quiet spell (--idle-seconds; none with
  /// 0, or when the latency phase did not run).
  std::optional<idle_start_results> idle_start;
  /// The soak's series and verdict (--soak; none without).
  std::optional<soak_results> soak;
  /// --soak-only: A and the soak ran, no other phase (the table leaves
  /// their rows out; the JSON has them as zeros).
  bool soak_only = false;
  /// --contention-only: C alone ran (the JSON has the rest as zeros).
  bool contention_only = false;

  std::string table() const;
  /// The figures as JSON; an error names a value JSON cannot carry (NaN,
  /// infinity).
  caf::expected<std::string> json() const;
};

} // namespace outbox::bench
