#define CAF_SUITE core.logging
#include <caf/test/unit_test.hpp>

#include "core/base/logging.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(values are quoted only when a key value line needs it) {
  struct {
    const char* value;
    const char* written;
  } cases[] = {
    {"stock.publish", "stock.publish"},
    {"", "\"\""},
    {"two words", "\"two words\""},
    {"a=b", "\"a=b\""},
    {"say \"hi\"", "\"say \\\"hi\\\"\""},
    {"line\nbreak", "\"line break\""},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.value, kv(c.value), c.written);
}

CAF_TEST(log levels are checked by name) {
  CAF_CHECK(set_log_level("debug"));
  CAF_CHECK(set_log_level("off"));
  CAF_CHECK(!set_log_level("loud"));
  CAF_CHECK(set_log_level("info"));
  CAF_CHECK(logger("test") == logger("test"));
}

CAF_TEST(delivery lines carry the designed fields and nothing else) {
  delivery_fields f{7, 42, "stock.changed", "PublishStockJob", "stock.publish",
                    "pending", 2, "no result before the delivery timeout"};
  CAF_CHECK_EQUAL(format_fields(f),
                  "outboxEventId=7 outboxDeliveryId=42 eventType=stock.changed "
                  "job=PublishStockJob queue=stock.publish status=pending "
                  "attempts=2 reason=\"no result before the delivery timeout\"");
  f.reason.clear();
  CAF_CHECK_EQUAL(format_fields(f).find("reason="), std::string::npos);
}
