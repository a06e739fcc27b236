// The benchmark's command line: its knobs, their defaults and ranges, and
// the output files it must be able to write before a run of minutes starts.
#pragma once

#include <cstdint>
#include <string>

#include "cli/cli_config.hpp"

namespace outbox::bench {

struct bench_config : cli_config {
  std::string database_url, amqp_url, outboxd, json_file = "bench-results.json";
  /// SQL run once after the migrations, the tables' names filled in: a
  /// table setting or an index to weigh against the schema as it is.
  std::string schema_sql;
  std::string cluster = "one";
  /// Mutual TLS between the relay's nodes: a folder with ca.pem and a
  /// certificate client.pem/client.key it signed (tools/bench --tls passes
  /// the test servers' folder, and an amqps:// URL for the broker).
  std::string tls_dir;
  // One worker per queue, as the issue's pipeline has "a worker that
  // completes each job at once". With four, each took a quarter of every
  // batch and sent its results back a quarter at a time: four result
  // batches of about 25 where one of about 100 would do, and the drain
  // ran about 8% slower (docs/performance.md).
  int64_t events = 20000, producers = 4, payload_bytes = 300, queues = 1,
          routes = 1, batch_size = 100, dispatchers = 1, workers = 1,
          backlog = 200000, latency_events = 2000, router_linger_ms = 5,
          router_linger_min_events = 6;
  /// > 0: the events take this many keys and the routes are ordered by
  /// key (the drain phase's backlog is written unordered all the same).
  int64_t ordered_keys = 0;
  /// > 0: the nodes serve --http and a thread scrapes each one's /metrics
  /// this often during the pipeline and latency phases.
  int64_t scrape_interval_ms = 0;
  double rate_fraction = 0.2;
  bool polling_only = false;
  /// The soak: minutes (0: none; fractions for short runs), the seconds
  /// between samples, and the retention window its relay's config gets
  /// (retentionHours for every final status; 0: none in the config).
  double soak = 0, soak_retention_minutes = 2;
  int64_t soak_interval_s = 60;
  bool soak_only = false; ///< A and the soak, no other phase
  std::string soak_chart = "bench-soak.svg";
  /// Phase C: the client counts, and the seconds of each kind at each (0:
  /// no phase C). On by default: it takes 2 × 2 × 10 s, and it is the
  /// figure that judges what the publish path holds through commit.
  std::string contention_clients = "4,16";
  int64_t contention_seconds = 10;
  bool contention_only = false; ///< C alone, no other phase
  /// Phase I: the quiet seconds before each of its events (0: no phase
  /// I), and how many. On by default: a relay that waits for its first
  /// event after a quiet minute is the common case the latency phase's
  /// steady stream never shows (3 × 60 s).
  int64_t idle_seconds = 60, idle_samples = 3;
  /// Phase M: the pipeline over this many databases (0: none); phase Z:
  /// one relay on this many idle databases, measured for
  /// idle_measure_seconds (0: none). Either runs alone.
  int64_t databases = 0, idle_databases = 0, idle_measure_seconds = 60;
  bench_config();
};

/// Whether phase C runs: on unless its seconds are 0, or the run is A and
/// the soak alone.
bool runs_contention(const bench_config& o);

/// The first knob out of its range, with the range; empty when all are
/// fine. (The knobs that go into the outbox's config are checked by its
/// own rules as well, in run().)
std::string knob_problem(const bench_config& o);

/// Where the results (or the chart) go must be a file it can write, known
/// before a run of minutes starts; empty when it can.
std::string output_path_problem(const std::string& knob, const std::string& path);

} // namespace outbox::bench
