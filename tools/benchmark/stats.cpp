#include "tools/benchmark/stats.hpp"

#include <algorithm>
#include <cmath>

namespace outbox::bench {

double percentile(std::vector<double> xs, double p) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * xs.size()));
  return xs[std::clamp<size_t>(rank, 1, xs.size()) - 1];
}

double rate_between(const std::vector<double>& t, double from, double to) {
  if (t.size() < 2)
    return 0;
  auto i = static_cast<size_t>(from * (t.size() - 1));
  auto j = static_cast<size_t>(to * (t.size() - 1));
  if (j <= i || t[j] <= t[i])
    return 0;
  return static_cast<double>(j - i) / (t[j] - t[i]);
}

} // namespace outbox::bench
