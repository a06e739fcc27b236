#define CAF_SUITE faults.backlog
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <csignal>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

constexpr int timeout_seconds = 5;
constexpr int64_t max_in_flight = 1000; // the config's default
constexpr int job_ms = 2; // slower than the dispatcher: a backlog builds

// Work piles up behind a stopped dispatcher or before the cluster starts,
// and workers take it more slowly than the relay could send it. Without
// flow control all of it went to the broker at once, the delivery timeout
// ran while jobs waited in the broker's queue, and they were sent again
// and failed although the workers completed them.
struct fixture : fault_cluster {
  fixture() : fault_cluster("[1, 1]", timeout_seconds) {}

  ~fixture() {
    if (dispatcher_node)
      dispatcher_node->signal(SIGCONT); // never leave it stopped
  }

  /// The most deliveries of one queue seen dispatched at once.
  int64_t most_dispatched = 0;

  /// Seconds from a backlog's release until every delivery is final.
  double recovery = 0;

  /// Waits until all `events` have their two deliveries and every one is
  /// final, watching how many of a queue are dispatched at once meanwhile.
  bool drain(int64_t events, std::chrono::seconds limit) {
    auto start = std::chrono::steady_clock::now();
    auto done = wait_until(
      [&] {
        auto rows = must_exec(
          db, "SELECT COALESCE(max(n), 0) FROM (SELECT count(*) AS n FROM "
                + names.deliveries
                + " WHERE status = 'dispatched' GROUP BY queue) q");
        most_dispatched = std::max(most_dispatched, rows.int64(0, 0));
        auto all = must_exec(db, "SELECT count(*) FROM " + all_deliveries(names) + " d");
        return all.int64(0, 0) == 2 * events && open_deliveries() == 0;
      },
      limit);
    recovery = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                             - start)
                 .count();
    return done;
  }

  /// True once some delivery has been ready for `s` seconds unclaimed.
  bool waited_for(int s) {
    return must_exec(db, "SELECT count(*) FROM " + names.deliveries
                           + " WHERE status = 'pending' AND available_at"
                             " <= now() - make_interval(secs => $1)",
                     {std::to_string(s)})
             .int64(0, 0)
           > 0;
  }

  void check_flow(const std::string& scenario,
                  std::optional<int64_t> max_resent = std::nullopt) {
    auto v = settle(std::chrono::seconds{60});
    v.recovery_seconds = recovery;
    CAF_MESSAGE("most dispatched at once in one queue: " << most_dispatched);
    // One dispatcher per queue: the limit holds exactly.
    CAF_CHECK_LESS_OR_EQUAL(most_dispatched, max_in_flight);
    check(scenario, v, max_resent);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(backlog_faults, fixture)

CAF_TEST(a dispatcher stopped for three delivery timeouts catches up) {
  start_all();
  start_workers(job_ms);
  // What the node holds when it stops is sent again after the sweeper timed
  // it out, and nothing else: how much that is depends on how far the
  // workers lag (the machine's load), so the bound is what it held. A claim
  // the node had sent just before it stopped still commits in the database:
  // each of its two dispatchers may add one batch to that.
  keep_publishing(150);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") >= 200; }));
  dispatcher_node->signal(SIGSTOP);
  auto held = count_status("dispatched") + 2 * claim_batch;
  // Events keep coming while it is stopped, until the backlog in the table
  // is three delivery timeouts old.
  CAF_REQUIRE(wait_until([&] { return waited_for(3 * timeout_seconds); },
                         std::chrono::seconds{120}));
  // The backlog is what built up until then, however long that took; five
  // more seconds of events come while the node catches up.
  stop_publishing();
  publish_in_background(750, 150);
  dispatcher_node->signal(SIGCONT);
  auto resumed = std::chrono::steady_clock::now();
  // Caught up: no ready delivery has waited a second any more.
  CAF_CHECK(wait_until([&] { return !waited_for(1); }, std::chrono::seconds{60}));
  CAF_MESSAGE("caught up "
              << std::chrono::duration<double>(std::chrono::steady_clock::now()
                                               - resumed)
                   .count()
              << " s after the dispatcher went on");
  wait_published();
  CAF_CHECK(drain(published(), std::chrono::seconds{60}));
  check_flow("dispatcher stopped for three delivery timeouts", held);
}

CAF_TEST(a backlog pending at start drains without resends) {
  publish_in_background(3000, 0);
  wait_published();
  start_all();
  start_workers(job_ms);
  CAF_CHECK(drain(published(), std::chrono::seconds{60}));
  check_flow("3,000 events pending at start");
}

CAF_TEST_FIXTURE_SCOPE_END()
