// The soak's figures (tools/bench --soak MINUTES): whether the relay stays
// flat for long. Paced producers at half of A run for MINUTES; every
// interval one sample: completions in it, commit→published of the events
// committed in it, and both outbox tables' size and rows. Its table, its
// verdict and (soak_chart.hpp) its chart.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json/field.hpp"
#include "tools/benchmark/producers.hpp"

namespace outbox::bench {

/// The soak's producers run at this share of A: well below what the relay
/// can take, so that a slower relay shows as growing latency and tables,
/// not as a backlog from the first minute.
constexpr double soak_rate_share = 0.5;

/// One outbox table at a sample.
struct soak_table {
  int64_t bytes = 0; ///< heap + indexes + TOAST
  int64_t live = 0, dead = 0, rows = 0;
};

template <class Inspector>
bool inspect(Inspector& f, soak_table& x) {
  return f(field("bytes", x.bytes), field("liveTuples", x.live),
           field("deadTuples", x.dead), field("rows", x.rows));
}

/// One interval of the soak.
struct soak_sample {
  double end_s = 0;        ///< the interval's end, seconds into the soak
  int64_t completed = 0;   ///< deliveries completed in the interval
  double per_minute = 0;   ///< the same per minute
  int64_t committed = 0;   ///< events committed in the interval
  double p50_ms = 0, p99_ms = 0; ///< their commit→published
  soak_table events, deliveries; ///< deliveries: the table and the completion log
  int64_t wal_bytes = 0;         ///< WAL the database wrote in the interval
  double wal_per_event = 0;      ///< the same per event committed in it

  double mib() const; ///< both tables, MiB
  int64_t dead() const { return events.dead + deliveries.dead; }
};

template <class Inspector>
bool inspect(Inspector& f, soak_sample& x) {
  return f(field("endSeconds", x.end_s), field("completed", x.completed),
           field("completedPerMinute", x.per_minute),
           field("committed", x.committed),
           field("commitToPublishedP50Ms", x.p50_ms),
           field("commitToPublishedP99Ms", x.p99_ms),
           field("events", x.events), field("deliveries", x.deliveries),
           field("walBytes", x.wal_bytes),
           field("walBytesPerEvent", x.wal_per_event));
}

/// Last interval against a reference interval: each measure within 20%,
/// WAL per event within 10%. Throughput and WAL both ways (the producers
/// are paced: more would be a backlog caught up, less one growing); the
/// others only upwards, past a small floor of noise each (1 ms, 1 MiB,
/// 1,000 tuples).
struct soak_verdict {
  /// The reference, from 0: the second interval (the first includes the
  /// start), or the first that begins once retention's ring has turned
  /// through all its partitions with the window's span (four windows,
  /// schema/022); before that the tables grow by design.
  int64_t reference = 1;
  bool throughput = false, p99 = false, size = false, dead = false, wal = false;
  bool flat() const { return throughput && p99 && size && dead && wal; }
};

template <class Inspector>
bool inspect(Inspector& f, soak_verdict& x) {
  return f(field("referenceInterval", x.reference),
           field("throughput", x.throughput), field("p99", x.p99),
           field("tableSize", x.size), field("deadTuples", x.dead),
           field("walPerEvent", x.wal));
}

struct soak_results {
  double minutes = 0, rate = 0; ///< rate: events/s, half of A
  int64_t interval_s = 0;
  double retention_minutes = 0; ///< 0: no retentionHours in the config
  std::vector<soak_sample> series;
  soak_verdict verdict;
};

template <class Inspector>
bool inspect(Inspector& f, soak_results& x) {
  return f(field("minutes", x.minutes), field("rateEventsPerS", x.rate),
           field("intervalSeconds", x.interval_s),
           field("retentionMinutes", x.retention_minutes),
           field("series", x.series), field("verdict", x.verdict));
}

/// The number of intervals of a soak of `minutes` sampled every
/// `interval_s` seconds (the last one may end past the minutes).
int64_t soak_intervals(double minutes, int64_t interval_s);

/// Sets each sample's committed, p50, p99 and WAL per event from the
/// soak's commits and the workers' first receipt of each event; commits
/// after the last interval's end count in none.
void fill_latencies(std::vector<soak_sample>& series,
                    const std::vector<commit>& commits,
                    const std::map<int64_t, double>& received, double start,
                    double interval_s);

/// The reference interval of a soak whose retention window is
/// `retention_minutes` (0: none): the first to begin four windows in.
int64_t reference_interval(double retention_minutes, int64_t interval_s);

soak_verdict judge(const std::vector<soak_sample>& series, int64_t reference);

/// The series as a table, one row per interval, and the verdict line.
std::string soak_text(const soak_results& r);

} // namespace outbox::bench
