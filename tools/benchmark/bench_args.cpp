#include "tools/benchmark/bench_args.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "tools/benchmark/contention.hpp"
#include "tools/benchmark/idle_start.hpp"
#include "tools/benchmark/many_databases.hpp"
#include "tools/benchmark/soak.hpp"

namespace outbox::bench {

bench_config::bench_config() {
  opt_group{options(), "global"}
    .add(database_url, "database-url", "libpq URL of the database")
    .add(amqp_url, "amqp-url", "AMQP URL of the broker")
    .add(outboxd, "outboxd", "path of outboxd (default: next to this binary)")
    .add(json_file, "json", "where to write the results as JSON")
    .add(events, "events", "events of the throughput phases")
    .add(producers, "producers", "producer connections")
    .add(payload_bytes, "payload-bytes", "payload size in bytes")
    .add(queues, "queues", "queues the routes spread over")
    .add(routes, "routes", "routes (deliveries) per event")
    .add(batch_size, "batch-size", "batchSize of the outbox")
    .add(dispatchers, "dispatchers", "dispatcher processes per queue")
    .add(workers, "workers", "worker threads per queue")
    .add(cluster, "cluster", "one (all roles in one process) or three")
    .add(tls_dir, "tls-dir", "TLS between the nodes with DIR/ca.pem, "
                              "DIR/client.pem and DIR/client.key")
    .add(backlog, "backlog", "pending deliveries of the drain phase")
    .add(latency_events, "latency-events", "events of the latency phase")
    .add(rate_fraction, "rate-fraction", "latency rate as a share of A")
    .add(polling_only, "polling-only", "deliverImmediately: false")
    .add(router_linger_ms, "router-linger-ms", "routerLingerMs (0: off)")
    .add(router_linger_min_events, "router-linger-min-events",
         "routerLingerMinEvents")
    .add(ordered_keys, "ordered-keys",
         "keys of the events, routes ordered by key (0: no keys, unordered)")
    .add(scrape_interval_ms, "scrape-interval-ms",
         "scrape every node's /metrics this often (0: off)")
    .add(soak, "soak", "minutes of the soak at half of A (0: off)")
    .add(soak_interval_s, "soak-interval-s", "seconds between the soak's samples")
    .add(soak_retention_minutes, "soak-retention-minutes",
         "retentionHours of the soak's relay, in minutes (0: none)")
    .add(soak_only, "soak-only", "run A and the soak only")
    .add(soak_chart, "soak-chart", "where to write the soak's SVG chart")
    .add(contention_clients, "contention-clients",
         "client counts of phase C, e.g. 4,16 (each 1 to 64)")
    .add(contention_seconds, "contention-seconds",
         "seconds of each kind at each client count in phase C (0: off)")
    .add(contention_only, "contention-only", "run phase C only")
    .add(idle_seconds, "idle-seconds",
         "quiet seconds before each event of phase I (0: off, at most 3600)")
    .add(idle_samples, "idle-samples", "events of phase I (1 to 20)")
    .add(databases, "databases",
         "phase M alone: the pipeline over this many databases (1 to 16)")
    .add(idle_databases, "idle-databases",
         "phase Z alone: one relay on this many idle databases (1 to 100)")
    .add(idle_measure_seconds, "idle-measure-seconds",
         "phase Z's measured span (10 to 3600 s)")
    .add(schema_sql, "schema-sql",
         "SQL file run after the migrations ({{events}}, {{deliveries}})");
}

namespace {

std::string text_of(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// The soak's knobs: enough intervals for its verdict (the last against the
// second, or the first once retention's ring turns steadily, four windows
// in), and a retention window that keeps an interval's completed rows
// until its sample counts them.
std::string soak_knob_problem(const bench_config& o) {
  if (o.soak_interval_s < 1)
    return "--soak-interval-s = " + std::to_string(o.soak_interval_s)
           + ": must be at least 1";
  // The first interval, the verdict's reference and one after it.
  auto needed = std::max<int64_t>(
    3, reference_interval(o.soak_retention_minutes, o.soak_interval_s) + 2);
  if (o.soak < 0
      || (o.soak > 0 && soak_intervals(o.soak, o.soak_interval_s) < needed))
    return "--soak = " + text_of(o.soak) + ": must be 0 or last at least "
           + std::to_string(needed)
           + " intervals of --soak-interval-s (the verdict's reference"
             " interval and one after it)";
  if (o.soak_only && o.soak <= 0)
    return "--soak-only: needs --soak MINUTES";
  if (o.soak_retention_minutes < 0
      || (o.soak_retention_minutes > 0
          && o.soak_retention_minutes * 60 < 2.0 * o.soak_interval_s))
    return "--soak-retention-minutes = " + text_of(o.soak_retention_minutes)
           + ": must be 0 or at least two intervals of --soak-interval-s";
  return {};
}

// Phase C's knobs: client counts it can open connections for, and
// --contention-only with a phase to run and no other.
std::string contention_knob_problem(const bench_config& o) {
  if (!contention_clients(o.contention_clients))
    return "--contention-clients = \"" + o.contention_clients
           + "\": must be client counts from 1 to "
           + std::to_string(max_contention_clients) + " separated by commas";
  if (o.contention_seconds < 0)
    return "--contention-seconds = " + std::to_string(o.contention_seconds)
           + ": must be at least 0";
  if (o.contention_only && o.contention_seconds == 0)
    return "--contention-only: needs --contention-seconds of at least 1";
  if (o.contention_only && (o.soak > 0 || o.soak_only))
    return "--contention-only: runs no other phase (not with --soak)";
  return {};
}

} // namespace

// Phases M and Z: one at a time, within their bounds.
std::string many_databases_knob_problem(const bench_config& o) {
  if (o.databases < 0 || o.databases > max_pipeline_databases)
    return "--databases = " + std::to_string(o.databases) + ": must be 0 to "
           + std::to_string(max_pipeline_databases);
  if (o.idle_databases < 0 || o.idle_databases > max_idle_databases)
    return "--idle-databases = " + std::to_string(o.idle_databases)
           + ": must be 0 to " + std::to_string(max_idle_databases);
  if (o.databases > 0 && o.idle_databases > 0)
    return "--databases and --idle-databases: one phase at a time";
  if (o.idle_measure_seconds < 10 || o.idle_measure_seconds > 3600)
    return "--idle-measure-seconds = " + std::to_string(o.idle_measure_seconds)
           + ": must be 10 to 3600";
  return {};
}

bool runs_contention(const bench_config& o) {
  return o.contention_seconds > 0 && !o.soak_only;
}

std::string knob_problem(const bench_config& o) {
  auto at_least = [](const char* name, int64_t v, int64_t min) -> std::string {
    if (v >= min)
      return {};
    return std::string{"--"} + name + " = " + std::to_string(v) + ": must be at least "
           + std::to_string(min);
  };
  for (auto problem :
       {at_least("events", o.events, 100), at_least("producers", o.producers, 1),
        at_least("payload-bytes", o.payload_bytes, 16),
        at_least("queues", o.queues, 1), at_least("routes", o.routes, 1),
        at_least("dispatchers", o.dispatchers, 1),
        at_least("workers", o.workers, 1), at_least("backlog", o.backlog, 0),
        at_least("latency-events", o.latency_events, 10),
        at_least("scrape-interval-ms", o.scrape_interval_ms, 0),
        at_least("ordered-keys", o.ordered_keys, 0)})
    if (!problem.empty())
      return problem;
  if (!(o.rate_fraction > 0 && o.rate_fraction <= 1))
    return "--rate-fraction = " + text_of(o.rate_fraction)
           + ": must be above 0 and at most 1";
  if (o.cluster != "one" && o.cluster != "three")
    return "--cluster = \"" + o.cluster + "\": must be one or three";
  if (auto problem = contention_knob_problem(o); !problem.empty())
    return problem;
  if (auto problem = idle_knob_problem(o.idle_seconds, o.idle_samples);
      !problem.empty())
    return problem;
  if (auto problem = many_databases_knob_problem(o); !problem.empty())
    return problem;
  return soak_knob_problem(o);
}

std::string output_path_problem(const std::string& knob, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p{path};
  auto dir = p.has_parent_path() ? p.parent_path() : fs::path{"."};
  bool writable = fs::exists(p, ec) ? !fs::is_directory(p, ec)
                                        && access(path.c_str(), W_OK) == 0
                                    : access(dir.c_str(), W_OK) == 0;
  if (path.empty() || !writable)
    return "--" + knob + " = \"" + path + "\": cannot write there";
  return {};
}

} // namespace outbox::bench
