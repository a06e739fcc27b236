#define CAF_SUITE core.timestamp
#include <caf/test/unit_test.hpp>

#include "core/timestamp.hpp"

using namespace outbox;

CAF_TEST(timestamps round trip in utc) {
  const char* cases[] = {"1970-01-01T00:00:00Z", "2026-11-29T20:31:02Z",
                         "2000-02-29T23:59:59.123456Z", "1969-12-31T23:59:59.5Z"};
  const char* expected[] = {"1970-01-01T00:00:00Z", "2026-11-29T20:31:02Z",
                            "2000-02-29T23:59:59.123456Z",
                            "1969-12-31T23:59:59.500000Z"};
  for (size_t i = 0; i < 4; ++i) {
    auto t = parse_timestamp(cases[i]);
    CAF_REQUIRE(t);
    CAF_CHECK_EQUAL(format_timestamp(*t), expected[i]);
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
  for (auto b : bad) {
    CAF_MESSAGE("input " << b);
    CAF_CHECK(!parse_timestamp(b));
  }
}
