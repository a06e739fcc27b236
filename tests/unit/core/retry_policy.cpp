#define CAF_SUITE core.retry_policy
#include <caf/test/unit_test.hpp>

#include <cstdint>

#include "core/base/timestamp.hpp"
#include "core/domain/retry_policy.hpp"
#include "tests/unit/case_check.hpp"

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
    auto name = "failure " + std::to_string(s.failures);
    auto d = decide_after_failure(r, s.failures, t0, std::nullopt);
    OUTBOX_CHECK_CASE(name, d.outcome == s.outcome);
    if (s.outcome == failure_outcome::retry)
      OUTBOX_CHECK_CASE(name, d.available_at == t0 + seconds{s.delay});
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
  struct {
    int failures;
    int delay;
  } steps[] = {{1, 1}, {2, 5}, {3, 30}, {4, 60}, {5, 60}, {6, 60}};
  for (auto& s : steps) {
    auto name = "failure " + std::to_string(s.failures);
    auto d = decide_after_failure(r, s.failures, t0, std::nullopt);
    OUTBOX_CHECK_CASE(name, d.outcome == failure_outcome::retry);
    OUTBOX_CHECK_CASE(name, d.available_at == t0 + seconds{s.delay});
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
  struct {
    const char* name;
    int64_t ttl_seconds;
    std::optional<time_point> event_expiry;
    std::optional<time_point> expected;
  } cases[] = {
    {"neither", 0, std::nullopt, std::nullopt},
    {"the route's ttl alone", 60, std::nullopt, created + seconds{60}},
    {"the event's expiry alone", 0, created + seconds{5}, created + seconds{5}},
    {"the event's expiry, earlier", 60, created + seconds{5}, created + seconds{5}},
    {"the route's ttl, earlier", 60, created + seconds{500}, created + seconds{60}},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE(c.name, effective_expiry(c.ttl_seconds, created, c.event_expiry)
                                == c.expected);
}

CAF_TEST(expiry is inclusive of its instant) {
  struct {
    const char* name;
    std::optional<time_point> expiry;
    bool expired;
  } cases[] = {
    {"no expiry", std::nullopt, false},
    {"a second later", t0 + seconds{1}, false},
    {"this instant", t0, true},
    {"a second ago", t0 - seconds{1}, true},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.name, is_expired(c.expiry, t0), c.expired);
}

// Regression: an expiry in 2300 (read from the database) or a TTL of
// 10,000,000,000 s wrapped around the int64 nanoseconds of a time_point to
// a time long past, so a failed send expired the delivery instead of
// scheduling its retry.
CAF_TEST(expiries after 2262 leave the retry arithmetic intact) {
  auto r = rules({60, 120});
  constexpr int64_t us_2300 = 10'413'792'000'000'000; // 2300-01-01T00:00:00Z
  auto in_2300 = from_unix_micros(us_2300);
  auto d = decide_after_failure(r, 1, t0, in_2300);
  CAF_CHECK(d.outcome == failure_outcome::retry);
  CAF_CHECK(d.available_at == t0 + seconds{60});
  CAF_CHECK(!is_last_attempt(r, 0, t0, in_2300));
  auto far = effective_expiry(10'000'000'000, t0, std::nullopt);
  CAF_REQUIRE(far);
  CAF_CHECK(*far == time_point::max());
  CAF_CHECK(!is_expired(far, t0));
  CAF_CHECK(decide_after_failure(r, 1, t0, far).outcome == failure_outcome::retry);
  // The earlier one still wins when the other saturates.
  CAF_CHECK(effective_expiry(10'000'000'000, t0, t0 + seconds{5}) == t0 + seconds{5});
  // Near the end of the range a retry delay saturates too: still a retry,
  // not a wrapped time before now.
  auto late = time_point::max() - seconds{30};
  auto near_end = decide_after_failure(r, 1, late, std::nullopt);
  CAF_CHECK(near_end.outcome == failure_outcome::retry);
  CAF_CHECK(near_end.available_at == time_point::max());
}

// A job message outlives neither the relay's wait for its result nor the
// delivery's time to live: once either is over, RabbitMQ drops it unread.
CAF_TEST(a job message lives until the timeout or the time to live) {
  auto r = rules({60});
  r.delivery_timeout_seconds = 30;
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, std::nullopt), 30000);
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, t0 + seconds{31}), 30000);
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, t0 + seconds{5}), 5000);
  // Rounded up: it never dies before its time to live does.
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, t0 + std::chrono::microseconds{1200}), 2);
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, t0 + std::chrono::nanoseconds{1}), 1);
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, t0), 1);
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, time_point::max()), 30000);
  r.delivery_timeout_seconds = INT32_MAX;
  CAF_CHECK_EQUAL(message_lifetime_ms(r, t0, std::nullopt), int64_t{INT32_MAX} * 1000);
}
