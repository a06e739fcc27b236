#define CAF_SUITE core.schema_names
#include <caf/test/unit_test.hpp>

#include "core/domain/schema_names.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(identifiers are lower case letters digits and underscores) {
  for (auto good : {"outbox_events", "_x", "t1_events", "a"})
    OUTBOX_CHECK_CASE_EQUAL(good, check_identifier(good), "");
  struct {
    std::string name;
    const char* rule;
  } bad[] = {{"", "must not be empty"},
             {"1abc", "must start with"},
             {"Events", "must start with"},
             {"a-b", "may hold only"},
             {"a\"b", "may hold only"},
             {std::string(49, 'a'), "at most 48"}};
  for (auto& b : bad)
    OUTBOX_CHECK_CASE("\"" + b.name + "\": " + check_identifier(b.name),
                      check_identifier(b.name).find(b.rule) != std::string::npos);
}

CAF_TEST(a prefix renames every object) {
  auto n = schema_names{}.with_prefix("t42_");
  CAF_CHECK_EQUAL(n.events, "t42_outbox_events");
  CAF_CHECK_EQUAL(n.deliveries, "t42_outbox_deliveries");
  CAF_CHECK_EQUAL(n.migrations, "t42_outbox_migrations");
  CAF_CHECK_EQUAL(n.publish_function, "t42_outbox_publish");
  CAF_CHECK_EQUAL(n.notify_channel(), "t42_outbox_events");
}
