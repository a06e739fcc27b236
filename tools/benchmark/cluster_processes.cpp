#include "tools/benchmark/cluster_processes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/base/errors.hpp"
#include "tests/support/loopback_port.hpp"
#include "tools/benchmark/outbox_config.hpp"
#include "tools/benchmark/producers.hpp"

namespace outbox::bench {

relay::~relay() {
  procs.clear();
  if (!keep_logs)
    for (auto& l : logs)
      std::remove(l.c_str());
}

relay::relay(const bench_config& o, const setup& s, const std::string& tag,
             bool http, const std::string& config) {
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

caf::error relay::check() {
  for (size_t i = 0; i < procs.size(); ++i)
    if (procs[i]->exited())
      return make_error(errc::publish_failed,
                        "outboxd exited during the run (its log: " + logs[i] + ")");
  return caf::none;
}

caf::error relay::keep_logs_on(caf::error err) {
  if (err)
    keep_logs = true;
  return err;
}

double relay::peak_rss_mib() const {
  double m = 0;
  for (auto& p : procs)
    m = std::max(m, p->peak_rss_mib());
  return m;
}

double relay::cpu_seconds() const {
  double c = 0;
  for (auto& p : procs)
    c += p->cpu_seconds();
  return c;
}

workers::workers(const bench_config& o, const setup& s) {
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

workers::~workers() {
  for (auto& w : ws)
    w->stop();
  for (auto& t : threads)
    t.join();
}

caf::expected<int64_t> completed(pg_connection& db, setup& s) {
  auto n = s.progress.count_status(db, outbox::delivery_status::completed);
  if (!n)
    return failed("counting deliveries", n.error());
  return n;
}

caf::error await_completed(pg_connection& watch, setup& s, int64_t n, relay& r) {
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes{20};
  for (;;) {
    if (auto err = r.check())
      return err;
    auto open = s.progress.anything_open(watch);
    if (!open)
      return failed("watching the relay", open.error());
    if (!*open) {
      auto done = completed(watch, s);
      if (!done)
        return done.error();
      if (*done >= n)
        return caf::none;
      return make_error(errc::publish_failed,
                        std::to_string(n - *done)
                          + " deliveries ended without completing"
                            " (failed or expired)");
    }
    if (std::chrono::steady_clock::now() > until)
      return make_error(errc::publish_failed,
                        "deliveries did not complete within 20 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

} // namespace outbox::bench
