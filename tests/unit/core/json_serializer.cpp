#define CAF_SUITE core.json_serializer
#include <caf/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "core/domain/json_serializer.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

namespace shop {

enum class stock_state { in_stock, sold_out };

std::string to_string(stock_state x) {
  return x == stock_state::in_stock ? "in_stock" : "sold_out";
}

bool from_string(const std::string& s, stock_state& x) {
  if (s == "in_stock")
    x = stock_state::in_stock;
  else if (s == "sold_out")
    x = stock_state::sold_out;
  else
    return false;
  return true;
}

enum class priority : int { low = 1, high = 5 }; // no strings: an integer

struct warehouse {
  std::string code;
  double lat = 0;
  friend bool operator==(const warehouse& a, const warehouse& b) {
    return a.code == b.code && a.lat == b.lat;
  }
};

template <class Inspector>
bool inspect(Inspector& f, warehouse& x) {
  return f(field("code", x.code), field("lat", x.lat));
}

struct stock_changed {
  static constexpr const char* event_type = "stock.changed";
  std::string sku;
  int64_t available = 0;
  uint32_t reserved = 0;
  double price = 0;
  bool active = false;
  std::optional<std::string> note;
  stock_state state = stock_state::in_stock;
  priority prio = priority::low;
  time_point at{};
  warehouse where;
  std::vector<std::string> tags;
  std::map<std::string, int32_t> per_store;
  std::vector<warehouse> alternatives;
};

template <class Inspector>
bool inspect(Inspector& f, stock_changed& x) {
  return f(field("sku", x.sku), field("available", x.available),
           field("reserved", x.reserved), field("price", x.price),
           field("active", x.active), field("note", x.note),
           field("state", x.state), field("prio", x.prio), field("at", x.at),
           field("where", x.where), field("tags", x.tags),
           field("perStore", x.per_store), field("alternatives", x.alternatives));
}

stock_changed sample() {
  stock_changed x;
  x.sku = "A-1 \"é\"";
  x.available = -3;
  x.reserved = 4000000000u;
  x.price = 9.5;
  x.active = true;
  x.state = stock_state::sold_out;
  x.prio = priority::high;
  x.at = *parse_timestamp("2026-11-29T20:31:02.250000Z");
  x.where = {"BER", 52.5};
  x.tags = {"a", "b"};
  x.per_store = {{"s1", 1}, {"s2", 2}};
  x.alternatives = {{"HAM", 53.5}};
  return x;
}

} // namespace shop

using namespace shop;

CAF_TEST(an event with every field kind serializes to json) {
  auto ev = make_event(sample());
  CAF_REQUIRE(ev);
  CAF_CHECK_EQUAL(ev->event_type, "stock.changed");
  CAF_CHECK_EQUAL(ev->content_type, "application/json");
  CAF_CHECK_EQUAL(
    ev->payload,
    R"({"sku":"A-1 \"é\"","available":-3,"reserved":4000000000,"price":9.5,)"
    R"("active":true,"note":null,"state":"sold_out","prio":5,)"
    R"("at":"2026-11-29T20:31:02.250000Z","where":{"code":"BER","lat":52.5},)"
    R"("tags":["a","b"],"perStore":{"s1":1,"s2":2},)"
    R"("alternatives":[{"code":"HAM","lat":53.5}]})");
}

CAF_TEST(a payload reads back into an equal value) {
  auto x = sample();
  x.note = "restocked";
  auto ev = make_event(x);
  CAF_REQUIRE(ev);
  auto y = read_event<stock_changed>(ev->event_type, ev->payload);
  CAF_REQUIRE(y);
  CAF_CHECK_EQUAL(y->sku, x.sku);
  CAF_CHECK_EQUAL(y->available, x.available);
  CAF_CHECK_EQUAL(y->reserved, x.reserved);
  CAF_CHECK_EQUAL(y->price, x.price);
  CAF_CHECK_EQUAL(y->active, x.active);
  CAF_CHECK_EQUAL(*y->note, "restocked");
  CAF_CHECK(y->state == x.state);
  CAF_CHECK(y->prio == x.prio);
  CAF_CHECK(y->at == x.at);
  CAF_CHECK(y->where == x.where);
  CAF_CHECK_EQUAL(y->tags, x.tags);
  CAF_CHECK_EQUAL(y->per_store, x.per_store);
  CAF_CHECK(y->alternatives == x.alternatives);
}

CAF_TEST(nan infinity and invalid utf8 are rejected with the field path) {
  struct {
    void (*change)(stock_changed&);
    const char* expected;
  } cases[] = {
    {[](stock_changed& x) { x.price = std::nan(""); },
     "payload.price: NaN is not allowed"},
    {[](stock_changed& x) { x.alternatives[0].lat = INFINITY; },
     "payload.alternatives[0].lat: infinity is not allowed"},
    {[](stock_changed& x) { x.tags[1] = "\xC3\x28"; },
     "payload.tags[1]: is not valid UTF-8"},
    {[](stock_changed& x) { x.note = "\xFF"; }, "payload.note: is not valid UTF-8"},
  };
  for (auto& c : cases) {
    auto x = sample();
    c.change(x);
    auto ev = make_event(x);
    OUTBOX_CHECK_CASE(c.expected, !ev);
    if (ev)
      continue;
    OUTBOX_CHECK_CASE(c.expected, ev.error() == errc::serialize_failed);
    OUTBOX_CHECK_CASE_EQUAL(c.expected, context_of(ev.error()), c.expected);
  }
}

CAF_TEST(payloads that do not fit the type name the field) {
  struct {
    const char* json;
    const char* expected;
  } cases[] = {
    {R"({"available":1})", "payload.sku: is missing"},
    {R"({"sku":5})", "payload.sku: expected a string"},
    {R"({"sku":"a","available":1.5})", "payload.available: expected an integer"},
    {R"({"sku":"a","available":1,"reserved":-1})", "payload.reserved: expected a non-negative"},
    {R"({"sku":"a","available":1,"reserved":1,"price":"x"})", "payload.price: expected a number"},
    {"{\"sku\":\"a\"", "payload: not valid JSON"},
  };
  for (auto& c : cases) {
    auto y = json_serializer::deserialize<stock_changed>(c.json);
    OUTBOX_CHECK_CASE(c.json, !y);
    if (y)
      continue;
    OUTBOX_CHECK_CASE(c.json, y.error() == errc::deserialize_failed);
    OUTBOX_CHECK_CASE(std::string{c.json} + ": expected «" + c.expected + "» in «"
                        + context_of(y.error()) + "»",
                      context_of(y.error()).find(c.expected) != std::string::npos);
  }
  auto wrong_type = read_event<stock_changed>("order.placed", "{}");
  CAF_REQUIRE(!wrong_type);
  CAF_CHECK_NOT_EQUAL(context_of(wrong_type.error()).find("is not \"stock.changed\""),
                      std::string::npos);
}

CAF_TEST(unknown enum names and missing optionals) {
  auto base = std::string{R"({"sku":"a","available":1,"reserved":1,"price":1,)"
                          R"("active":true,"prio":1,"at":"2026-01-01T00:00:00Z",)"
                          R"("where":{"code":"c","lat":1},"tags":[],"perStore":{},)"
                          R"("alternatives":[],)"};
  auto ok = json_serializer::deserialize<stock_changed>(base + R"("state":"in_stock"})");
  CAF_REQUIRE(ok);
  CAF_CHECK(!ok->note); // absent optional: nullopt
  auto bad = json_serializer::deserialize<stock_changed>(base + R"("state":"lost"})");
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(context_of(bad.error()), "payload.state: expected one of the enum's names");
}

// A payload nested a million deep (an attack or a bug upstream) is refused,
// not a stack overflow.
CAF_TEST(a payload nested a million deep is refused without a crash) {
  std::string deep(1'000'000, '[');
  auto y = json_serializer::deserialize<stock_changed>(deep);
  CAF_REQUIRE(!y);
  CAF_CHECK(y.error() == errc::deserialize_failed);
  auto closed = deep + std::string(1'000'000, ']');
  auto z = json_serializer::deserialize<stock_changed>(closed);
  CAF_REQUIRE(!z);
  CAF_CHECK(z.error() == errc::deserialize_failed);
}
