#define CAF_SUITE core.relay_stalls
#include <caf/test/unit_test.hpp>

#include "core/domain/relay_stalls.hpp"

using namespace outbox;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const auto t0 = relay_stalls::clock::time_point{seconds{1000}};

} // namespace

CAF_TEST(a queue whose result handlers are heard is swept as usual) {
  relay_stalls s{{"q", "r"}};
  s.observe({{"q", 300}, {"r", 0}}, t0);
  auto h = s.holds(t0 + milliseconds{100});
  CAF_CHECK(h.stalled.empty());
  CAF_CHECK(h.outages.empty());
}

CAF_TEST(a handler not heard for two seconds holds its queue and its outage moves deadlines) {
  relay_stalls s{{"q", "r"}};
  s.observe({{"q", 0}, {"r", 0}}, t0);
  // q's node is paused: the status node last heard it 2.5 s ago.
  s.observe({{"q", 2500}, {"r", 0}}, t0 + seconds{3});
  auto held = s.holds(t0 + seconds{3});
  CAF_CHECK_EQUAL(held.stalled, std::vector<std::string>{"q"});
  CAF_CHECK_EQUAL(s.stalled(), std::vector<std::string>{"q"});
  // Back 15 s later: the outage ran from when it was last heard.
  s.observe({{"q", 100}, {"r", 0}}, t0 + seconds{15});
  auto after = s.holds(t0 + seconds{16});
  CAF_CHECK(after.stalled.empty());
  CAF_REQUIRE_EQUAL(after.outages.size(), 1u);
  CAF_CHECK_EQUAL(after.outages[0].queue, "q");
  CAF_CHECK_EQUAL(after.outages[0].ended_seconds_ago, 1.0);
  CAF_CHECK_EQUAL(after.outages[0].lasted_seconds, 14.5);
}

CAF_TEST(a queue whose handlers are gone from the view is held) {
  relay_stalls s{{"q"}};
  s.observe({{"q", 0}}, t0);
  s.observe({}, t0 + seconds{1}); // its node is down
  CAF_CHECK_EQUAL(s.holds(t0 + seconds{1}).stalled, std::vector<std::string>{"q"});
}

CAF_TEST(a queue that never had a handler is not held) {
  relay_stalls s{{"q", "never"}};
  s.observe({{"q", 0}}, t0);
  CAF_CHECK(s.holds(t0).stalled.empty());
}

CAF_TEST(without a fresh view nothing is held and an open stall ends with the view) {
  relay_stalls s{{"q"}};
  CAF_CHECK(s.holds(t0).stalled.empty()); // no view at all
  s.observe({{"q", 0}}, t0);
  s.observe({}, t0 + seconds{1});
  CAF_CHECK_EQUAL(s.holds(t0 + seconds{2}).stalled.size(), 1u);
  // The status node is away: after 5 s the view is no view.
  auto h = s.holds(t0 + seconds{7});
  CAF_CHECK(h.stalled.empty());
  CAF_REQUIRE_EQUAL(h.outages.size(), 1u);
  CAF_CHECK_EQUAL(h.outages[0].lasted_seconds, 1.0); // t0 to the last view
  CAF_CHECK_EQUAL(h.outages[0].ended_seconds_ago, 6.0);
}

CAF_TEST(ended outages are forgotten after an hour and at most sixteen are kept) {
  relay_stalls s{{"q"}};
  auto t = t0;
  for (int i = 0; i < 20; ++i) {
    s.observe({{"q", 0}}, t);
    s.observe({}, t + seconds{5});
    t += seconds{10};
  }
  s.observe({{"q", 0}}, t);
  CAF_CHECK_EQUAL(s.holds(t).outages.size(), 16u);
  CAF_CHECK_EQUAL(s.holds(t + seconds{3601}).outages.size(), 0u);
}
