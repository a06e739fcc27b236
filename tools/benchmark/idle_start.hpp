// Phase I of the benchmark, the idle start (tools/bench --idle-seconds N
// --idle-samples K): how long the first event takes after a quiet spell.
// Producers send no NOTIFY; the router's node learns of events by probing,
// and once nothing has changed for a while it probes at its slowest pace
// (docs/design.md "Wake-ups without NOTIFY"). The latency phase's steady
// stream never lets the pace fall that far; a lone event after a quiet
// minute meets it. The target: published within 50 ms.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json/field.hpp"
#include "core/pg/progress_repository.hpp"
#include "tools/benchmark/producers.hpp"

namespace outbox::bench {

/// The knobs' ranges: an hour of quiet is more than any relay's pace
/// depends on, and 20 samples of it already take most of a day.
constexpr int64_t max_idle_seconds = 3600;
constexpr int64_t max_idle_samples = 20;

/// The target of commit→published of the first event after a quiet spell.
constexpr double idle_target_ms = 50;

/// One event after a quiet spell: milliseconds from its commit.
struct idle_sample {
  double routed_ms = 0;    ///< to its routing (the database's time)
  double published_ms = 0; ///< to the worker's receipt of its job
  double completed_ms = 0; ///< to its delivery's completed_at
};

/// Every sample, in order, and the slowest of each measure.
struct idle_start_results {
  int64_t quiet_seconds = 0; ///< before each sample
  std::vector<double> routed_ms, published_ms, completed_ms;
  double max_published_ms = 0, max_completed_ms = 0;

  void add(const idle_sample& x);
};

template <class Inspector>
bool inspect(Inspector& f, idle_start_results& x) {
  return f(field("quietSeconds", x.quiet_seconds), field("routedMs", x.routed_ms),
           field("publishedMs", x.published_ms),
           field("completedMs", x.completed_ms),
           field("maxPublishedMs", x.max_published_ms),
           field("maxCompletedMs", x.max_completed_ms));
}

/// The first of the two knobs out of its range, by name and with the
/// range; empty when both are fine.
std::string idle_knob_problem(int64_t seconds, int64_t samples);

/// The sample of the event committed as `c`, measured as the latency phase
/// measures: `e` is its progress in the database, `received` the workers'
/// first receipt of each event (one clock: the servers run on this
/// machine). None when the workers have no receipt of it.
std::optional<idle_sample> idle_sample_of(const commit& c, const event_progress& e,
                                          const std::map<int64_t, double>& received);

} // namespace outbox::bench
