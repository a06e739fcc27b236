#include "tools/benchmark/soak_phase.hpp"

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "core/base/errors.hpp"
#include "tools/benchmark/cluster_processes.hpp"
#include "tools/benchmark/producers.hpp"
#include "tools/benchmark/soak.hpp"
#include "tools/benchmark/soak_chart.hpp"

namespace outbox::bench {

namespace {

// Samples both tables at the end of each of `n` intervals from `start`
// (`start_wall` by the system clock) while the soak's producers run.
caf::expected<std::vector<soak_sample>>
soak_samples(run_context& c, relay& r, double start_wall,
             std::chrono::steady_clock::time_point start, int64_t n) {
  auto interval = c.o.soak_interval_s;
  std::vector<soak_sample> series;
  auto wal_start = c.s.progress.sample_writes(c.db);
  if (!wal_start)
    return failed("sampling the soak's WAL", wal_start.error());
  int64_t wal = wal_start->wal_bytes;
  for (int64_t k = 1; k <= n; ++k) {
    std::this_thread::sleep_until(start + std::chrono::seconds{k * interval});
    if (auto err = r.check())
      return err;
    double to = start_wall + static_cast<double>(k * interval);
    auto t = c.s.progress.sample_tables(c.db, to - interval, to);
    if (!t)
      return failed("sampling the soak's tables", t.error());
    auto table = [](const table_stats& x) {
      return soak_table{x.bytes, x.live, x.dead, x.rows};
    };
    soak_sample x;
    x.end_s = static_cast<double>(k * interval);
    x.completed = t->completed;
    x.per_minute = static_cast<double>(t->completed) * 60.0 / interval;
    x.events = table(t->events);
    x.deliveries = table(t->deliveries);
    x.wal_bytes = t->wal_bytes - wal;
    wal = t->wal_bytes;
    std::cerr << "soak: " << x.end_s << " s: " << x.per_minute
              << " completed/min, tables " << x.mib() << " MiB, " << x.dead()
              << " dead tuples\n";
    series.push_back(x);
  }
  return series;
}

// Until nothing is open: the soak's last events are through. (Not by the
// count of completed deliveries, as await_completed: retention deletes
// them.)
caf::error await_idle(run_context& c, relay& r) {
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes{5};
  for (;;) {
    auto open = c.s.progress.anything_open(c.watch);
    if (!open)
      return failed("watching the relay", open.error());
    if (!*open)
      return caf::none;
    if (auto err = r.check())
      return err;
    if (std::chrono::steady_clock::now() > until)
      return make_error(errc::publish_failed,
                        "the soak's last deliveries did not complete within 5 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

} // namespace

caf::error soak(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  auto n = soak_intervals(o.soak, o.soak_interval_s);
  double rate = soak_rate_share * rep.baseline_a;
  std::cerr << "soak: " << o.soak << " min at " << rate << " events/s, a sample every "
            << o.soak_interval_s << " s\n";
  relay r{o, s, "soak", false, s.soak_config_path};
  workers w{o, s};
  auto total = static_cast<int64_t>(rate * static_cast<double>(n * o.soak_interval_s));
  std::atomic<bool> stop{false};
  production p;
  auto start = std::chrono::steady_clock::now();
  auto start_wall = now_seconds();
  std::thread producing{[&] {
    p = produce(o.database_url, s.names, "bench.event", s.payload,
                static_cast<int>(o.producers), total, rate, o.ordered_keys, &stop);
  }};
  auto series = soak_samples(c, r, start_wall, start, n);
  if (!series) {
    stop = true;
    producing.join();
    return r.keep_logs_on(series.error());
  }
  producing.join();
  if (auto err = await_idle(c, r))
    return r.keep_logs_on(std::move(err));
  {
    std::lock_guard<std::mutex> guard{w.mtx};
    fill_latencies(*series, p.commits, w.received, start_wall,
                   static_cast<double>(o.soak_interval_s));
  }
  soak_results res{o.soak, rate, o.soak_interval_s, o.soak_retention_minutes,
                   std::move(*series), {}};
  res.verdict = judge(res.series, reference_interval(o.soak_retention_minutes,
                                                     o.soak_interval_s));
  if (!write_soak_chart(res, o.soak_chart))
    return r.keep_logs_on(make_error(errc::serialize_failed,
                                     "the soak's chart could not be written to "
                                       + o.soak_chart));
  std::cerr << "soak: chart written to " << o.soak_chart << "\n";
  rep.soak = std::move(res);
  return caf::none;
}

} // namespace outbox::bench
