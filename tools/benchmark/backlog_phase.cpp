#include "tools/benchmark/backlog_phase.hpp"

#include <algorithm>
#include <iostream>
#include <vector>

#include "tools/benchmark/cluster_processes.hpp"
#include "tools/benchmark/stats.hpp"

namespace outbox::bench {

namespace {

// Deliveries/s of the events after `after_event_id` (the backlog's, one
// delivery each), by their completion times.
caf::expected<drain_figures> drain_rates(pg_connection& db, setup& s,
                                         int64_t after_event_id) {
  auto events = s.progress.events_after(db, after_event_id);
  if (!events)
    return failed("reading the drain", events.error());
  std::vector<double> times;
  for (auto& e : *events)
    times.push_back(e.last_completed);
  std::sort(times.begin(), times.end());
  drain_figures out;
  for (int k = 0; k < 10; ++k)
    out.tenths.push_back(rate_between(times, k / 10.0, (k + 1) / 10.0));
  out.overall = rate_between(times, 0.0, 1.0);
  return out;
}

// Inserts a backlog ready `ready_in` seconds from now; returns the last
// event id before it.
caf::expected<int64_t> add_backlog(run_context& c, int64_t ready_in) {
  auto& [o, s, db, watch, rep] = c;
  auto from = s.progress.last_event_id(db);
  if (!from)
    return failed("reading the last event", from.error());
  if (auto err = s.bulk.insert_backlog(db, s.backlog_route, s.payload, o.backlog,
                                       ready_in))
    return failed("inserting the backlog", err);
  // Inserting the backlog wrote about 200 MB of WAL at once; the
  // checkpoint that volume calls for would otherwise start during the
  // drain and charge the setup's cost to it (every page the drain touches
  // first after a checkpoint starts goes to the WAL whole).
  if (auto err = s.bulk.settle(db))
    return failed("settling the backlog", err);
  return from;
}

} // namespace

caf::error backlog_drains(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "backlog: inserting " << o.backlog << " pending deliveries\n";
  auto cold_from = add_backlog(c, 0);
  if (!cold_from)
    return cold_from.error();
  auto before = completed(db, s);
  if (!before)
    return before.error();
  // The worker first: started after the relay (which takes a second to
  // come up), it found thousands of jobs the relay had sent meanwhile,
  // and the first tenth of the drain counted their completions without
  // the work of sending them (it ran 10–30% faster than the rest).
  workers w{o, s};
  relay r{o, s, "backlog"};
  std::cerr << "backlog: draining\n";
  if (auto err = await_completed(watch, s, *before + o.backlog, r))
    return r.keep_logs_on(std::move(err));
  auto drain = drain_rates(db, s, *cold_from);
  if (!drain)
    return r.keep_logs_on(drain.error());
  rep.drain = std::move(*drain);
  // The same again for the relay and worker that are running now, as
  // when the broker comes back after an outage: the backlog is made
  // whole first and becomes ready at one moment.
  before = completed(db, s);
  if (!before)
    return r.keep_logs_on(before.error());
  auto ready_in = 5 + o.backlog / 20000; // seconds; inserting takes less
  std::cerr << "backlog: inserting " << o.backlog << " more, ready in " << ready_in
            << " s, for the running relay\n";
  auto warm_from = add_backlog(c, ready_in);
  if (!warm_from)
    return r.keep_logs_on(warm_from.error());
  if (auto err = await_completed(watch, s, *before + o.backlog, r))
    return r.keep_logs_on(std::move(err));
  auto warm_drain = drain_rates(db, s, *warm_from);
  if (!warm_drain)
    return r.keep_logs_on(warm_drain.error());
  rep.warm_drain = std::move(*warm_drain);
  rep.backlog_rss_mib = r.peak_rss_mib();
  return caf::none;
}

} // namespace outbox::bench
