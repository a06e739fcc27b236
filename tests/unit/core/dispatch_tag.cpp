#define CAF_SUITE core.dispatch_tag
#include <caf/test/unit_test.hpp>

#include "core/domain/dispatch_tag.hpp"
#include "core/domain/schema_names.hpp"

using namespace outbox;

CAF_TEST(a database name has a fixed tag of eight hex digits) {
  auto tag = dispatch_tag_of("orders");
  CAF_CHECK_EQUAL(tag.size(), 8u);
  CAF_CHECK_EQUAL(tag, dispatch_tag_of("orders"));
  CAF_CHECK_NOT_EQUAL(tag, dispatch_tag_of("billing"));
  // FNV-1a of the empty string: its offset basis.
  CAF_CHECK_EQUAL(dispatch_tag_of(""), "811c9dc5");
}

CAF_TEST(the tag is read off a dispatch id in any case) {
  CAF_CHECK_EQUAL(tag_in("0B7C6A3E-5f1d-4a8e-9c2b-1d2e3f4a5b6c"), "0b7c6a3e");
  CAF_CHECK_EQUAL(tag_in("0b7c6a3e5f1d4a8e9c2b1d2e3f4a5b6c"), "");
  CAF_CHECK_EQUAL(tag_in("0b7c6a3g-5f1d-4a8e-9c2b-1d2e3f4a5b6c"), "");
  CAF_CHECK_EQUAL(tag_in(""), "");
}

CAF_TEST(the sql of a new dispatch id carries the tag or none) {
  CAF_CHECK_EQUAL(new_dispatch_id_sql(""), "gen_random_uuid()");
  CAF_CHECK_EQUAL(new_dispatch_id_sql("0b7c6a3e"),
                  "overlay(gen_random_uuid()::text placing '0b7c6a3e' from 1 "
                  "for 8)::uuid");
  schema_names n;
  n.dispatch_tag = "0b7c6a3e";
  CAF_CHECK_EQUAL(fill_names("SET dispatch_id = {{new_dispatch_id}}", n),
                  "SET dispatch_id = " + new_dispatch_id_sql("0b7c6a3e"));
  CAF_CHECK_EQUAL(n.with_prefix("t_").dispatch_tag, "0b7c6a3e");
}

CAF_TEST(dispatch ids are split by their tag and an unknown tag goes to all) {
  auto a = dispatch_tag_of("a"), b = dispatch_tag_of("b");
  auto rest = std::string{"-5f1d-4a8e-9c2b-1d2e3f4a5b6c"};
  auto parts = split_by_tag({b + rest, a + rest, "ffffffff" + rest, "bad"},
                            {a, b});
  CAF_REQUIRE_EQUAL(parts.size(), 2u);
  CAF_CHECK_EQUAL(parts[0], (std::vector<size_t>{1, 2, 3}));
  CAF_CHECK_EQUAL(parts[1], (std::vector<size_t>{0, 2, 3}));
}
