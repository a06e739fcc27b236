#include "tools/benchmark/idle_start.hpp"

#include <algorithm>

namespace outbox::bench {

void idle_start_results::add(const idle_sample& x) {
  routed_ms.push_back(x.routed_ms);
  published_ms.push_back(x.published_ms);
  completed_ms.push_back(x.completed_ms);
  max_published_ms = std::max(max_published_ms, x.published_ms);
  max_completed_ms = std::max(max_completed_ms, x.completed_ms);
}

std::string idle_knob_problem(int64_t seconds, int64_t samples) {
  if (seconds < 0 || seconds > max_idle_seconds)
    return "--idle-seconds = " + std::to_string(seconds) + ": must be from 0 to "
           + std::to_string(max_idle_seconds);
  if (samples < 1 || samples > max_idle_samples)
    return "--idle-samples = " + std::to_string(samples) + ": must be from 1 to "
           + std::to_string(max_idle_samples);
  return {};
}

std::optional<idle_sample> idle_sample_of(const commit& c, const event_progress& e,
                                          const std::map<int64_t, double>& received) {
  auto got = received.find(c.event_id);
  if (got == received.end())
    return std::nullopt;
  return idle_sample{(e.routed - c.at) * 1000, (got->second - c.at) * 1000,
                     (e.last_completed - c.at) * 1000};
}

} // namespace outbox::bench
