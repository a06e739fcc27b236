#define CAF_SUITE core.logging
#include <caf/test/unit_test.hpp>

#include "core/base/logging.hpp"

using namespace outbox;

CAF_TEST(values are quoted only when a key value line needs it) {
  CAF_CHECK_EQUAL(kv("stock.publish"), "stock.publish");
  CAF_CHECK_EQUAL(kv(""), "\"\"");
  CAF_CHECK_EQUAL(kv("two words"), "\"two words\"");
  CAF_CHECK_EQUAL(kv("a=b"), "\"a=b\"");
  CAF_CHECK_EQUAL(kv("say \"hi\""), "\"say \\\"hi\\\"\"");
  CAF_CHECK_EQUAL(kv("line\nbreak"), "\"line break\"");
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
