#include "tools/benchmark/pipeline_phase.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <unistd.h>
#include <vector>

#include "core/pg/pg_connection.hpp"
#include "tools/benchmark/cluster_processes.hpp"
#include "tools/benchmark/db_writes.hpp"
#include "tools/benchmark/idle_start_phase.hpp"
#include "tools/benchmark/machine_cpu.hpp"
#include "tools/benchmark/producers.hpp"
#include "tools/benchmark/scraper.hpp"
#include "tools/benchmark/stats.hpp"

namespace outbox::bench {

namespace {

// The pipeline's rates: from the first event's creation to the last
// routing, dispatch and completion.
caf::error pipeline_rates(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  auto read = s.progress.events_after(db, 0);
  if (!read)
    return failed("reading the pipeline's times", read.error());
  auto& events = *read;
  double t0 = events.empty() ? 0 : events.front().created, routed = 0,
         dispatched = 0, done = 0;
  for (auto& e : events) {
    t0 = std::min(t0, e.created);
    routed = std::max(routed, e.routed);
    dispatched = std::max(dispatched, e.last_dispatched);
    done = std::max(done, e.last_completed);
  }
  double deliveries = static_cast<double>(o.events * o.routes);
  rep.routed_per_s = o.events / (routed - t0);
  rep.dispatched_per_s = deliveries / (dispatched - t0);
  rep.completed_per_s = deliveries / (done - t0);
  rep.completed_events_per_s = o.events / (done - t0);
  return caf::none;
}

// Pipeline: producers, relay and workers at full speed.
caf::error pipeline(run_context& c, relay& r) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "pipeline: " << o.events << " events\n";
  auto writes_start = s.progress.sample_writes(db);
  if (!writes_start)
    return failed("reading the writes", writes_start.error());
  auto cpu_start = sample_cpu();
  auto wall_start = std::chrono::steady_clock::now();
  auto p = produce(o.database_url, s.names, "bench.event", s.payload,
                   static_cast<int>(o.producers), o.events, 0, o.ordered_keys);
  rep.producers_in_pipeline = p.commits.size() / p.seconds;
  if (auto err = await_completed(watch, s, o.events * o.routes, r))
    return err;
  auto used = cpu_between(cpu_start, sample_cpu());
  rep.pipeline_cpu_per_1000 = per_1000(used, o.events);
  rep.pipeline_busy = used["machine"]
                      / (seconds_since(wall_start)
                         * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)));
  // Each delivery completes at its first attempt: its completion moves it
  // to the completion log (a delete, or an update for an ordered one), and
  // its claim updates it unless the router handed it over already
  // dispatched; routing writes nothing to the events.
  auto deliveries = o.events * o.routes;
  auto claimed = s.progress.claimed_after(db, p.first_id() - 1);
  if (!claimed)
    return failed("counting the claimed deliveries", claimed.error());
  auto counted = [&](const write_counters& w) {
    auto d = writes_between(*writes_start, w);
    return d.events.inserted >= o.events && d.deliveries.inserted >= deliveries
           && d.deliveries.updated + d.deliveries.deleted >= deliveries + *claimed;
  };
  auto end = settled_writes(db, s.progress, counted);
  if (!end)
    return failed("reading the writes", end.error());
  rep.pipeline_writes = per_event(writes_between(*writes_start, end->counters),
                                  o.events, end->settled);
  rep.pipeline_writes.deliveries_handed
    = static_cast<double>(deliveries - *claimed) / static_cast<double>(o.events);
  return pipeline_rates(c);
}

// The latency percentiles of the paced events `l`, by the database's times
// of each (one clock: the servers run on this machine) and the workers'.
caf::error latency_figures(run_context& c, const production& l, workers& w) {
  std::map<int64_t, const event_progress*> by_id;
  auto events = c.s.progress.events_after(c.db, l.first_id() - 1);
  if (!events)
    return failed("reading completion times", events.error());
  for (auto& e : *events)
    by_id[e.event_id] = &e;
  std::vector<double> published, completed, to_routed, to_dispatched, to_received;
  std::lock_guard<std::mutex> guard{w.mtx};
  for (auto& commit : l.commits) {
    auto it = by_id.find(commit.event_id);
    if (it == by_id.end())
      continue;
    auto& e = *it->second;
    if (auto got = w.received.find(commit.event_id); got != w.received.end()) {
      published.push_back((got->second - commit.at) * 1000);
      to_received.push_back((got->second - e.last_dispatched) * 1000);
    }
    completed.push_back((e.last_completed - commit.at) * 1000);
    to_routed.push_back((e.routed - commit.at) * 1000);
    to_dispatched.push_back((e.last_dispatched - e.routed) * 1000);
  }
  auto& rep = c.rep;
  rep.published_split_ms = {percentile(to_routed, 50), percentile(to_dispatched, 50),
                            percentile(to_received, 50)};
  rep.published_ms = {percentile(published, 50), percentile(published, 95),
                      percentile(published, 99)};
  rep.completed_ms = {percentile(completed, 50), percentile(completed, 95),
                      percentile(completed, 99)};
  return caf::none;
}

// Latency at a fixed share of A, on the relay of the pipeline.
caf::error latency(run_context& c, relay& r, workers& w) {
  auto& [o, s, db, watch, rep] = c;
  double rate = o.rate_fraction * rep.baseline_a;
  std::cerr << "latency: " << o.latency_events << " events at " << rate << "/s\n";
  auto l = produce(o.database_url, s.names, "bench.event", s.payload,
                   static_cast<int>(o.producers), o.latency_events, rate,
                   o.ordered_keys);
  if (auto err = await_completed(watch, s, (o.events + o.latency_events) * o.routes, r))
    return err;
  rep.latency_rate = rate;
  return latency_figures(c, l, w);
}

} // namespace

caf::error pipeline_and_latency(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  relay r{o, s, "pipeline", o.scrape_interval_ms > 0};
  workers w{o, s};
  std::optional<scraper> scrapes;
  if (o.scrape_interval_ms > 0)
    scrapes.emplace(r.http_ports, std::chrono::milliseconds{o.scrape_interval_ms});
  if (auto err = pipeline(c, r))
    return r.keep_logs_on(std::move(err));
  if (auto err = latency(c, r, w))
    return r.keep_logs_on(std::move(err));
  if (scrapes) {
    auto f = scrapes->stop();
    rep.scraping = {f.scrapes, f.failures, f.mean_ms};
  }
  auto handled = (o.events + o.latency_events) * o.routes;
  rep.peak_rss_mib = r.peak_rss_mib();
  rep.cpu_per_1000 = r.cpu_seconds() / (handled / 1000.0);
  if (o.idle_seconds > 0)
    return r.keep_logs_on(idle_start(c, r, w));
  return caf::none;
}

} // namespace outbox::bench
