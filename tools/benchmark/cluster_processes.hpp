// Process control of a benchmark run: the relay's outboxd nodes and the
// workers, started and stopped, and watched until a phase's deliveries
// have completed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "tests/support/child_process.hpp"
#include "tools/benchmark/bench_args.hpp"
#include "tools/benchmark/bench_run.hpp"
#include "worker/worker.hpp"

namespace outbox::bench {

// The relay under test: one process with every role, or three nodes; plus
// extra dispatcher processes when asked.
struct relay {
  std::vector<std::unique_ptr<child_process>> procs;
  std::vector<std::string> logs;
  std::vector<uint16_t> http_ports; ///< each node's --http, when scraped
  bool keep_logs = false; ///< the run failed while the nodes ran

  // Stops the nodes. Their logs go with them, unless the run failed: its
  // message points to them.
  ~relay();

  relay(const bench_config& o, const setup& s, const std::string& tag,
        bool http = false, const std::string& config = {});

  /// Ends the run when a node of the relay is gone: nothing would complete.
  caf::error check();

  /// Passes `err` on; an error keeps the nodes' logs.
  caf::error keep_logs_on(caf::error err);

  double peak_rss_mib() const;
  double cpu_seconds() const;
};

// Workers that complete every job at once, recording when each event's job
// first arrived (≈ when it was published).
struct workers {
  std::mutex mtx;
  std::map<int64_t, double> received;
  std::vector<std::unique_ptr<outbox::worker>> ws;
  std::vector<std::thread> threads;

  workers(const bench_config& o, const setup& s);
  ~workers();
};

/// The completed deliveries in the table.
caf::expected<int64_t> completed(pg_connection& db, setup& s);

// Waits until n deliveries have completed. While the relay works it asks
// only whether anything is still open (an unrouted event, a pending or a
// dispatched delivery), by the partial indexes the relay itself uses:
// counting the completed rows every 100 ms read the whole deliveries table
// each time, a cost that grew with the table and slowed the drain it
// measured. Once nothing is open, the count must be n, or the run failed.
caf::error await_completed(pg_connection& watch, setup& s, int64_t n, relay& r);

} // namespace outbox::bench
