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
  // q's node is paused: views every second show it heard ever longer ago.
  s.observe({{"q", 1000}, {"r", 0}}, t0 + seconds{1});
  s.observe({{"q", 2000}, {"r", 0}}, t0 + seconds{2});
  CAF_CHECK(s.holds(t0 + seconds{2}).stalled.empty()); // 2 s: not yet
  for (int i = 3; i < 15; ++i)
    s.observe({{"q", 1000 * i}, {"r", 0}}, t0 + seconds{i});
  auto held = s.holds(t0 + seconds{14});
  CAF_CHECK_EQUAL(held.stalled, std::vector<std::string>{"q"});
  CAF_CHECK_EQUAL(s.stalled(), std::vector<std::string>{"q"});
  // Back at 15 s: the outage ran from when it was last heard.
  s.observe({{"q", 0}, {"r", 0}}, t0 + seconds{15});
  auto after = s.holds(t0 + seconds{16});
  CAF_CHECK(after.stalled.empty());
  CAF_REQUIRE_EQUAL(after.outages.size(), 1u);
  CAF_CHECK_EQUAL(after.outages[0].queue, "q");
  CAF_CHECK_EQUAL(after.outages[0].ended_seconds_ago, 1.0);
  CAF_CHECK_EQUAL(after.outages[0].lasted_seconds, 15.0);
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

CAF_TEST(a view gone for a minute holds nothing and an open stall ends with the view) {
  relay_stalls s{{"q"}};
  CAF_CHECK(s.holds(t0).stalled.empty()); // no view at all
  s.observe({{"q", 0}}, t0);
  s.observe({}, t0 + seconds{1});
  CAF_CHECK_EQUAL(s.holds(t0 + seconds{2}).stalled.size(), 1u);
  // The status node is gone: after a minute the view is no view.
  auto h = s.holds(t0 + seconds{62});
  CAF_CHECK(h.stalled.empty());
  CAF_REQUIRE_EQUAL(h.outages.size(), 1u);
  CAF_CHECK_EQUAL(h.outages[0].lasted_seconds, 1.0); // t0 to the last view
  CAF_CHECK_EQUAL(h.outages[0].ended_seconds_ago, 61.0);
}

// The sweeper's own node paused (or the status node slow to answer):
// nobody could tell meanwhile, so every queue waits for a fresh view, and
// the gap moves every deadline.
CAF_TEST(a late view holds every queue and its gap counts as an outage of each) {
  relay_stalls s{{"q", "r", "never"}};
  s.observe({{"q", 0}, {"r", 0}}, t0);
  CAF_CHECK(s.holds(t0 + seconds{2}).stalled.empty());
  auto late = s.holds(t0 + seconds{3});
  CAF_CHECK_EQUAL(late.stalled, (std::vector<std::string>{"q", "r"}));
  s.observe({{"q", 0}, {"r", 0}}, t0 + seconds{15});
  auto after = s.holds(t0 + seconds{15});
  CAF_CHECK(after.stalled.empty());
  CAF_REQUIRE_EQUAL(after.outages.size(), 2u);
  CAF_CHECK_EQUAL(after.outages[0].lasted_seconds, 15.0);
  CAF_CHECK_EQUAL(after.outages[1].queue, "r");
}

CAF_TEST(a stall that reopens after a late view does not count its time twice) {
  relay_stalls s{{"q"}};
  s.observe({{"q", 0}}, t0);
  s.observe({{"q", 3000}}, t0 + seconds{3}); // stalled since t0
  // The views stop for 4 s; then q is still not heard.
  s.observe({}, t0 + seconds{7});
  auto h = s.holds(t0 + seconds{8});
  CAF_CHECK_EQUAL(h.stalled, std::vector<std::string>{"q"});
  s.observe({{"q", 0}}, t0 + seconds{10});
  auto done = s.holds(t0 + seconds{10});
  double total = 0;
  for (auto& o : done.outages)
    total += o.lasted_seconds;
  CAF_CHECK_EQUAL(total, 10.0); // t0 to t0 + 10 s, once
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
