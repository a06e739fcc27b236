#define CAF_SUITE core.omittable
#include <caf/test/unit_test.hpp>

#include "core/domain/json_serializer.hpp"
#include "core/json/omittable.hpp"

using namespace outbox;

namespace {

struct note {
  int64_t id = 0;
  omittable<std::string> text;
};

template <class Inspector>
bool inspect(Inspector& f, note& x) {
  return f(field("id", x.id), field("text", x.text));
}

} // namespace

CAF_TEST(an empty omittable field is left out and read back as empty) {
  note n;
  n.id = 1;
  auto json = json_serializer::serialize(n);
  CAF_REQUIRE(json);
  CAF_CHECK_EQUAL(*json, "{\"id\":1}");
  auto back = json_serializer::deserialize<note>(*json);
  CAF_REQUIRE(back);
  CAF_CHECK(!back->text);
}

CAF_TEST(a present omittable field is written and read as its value) {
  note n;
  n.id = 2;
  n.text = "hi";
  auto json = json_serializer::serialize(n);
  CAF_REQUIRE(json);
  CAF_CHECK_EQUAL(*json, "{\"id\":2,\"text\":\"hi\"}");
  auto back = json_serializer::deserialize<note>(*json);
  CAF_REQUIRE(back);
  CAF_CHECK_EQUAL(back->text.value_or(""), "hi");
}
