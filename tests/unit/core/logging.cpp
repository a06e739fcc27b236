#define CAF_SUITE core.logging
#include <caf/test/unit_test.hpp>

#include "core/logging.hpp"

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
