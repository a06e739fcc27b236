#define CAF_SUITE actors.event_watcher
#include <caf/test/unit_test.hpp>

#include "actors/event_watcher.hpp"

using namespace outbox;
using std::chrono::milliseconds;

// The probe's schedule: soon after a change, backing off to the idle wait.
CAF_TEST(a change brings the next probe soon and quiet doubles the wait up to idle) {
  probe_schedule s;
  CAF_CHECK_EQUAL(s.next(milliseconds{0}, true), milliseconds{1});
  CAF_CHECK_EQUAL(s.next(milliseconds{25}, true), milliseconds{1});
  CAF_CHECK_EQUAL(s.next(milliseconds{0}, false), milliseconds{1});
  CAF_CHECK_EQUAL(s.next(milliseconds{1}, false), milliseconds{2});
  CAF_CHECK_EQUAL(s.next(milliseconds{2}, false), milliseconds{4});
  CAF_CHECK_EQUAL(s.next(milliseconds{8}, false), milliseconds{16});
  CAF_CHECK_EQUAL(s.next(milliseconds{16}, false), milliseconds{25});
  CAF_CHECK_EQUAL(s.next(milliseconds{25}, false), milliseconds{25});
}

// From a change to the idle wait takes a handful of probes: the waits
// after one change add up to well under the idle relay's 50 ms bound.
CAF_TEST(an idle watcher probes at its idle wait) {
  probe_schedule s;
  auto wait = s.next(milliseconds{0}, true);
  milliseconds total{0};
  int probes = 0;
  while (wait < s.idle) {
    total += wait;
    wait = s.next(wait, false);
    ++probes;
  }
  CAF_CHECK_EQUAL(probes, 5); // 1, 2, 4, 8, 16 ms
  CAF_CHECK_EQUAL(total, milliseconds{31});
  CAF_CHECK_EQUAL(wait, s.idle);
}
