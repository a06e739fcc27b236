#define CAF_SUITE outboxctl.pause_verbs
#include <caf/test/unit_test.hpp>

#include "tools/outboxctl/pause_verbs.hpp"

using namespace outbox;

// What `outboxctl pause --for` and `--reason` take, checked before anything
// reaches the database.

CAF_TEST(a duration is a whole number and a unit) {
  CAF_CHECK_EQUAL(parse_pause_duration("90s").value_or(-1), 90);
  CAF_CHECK_EQUAL(parse_pause_duration("15m").value_or(-1), 900);
  CAF_CHECK_EQUAL(parse_pause_duration("2h").value_or(-1), 7200);
  CAF_CHECK_EQUAL(parse_pause_duration("366d").value_or(-1), 366 * 86400);
  for (auto bad : {"", "s", "10", "0s", "-5m", "1.5h", "10x", "367d", "5 m",
                   "99999999999d", "m5"})
    if (parse_pause_duration(bad))
      CAF_FAIL("accepted \"" << bad << "\"");
}

CAF_TEST(a reason is one short line) {
  CAF_CHECK_EQUAL(reason_refused(""), "");
  CAF_CHECK_EQUAL(reason_refused("stock service upgrade, ticket OPS-12"), "");
  CAF_CHECK_EQUAL(reason_refused("Wartung für Lager"), "");
  CAF_CHECK_NOT_EQUAL(reason_refused("two\nlines"), "");
  CAF_CHECK_NOT_EQUAL(reason_refused("\x1b[2J"), "");
  CAF_CHECK_NOT_EQUAL(reason_refused(std::string(201, 'a')), "");
}
