#define CAF_SUITE core.retry_policy
#include <caf/test/unit_test.hpp>

#include "core/retry_policy.hpp"

using namespace outbox;
using std::chrono::seconds;

namespace {

const time_point t0 = time_point{} + std::chrono::hours{24 * 365 * 50};

delivery_rules rules(std::vector<int32_t> delays, bool repeat = false) {
  delivery_rules r;
  r.retry_delays_seconds = std::move(delays);
  r.repeat_last_delay = repeat;
  return r;
}

} // namespace

CAF_TEST(two delays give one try and two retries) {
  auto r = rules({60, 120});
  struct step {
    int failures;
    failure_outcome outcome;
    int delay;
  } steps[] = {{1, failure_outcome::retry, 60},
               {2, failure_outcome::retry, 120},
               {3, failure_outcome::fail, 0}};
  for (auto& s : steps) {
    auto d = decide_after_failure(r, s.failures, t0, std::nullopt);
    CAF_CHECK(d.outcome == s.outcome);
    if (s.outcome == failure_outcome::retry)
      CAF_CHECK(d.available_at == t0 + seconds{s.delay});
  }
  CAF_CHECK(!is_last_attempt(r, 0, t0, std::nullopt));
  CAF_CHECK(!is_last_attempt(r, 1, t0, std::nullopt));
  CAF_CHECK(is_last_attempt(r, 2, t0, std::nullopt));
}

CAF_TEST(no delays make the first failure final) {
  auto r = rules({});
  CAF_CHECK(decide_after_failure(r, 1, t0, std::nullopt).outcome
            == failure_outcome::fail);
  CAF_CHECK(is_last_attempt(r, 0, t0, std::nullopt));
}

CAF_TEST(a repeating last delay retries forever without a time to live) {
  auto r = rules({1, 5, 30, 60}, true);
  int expected[] = {1, 5, 30, 60, 60, 60};
  for (int i = 0; i < 6; ++i) {
    auto d = decide_after_failure(r, i + 1, t0, std::nullopt);
    CAF_REQUIRE(d.outcome == failure_outcome::retry);
    CAF_CHECK(d.available_at == t0 + seconds{expected[i]});
  }
  CAF_CHECK(!is_last_attempt(r, 1000, t0, std::nullopt));
}

CAF_TEST(a repeating last delay stops at the time to live) {
  auto r = rules({1, 5, 30, 60}, true);
  auto expires = t0 + seconds{100};
  CAF_CHECK(decide_after_failure(r, 5, t0, expires).outcome
            == failure_outcome::retry);
  CAF_CHECK(decide_after_failure(r, 5, t0 + seconds{40}, expires).outcome
            == failure_outcome::expire);
  CAF_CHECK(is_last_attempt(r, 4, t0 + seconds{40}, expires));
  CAF_CHECK(!is_last_attempt(r, 4, t0 + seconds{39}, expires));
}

CAF_TEST(a retry that would start after expiry expires instead) {
  auto r = rules({60, 120});
  CAF_CHECK(decide_after_failure(r, 1, t0, t0 + seconds{60}).outcome
            == failure_outcome::expire);
  CAF_CHECK(decide_after_failure(r, 1, t0, t0 + seconds{61}).outcome
            == failure_outcome::retry);
  CAF_CHECK(is_last_attempt(r, 0, t0, t0 + seconds{30}));
}

CAF_TEST(the earlier of route ttl and event expiry wins) {
  auto created = t0;
  CAF_CHECK(effective_expiry(0, created, std::nullopt) == std::nullopt);
  CAF_CHECK(effective_expiry(60, created, std::nullopt) == created + seconds{60});
  CAF_CHECK(effective_expiry(0, created, created + seconds{5}) == created + seconds{5});
  CAF_CHECK(effective_expiry(60, created, created + seconds{5}) == created + seconds{5});
  CAF_CHECK(effective_expiry(60, created, created + seconds{500}) == created + seconds{60});
}

CAF_TEST(expiry is inclusive of its instant) {
  CAF_CHECK(!is_expired(std::nullopt, t0));
  CAF_CHECK(!is_expired(t0 + seconds{1}, t0));
  CAF_CHECK(is_expired(t0, t0));
  CAF_CHECK(is_expired(t0 - seconds{1}, t0));
}
