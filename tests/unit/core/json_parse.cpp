#define CAF_SUITE core.json_parse
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/json/json_parse.hpp"

using namespace outbox;

namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

// The reason a text is refused for, "accepted" when it is not.
std::string verdict(const std::string& text, json_limits limits = {1 << 20, 8}) {
  rapidjson::Document doc;
  auto why = parse_json(text, limits, doc);
  return why ? *why : "accepted";
}

} // namespace

CAF_TEST(nesting up to the limit is read and one level more is refused) {
  CAF_CHECK_EQUAL(verdict(nested(8)), "accepted");
  CAF_CHECK_EQUAL(verdict(nested(9)), "nested deeper than 8 levels");
  CAF_CHECK_EQUAL(verdict(R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{}}}}}}}})"),
                  "accepted");
  CAF_CHECK_EQUAL(verdict(R"({"a":[{"b":[{"c":[{"d":[{"e":1}]}]}]}]})"),
                  "nested deeper than 8 levels");
}

CAF_TEST(nesting far too deep is refused without exhausting the stack) {
  // 1,000,000 levels crashed a recursive parser (and its destructor).
  CAF_CHECK_EQUAL(verdict(nested(1000000), {8 << 20, 64}),
                  "nested deeper than 64 levels");
  CAF_CHECK_EQUAL(verdict(std::string(200000, '['), {8 << 20, 64}),
                  "nested deeper than 64 levels");
  CAF_CHECK_EQUAL(verdict(nested(100000, '{', '}'), {8 << 20, 100000}),
                  "not valid JSON at offset 1: Missing a name for object "
                  "member.");
  std::string objects;
  for (int i = 0; i < 100000; ++i)
    objects += R"({"a":)";
  CAF_CHECK_EQUAL(verdict(objects + "1" + std::string(100000, '}'),
                          {8 << 20, 64}),
                  "nested deeper than 64 levels");
}

CAF_TEST(a document over the size limit is refused before it is read) {
  CAF_CHECK_EQUAL(verdict(R"(["abc"])", {7, 8}), "accepted");
  CAF_CHECK_EQUAL(verdict(R"(["abcd"])", {7, 8}), "larger than 7 bytes");
}

CAF_TEST(a NUL byte is refused wherever it stands) {
  // RapidJSON takes a NUL for the end of the text: what follows was ignored.
  CAF_CHECK_EQUAL(verdict(std::string{"{}\0{\"x\"", 7}), "contains a NUL byte");
  CAF_CHECK_EQUAL(verdict(std::string{"[\"a\0b\"]", 7}), "contains a NUL byte");
  CAF_CHECK_EQUAL(verdict(R"(["a\u0000b"])"), "accepted"); // escaped: JSON's own
}

CAF_TEST(invalid UTF-8 and numbers no double holds are refused) {
  CAF_CHECK_EQUAL(verdict("[\"\xff\"]"), "a string is not valid UTF-8");
  CAF_CHECK_EQUAL(verdict("[\"\xc3\"]"), "a string is not valid UTF-8");
  CAF_CHECK_EQUAL(verdict(R"({"x":1e400})"),
                  "a number is too large for a 64-bit floating point value");
  CAF_CHECK_EQUAL(verdict(R"({"x":-1e309})"),
                  "a number is too large for a 64-bit floating point value");
  CAF_CHECK_EQUAL(verdict(R"({"x":1.7976931348623157e308})"), "accepted");
  CAF_CHECK_EQUAL(verdict("[NaN]"), "not valid JSON at offset 1: Invalid value.");
}

CAF_TEST(the document holds the value after a good parse) {
  rapidjson::Document doc;
  CAF_REQUIRE(!parse_json(R"({"a":[1,"two",{"b":null}]})", {1 << 10, 4}, doc));
  CAF_CHECK(doc.IsObject());
  CAF_CHECK_EQUAL(doc["a"][1].GetString(), std::string{"two"});
  // A refused parse leaves no half-built value behind.
  CAF_CHECK(parse_json(nested(10), {1 << 10, 4}, doc));
  CAF_CHECK(doc.IsNull());
}

CAF_TEST(duplicate keys are found) {
  rapidjson::Document doc;
  CAF_REQUIRE(!parse_json(R"({"a":1,"b":2,"a":3})", {1 << 10, 4}, doc));
  CAF_CHECK(has_duplicate_keys(doc));
  CAF_REQUIRE(!parse_json(R"({"a":1,"b":{"a":2}})", {1 << 10, 4}, doc));
  CAF_CHECK(!has_duplicate_keys(doc));
}

CAF_TEST(an escape that decodes to invalid UTF-8 is refused) {
  // A lone low surrogate passed RapidJSON's check of the text's bytes and
  // became bytes the database refuses (a result's reason, say).
  CAF_CHECK_EQUAL(verdict(R"({"reason":"\udc00"})"), "a string is not valid UTF-8");
  CAF_CHECK_EQUAL(verdict(R"({"\udfff":1})"), "a string is not valid UTF-8");
  CAF_CHECK_EQUAL(verdict(R"({"x":"\ud83d\ude00"})"), "accepted"); // a pair
}
