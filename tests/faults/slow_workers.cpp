#define CAF_SUITE faults.slow_workers
#include <caf/test/unit_test.hpp>

#include <csignal>

#include "tests/faults/fault_cluster.hpp"

using namespace outbox;
using namespace outbox::testing;

// Workers slower than the default window of 1,000 allows for a short
// delivery timeout: the in-flight window (core/domain/in_flight_window.hpp)
// keeps what they cannot finish in time waiting in the database, where no
// timeout runs, instead of in the broker, where it does.

namespace {

// The dispatchers' windows of both queues, as the status node shows them.
struct windows {
  std::optional<int64_t> jobs, mail;
  bool at_most(int64_t n) const {
    return jobs && mail && *jobs <= n && *mail <= n;
  }
};

windows windows_of(fault_cluster& c) {
  return {c.gauge("dispatcher " + c.jobs_queue, "in_flight_window"),
          c.gauge("dispatcher " + c.mail_queue, "in_flight_window")};
}

} // namespace

// From 1 ms to 20 ms a job while 100 events a second keep coming on two
// routes: each queue gets 100 deliveries a second and its worker finishes
// 50. With a fixed window of 1,000 the broker's backlog grew by 50 a
// second until jobs waited longer than the 5 s timeout.
CAF_TEST(a worker that slows down gets a smaller window not timeouts) {
  fault_cluster c; // timeout 5 s, the default maxInFlight
  c.start_all();
  c.start_workers(1, 10, 20);
  c.keep_publishing(100);
  CAF_REQUIRE(wait_until([&] { return c.count_status("completed") >= 200; },
                         std::chrono::seconds{120}));
  c.slow_down_workers();
  // 1,000 more events while the workers are slow: 10 s at this pace, twice
  // the timeout, and 500 deliveries a queue more than the workers finish.
  auto slowed_at = c.published();
  CAF_REQUIRE(wait_until([&] { return c.published() >= slowed_at + 1000; },
                         std::chrono::seconds{120}));
  // The windows followed the slower workers (50 a second, 5 s, half of
  // it: about 125), and what they could not take waited in the table.
  CAF_CHECK(wait_until([&] { return windows_of(c).at_most(300); },
                       std::chrono::seconds{30}));
  CAF_CHECK_GREATER_OR_EQUAL(c.count_status("pending"), 200);
  c.stop_publishing();
  auto v = c.settle(std::chrono::seconds{300});
  c.check("worker slowed from 1 ms to 20 ms a job", v);
  CAF_CHECK_LESS(v.sent_again * 100, v.expected); // under 1%
}

// A worker at 12 ms a job (about 80 a second: a window of 1,000 is 12 s of
// its work, longer than the 10 s timeout) with a backlog in the table,
// killed while it holds jobs and started again once the relay has noticed.
// What was in flight waited at most half the timeout before, so an outage
// shorter than the other half costs no attempt.
CAF_TEST(a slow worker killed while holding jobs and restarted costs no attempt) {
  fault_cluster c{"[1, 1]", 10};
  c.start_all();
  c.start_workers(12);
  c.publish_in_background(1500, 0);
  // A backlog held back in the table while the windows bind.
  CAF_REQUIRE(wait_until([&] {
    return c.count_status("pending") >= 500 && c.count_status("completed") >= 300;
  }, std::chrono::seconds{120}));
  for (auto& w : c.workers)
    w->signal(SIGKILL);
  for (auto& w : c.workers)
    w->wait();
  c.workers.clear();
  // The relay noticed: nothing finishes, so the windows are at their floor
  // and nothing more goes out.
  CAF_REQUIRE(wait_until([&] { return windows_of(c).at_most(1); },
                         std::chrono::seconds{120}));
  c.start_workers(12);
  c.wait_published();
  auto v = c.settle(std::chrono::seconds{300});
  // What the killed workers held (prefetch 10 each) runs again.
  c.check("slow worker killed and restarted", v, 2 * 10);
  CAF_CHECK_LESS(v.sent_again * 100, v.expected); // under 1%
}
