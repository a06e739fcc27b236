// A latency histogram with fixed buckets, as Prometheus histograms want
// them: the same bounds on every node, so that a query can sum them. The
// actors observe into it; the node's /metrics writes it out.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace outbox {

struct latency_histogram {
  /// Upper bounds in seconds, from 1 ms (a confirm on loopback) to 5 min (a
  /// slow job's result); +Inf follows.
  static constexpr std::array<double, 15> bounds{
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
    0.5,   1,      2.5,   5,    10,    60,   300};

  /// Per bucket, not cumulative: counts[i] holds the observations above
  /// bounds[i-1] and up to bounds[i]; the last one those above all bounds.
  /// Empty until the first observation.
  std::vector<int64_t> counts;
  double sum = 0;
  int64_t count = 0;

  /// A negative value (a clock step) counts as 0.
  void observe(double seconds);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, latency_histogram& x) {
  return f(caf::meta::type_name("latency_histogram"), x.counts, x.sum, x.count);
}

} // namespace outbox
