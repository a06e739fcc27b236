#define CAF_SUITE core.event_store
#include <caf/test/unit_test.hpp>

#include "core/errors.hpp"
#include "core/event_store.hpp"

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
