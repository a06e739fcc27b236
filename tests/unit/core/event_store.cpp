#define CAF_SUITE core.event_store
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/event_limits.hpp"
#include "core/producer/event_store.hpp"
#include "tests/unit/case_check.hpp"

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
    OUTBOX_CHECK_CASE(c.expected, err == errc::invalid_event);
    OUTBOX_CHECK_CASE(c.expected + (" in " + render(err)),
                      render(err).find(c.expected) != std::string::npos);
  }
}

// The limits of core/domain/event_limits.hpp, at each edge: the last accepted
// value and the first refused one.
CAF_TEST(the limits accept up to their edge and refuse beyond it) {
  using namespace outbox::limits;
  struct {
    const char* name;
    void (*change)(event&);
    bool accepted;
  } cases[] = {
    {"event_type of 255 bytes", [](event& e) { e.event_type = std::string(255, 'x'); }, true},
    {"event_type of 256 bytes, the last a two-byte character",
     [](event& e) { e.event_type = std::string(254, 'x') + "\xC3\xA9"; }, false},
    {"event_type with a tab", [](event& e) { e.event_type = "a\tb"; }, false},
    {"event_type with DEL", [](event& e) { e.event_type = "a\x7f"; }, false},
    {"event_type of blanks", [](event& e) { e.event_type = "   "; }, false},
    {"key of 1024 bytes", [](event& e) { e.key = std::string(1024, 'k'); }, true},
    {"key of 1025 bytes", [](event& e) { e.key = std::string(1025, 'k'); }, false},
    {"key of 8000 bytes", [](event& e) { e.key = std::string(8000, 'k'); }, false},
    {"key with a newline", [](event& e) { e.key = "a\nb"; }, false},
    {"key with a NUL", [](event& e) { e.key = std::string{"a\0b", 3}; }, false},
    {"ttl of 100 years", [](event& e) { e.ttl_seconds = 3'153'600'000; }, true},
    {"ttl of 100 years and 1 s", [](event& e) { e.ttl_seconds = 3'153'600'001; }, false},
    {"ttl of 10,000,000,000 s", [](event& e) { e.ttl_seconds = 10'000'000'000; }, false},
    {"expires_at at the end of 2199",
     [](event& e) { e.expires_at = *parse_timestamp("2199-12-31T23:59:59Z"); }, true},
    {"expires_at in 2200",
     [](event& e) { e.expires_at = *parse_timestamp("2200-01-01T00:00:00Z"); }, false},
    {"expires_at the largest time_point", [](event& e) { e.expires_at = time_point::max(); },
     false},
    {"expires_at the smallest time_point", [](event& e) { e.expires_at = time_point::min(); },
     false},
    {"expires_at the epoch", [](event& e) { e.expires_at = time_point{}; }, true},
    {"expires_at before the epoch",
     [](event& e) { e.expires_at = time_point{} - std::chrono::seconds{1}; }, false},
    {"text payload of the largest size",
     [](event& e) {
       e.content_type = "text/plain";
       e.payload = std::string(max_payload_bytes, 'p');
     },
     true},
    {"text payload one byte larger",
     [](event& e) {
       e.content_type = "text/plain";
       e.payload = std::string(max_payload_bytes + 1, 'p');
     },
     false},
    {"text payload with a NUL",
     [](event& e) {
       e.content_type = "text/plain";
       e.payload = std::string{"a\0b", 3};
     },
     false},
    {"payload nested 64 deep",
     [](event& e) { e.payload = std::string(64, '[') + std::string(64, ']'); }, true},
    {"payload nested 65 deep",
     [](event& e) { e.payload = std::string(65, '[') + std::string(65, ']'); }, false},
    {"payload nested 100,000 deep",
     [](event& e) { e.payload = std::string(100000, '[') + std::string(100000, ']'); },
     false},
    // Brackets inside strings are not nesting.
    {"brackets inside a string",
     [](event& e) { e.payload = "[\"" + std::string(100, '[') + "\\\"[\"]"; }, true},
    {"the largest doubles and an underflow",
     [](event& e) { e.payload = "[1.7976931348623157e308,-1.7976931348623157e308,1e-400]"; },
     true},
    {"1e400", [](event& e) { e.payload = "{\"x\":1e400}"; }, false},
    {"-1.8e308 (RapidJSON: -inf)", [](event& e) { e.payload = "[-1.8e308]"; }, false},
    {"just above the largest double",
     [](event& e) { e.payload = "[1.79769313486231571e308]"; }, false},
    {"the largest double written two ways",
     [](event& e) { e.payload = "[1.79769313486231570e308, 17976931348623157e292]"; }, true},
    {"the largest double with a leading fraction and -0",
     [](event& e) { e.payload = "[0.00017976931348623157e312, -0.0e-5]"; }, true},
    {"above the largest double with a leading fraction",
     [](event& e) { e.payload = "[0.00017976931348623158e312]"; }, false},
    {"a long integer, 1E+300 and an underflow",
     [](event& e) { e.payload = "[12345678901234567890123, 1E+300, 5e-400]"; }, true},
    // Malformed number tokens stay the parser's to refuse (and never
    // overflow the scan's exponent).
    {"an exponent of dots", [](event& e) { e.payload = "[1e" + std::string(40, '.') + "]"; },
     false},
    // PostgreSQL's numeric holds 16383 decimal places, RapidJSON reads 0.
    {"an exponent of 40 nines below zero",
     [](event& e) { e.payload = "[1e-" + std::string(40, '9') + "]"; }, false},
    {"numbers at 16383 decimal places",
     [](event& e) { e.payload = "[1e-16383, 0.5e-16382, -1.0e-16382]"; }, true},
    {"1e-16384", [](event& e) { e.payload = "[1e-16384]"; }, false},
    {"0.5e-16383", [](event& e) { e.payload = "[0.5e-16383]"; }, false},
    {"0e-20000", [](event& e) { e.payload = "[0e-20000]"; }, false},
    {"an exponent of 40 nines",
     [](event& e) { e.payload = "[1e+" + std::string(40, '9') + "]"; }, false},
    {"an escaped NUL", [](event& e) { e.payload = "[\"a\\u0000b\"]"; }, false},
    {"an escaped backslash before u0000", [](event& e) { e.payload = "[\"a\\\\u0000b\"]"; },
     true},
    {"a lone low surrogate", [](event& e) { e.payload = "[\"\\udc00\"]"; }, false},
    {"a high surrogate without its pair", [](event& e) { e.payload = "[\"\\ud800x\"]"; },
     false},
    {"a surrogate pair", [](event& e) { e.payload = "[\"\\ud83d\\ude00\"]"; }, true},
    {"64 headers of 4096 bytes",
     [](event& e) {
       for (int i = 0; i < 64; ++i)
         e.headers["h" + std::to_string(i)] = std::string(4096, 'v');
     },
     true},
    {"65 headers",
     [](event& e) {
       for (int i = 0; i < 65; ++i)
         e.headers["h" + std::to_string(i)] = "v";
     },
     false},
    {"a header name of 128 bytes", [](event& e) { e.headers[std::string(128, 'n')] = "v"; },
     true},
    {"a header name of 129 bytes", [](event& e) { e.headers[std::string(129, 'n')] = "v"; },
     false},
    {"a header value of 4097 bytes", [](event& e) { e.headers["n"] = std::string(4097, 'v'); },
     false},
    {"a header value with a NUL", [](event& e) { e.headers["n"] = std::string{"a\0b", 3}; },
     false},
  };
  for (auto& c : cases) {
    auto ev = valid();
    c.change(ev);
    auto err = validate_event(ev);
    if (err)
      CAF_MESSAGE(c.name << ": refused: " << render(err));
    OUTBOX_CHECK_CASE_EQUAL(c.name, !err, c.accepted);
  }
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
