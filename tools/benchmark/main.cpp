// outbox_bench: how close the outbox runs to this machine's PostgreSQL and
// RabbitMQ, measured in one run (docs/performance.md). Phases:
//   A  producers only (the producer API, no relay): events/s
//   C  business commits (no relay): a plain INSERT into a lean table and
//      the publish call, each its own transaction, at 4 and 16 clients:
//      commits/s of each and publish ÷ plain
//   B  RabbitMQ only (persistent, confirms, pipelined): messages/s
//   pipeline  producers + outboxd + workers: routed/dispatched/completed per s
//   latency   at a fixed share of A: commit→published, commit→completed
//   I  idle start, on the latency phase's relay: one event after each of
//      K quiet spells (60 s by default): commit→published, →completed
//   resources of outboxd: peak RSS, CPU seconds per 1,000 deliveries
//   backlog   N pending deliveries drained: first vs last 10%
//   soak      (--soak MINUTES) half of A for minutes, sampled every
//             interval: throughput, p99, the tables' size and dead tuples
// Tables and queues are its own (prefix bench_<pid>_) and dropped after.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/config/config.hpp"
#include "core/pg/bulk_repository.hpp"
#include "core/pg/db_stores.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/pg/progress_repository.hpp"
#include "tools/benchmark/contention.hpp"
#include "tools/benchmark/idle_start.hpp"
#include "tools/benchmark/machine_cpu.hpp"
#include "tools/benchmark/outbox_config.hpp"
#include "tools/benchmark/producers.hpp"
#include "tools/benchmark/report.hpp"
#include "tools/benchmark/scraper.hpp"
#include "tools/benchmark/soak.hpp"
#include "tools/benchmark/soak_chart.hpp"
#include "tools/benchmark/stats.hpp"
#include "tools/child_process.hpp"
#include "tools/cli_config.hpp"
#include "tools/loopback_port.hpp"
#include "worker/worker.hpp"

using namespace outbox;
using namespace outbox::bench;

namespace {

struct bench_config : cli_config {
  std::string database_url, amqp_url, outboxd, json_file = "bench-results.json";
  /// SQL run once after the migrations, the tables' names filled in: a
  /// table setting or an index to weigh against the schema as it is.
  std::string schema_sql;
  std::string cluster = "one";
  /// Mutual TLS between the relay's nodes: a folder with ca.pem and a
  /// certificate client.pem/client.key it signed (tools/bench --tls passes
  /// the test servers' folder, and an amqps:// URL for the broker).
  std::string tls_dir;
  // One worker per queue, as the issue's pipeline has "a worker that
  // completes each job at once". With four, each took a quarter of every
  // batch and sent its results back a quarter at a time: four result
  // batches of about 25 where one of about 100 would do, and the drain
  // ran about 8% slower (docs/performance.md).
  int64_t events = 20000, producers = 4, payload_bytes = 300, queues = 1,
          routes = 1, batch_size = 100, dispatchers = 1, workers = 1,
          backlog = 200000, latency_events = 2000, router_linger_ms = 5,
          router_linger_min_events = 6;
  /// > 0: the events take this many keys and the routes are ordered by
  /// key (the drain phase's backlog is written unordered all the same).
  int64_t ordered_keys = 0;
  /// > 0: the nodes serve --http and a thread scrapes each one's /metrics
  /// this often during the pipeline and latency phases.
  int64_t scrape_interval_ms = 0;
  double rate_fraction = 0.2;
  bool polling_only = false;
  /// The soak: minutes (0: none; fractions for short runs), the seconds
  /// between samples, and the retention window its relay's config gets
  /// (retentionHours for every final status; 0: none in the config).
  double soak = 0, soak_retention_minutes = 2;
  int64_t soak_interval_s = 60;
  bool soak_only = false; ///< A and the soak, no other phase
  std::string soak_chart = "bench-soak.svg";
  /// Phase C: the client counts, and the seconds of each kind at each (0:
  /// no phase C). On by default: it takes 2 × 2 × 10 s, and it is the
  /// figure that judges what the publish path holds through commit.
  std::string contention_clients = "4,16";
  int64_t contention_seconds = 10;
  bool contention_only = false; ///< C alone, no other phase
  /// Phase I: the quiet seconds before each of its events (0: no phase
  /// I), and how many. On by default: a relay that waits for its first
  /// event after a quiet minute is the common case the latency phase's
  /// steady stream never shows (3 × 60 s).
  int64_t idle_seconds = 60, idle_samples = 3;
  bench_config() {
    opt_group{options(), "global"}
      .add(database_url, "database-url", "libpq URL of the database")
      .add(amqp_url, "amqp-url", "AMQP URL of the broker")
      .add(outboxd, "outboxd", "path of outboxd (default: next to this binary)")
      .add(json_file, "json", "where to write the results as JSON")
      .add(events, "events", "events of the throughput phases")
      .add(producers, "producers", "producer connections")
      .add(payload_bytes, "payload-bytes", "payload size in bytes")
      .add(queues, "queues", "queues the routes spread over")
      .add(routes, "routes", "routes (deliveries) per event")
      .add(batch_size, "batch-size", "batchSize of the outbox")
      .add(dispatchers, "dispatchers", "dispatcher processes per queue")
      .add(workers, "workers", "worker threads per queue")
      .add(cluster, "cluster", "one (all roles in one process) or three")
      .add(tls_dir, "tls-dir", "TLS between the nodes with DIR/ca.pem, "
                                "DIR/client.pem and DIR/client.key")
      .add(backlog, "backlog", "pending deliveries of the drain phase")
      .add(latency_events, "latency-events", "events of the latency phase")
      .add(rate_fraction, "rate-fraction", "latency rate as a share of A")
      .add(polling_only, "polling-only", "deliverImmediately: false")
      .add(router_linger_ms, "router-linger-ms", "routerLingerMs (0: off)")
      .add(router_linger_min_events, "router-linger-min-events",
           "routerLingerMinEvents")
      .add(ordered_keys, "ordered-keys",
           "keys of the events, routes ordered by key (0: no keys, unordered)")
      .add(scrape_interval_ms, "scrape-interval-ms",
           "scrape every node's /metrics this often (0: off)")
      .add(soak, "soak", "minutes of the soak at half of A (0: off)")
      .add(soak_interval_s, "soak-interval-s", "seconds between the soak's samples")
      .add(soak_retention_minutes, "soak-retention-minutes",
           "retentionHours of the soak's relay, in minutes (0: none)")
      .add(soak_only, "soak-only", "run A and the soak only")
      .add(soak_chart, "soak-chart", "where to write the soak's SVG chart")
      .add(contention_clients, "contention-clients",
           "client counts of phase C, e.g. 4,16 (each 1 to 64)")
      .add(contention_seconds, "contention-seconds",
           "seconds of each kind at each client count in phase C (0: off)")
      .add(contention_only, "contention-only", "run phase C only")
      .add(idle_seconds, "idle-seconds",
           "quiet seconds before each event of phase I (0: off, at most 3600)")
      .add(idle_samples, "idle-samples", "events of phase I (1 to 20)")
      .add(schema_sql, "schema-sql",
           "SQL file run after the migrations ({{events}}, {{deliveries}})");
  }
};

// A failed step ends the run by this exception, not by exit(): unwinding
// stops the relay's processes and the workers, and `leftovers` drops what the
// run made.
struct bench_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void die(const std::string& what) {
  throw bench_failure{what};
}

std::string text_of(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// The soak's knobs: enough intervals for its verdict (the last against the
// second, or the first after the retention window has filled), and a retention window that keeps an interval's
// completed rows until its sample counts them.
std::string soak_knob_problem(const bench_config& o) {
  if (o.soak_interval_s < 1)
    return "--soak-interval-s = " + std::to_string(o.soak_interval_s)
           + ": must be at least 1";
  // The first interval, the verdict's reference and one after it.
  auto needed = std::max<int64_t>(
    3, reference_interval(o.soak_retention_minutes, o.soak_interval_s) + 2);
  if (o.soak < 0
      || (o.soak > 0 && soak_intervals(o.soak, o.soak_interval_s) < needed))
    return "--soak = " + text_of(o.soak) + ": must be 0 or last at least "
           + std::to_string(needed)
           + " intervals of --soak-interval-s (the verdict's reference"
             " interval and one after it)";
  if (o.soak_only && o.soak <= 0)
    return "--soak-only: needs --soak MINUTES";
  if (o.soak_retention_minutes < 0
      || (o.soak_retention_minutes > 0
          && o.soak_retention_minutes * 60 < 2.0 * o.soak_interval_s))
    return "--soak-retention-minutes = " + text_of(o.soak_retention_minutes)
           + ": must be 0 or at least two intervals of --soak-interval-s";
  return {};
}

// Phase C's knobs: client counts it can open connections for, and
// --contention-only with a phase to run and no other.
std::string contention_knob_problem(const bench_config& o) {
  if (!contention_clients(o.contention_clients))
    return "--contention-clients = \"" + o.contention_clients
           + "\": must be client counts from 1 to "
           + std::to_string(max_contention_clients) + " separated by commas";
  if (o.contention_seconds < 0)
    return "--contention-seconds = " + std::to_string(o.contention_seconds)
           + ": must be at least 0";
  if (o.contention_only && o.contention_seconds == 0)
    return "--contention-only: needs --contention-seconds of at least 1";
  if (o.contention_only && (o.soak > 0 || o.soak_only))
    return "--contention-only: runs no other phase (not with --soak)";
  return {};
}

// Whether phase C runs: on unless its seconds are 0, or the run is A and
// the soak alone.
bool runs_contention(const bench_config& o) {
  return o.contention_seconds > 0 && !o.soak_only;
}

// The first knob out of its range, with the range; empty when all are fine.
// (The knobs that go into the outbox's config are checked by its own rules
// as well, in run().)
std::string knob_problem(const bench_config& o) {
  auto at_least = [](const char* name, int64_t v, int64_t min) -> std::string {
    if (v >= min)
      return {};
    return std::string{"--"} + name + " = " + std::to_string(v) + ": must be at least "
           + std::to_string(min);
  };
  for (auto problem :
       {at_least("events", o.events, 100), at_least("producers", o.producers, 1),
        at_least("payload-bytes", o.payload_bytes, 16),
        at_least("queues", o.queues, 1), at_least("routes", o.routes, 1),
        at_least("dispatchers", o.dispatchers, 1),
        at_least("workers", o.workers, 1), at_least("backlog", o.backlog, 0),
        at_least("latency-events", o.latency_events, 10),
        at_least("scrape-interval-ms", o.scrape_interval_ms, 0),
        at_least("ordered-keys", o.ordered_keys, 0)})
    if (!problem.empty())
      return problem;
  if (!(o.rate_fraction > 0 && o.rate_fraction <= 1))
    return "--rate-fraction = " + text_of(o.rate_fraction)
           + ": must be above 0 and at most 1";
  if (o.cluster != "one" && o.cluster != "three")
    return "--cluster = \"" + o.cluster + "\": must be one or three";
  if (auto problem = contention_knob_problem(o); !problem.empty())
    return problem;
  if (auto problem = idle_knob_problem(o.idle_seconds, o.idle_samples);
      !problem.empty())
    return problem;
  return soak_knob_problem(o);
}

// Where the results (or the chart) go must be a file it can write, known
// before a run of minutes starts.
std::string output_path_problem(const std::string& knob, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p{path};
  auto dir = p.has_parent_path() ? p.parent_path() : fs::path{"."};
  bool writable = fs::exists(p, ec) ? !fs::is_directory(p, ec)
                                        && access(path.c_str(), W_OK) == 0
                                    : access(dir.c_str(), W_OK) == 0;
  if (path.empty() || !writable)
    return "--" + knob + " = \"" + path + "\": cannot write there";
  return {};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
    .count();
}

template <class T>
T must(caf::expected<T> x, const std::string& what) {
  if (!x)
    die(what + ": " + render(x.error()));
  return std::move(*x);
}

struct setup {
  std::string prefix = "bench_" + std::to_string(getpid()) + "_";
  schema_names names = schema_names{}.with_prefix(prefix);
  progress_repository progress{names};
  bulk_repository bulk{names};
  route backlog_route; ///< the first route: its job on the first queue
  std::vector<std::string> queues;
  std::string config_path = "/tmp/" + prefix + "config.json";
  /// The soak's relay's: the same, with the soak's retention window.
  std::string soak_config_path = "/tmp/" + prefix + "soak-config.json";
  std::string payload;
};

std::string make_payload(int64_t bytes) {
  std::string filler(static_cast<size_t>(std::max<int64_t>(bytes - 12, 1)), 'x');
  return "{\"data\":\"" + filler + "\"}";
}

// A relay's config file at `path`, with `retention_minutes` of built-in
// retention (0: none); false (and a message) when it cannot be made.
bool write_config(const bench_config& o, const setup& s, const std::string& path,
                  double retention_minutes = 0) {
  outbox_knobs k{o.database_url, o.amqp_url, s.names, o.batch_size,
                 o.router_linger_ms, o.router_linger_min_events,
                 !o.polling_only, o.routes, s.queues, o.ordered_keys,
                 retention_minutes};
  auto text = outbox_config_json(k);
  std::ofstream out{path};
  if (text)
    out << *text << "\n";
  out.close();
  if (text && out)
    return true;
  std::cerr << "outbox_bench: cannot write the relay's config "
            << path << ": "
            << (text ? std::string{"a write failed"} : render(text.error()))
            << "\n";
  return false;
}

// The relay under test: one process with every role, or three nodes; plus
// extra dispatcher processes when asked.
struct relay {
  std::vector<std::unique_ptr<child_process>> procs;
  std::vector<std::string> logs;
  std::vector<uint16_t> http_ports; ///< each node's --http, when scraped
  int unwinding = std::uncaught_exceptions();

  // Stops the nodes. Their logs go with them, unless the run failed: its
  // message points to them.
  ~relay() {
    procs.clear();
    if (std::uncaught_exceptions() == unwinding)
      for (auto& l : logs)
        std::remove(l.c_str());
  }

  relay(const bench_config& o, const setup& s, const std::string& tag,
        bool http = false, const std::string& config = {}) {
    auto port = std::to_string(free_loopback_port());
    auto log = "/tmp/" + s.prefix + tag;
    auto start = [&](std::vector<std::string> args, const std::string& name) {
      args.insert(args.begin(), {"--config", config.empty() ? s.config_path : config,
                                 "--log-level", "warn"});
      if (http) {
        http_ports.push_back(free_loopback_port());
        args.insert(args.end(),
                    {"--http", "127.0.0.1:" + std::to_string(http_ports.back())});
      }
      if (!o.tls_dir.empty())
        args.insert(args.end(), {"--tls-ca", o.tls_dir + "/ca.pem", "--tls-cert",
                                 o.tls_dir + "/client.pem", "--tls-key",
                                 o.tls_dir + "/client.key"});
      logs.push_back(log + name + ".log");
      procs.push_back(std::make_unique<child_process>(o.outboxd, args, logs.back()));
    };
    if (o.cluster == "three") {
      start({"--roles", "status", "--listen", port}, "status");
      std::this_thread::sleep_for(std::chrono::milliseconds{300});
      start({"--roles", "router,sweeper", "--join", port}, "router");
      start({"--roles", "dispatcher,results", "--join", port}, "dispatch");
    } else {
      start({"--listen", port}, "all");
    }
    for (int64_t d = 1; d < o.dispatchers; ++d)
      start({"--roles", "dispatcher", "--join", port}, "dispatch" + std::to_string(d));
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }

  /// Ends the run when a node of the relay is gone: nothing would complete.
  void check() {
    for (size_t i = 0; i < procs.size(); ++i)
      if (procs[i]->exited())
        die("outboxd exited during the run (its log: " + logs[i] + ")");
  }

  double peak_rss_mib() const {
    double m = 0;
    for (auto& p : procs)
      m = std::max(m, p->peak_rss_mib());
    return m;
  }
  double cpu_seconds() const {
    double c = 0;
    for (auto& p : procs)
      c += p->cpu_seconds();
    return c;
  }
};

// Workers that complete every job at once, recording when each event's job
// first arrived (≈ when it was published).
struct workers {
  std::mutex mtx;
  std::map<int64_t, double> received;
  std::vector<std::unique_ptr<outbox::worker>> ws;
  std::vector<std::thread> threads;

  workers(const bench_config& o, const setup& s) {
    for (auto& q : s.queues)
      for (int64_t i = 0; i < o.workers; ++i) {
        auto w = std::make_unique<outbox::worker>(worker_options{o.amqp_url, q, 200});
        for (int64_t r = 0; r < o.routes; ++r)
          w->handle(bench_job(r), [this](const job_context& job) {
            auto t = now_seconds();
            std::lock_guard<std::mutex> guard{mtx};
            received.emplace(job.event_id, t);
          });
        threads.emplace_back([p = w.get()] { p->run(); });
        ws.push_back(std::move(w));
      }
  }
  ~workers() {
    for (auto& w : ws)
      w->stop();
    for (auto& t : threads)
      t.join();
  }
};

int64_t completed(pg_connection& db, setup& s) {
  return must(s.progress.count_status(db, outbox::delivery_status::completed), "counting deliveries");
}

// Waits until n deliveries have completed. While the relay works it asks
// only whether anything is still open (an unrouted event, a pending or a
// dispatched delivery), by the partial indexes the relay itself uses:
// counting the completed rows every 100 ms read the whole deliveries table
// each time, a cost that grew with the table and slowed the drain it
// measured. Once nothing is open, the count must be n, or the run failed.
void await_completed(pg_connection& watch, setup& s, int64_t n,
                     relay& r) {
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes{20};
  for (;;) {
    r.check();
    if (!must(s.progress.anything_open(watch), "watching the relay")) {
      auto done = completed(watch, s);
      if (done >= n)
        return;
      die(std::to_string(n - done) + " deliveries ended without completing"
          " (failed or expired)");
    }
    if (std::chrono::steady_clock::now() > until)
      die("deliveries did not complete within 20 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

// CPU seconds per 1,000 events, per group.
cpu_seconds per_1000(const cpu_seconds& used, int64_t events) {
  cpu_seconds out;
  for (auto& [group, seconds] : used)
    out[group] = seconds * 1000.0 / static_cast<double>(events);
  return out;
}

// Deliveries/s of the events after `after_event_id` (the backlog's, one
// delivery each), by their completion times.
drain_figures drain_rates(pg_connection& db, setup& s, int64_t after_event_id) {
  auto events = must(s.progress.events_after(db, after_event_id),
                     "reading the drain");
  std::vector<double> times;
  for (auto& e : events)
    times.push_back(e.last_completed);
  std::sort(times.begin(), times.end());
  drain_figures out;
  for (int k = 0; k < 10; ++k)
    out.tenths.push_back(rate_between(times, k / 10.0, (k + 1) / 10.0));
  out.overall = rate_between(times, 0.0, 1.0);
  return out;
}

// Drops the run's tables, queues and config file however the run ends.
struct leftovers {
  const bench_config& o;
  const setup& s;
  ~leftovers() {
    if (auto db = pg_connection::connect(o.database_url))
      drop_schema(*db, s.names);
    if (auto amqp = amqp_client::connect(o.amqp_url, "bench cleanup")) {
      (*amqp)->delete_queue(s.prefix + "baseline");
      for (auto& q : s.queues) {
        (*amqp)->delete_queue(q);
        (*amqp)->delete_queue(results_queue(q));
      }
    }
    std::remove(s.config_path.c_str());
    std::remove(s.soak_config_path.c_str());
  }
};

// What every phase works with.
struct run_context {
  const bench_config& o;
  setup& s;
  pg_connection& db;    ///< bulk writes and the figures' reads
  pg_connection& watch; ///< the end of each phase, by index only
  report& rep;
};

// The run's queues, payload and relay config; an exit code when the knobs
// do not make a config the outbox takes (before any table is made).
// Writes a relay's config at `path` and reads it back: the knobs that end
// up in it (batch size, linger, the soak's retention) are checked by the
// config's own rules. None (and a message) when it fails.
std::optional<config> checked_config(const bench_config& o, const setup& s,
                                     const std::string& path,
                                     double retention_minutes = 0) {
  if (!write_config(o, s, path, retention_minutes))
    return std::nullopt;
  auto cfg = load_config(path);
  if (cfg)
    return std::move(*cfg);
  std::cerr << "outbox_bench: a knob is out of range for the outbox config: "
            << render(cfg.error()) << "\n";
  if (retention_minutes > 0) // an outbox without built-in retention yet
    std::cerr << "outbox_bench: (--soak-retention-minutes 0 runs the soak"
                 " without retentionHours)\n";
  return std::nullopt;
}

// The run's queues, payload and relay configs; an exit code when the knobs
// do not make a config the outbox takes (before any table is made).
std::optional<int> prepare(const bench_config& o, setup& s) {
  for (int64_t q = 0; q < o.queues; ++q)
    s.queues.push_back(s.prefix + "q" + std::to_string(q));
  s.payload = make_payload(o.payload_bytes);
  auto cfg = checked_config(o, s, s.config_path);
  bool soak_ok = cfg
                 && (o.soak <= 0
                     || checked_config(o, s, s.soak_config_path,
                                   o.soak_retention_minutes));
  if (!cfg || !soak_ok) {
    std::remove(s.config_path.c_str());
    std::remove(s.soak_config_path.c_str());
    return 2;
  }
  s.backlog_route = cfg->routes_for("bench.event").front();
  return std::nullopt;
}

report knobs_of(const bench_config& o) {
  report rep;
  rep.knobs = {o.events,      o.producers,   o.payload_bytes, o.queues,
               o.routes,      o.batch_size,  o.dispatchers,   o.workers,
               o.backlog,     o.latency_events, o.router_linger_ms,
               o.router_linger_min_events, o.scrape_interval_ms,
               o.ordered_keys,
               runs_contention(o) ? o.contention_clients : "",
               runs_contention(o) ? o.contention_seconds : 0,
               o.cluster + (o.polling_only ? " polling-only" : "")
                 + (o.tls_dir.empty() ? "" : " tls"),
               o.schema_sql};
  return rep;
}

// A: producers only (events of a type without routes: nobody routes them).
void producers_only(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "A: producers only\n";
  auto writes_start = must(s.progress.sample_writes(db), "reading the writes");
  auto cpu_start = sample_cpu();
  auto a = produce(o.database_url, s.names, "bench.unrouted", s.payload,
                   static_cast<int>(o.producers), o.events, 0);
  rep.baseline_a = a.commits.size() / a.seconds;
  rep.a_cpu_per_1000 = per_1000(cpu_between(cpu_start, sample_cpu()), o.events);
  auto inserted = [&](const write_counters& w) {
    return w.events.inserted - writes_start.events.inserted >= o.events;
  };
  auto a_end = must(settled_writes(db, s.progress, inserted), "reading the writes");
  rep.a_writes = per_event(writes_between(writes_start, a_end.counters), o.events,
                           a_end.settled);
  // Left unrouted, they would keep every later phase open.
  if (auto err = s.bulk.delete_unrouted(db, "bench.unrouted"))
    die("cleaning up A: " + render(err));
}

// C: business commits, plain INSERT against publish (contention.hpp). Like
// A, no relay runs and the events are of a type without routes; they are
// deleted after. It runs on the outbox tables as A leaves them, nearly
// empty as the lean table is, and leaves them so for the pipeline: the
// statistics have counted its inserts (the pipeline's writes per event
// would otherwise take in C's late reports), the deleted rows are vacuumed
// and its WAL checkpointed (an autovacuum or a checkpoint falling into the
// pipeline instead).
void business_commits(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "C: business commits, plain INSERT, publish and the C++ API at "
            << o.contention_clients << " clients, " << o.contention_seconds
            << " s of each\n";
  auto writes_start = must(s.progress.sample_writes(db), "reading the writes");
  contention_run run{o.database_url,      s.names, s.prefix + "plain",
                     "bench.unrouted",    s.payload,
                     *contention_clients(o.contention_clients),
                     o.contention_seconds};
  auto res = must(measure_contention(db, run), "C: business commits");
  for (auto& x : res.figures)
    std::cerr << "C: " << x.clients << " clients: " << x.plain_per_s
              << " plain/s, " << x.publish_per_s << " publish/s, ratio "
              << x.ratio << "; " << x.api_per_s << " api/s, ratio "
              << x.api_ratio << "\n";
  rep.contention = std::move(res.figures);
  auto counted = [&](const write_counters& w) {
    return w.events.inserted - writes_start.events.inserted >= res.published;
  };
  must(settled_writes(db, s.progress, counted), "reading the writes");
  if (auto err = s.bulk.delete_unrouted(db, "bench.unrouted"))
    die("cleaning up C: " + render(err));
  if (auto err = db.exec_script("vacuum", "VACUUM " + s.names.events))
    die("cleaning up C: " + render(err));
  if (auto err = s.bulk.settle(db))
    die("cleaning up C: " + render(err));
}

// B: RabbitMQ only, the job envelope's size, pipelined confirms.
void broker_only(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "B: RabbitMQ only\n";
  auto amqp = must(amqp_client::connect(o.amqp_url, "bench baseline"), "broker");
  auto q = s.prefix + "baseline";
  if (auto err = amqp->declare_queue(q))
    die("declaring the baseline queue: " + render(err));
  job_to_send j;
  j.delivery_id = 1;
  j.event_id = 1;
  j.job = bench_job(0);
  j.queue = q;
  j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  j.event_type = "bench.event";
  j.payload = s.payload;
  j.content_type = "application/json";
  j.expiration_ms = 300000; // as the relay's, at the default timeout
  std::vector<outgoing_message> batch(500, job_message(j));
  auto start = std::chrono::steady_clock::now();
  int64_t sent = 0;
  while (sent < o.events) {
    for (auto x : amqp->publish_batch(batch, std::chrono::seconds{30}))
      sent += x == publish_status::confirmed;
    if (!amqp->is_open())
      die("the broker closed the baseline connection");
  }
  rep.baseline_b = sent / seconds_since(start);
  rep.envelope_bytes = static_cast<int64_t>(batch[0].body.size());
  amqp->delete_queue(q);
}

// The pipeline's rates: from the first event's creation to the last
// routing, dispatch and completion.
void pipeline_rates(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  auto events = must(s.progress.events_after(db, 0), "reading the pipeline's times");
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
}

// Pipeline: producers, relay and workers at full speed.
void pipeline(run_context& c, relay& r) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "pipeline: " << o.events << " events\n";
  auto writes_start = must(s.progress.sample_writes(db), "reading the writes");
  auto cpu_start = sample_cpu();
  auto wall_start = std::chrono::steady_clock::now();
  auto p = produce(o.database_url, s.names, "bench.event", s.payload,
                   static_cast<int>(o.producers), o.events, 0, o.ordered_keys);
  rep.producers_in_pipeline = p.commits.size() / p.seconds;
  await_completed(watch, s, o.events * o.routes, r);
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
  auto claimed = must(s.progress.claimed_after(db, p.first_id() - 1),
                      "counting the claimed deliveries");
  auto counted = [&](const write_counters& w) {
    auto d = writes_between(writes_start, w);
    return d.events.inserted >= o.events && d.deliveries.inserted >= deliveries
           && d.deliveries.updated + d.deliveries.deleted >= deliveries + claimed;
  };
  auto end = must(settled_writes(db, s.progress, counted), "reading the writes");
  rep.pipeline_writes = per_event(writes_between(writes_start, end.counters),
                                  o.events, end.settled);
  rep.pipeline_writes.deliveries_handed
    = static_cast<double>(deliveries - claimed) / static_cast<double>(o.events);
  pipeline_rates(c);
}

// The latency percentiles of the paced events `l`, by the database's times
// of each (one clock: the servers run on this machine) and the workers'.
void latency_figures(run_context& c, const production& l, workers& w) {
  std::map<int64_t, const event_progress*> by_id;
  auto events = must(c.s.progress.events_after(c.db, l.first_id() - 1),
                     "reading completion times");
  for (auto& e : events)
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
}

// Latency at a fixed share of A, on the relay of the pipeline.
void latency(run_context& c, relay& r, workers& w) {
  auto& [o, s, db, watch, rep] = c;
  double rate = o.rate_fraction * rep.baseline_a;
  std::cerr << "latency: " << o.latency_events << " events at " << rate << "/s\n";
  auto l = produce(o.database_url, s.names, "bench.event", s.payload,
                   static_cast<int>(o.producers), o.latency_events, rate,
                   o.ordered_keys);
  await_completed(watch, s, (o.events + o.latency_events) * o.routes, r);
  rep.latency_rate = rate;
  latency_figures(c, l, w);
}

// Nothing for `seconds`, but a relay that exits meanwhile ends the run at
// once rather than after the quiet spell.
void quiet(relay& r, int64_t seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{seconds};
  while (std::chrono::steady_clock::now() < until) {
    r.check();
    std::this_thread::sleep_until(
      std::min(until, std::chrono::steady_clock::now() + std::chrono::seconds{1}));
  }
  r.check();
}

// I: idle start (idle_start.hpp), on the relay and workers of the latency
// phase once their figures are taken (the quiet minutes would count in
// its CPU per delivery). Before each sample nothing is written for
// --idle-seconds; then one event, one transaction through the producer
// API as the latency phase writes them, timed as it times them.
void idle_start(run_context& c, relay& r, workers& w) {
  auto& [o, s, db, watch, rep] = c;
  idle_start_results res;
  res.quiet_seconds = o.idle_seconds;
  // Every delivery so far has completed (await_completed): the count the
  // phase waits for is known without reading the table during the quiet.
  auto done = (o.events + o.latency_events) * o.routes;
  for (int64_t k = 1; k <= o.idle_samples; ++k) {
    std::cerr << "I: idle start " << k << " of " << o.idle_samples << ": "
              << o.idle_seconds << " s quiet, then one event\n";
    quiet(r, o.idle_seconds);
    auto p = produce(o.database_url, s.names, "bench.event", s.payload, 1, 1, 0,
                     o.ordered_keys);
    if (p.commits.size() != 1)
      die("I: the idle start's event could not be committed");
    done += o.routes;
    await_completed(watch, s, done, r);
    auto& commit = p.commits.front();
    auto events = must(s.progress.events_after(db, commit.event_id - 1),
                       "reading the idle start's times");
    auto e = std::find_if(events.begin(), events.end(), [&](auto& x) {
      return x.event_id == commit.event_id;
    });
    if (e == events.end())
      die("I: the idle start's event " + std::to_string(commit.event_id)
          + " is gone from the events table");
    std::optional<idle_sample> x;
    {
      std::lock_guard<std::mutex> guard{w.mtx};
      x = idle_sample_of(commit, *e, w.received);
    }
    if (!x)
      die("I: the workers never received event " + std::to_string(commit.event_id)
          + ", though its deliveries completed");
    std::cerr << "I: commit->routed " << x->routed_ms << " ms, ->published "
              << x->published_ms << " ms, ->completed " << x->completed_ms
              << " ms\n";
    res.add(*x);
  }
  rep.idle_start = std::move(res);
}

// Pipeline and latency share one relay, whose resources they report; with
// --scrape-interval-ms, scraped all along as Prometheus would. Phase I
// follows on the same relay once the scraper has stopped and the relay's
// resources are read: its quiet minutes count in neither.
void pipeline_and_latency(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  relay r{o, s, "pipeline", o.scrape_interval_ms > 0};
  workers w{o, s};
  std::optional<scraper> scrapes;
  if (o.scrape_interval_ms > 0)
    scrapes.emplace(r.http_ports, std::chrono::milliseconds{o.scrape_interval_ms});
  pipeline(c, r);
  latency(c, r, w);
  if (scrapes) {
    auto f = scrapes->stop();
    rep.scraping = {f.scrapes, f.failures, f.mean_ms};
  }
  auto handled = (o.events + o.latency_events) * o.routes;
  rep.peak_rss_mib = r.peak_rss_mib();
  rep.cpu_per_1000 = r.cpu_seconds() / (handled / 1000.0);
  if (o.idle_seconds > 0)
    idle_start(c, r, w);
}

// Inserts a backlog ready `ready_in` seconds from now; returns the last
// event id before it.
int64_t add_backlog(run_context& c, int64_t ready_in) {
  auto& [o, s, db, watch, rep] = c;
  auto from = must(s.progress.last_event_id(db), "reading the last event");
  if (auto err = s.bulk.insert_backlog(db, s.backlog_route, s.payload, o.backlog,
                                       ready_in))
    die("inserting the backlog: " + render(err));
  // Inserting the backlog wrote about 200 MB of WAL at once; the
  // checkpoint that volume calls for would otherwise start during the
  // drain and charge the setup's cost to it (every page the drain touches
  // first after a checkpoint starts goes to the WAL whole).
  if (auto err = s.bulk.settle(db))
    die("settling the backlog: " + render(err));
  return from;
}

// Backlog: a relay started on it drains it, then the same relay drains a
// second one.
void backlog_drains(run_context& c) {
  auto& [o, s, db, watch, rep] = c;
  std::cerr << "backlog: inserting " << o.backlog << " pending deliveries\n";
  auto cold_from = add_backlog(c, 0);
  int64_t before = completed(db, s);
  // The worker first: started after the relay (which takes a second to
  // come up), it found thousands of jobs the relay had sent meanwhile,
  // and the first tenth of the drain counted their completions without
  // the work of sending them (it ran 10–30% faster than the rest).
  workers w{o, s};
  relay r{o, s, "backlog"};
  std::cerr << "backlog: draining\n";
  await_completed(watch, s, before + o.backlog, r);
  rep.drain = drain_rates(db, s, cold_from);
  // The same again for the relay and worker that are running now, as
  // when the broker comes back after an outage: the backlog is made
  // whole first and becomes ready at one moment.
  before = completed(db, s);
  auto ready_in = 5 + o.backlog / 20000; // seconds; inserting takes less
  std::cerr << "backlog: inserting " << o.backlog << " more, ready in " << ready_in
            << " s, for the running relay\n";
  auto warm_from = add_backlog(c, ready_in);
  await_completed(watch, s, before + o.backlog, r);
  rep.warm_drain = drain_rates(db, s, warm_from);
  rep.backlog_rss_mib = r.peak_rss_mib();
}

// Samples both tables at the end of each of `n` intervals from `start`
// (`start_wall` by the system clock) while the soak's producers run.
std::vector<soak_sample> soak_samples(run_context& c, relay& r, double start_wall,
                                      std::chrono::steady_clock::time_point start,
                                      int64_t n) {
  auto interval = c.o.soak_interval_s;
  std::vector<soak_sample> series;
  for (int64_t k = 1; k <= n; ++k) {
    std::this_thread::sleep_until(start + std::chrono::seconds{k * interval});
    r.check();
    double to = start_wall + static_cast<double>(k * interval);
    auto t = must(c.s.progress.sample_tables(c.db, to - interval, to),
                  "sampling the soak's tables");
    auto table = [](const table_stats& x) {
      return soak_table{x.bytes, x.live, x.dead, x.rows};
    };
    soak_sample x;
    x.end_s = static_cast<double>(k * interval);
    x.completed = t.completed;
    x.per_minute = static_cast<double>(t.completed) * 60.0 / interval;
    x.events = table(t.events);
    x.deliveries = table(t.deliveries);
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
void await_idle(run_context& c, relay& r) {
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes{5};
  while (must(c.s.progress.anything_open(c.watch), "watching the relay")) {
    r.check();
    if (std::chrono::steady_clock::now() > until)
      die("the soak's last deliveries did not complete within 5 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

// Soak: paced producers at half of A for --soak minutes, on a relay of its
// own (its config has the soak's retention window) and workers; a sample
// of the tables every interval, the latencies by commit interval after.
void soak(run_context& c) {
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
  std::vector<soak_sample> series;
  try {
    series = soak_samples(c, r, start_wall, start, n);
  } catch (...) {
    stop = true;
    producing.join();
    throw;
  }
  producing.join();
  await_idle(c, r);
  {
    std::lock_guard<std::mutex> guard{w.mtx};
    fill_latencies(series, p.commits, w.received, start_wall,
                   static_cast<double>(o.soak_interval_s));
  }
  soak_results res{o.soak, rate, o.soak_interval_s, o.soak_retention_minutes,
                   std::move(series), {}};
  res.verdict = judge(res.series, reference_interval(o.soak_retention_minutes,
                                                     o.soak_interval_s));
  if (!write_soak_chart(res, o.soak_chart))
    die("the soak's chart could not be written to " + o.soak_chart);
  std::cerr << "soak: chart written to " << o.soak_chart << "\n";
  rep.soak = std::move(res);
}

void write_results(const bench_config& o, const report& rep) {
  std::cout << rep.table();
  auto text = rep.json();
  if (!text)
    die("the results cannot be written as JSON: " + render(text.error()));
  std::ofstream json{o.json_file};
  json << *text << "\n";
  json.close();
  if (!json)
    die("the results could not be written to " + o.json_file);
  std::cout << "results written to " << o.json_file << "\n";
}

int run(const bench_config& o) {
  set_log_level("warn");
  setup s;
  if (auto code = prepare(o, s))
    return *code;
  leftovers cleanup{o, s};
  auto db = must(pg_connection::connect(o.database_url), "database");
  must(migrate(db, s.names), "migrating");
  if (!o.schema_sql.empty()) {
    std::ifstream in{o.schema_sql};
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
      die("--schema-sql " + o.schema_sql + ": could not be read");
    if (auto err = db.exec_script("schema_sql", fill_names(text.str(), s.names)))
      die("--schema-sql " + o.schema_sql + ": " + render(err));
  }
  auto watch = must(pg_connection::connect(o.database_url), "database");
  if (auto err = watch.exec_script("watch_settings", index_only_plan_settings))
    die("database: " + render(err));
  auto rep = knobs_of(o);
  rep.soak_only = o.soak_only;
  rep.contention_only = o.contention_only;
  run_context c{o, s, db, watch, rep};
  if (!o.contention_only)
    producers_only(c);
  if (runs_contention(o))
    business_commits(c);
  if (!o.soak_only && !o.contention_only) {
    broker_only(c);
    pipeline_and_latency(c);
    if (o.backlog > 0)
      backlog_drains(c);
  }
  if (o.soak > 0)
    soak(c);
  write_results(o, rep);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  bench_config o;
  auto usage = [](const std::string& what) {
    std::cerr << "outbox_bench: " << what << "\n";
    return 2;
  };
  if (auto err = o.parse_args(argc, argv); !err.empty())
    return usage(err);
  if (o.answered_help("outbox_bench",
                      std::string{"usage: outbox_bench --database-url URL "
                                  "--amqp-url URL [knobs]\n\nThe benchmark "
                                  "behind tools/bench (docs/performance.md)."
                                  "\n\noptions:\n"}
                        + o.options_text({})))
    return 0;
  if (o.database_url.empty() || o.amqp_url.empty())
    return usage("--database-url and --amqp-url are required (tools/bench sets them)");
  if (auto problem = knob_problem(o); !problem.empty())
    return usage(problem);
  if (auto problem = output_path_problem("json", o.json_file); !problem.empty())
    return usage(problem);
  if (o.soak > 0)
    if (auto problem = output_path_problem("soak-chart", o.soak_chart);
        !problem.empty())
      return usage(problem);
  if (!o.schema_sql.empty()
      && (!std::filesystem::is_regular_file(o.schema_sql)
          || access(o.schema_sql.c_str(), R_OK) != 0))
    return usage("--schema-sql = \"" + o.schema_sql + "\": cannot read it");
  if (o.outboxd.empty()) {
    std::string self = argv[0];
    o.outboxd = self.substr(0, self.rfind('/') + 1) + "outboxd";
  }
  try {
    return run(o);
  } catch (const bench_failure& failure) {
    std::cerr << "outbox_bench: " << failure.what() << "\n";
    return 1;
  }
}
