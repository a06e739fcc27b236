#define CAF_SUITE core.failure_streak
#include <caf/test/unit_test.hpp>

#include "core/domain/failure_streak.hpp"

using namespace outbox;
using std::chrono::seconds;

CAF_TEST(the first failure and then every nth are logged) {
  failure_streak s{10, seconds{3600}};
  auto t0 = time_point{seconds{1'800'000'000}};
  std::vector<int64_t> logged;
  for (int i = 0; i < 25; ++i)
    if (s.failed(t0))
      logged.push_back(s.count());
  CAF_CHECK_EQUAL(logged, (std::vector<int64_t>{1, 11, 21}));
  CAF_CHECK(s.since() == t0);
}

CAF_TEST(a summary comes at least every interval) {
  failure_streak s{1000, seconds{30}};
  auto t0 = time_point{seconds{1'800'000'000}};
  CAF_CHECK(s.failed(t0));
  CAF_CHECK(!s.failed(t0 + seconds{29}));
  CAF_CHECK(s.failed(t0 + seconds{30}));
  CAF_CHECK(!s.failed(t0 + seconds{31}));
  CAF_CHECK(s.failed(t0 + seconds{60}));
  CAF_CHECK_EQUAL(s.count(), 5);
}

CAF_TEST(a success ends the run and the next failure is logged again) {
  failure_streak s{10, seconds{30}};
  auto t0 = time_point{seconds{1'800'000'000}};
  CAF_CHECK(s.failed(t0));
  CAF_CHECK(!s.failed(t0));
  CAF_CHECK_EQUAL(s.succeeded(), 2);
  CAF_CHECK_EQUAL(s.count(), 0);
  CAF_CHECK_EQUAL(s.succeeded(), 0);
  CAF_CHECK(s.failed(t0 + seconds{1}));
  CAF_CHECK(s.since() == t0 + seconds{1});
}

CAF_TEST(the backoff grows with the run and starts over after a success) {
  using std::chrono::milliseconds;
  failure_streak s;
  auto t0 = time_point{seconds{1'800'000'000}};
  s.failed(t0);
  CAF_CHECK_EQUAL(s.backoff(milliseconds{5000}).count(), 200);
  s.failed(t0);
  s.failed(t0);
  CAF_CHECK_EQUAL(s.backoff(milliseconds{5000}).count(), 800);
  CAF_CHECK_EQUAL(s.backoff(milliseconds{500}).count(), 500);
  for (int i = 0; i < 2000; ++i)
    s.failed(t0);
  CAF_CHECK_EQUAL(s.backoff(milliseconds{5000}).count(), 5000);
  s.succeeded();
  s.failed(t0);
  CAF_CHECK_EQUAL(s.backoff(milliseconds{5000}).count(), 200);
}
