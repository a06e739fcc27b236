#include "actors/latency_histogram.hpp"

#include <algorithm>

namespace outbox {

void latency_histogram::observe(double seconds) {
  seconds = std::max(0.0, seconds);
  counts.resize(bounds.size() + 1);
  auto at = std::lower_bound(bounds.begin(), bounds.end(), seconds);
  ++counts[static_cast<size_t>(at - bounds.begin())];
  sum += seconds;
  ++count;
}

} // namespace outbox
