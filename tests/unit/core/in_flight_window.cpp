#define CAF_SUITE core.in_flight_window
#include <caf/test/unit_test.hpp>

#include "core/domain/in_flight_window.hpp"

using namespace outbox;

namespace {

constexpr int64_t second_us = 1'000'000;
constexpr int64_t t0 = 1'800'000'000 * second_us;

// A claim at `at_us` that saw `in_flight` out, `left` of the cohort still
// out, and the queue's timeout of 10 s.
window_sample seen(int64_t at_us, int64_t in_flight, int64_t left,
                   double timeout = 10) {
  return window_sample{at_us, in_flight, left, timeout};
}

window_settings settings(int64_t ceiling = 1000, int64_t start = 100) {
  window_settings s;
  s.ceiling = ceiling;
  s.start = start;
  return s;
}

} // namespace

CAF_TEST(the window starts small and never above the ceiling) {
  in_flight_window wide{settings(1000, 100)}, narrow{settings(20, 100)};
  CAF_CHECK_EQUAL(wide.limit(), 100);
  CAF_CHECK_EQUAL(narrow.limit(), 20);
  in_flight_window w{settings()};
  CAF_CHECK(!w.cohort_start_us());
  w.observe(seen(t0, 0, 0), 100);
  CAF_REQUIRE(w.cohort_start_us());
  CAF_CHECK_EQUAL(*w.cohort_start_us(), t0);
  CAF_CHECK_EQUAL(w.limit(), 100); // nothing measured yet
}

CAF_TEST(a slow worker gets what it finishes in half the timeout) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100); // cohort: the 100 just taken
  // 0.5 s later, 95 still out: not judged before the interval.
  w.observe(seen(t0 + second_us / 2, 100, 95), 0);
  CAF_CHECK_EQUAL(w.limit(), 100);
  // After a second, 10 of the cohort left: 10 a second, 10 s timeout.
  w.observe(seen(t0 + second_us, 100, 90), 0);
  CAF_CHECK_EQUAL(w.completion_rate(), 10.0);
  CAF_CHECK_EQUAL(w.limit(), 50);
  // The next cohort starts at that claim, with all 100 still out.
  CAF_CHECK_EQUAL(*w.cohort_start_us(), t0 + second_us);
}

CAF_TEST(workers that keep up grow the window up to the ceiling) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  // All 100 finished within 50 ms: at least 2,000 a second; the window
  // grows to twice what was out, not at once to rate x timeout.
  w.observe(seen(t0 + 50'000, 0, 0), 200);
  CAF_CHECK_EQUAL(w.limit(), 200);
  CAF_CHECK_GREATER_OR_EQUAL(w.completion_rate(), 2000.0);
  // Used in full and finished each time, it doubles up to the ceiling.
  w.observe(seen(t0 + 100'000, 0, 0), 400);
  CAF_CHECK_EQUAL(w.limit(), 400);
  w.observe(seen(t0 + 150'000, 0, 0), 800);
  CAF_CHECK_EQUAL(w.limit(), 800);
  w.observe(seen(t0 + 200'000, 0, 0), 1000);
  CAF_CHECK_EQUAL(w.limit(), 1000);
}

CAF_TEST(a window grows only as far as it is used) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.observe(seen(t0 + 50'000, 0, 0), 200);
  CAF_REQUIRE_EQUAL(w.limit(), 200);
  // Then little goes out and all of it finishes fast: the window falls to
  // the start (100), so a backlog after a stop of the relay cannot go out
  // at once at a size never shown to be worked off in time.
  w.observe(seen(t0 + 100'000, 0, 0), 5);
  CAF_CHECK_EQUAL(w.limit(), 400); // the 200 finished
  w.observe(seen(t0 + 150'000, 0, 0), 5);
  CAF_CHECK_EQUAL(w.limit(), 100); // 5 were out
  w.observe(seen(t0 + 200'000, 0, 0), 5);
  CAF_CHECK_EQUAL(w.limit(), 100);
}

CAF_TEST(a queue that finishes what little it has keeps its window) {
  in_flight_window w{settings(1000, 400)};
  w.observe(seen(t0, 0, 0), 2);
  // Two deliveries finished in a second: a lower bound of the workers'
  // pace, not their pace; the window does not shrink for it.
  w.observe(seen(t0 + second_us, 0, 0), 0);
  CAF_CHECK_EQUAL(w.limit(), 400);
}

CAF_TEST(workers that slow down shrink the window) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.observe(seen(t0 + 50'000, 0, 0), 200); // fast: doubling to the ceiling
  w.observe(seen(t0 + 100'000, 0, 0), 400);
  w.observe(seen(t0 + 150'000, 0, 0), 800);
  w.observe(seen(t0 + 200'000, 0, 0), 100);
  CAF_REQUIRE_EQUAL(w.limit(), 1000);
  // Then 2 a second: of the 100 out at the last claim, 98 are left.
  w.observe(seen(t0 + 200'000 + second_us, 100, 98), 0);
  CAF_CHECK_EQUAL(w.completion_rate(), 2.0);
  CAF_CHECK_EQUAL(w.limit(), 10);
}

CAF_TEST(nothing finished brings the window to its floor not to zero) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.observe(seen(t0 + 2 * second_us, 100, 100), 0);
  CAF_CHECK_EQUAL(w.completion_rate(), 0.0);
  CAF_CHECK_EQUAL(w.limit(), 1);
  // The results come back: the whole cohort left at once. The window grows
  // to twice the 100 that were out, not to what the burst's rate would
  // give: the backlog goes out in steps the workers are seen to keep up with.
  w.observe(seen(t0 + 2 * second_us + 100'000, 0, 0), 0);
  CAF_CHECK_EQUAL(w.limit(), 200);
}

CAF_TEST(a few stuck jobs do not hold the judgment) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 80);
  // 75 of 80 done within 100 ms, 5 stuck: the cohort counts as finished.
  w.observe(seen(t0 + 100'000, 5, 5), 0);
  CAF_CHECK_EQUAL(w.completion_rate(), 750.0);
  CAF_CHECK_EQUAL(w.limit(), 160); // twice what was out
}

CAF_TEST(what this dispatcher sent and saw finish counts too) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 10);
  // The cohort of 10 has 2 stuck, but 50 more were taken and finished.
  w.observe(seen(t0 + 500'000, 2, 2), 50);
  w.observe(seen(t0 + second_us, 2, 2), 0);
  // Own bound: 10 + 50 out, 2 out now: 58 finished in the second.
  CAF_CHECK_EQUAL(w.completion_rate(), 58.0);
  CAF_CHECK_EQUAL(w.limit(), 290);
}

CAF_TEST(the window uses the last timeout seen when none is out) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0, 0), 100); // nothing was out: no timeout known
  w.observe(seen(t0 + second_us / 2, 100, 100, 4), 0);
  w.observe(seen(t0 + second_us, 0, 0, 0), 0);
  // 100 a second, the timeout of 4 s from the claim before, half of it.
  CAF_CHECK_EQUAL(w.limit(), 200);
}

CAF_TEST(a clock that goes back starts a new cohort and judges nothing) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.observe(seen(t0 - second_us, 100, 100), 0);
  CAF_CHECK_EQUAL(w.limit(), 100);
  CAF_CHECK_EQUAL(*w.cohort_start_us(), t0 - second_us);
}

CAF_TEST(deliveries given back unsent are not finished work) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.released(100); // the broker blocked them: all back to pending
  // Nothing is out now; the cohort had nothing of its own left.
  w.observe(seen(t0 + 50'000, 0, 0), 0);
  CAF_CHECK(!w.measured());
  CAF_CHECK_EQUAL(w.limit(), 100);
}

CAF_TEST(a restart forgets the cohort and nothing is measured before a judgment) {
  in_flight_window w{settings()};
  CAF_CHECK(!w.measured());
  w.observe(seen(t0, 0, 0), 100);
  w.restart();
  CAF_CHECK(!w.cohort_start_us());
  // Ten seconds later, with all still out: a new cohort, no judgment.
  w.observe(seen(t0 + 10 * second_us, 100, 100), 0);
  CAF_CHECK(!w.measured());
  CAF_CHECK_EQUAL(w.limit(), 100);
  CAF_CHECK_EQUAL(*w.cohort_start_us(), t0 + 10 * second_us);
}

CAF_TEST(a huge rate and timeout stay at the ceiling) {
  in_flight_window w{settings()};
  w.observe(seen(t0, 0, 0), 100);
  w.observe(seen(t0 + 1, 0, 0, 1e300), 0);
  CAF_CHECK_EQUAL(w.limit(), 200); // no overflow: twice what was out
}
