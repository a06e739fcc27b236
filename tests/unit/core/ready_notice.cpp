#define CAF_SUITE core.ready_notice
#include <caf/test/unit_test.hpp>

#include "core/domain/ready_notice.hpp"
#include "core/domain/schema_names.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(a payload carries the origin and the whole queue name) {
  auto origin = new_wake_origin();
  CAF_CHECK_EQUAL(origin.size(), 16u);
  CAF_CHECK_EQUAL(origin.find(' '), std::string::npos);
  auto n = parse_ready_payload(ready_payload(origin, "stock publish v2"));
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(n->origin, origin);
  CAF_CHECK_EQUAL(n->queue, "stock publish v2");
  std::string long_queue(255, 'q');
  auto long_one = parse_ready_payload(ready_payload(origin, long_queue));
  CAF_REQUIRE(long_one);
  CAF_CHECK_EQUAL(long_one->queue, long_queue);
}

CAF_TEST(payloads of anything else are ignored) {
  for (std::string bad : {"", "jobs", " jobs", "abc "})
    OUTBOX_CHECK_CASE("\"" + bad + "\"", !parse_ready_payload(bad));
}

CAF_TEST(origins differ between nodes) {
  CAF_CHECK_NOT_EQUAL(new_wake_origin(), new_wake_origin());
}

CAF_TEST(the ready channel fits the length of an identifier) {
  schema_names n;
  n.deliveries = std::string(max_identifier_length, 'd');
  CAF_CHECK_LESS_OR_EQUAL(n.ready_channel().size(), 63u);
  CAF_CHECK_EQUAL(schema_names{}.ready_channel(), "outbox_deliveries_ready");
}
