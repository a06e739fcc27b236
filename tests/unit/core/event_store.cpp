#define CAF_SUITE core.event_store
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/domain/event_limits.hpp"
#include "core/producer/event_store.hpp"
#include "core/base/timestamp.hpp"

using namespace outbox;

namespace {

event valid() {
  event ev;
  ev.event_type = "stock.changed";
  ev.payload = R"({"sku":"A1","available":3})";
  return ev;
}

} // namespace

CAF_TEST(a well formed event passes validation) {
  CAF_CHECK(!validate_event(valid()));
  auto ev = valid();
  ev.content_type = "text/plain";
  ev.payload = "not json, and that is fine for text/plain";
  CAF_CHECK(!validate_event(ev));
}

CAF_TEST(each bad field is named) {
  struct {
    void (*change)(event&);
    const char* expected;
  } cases[] = {
    {[](event& e) { e.event_type = ""; }, "event_type: must have 1 to 255 bytes"},
    {[](event& e) { e.event_type = std::string(256, 'x'); }, "event_type: must have 1 to 255"},
    {[](event& e) { e.event_type = "bad\xC3\x28"; }, "event_type: is not valid UTF-8"},
    {[](event& e) { e.payload = "{\"a\":NaN}"; }, "payload: not valid JSON"},
    {[](event& e) { e.payload = "{\"a\":\"\xC3\x28\"}"; }, "payload: is not valid UTF-8"},
    {[](event& e) { e.key = std::string{}; }, "key: must be non-empty"},
    {[](event& e) { e.ttl_seconds = -1; }, "ttl_seconds = -1: must be >= 0"},
    {[](event& e) { e.content_type = ""; }, "content_type: must not be empty"},
    {[](event& e) { e.headers = {{"trace", "\xC3\x28"}}; }, "headers: names must be non-empty"},
    {[](event& e) { e.headers = {{"", "x"}}; }, "headers: names must be non-empty"},
  };
  for (auto& c : cases) {
    auto ev = valid();
    c.change(ev);
    auto err = validate_event(ev);
    CAF_REQUIRE(err);
    CAF_CHECK(err == errc::invalid_event);
    if (render(err).find(c.expected) == std::string::npos)
      CAF_FAIL("expected «" << c.expected << "» in «" << render(err) << "»");
  }
}

// The limits of core/domain/event_limits.hpp, at each edge: the last accepted
// value and the first refused one.
CAF_TEST(the limits accept up to their edge and refuse beyond it) {
  using namespace outbox::limits;
  auto accepts = [](void (*change)(event&)) {
    auto ev = valid();
    change(ev);
    auto err = validate_event(ev);
    if (err)
      CAF_MESSAGE("refused: " << render(err));
    return !err;
  };
  CAF_CHECK(accepts([](event& e) { e.event_type = std::string(255, 'x'); }));
  CAF_CHECK(!accepts([](event& e) { e.event_type = std::string(254, 'x') + "\xC3\xA9"; }));
  CAF_CHECK(!accepts([](event& e) { e.event_type = "a\tb"; }));
  CAF_CHECK(!accepts([](event& e) { e.event_type = "a\x7f"; }));
  CAF_CHECK(!accepts([](event& e) { e.event_type = "   "; }));
  CAF_CHECK(accepts([](event& e) { e.key = std::string(1024, 'k'); }));
  CAF_CHECK(!accepts([](event& e) { e.key = std::string(1025, 'k'); }));
  CAF_CHECK(!accepts([](event& e) { e.key = std::string(8000, 'k'); }));
  CAF_CHECK(!accepts([](event& e) { e.key = "a\nb"; }));
  CAF_CHECK(!accepts([](event& e) { e.key = std::string{"a\0b", 3}; }));
  CAF_CHECK(accepts([](event& e) { e.ttl_seconds = 3'153'600'000; }));
  CAF_CHECK(!accepts([](event& e) { e.ttl_seconds = 3'153'600'001; }));
  CAF_CHECK(!accepts([](event& e) { e.ttl_seconds = 10'000'000'000; }));
  CAF_CHECK(accepts([](event& e) { e.expires_at = *parse_timestamp("2199-12-31T23:59:59Z"); }));
  CAF_CHECK(!accepts([](event& e) { e.expires_at = *parse_timestamp("2200-01-01T00:00:00Z"); }));
  CAF_CHECK(!accepts([](event& e) { e.expires_at = time_point::max(); }));
  CAF_CHECK(!accepts([](event& e) { e.expires_at = time_point::min(); }));
  CAF_CHECK(accepts([](event& e) { e.expires_at = time_point{}; }));
  CAF_CHECK(!accepts([](event& e) { e.expires_at = time_point{} - std::chrono::seconds{1}; }));
  CAF_CHECK(accepts([](event& e) {
    e.content_type = "text/plain";
    e.payload = std::string(max_payload_bytes, 'p');
  }));
  CAF_CHECK(!accepts([](event& e) {
    e.content_type = "text/plain";
    e.payload = std::string(max_payload_bytes + 1, 'p');
  }));
  CAF_CHECK(!accepts([](event& e) {
    e.content_type = "text/plain";
    e.payload = std::string{"a\0b", 3};
  }));
  CAF_CHECK(accepts([](event& e) { e.payload = std::string(64, '[') + std::string(64, ']'); }));
  CAF_CHECK(!accepts([](event& e) { e.payload = std::string(65, '[') + std::string(65, ']'); }));
  CAF_CHECK(!accepts([](event& e) {
    e.payload = std::string(100000, '[') + std::string(100000, ']');
  }));
  // Brackets inside strings are not nesting.
  CAF_CHECK(accepts([](event& e) { e.payload = "[\"" + std::string(100, '[') + "\\\"[\"]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[1.7976931348623157e308,-1.7976931348623157e308,1e-400]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "{\"x\":1e400}"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[-1.8e308]"; })); // RapidJSON: -inf
  CAF_CHECK(!accepts([](event& e) { e.payload = "[1.79769313486231571e308]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[1.79769313486231570e308, 17976931348623157e292]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[0.00017976931348623157e312, -0.0e-5]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[0.00017976931348623158e312]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[12345678901234567890123, 1E+300, 5e-400]"; }));
  // Malformed number tokens stay the parser's to refuse (and never overflow
  // the scan's exponent).
  CAF_CHECK(!accepts([](event& e) { e.payload = "[1e" + std::string(40, '.') + "]"; }));
  // PostgreSQL's numeric holds 16383 decimal places, RapidJSON reads 0.
  CAF_CHECK(!accepts([](event& e) { e.payload = "[1e-" + std::string(40, '9') + "]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[1e-16383, 0.5e-16382, -1.0e-16382]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[1e-16384]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[0.5e-16383]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[0e-20000]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[1e+" + std::string(40, '9') + "]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[\"a\\u0000b\"]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[\"a\\\\u0000b\"]"; })); // an escaped backslash
  CAF_CHECK(!accepts([](event& e) { e.payload = "[\"\\udc00\"]"; }));
  CAF_CHECK(!accepts([](event& e) { e.payload = "[\"\\ud800x\"]"; }));
  CAF_CHECK(accepts([](event& e) { e.payload = "[\"\\ud83d\\ude00\"]"; }));
  CAF_CHECK(accepts([](event& e) {
    for (int i = 0; i < 64; ++i)
      e.headers["h" + std::to_string(i)] = std::string(4096, 'v');
  }));
  CAF_CHECK(!accepts([](event& e) {
    for (int i = 0; i < 65; ++i)
      e.headers["h" + std::to_string(i)] = "v";
  }));
  CAF_CHECK(accepts([](event& e) { e.headers[std::string(128, 'n')] = "v"; }));
  CAF_CHECK(!accepts([](event& e) { e.headers[std::string(129, 'n')] = "v"; }));
  CAF_CHECK(!accepts([](event& e) { e.headers["n"] = std::string(4097, 'v'); }));
  CAF_CHECK(!accepts([](event& e) { e.headers["n"] = std::string{"a\0b", 3}; }));
}

CAF_TEST(refusals name the rule and never quote the value) {
  auto ev = valid();
  ev.key = std::string(1000, 'k') + "SECRET" + std::string(100, 'k');
  auto err = validate_event(ev);
  CAF_REQUIRE(err);
  CAF_CHECK_EQUAL(render(err), "invalid_event: key: must have at most 1024 bytes");
  ev = valid();
  ev.payload = "{\"SECRET\":1e400}";
  err = validate_event(ev);
  CAF_REQUIRE(err);
  CAF_CHECK(render(err).find("SECRET") == std::string::npos);
}
