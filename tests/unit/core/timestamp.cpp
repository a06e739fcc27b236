#define CAF_SUITE core.timestamp
#include <caf/test/unit_test.hpp>

#include "core/base/timestamp.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(timestamps round trip in utc) {
  struct {
    const char* text;
    const char* formatted;
  } cases[] = {
    {"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
    {"2026-11-29T20:31:02Z", "2026-11-29T20:31:02Z"},
    {"2000-02-29T23:59:59.123456Z", "2000-02-29T23:59:59.123456Z"},
    {"1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.500000Z"},
  };
  for (auto& c : cases) {
    auto t = parse_timestamp(c.text);
    OUTBOX_CHECK_CASE(c.text, t.has_value());
    if (t)
      OUTBOX_CHECK_CASE_EQUAL(c.text, format_timestamp(*t), c.formatted);
  }
  CAF_CHECK(parse_timestamp("2026-11-29T20:31:02+00:00")
            == parse_timestamp("2026-11-29T20:31:02Z"));
}

CAF_TEST(malformed timestamps are rejected) {
  const char* bad[] = {"", "2026-11-29", "2026-11-29 20:31:02Z",
                       "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                       "2025-02-29T00:00:00Z", "2026-11-29T20:31:02+01:00",
                       "2026-11-29T20:31:02", "2026-11-29T20:31:02.Z",
                       "2026-11-29T24:00:00Z"};
  for (auto b : bad)
    OUTBOX_CHECK_CASE(b, !parse_timestamp(b));
}

// A time_point (int64 nanoseconds) ends in April 2262; the database's
// microseconds and long TTLs go further and must not wrap around.
CAF_TEST(conversions past 2262 saturate instead of wrapping around) {
  constexpr int64_t us_2300 = 10'413'792'000'000'000; // 2300-01-01T00:00:00Z
  CAF_CHECK(from_unix_micros(us_2300) == time_point::max());
  CAF_CHECK(from_unix_micros(-us_2300) == time_point::min());
  CAF_CHECK(from_unix_micros(INT64_MAX) == time_point::max());
  CAF_CHECK(from_unix_micros(INT64_MIN) == time_point::min());
  CAF_CHECK_EQUAL(format_timestamp(from_unix_micros(1'000'000)),
                  "1970-01-01T00:00:01Z");
  auto now = *parse_timestamp("2026-12-01T00:00:00Z");
  CAF_CHECK(plus_seconds(now, 10'000'000'000) == time_point::max());
  CAF_CHECK(plus_seconds(now, -10'000'000'000) == time_point::min());
  CAF_CHECK(plus_seconds(now, INT64_MAX) == time_point::max());
  CAF_CHECK(plus_seconds(now, INT64_MIN) == time_point::min());
  CAF_CHECK(plus_seconds(time_point::max(), 1) == time_point::max());
  CAF_CHECK_EQUAL(format_timestamp(plus_seconds(now, 3'153'600'000)),
                  "2126-11-07T00:00:00Z"); // 100 years of 365 days
  CAF_CHECK_EQUAL(format_timestamp(plus_seconds(now, -60)),
                  "2026-11-30T23:59:00Z");
}

CAF_TEST(timestamps a time_point cannot hold are refused) {
  struct {
    const char* text;
    bool held;
  } cases[] = {
    {"2300-01-01T00:00:00Z", false},
    {"2262-04-12T00:00:00Z", false},
    {"1600-01-01T00:00:00Z", false},
    {"2262-04-11T00:00:00Z", true},
    {"2199-12-31T23:59:59Z", true},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.text, parse_timestamp(c.text).has_value(), c.held);
}
