// The benchmark's arithmetic: percentiles of latencies and rates over
// timestamped completions.
#pragma once

#include <vector>

namespace outbox::bench {

/// The p-th percentile (0..100) of `xs` by nearest rank; 0 for none.
double percentile(std::vector<double> xs, double p);

/// Items per second over [first, last] of sorted times (seconds), for the
/// items between fractions `from` and `to` (e.g. 0.0..0.1 = first 10%).
double rate_between(const std::vector<double>& sorted_times, double from,
                    double to);

} // namespace outbox::bench
