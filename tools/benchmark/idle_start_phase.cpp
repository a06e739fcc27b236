#include "tools/benchmark/idle_start_phase.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "core/base/errors.hpp"
#include "tools/benchmark/idle_start.hpp"
#include "tools/benchmark/producers.hpp"

namespace outbox::bench {

namespace {

// Nothing for `seconds`, but a relay that exits meanwhile ends the run at
// once rather than after the quiet spell.
caf::error quiet(relay& r, int64_t seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{seconds};
  while (std::chrono::steady_clock::now() < until) {
    if (auto err = r.check())
      return err;
    std::this_thread::sleep_until(
      std::min(until, std::chrono::steady_clock::now() + std::chrono::seconds{1}));
  }
  return r.check();
}

} // namespace

caf::error idle_start(run_context& c, relay& r, workers& w) {
  auto& [o, s, db, watch, rep] = c;
  idle_start_results res;
  res.quiet_seconds = o.idle_seconds;
  // Every delivery so far has completed (await_completed): the count the
  // phase waits for is known without reading the table during the quiet.
  auto done = (o.events + o.latency_events) * o.routes;
  for (int64_t k = 1; k <= o.idle_samples; ++k) {
    std::cerr << "I: idle start " << k << " of " << o.idle_samples << ": "
              << o.idle_seconds << " s quiet, then one event\n";
    if (auto err = quiet(r, o.idle_seconds))
      return err;
    auto p = produce(o.database_url, s.names, "bench.event", s.payload, 1, 1, 0,
                     o.ordered_keys);
    if (p.commits.size() != 1)
      return make_error(errc::database_error,
                        "I: the idle start's event could not be committed");
    done += o.routes;
    if (auto err = await_completed(watch, s, done, r))
      return err;
    auto& commit = p.commits.front();
    auto events = s.progress.events_after(db, commit.event_id - 1);
    if (!events)
      return failed("reading the idle start's times", events.error());
    auto e = std::find_if(events->begin(), events->end(), [&](auto& x) {
      return x.event_id == commit.event_id;
    });
    if (e == events->end())
      return make_error(errc::database_error,
                        "I: the idle start's event " + std::to_string(commit.event_id)
                          + " is gone from the events table");
    std::optional<idle_sample> x;
    {
      std::lock_guard<std::mutex> guard{w.mtx};
      x = idle_sample_of(commit, *e, w.received);
    }
    if (!x)
      return make_error(errc::publish_failed,
                        "I: the workers never received event "
                          + std::to_string(commit.event_id)
                          + ", though its deliveries completed");
    std::cerr << "I: commit->routed " << x->routed_ms << " ms, ->published "
              << x->published_ms << " ms, ->completed " << x->completed_ms
              << " ms\n";
    res.add(*x);
  }
  rep.idle_start = std::move(res);
  return caf::none;
}

} // namespace outbox::bench
