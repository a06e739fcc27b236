// Phases M and Z of the benchmark, one cluster of many databases (each a
// database of its own on the bench's server, made and dropped by the run):
// M runs the pipeline over N databases at once, producers writing into
// each as fast as they can, through one outboxd of every role but status,
// and reports each database's completed/s and commit→completed latency and
// the total; Z starts one outboxd on K idle databases and measures what it
// costs at rest: connections, memory, the relay's and PostgreSQL's CPU and
// the transactions its passes make, per database.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json/field.hpp"
#include "tools/benchmark/bench_args.hpp"

namespace outbox::bench {

/// The most databases of phase M and of phase Z: every one costs the
/// relay's connections (docs/operations.md "Many databases").
constexpr int64_t max_pipeline_databases = 16;
constexpr int64_t max_idle_databases = 100;

struct database_figures {
  std::string name;
  int64_t events = 0;
  double completed_per_s = 0; ///< its events ÷ the seconds to its last completion
  double p50_ms = 0, p99_ms = 0; ///< commit→completed
};

template <class Inspector>
bool inspect(Inspector& f, database_figures& x) {
  return f(field("name", x.name), field("events", x.events),
           field("completedPerS", x.completed_per_s), field("p50Ms", x.p50_ms),
           field("p99Ms", x.p99_ms));
}

struct pipeline_databases {
  int64_t databases = 0;
  double total_completed_per_s = 0; ///< all events ÷ the seconds to the last
  double relay_cpu_seconds = 0, relay_rss_mib = 0;
  std::vector<database_figures> per_database;
};

template <class Inspector>
bool inspect(Inspector& f, pipeline_databases& x) {
  return f(field("databases", x.databases),
           field("totalCompletedPerS", x.total_completed_per_s),
           field("relayCpuSeconds", x.relay_cpu_seconds),
           field("relayRssMib", x.relay_rss_mib),
           field("perDatabase", x.per_database));
}

struct idle_databases {
  int64_t databases = 0;
  double seconds = 0; ///< the measured span, after the relay settled
  int64_t connections = 0; ///< the relay's, in all
  double relay_rss_mib = 0;
  /// CPU seconds per minute at rest: the relay's, PostgreSQL's backends'.
  double relay_cpu_per_minute = 0, postgres_cpu_per_minute = 0;
  /// Transactions per second at rest, per database (the passes' reads).
  double transactions_per_s_per_database = 0;
};

template <class Inspector>
bool inspect(Inspector& f, idle_databases& x) {
  return f(field("databases", x.databases), field("seconds", x.seconds),
           field("connections", x.connections),
           field("relayRssMib", x.relay_rss_mib),
           field("relayCpuPerMinute", x.relay_cpu_per_minute),
           field("postgresCpuPerMinute", x.postgres_cpu_per_minute),
           field("transactionsPerSPerDatabase", x.transactions_per_s_per_database));
}

/// Runs M (--databases N) or Z (--idle-databases K), whichever is asked,
/// prints its table and writes its JSON to --json; the exit code.
int run_many_databases(const bench_config& o);

} // namespace outbox::bench
