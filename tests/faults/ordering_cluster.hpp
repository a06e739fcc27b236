// The cluster of faults.ordering: event "e" routed to job J on two queues,
// one with `"ordering": "key"` and one without (same retry rules, merge
// none), two outboxd nodes that both route, sweep, dispatch and apply
// results for both queues, ordering_workers on each queue, producers that
// publish keyed events with a sequence number per key from concurrent
// transactions, and a dispatch log: a trigger on the fixture's own
// deliveries table that records each dispatch's start and end as the
// database saw them, the relay's side of "in flight".
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/test/unit_test.hpp>

#include "tests/faults/ordering_checks.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

namespace outbox::testing {

/// What the producers did.
struct producer_report {
  int64_t events = 0, transactions = 0;
  /// Events of a key whose successor's transaction committed before
  /// theirs, as the producers saw the commits return: the case the
  /// routing horizon exists for.
  int64_t overtaken = 0;
  std::map<std::string, int64_t> per_key; ///< the last seq of each key
  bool ok = true;
};

class ordering_cluster : public cluster_fixture {
public:
  static constexpr int timeout_seconds = 2;
  /// Well below what the workers take within a timeout (the rule of
  /// docs/configuration.md): past it, jobs wait in the broker until they
  /// time out, each resend adds a message behind them, and the queue never
  /// recovers. Above the 50 keys the ordered queue has in flight at most.
  static constexpr int max_in_flight = 60;

  ordering_cluster();
  ~ordering_cluster();

  std::string ordered_queue, plain_queue;
  std::string dir;
  std::map<std::string, std::unique_ptr<child_process>> nodes;

  /// An outboxd with every role but status, on its own (no --join); its
  /// database sessions carry `name` as application_name.
  void start_node(const std::string& name);

  /// `n` ordering_workers on `queue`, prefetch 1 each: a sleeping run
  /// holds up no job behind it.
  void start_workers(const std::string& queue, int n);

  /// The journal files of the workers of `queue`.
  std::vector<std::string> journals(const std::string& queue) const;

  /// Starts `producers` threads that publish `events` events over `keys`
  /// keys together, at `per_second` together, in transactions of 1 to 8.
  void start_producers(int events, int keys, int per_second, int producers);
  producer_report wait_producers();

  /// True once every event has a final delivery on both queues.
  bool all_final(int64_t events);

  /// The dispatch log of `queue`.
  std::vector<relay_dispatch> dispatches(const std::string& queue);

  /// The completed deliveries of `queue`: (dispatch id, key, seq from the
  /// event's payload, when the relay applied the completion).
  struct completed_row {
    std::string dispatch_id, key;
    int64_t seq = 0, applied_us = 0;
  };
  std::vector<completed_row> completed(const std::string& queue);

private:
  void install_dispatch_log();
  void produce(int index, int events, int keys, int per_second);

  std::string config_path_;
  std::map<std::string, std::vector<std::string>> journals_;
  std::vector<std::unique_ptr<child_process>> workers_;
  std::vector<std::thread> producers_;
  std::string url_, log_table_, log_function_;
  // Taken around picking a key's next seq and inserting its event, so
  // that a key's seqs follow its event ids; transactions stay concurrent.
  std::mutex publish_mtx_;
  producer_report report_;
  std::map<std::string, std::map<int64_t, int64_t>> commit_ticket_;
  std::atomic<int64_t> commits_{0};
  std::atomic<bool> stop_{false}; ///< the test ends early: producers stop
};

} // namespace outbox::testing
