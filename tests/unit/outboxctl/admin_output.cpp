#define CAF_SUITE outboxctl.admin_output
#include <caf/test/unit_test.hpp>

#include "tools/outboxctl/admin_output.hpp"

using namespace outbox;

CAF_TEST(user text is quoted and cannot drive the terminal) {
  CAF_CHECK_EQUAL(quoted_text("order 7"), "\"order 7\"");
  CAF_CHECK_EQUAL(quoted_text("a\"b\\c"), "\"a\\\"b\\\\c\"");
  CAF_CHECK_EQUAL(quoted_text("\x1b[31mred\n"), "\"\\x1b[31mred\\x0a\"");
  CAF_CHECK_EQUAL(quoted_text("del\x7f"), "\"del\\x7f\"");
  // C1 controls (CSI is U+009B) are escaped; other UTF-8 stays.
  CAF_CHECK_EQUAL(quoted_text("\xc2\x9b" "2J gr\xc3\xbc\xc3\x9f" "e"),
                  "\"\\xc2\\x9b2J gr\xc3\xbc\xc3\x9f" "e\"");
  CAF_CHECK_EQUAL(quoted_text(""), "\"\"");
}

CAF_TEST(ids are positive integers) {
  CAF_CHECK(parse_ids({"1", "22"}) == (std::vector<int64_t>{1, 22}));
  CAF_CHECK(!parse_ids({"0"}));
  CAF_CHECK(!parse_ids({"-1"}));
  CAF_CHECK(!parse_ids({"x1"}));
  CAF_CHECK(!parse_ids({"1234567890123456789"}));
}
