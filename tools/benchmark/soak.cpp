#include "tools/benchmark/soak.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tools/benchmark/stats.hpp"

namespace outbox::bench {

namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

// At most 20% above `ref`, or within `floor` of it.
bool grew_little(double ref, double last, double floor) {
  return last <= std::max(ref * 1.2, ref + floor);
}

std::string mark(bool ok) {
  return ok ? "flat" : "NOT flat";
}

} // namespace

double soak_sample::mib() const {
  return static_cast<double>(events.bytes + deliveries.bytes) / (1024.0 * 1024.0);
}

int64_t soak_intervals(double minutes, int64_t interval_s) {
  if (minutes <= 0 || interval_s <= 0)
    return 0;
  return static_cast<int64_t>(std::ceil(minutes * 60 / interval_s - 1e-9));
}

void fill_latencies(std::vector<soak_sample>& series,
                    const std::vector<commit>& commits,
                    const std::map<int64_t, double>& received, double start,
                    double interval_s) {
  if (series.empty())
    return;
  std::vector<std::vector<double>> ms(series.size());
  auto last = static_cast<int64_t>(series.size()) - 1;
  for (auto& c : commits) {
    // Producers that fell behind their pace commit on after the last
    // sample: those commits are no interval's.
    if (c.at - start > series.back().end_s)
      continue;
    auto k = std::clamp<int64_t>(static_cast<int64_t>((c.at - start) / interval_s),
                                 0, last);
    ++series[static_cast<size_t>(k)].committed;
    if (auto got = received.find(c.event_id); got != received.end())
      ms[static_cast<size_t>(k)].push_back((got->second - c.at) * 1000);
  }
  for (size_t k = 0; k < series.size(); ++k) {
    series[k].p50_ms = percentile(ms[k], 50);
    series[k].p99_ms = percentile(ms[k], 99);
    series[k].wal_per_event
      = series[k].committed > 0 ? static_cast<double>(series[k].wal_bytes)
                                    / static_cast<double>(series[k].committed)
                                : 0;
  }
}

int64_t reference_interval(double retention_minutes, int64_t interval_s) {
  if (retention_minutes <= 0 || interval_s <= 0)
    return 1;
  // Retention's ring (schema/022) takes a new span for the window, keeps
  // every partition whole for a turn (four spans, two windows), and the
  // rows written before the new span go with the last partition of the
  // next turn: steady from four windows in.
  return std::max<int64_t>(
    1, static_cast<int64_t>(std::ceil(4 * retention_minutes * 60 / interval_s - 1e-9)));
}

soak_verdict judge(const std::vector<soak_sample>& series, int64_t reference) {
  soak_verdict v;
  v.reference = reference;
  if (reference < 0 || static_cast<size_t>(reference) + 1 >= series.size())
    return v;
  auto& ref = series[static_cast<size_t>(reference)];
  auto& last = series.back();
  v.throughput = ref.per_minute > 0
                 && std::abs(last.per_minute / ref.per_minute - 1) <= 0.2;
  v.p99 = grew_little(ref.p99_ms, last.p99_ms, 1.0);
  v.size = grew_little(ref.mib(), last.mib(), 1.0);
  v.dead = grew_little(static_cast<double>(ref.dead()),
                       static_cast<double>(last.dead()), 1000);
  v.wal = ref.wal_per_event > 0
          && std::abs(last.wal_per_event / ref.wal_per_event - 1) <= 0.1;
  return v;
}

std::string soak_text(const soak_results& r) {
  std::ostringstream out;
  out << "\nsoak: " << fmt("%g", r.minutes) << " min at "
      << fmt("%.0f", r.rate) << " events/s (half of A), a sample every "
      << r.interval_s << " s, retention "
      << (r.retention_minutes > 0 ? fmt("%g min", r.retention_minutes)
                                  : std::string{"off"})
      << "\n";
  out << "    end s  completed/min  p50 ms  p99 ms  events MiB  deliv. MiB"
         "  live ev.  dead ev.  live del.  dead del.   events  deliveries  WAL B/ev\n";
  for (auto& s : r.series) {
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%9.0f  %13.0f  %6.1f  %6.1f  %10.1f  %10.1f  %8lld  %8lld  %9lld"
                  "  %9lld  %7lld  %10lld  %8.0f\n",
                  s.end_s, s.per_minute, s.p50_ms, s.p99_ms,
                  s.events.bytes / 1048576.0, s.deliveries.bytes / 1048576.0,
                  static_cast<long long>(s.events.live),
                  static_cast<long long>(s.events.dead),
                  static_cast<long long>(s.deliveries.live),
                  static_cast<long long>(s.deliveries.dead),
                  static_cast<long long>(s.events.rows),
                  static_cast<long long>(s.deliveries.rows), s.wal_per_event);
    out << line;
  }
  auto& v = r.verdict;
  out << "soak verdict (last interval vs interval " << v.reference + 1
      << (v.reference == 1 ? ", the second" : ", the first after the retention ring turned steady")
      << ", within 20%, WAL within 10%): throughput "
      << mark(v.throughput) << ", p99 " << mark(v.p99) << ", table size "
      << mark(v.size) << ", dead tuples " << mark(v.dead) << ", WAL per event "
      << mark(v.wal) << " => "
      << (v.flat() ? "FLAT" : "NOT FLAT") << "\n";
  return out.str();
}

} // namespace outbox::bench
