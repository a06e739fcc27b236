// The limits of the publish function (schema/008_publish_limits.sql) and
// the C++ producer API (core/domain/event_limits.hpp): the same rule refuses the
// same input through both, with an OB001 / invalid_event naming the rule.
#define CAF_SUITE integration.publish_limits
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/producer/event_store.hpp"
#include "tests/integration/test_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct fixture : schema_fixture {
  db_event_store store{names};

  // The publish function called as SQL would: every argument as text.
  caf::expected<pg_rows> sql_publish(const pg_params& args) {
    return db.exec("publish",
                   "SELECT " + names.publish_function
                     + "($1, $2, $3, $4::bigint, $5::jsonb, $6::timestamptz, $7)",
                   args);
  }

  // The C++ producer API in a transaction of its own (rolled back).
  caf::error cpp_add(const event& ev) {
    if (auto err = db.begin())
      return err;
    auto id = store.add(db.native(), ev);
    db.rollback();
    return id ? caf::error{} : id.error();
  }

  int64_t events() {
    return must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0);
  }
};

struct limit_case {
  const char* name;
  pg_params sql;         // type, payload, key, ttl, headers, expires_at, content type
  void (*cpp)(event&);   // the same event for the C++ API
  const char* rule;      // in both errors
};

event base() {
  event ev;
  ev.event_type = "t.key";
  ev.payload = R"({"k":2})";
  return ev;
}

std::string deep(int n) {
  return std::string(static_cast<size_t>(n), '[') + std::string(static_cast<size_t>(n), ']');
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(publish_limits_tests, fixture)

// Each of the four reproduced defects entered through the door; now each
// is refused by both the SQL function and the C++ API.
CAF_TEST(the inputs that broke later stages are refused at the door) {
  const std::string key8000(8000, 'k');
  limit_case cases[] = {
    {"8,000-byte key (stopped every routing pass)",
     {"t.key", R"({"k":2})", key8000, {}, {}, {}, "application/json"},
     [](event& e) { e.key = std::string(8000, 'k'); },
     "key: must have at most 1024 bytes"},
    {"expires_at infinity (stopped every claim of its queue)",
     {"t.key", R"({"k":2})", {}, {}, {}, "infinity", "application/json"},
     [](event& e) { e.expires_at = time_point::max(); },
     "expires_at: must be from 1970-01-01 to before 2200-01-01"},
    {"expires_at in 2300 (wrapped the retry arithmetic)",
     {"t.key", R"({"k":2})", {}, {}, {}, "2300-01-01T00:00:00Z", "application/json"},
     [](event& e) { e.expires_at = from_unix_micros(10'413'792'000'000'000); },
     "expires_at: must be from 1970-01-01 to before 2200-01-01"},
    {"ttl of 10,000,000,000 s (wrapped the retry arithmetic)",
     {"t.key", R"({"k":2})", {}, "10000000000", {}, {}, "application/json"},
     [](event& e) { e.ttl_seconds = 10'000'000'000; },
     "ttl_seconds: must be at most 3153600000 (100 years)"},
    {"1e400 (no worker parses it)",
     {"t.key", R"({"x":1e400})", {}, {}, {}, {}, "application/json"},
     [](event& e) { e.payload = R"({"x":1e400})"; },
     "payload: "},
  };
  for (auto& c : cases) {
    CAF_MESSAGE(c.name);
    auto r = sql_publish(c.sql);
    if (!(!r))
    CAF_FAIL(c.name << ": accepted by the SQL function");
    auto sql_text = render(r.error());
    CAF_CHECK_NOT_EQUAL(sql_text.find(c.rule), std::string::npos);
    auto ev = base();
    c.cpp(ev);
    auto err = cpp_add(ev);
    if (!(err))
    CAF_FAIL(c.name << ": accepted by the C++ API");
    CAF_CHECK(err == errc::invalid_event);
    CAF_CHECK_NOT_EQUAL(render(err).find(c.rule), std::string::npos);
  }
  CAF_CHECK_EQUAL(events(), 0);
}

CAF_TEST(each rule is named alike by the sql function and the cpp api) {
  struct named {
    pg_params sql;
    void (*cpp)(event&);
    const char* rule;
  } rules[] = {
    {{std::string(85, 'x') + std::string(57, 'x') + [] {
        std::string s;
        for (int i = 0; i < 57; ++i)
          s += "\xC3\xA9"; // 57 two-byte characters
        return s;
      }(),
      "{}", {}, {}, {}, {}, "application/json"},
     [](event& e) {
       e.event_type = std::string(142, 'x');
       for (int i = 0; i < 57; ++i)
         e.event_type += "\xC3\xA9";
     },
     "event_type: must have 1 to 255 bytes"},
    {{"a\tb", "{}", {}, {}, {}, {}, "application/json"},
     [](event& e) { e.event_type = "a\tb"; },
     "event_type: must not contain control characters"},
    {{"t", "{}", "a\nb", {}, {}, {}, "application/json"},
     [](event& e) { e.key = "a\nb"; },
     "key: must not contain control characters"},
    {{"t", "{}", std::string(1025, 'k'), {}, {}, {}, "application/json"},
     [](event& e) { e.key = std::string(1025, 'k'); },
     "key: must have at most 1024 bytes"},
    {{"t", "{}", {}, "3153600001", {}, {}, "application/json"},
     [](event& e) { e.ttl_seconds = 3'153'600'001; },
     "ttl_seconds: must be at most 3153600000"},
    {{"t", "{}", {}, {}, {}, "1969-12-31T23:59:59Z", "application/json"},
     [](event& e) { e.expires_at = time_point{} - std::chrono::seconds{1}; },
     "expires_at: must be from 1970-01-01 to before 2200-01-01"},
    {{"t", "{}", {}, {}, {}, "2200-01-01T00:00:00Z", "application/json"},
     [](event& e) { e.expires_at = *parse_timestamp("2200-01-01T00:00:00Z"); },
     "expires_at: must be from 1970-01-01 to before 2200-01-01"},
    {{"t", std::string(8 * 1024 * 1024 + 1, 'p'), {}, {}, {}, {}, "text/plain"},
     [](event& e) {
       e.content_type = "text/plain";
       e.payload = std::string(8 * 1024 * 1024 + 1, 'p');
     },
     "payload: must have at most 8388608 bytes"},
    {{"t", deep(65), {}, {}, {}, {}, "application/json"},
     [](event& e) { e.payload = deep(65); },
     "payload: JSON nesting must be at most 64 deep"},
    {{"t", deep(100000), {}, {}, {}, {}, "application/json"},
     [](event& e) { e.payload = deep(100000); },
     "payload: JSON nesting must be at most 64 deep"},
    {{"t", "[-1.8e308]", {}, {}, {}, {}, "application/json"},
     [](event& e) { e.payload = "[-1.8e308]"; },
     "payload: JSON numbers must be within +-1.7976931348623157e308"},
    {{"t", R"(["a\u0000"])", {}, {}, {}, {}, "application/json"},
     [](event& e) { e.payload = R"(["a\u0000"])"; },
     "payload: JSON strings must not contain \\u0000"},
    {{"t", "{}", {}, {}, R"({"a":1})", {}, "application/json"},
     nullptr, // C++ header values are strings
     "headers: values must be strings of at most 4096 bytes"},
    {{"t", "{}", {}, {}, "{\"a\":\"" + std::string(4097, 'v') + "\"}", {}, "application/json"},
     [](event& e) { e.headers["a"] = std::string(4097, 'v'); },
     "headers: values must be strings of at most 4096 bytes"},
    {{"t", "{}", {}, {}, "{\"" + std::string(129, 'n') + "\":\"v\"}", {}, "application/json"},
     [](event& e) { e.headers[std::string(129, 'n')] = "v"; },
     "headers: names must have 1 to 128 bytes"},
    {{"t", "{}", {}, {}, [] {
        std::string h = "{";
        for (int i = 0; i < 65; ++i)
          h += (i ? ",\"h" : "\"h") + std::to_string(i) + "\":\"v\"";
        return h + "}";
      }(), {}, "application/json"},
     [](event& e) {
       for (int i = 0; i < 65; ++i)
         e.headers["h" + std::to_string(i)] = "v";
     },
     "headers: at most 64"},
  };
  for (auto& c : rules) {
    CAF_MESSAGE("rule " << c.rule);
    auto r = sql_publish(c.sql);
    CAF_REQUIRE(!r);
    auto text = render(r.error());
    CAF_CHECK_EQUAL(text.find("SQLSTATE"), std::string::npos); // OB001's message
    if (text.find(c.rule) == std::string::npos)
      CAF_FAIL("expected «" << c.rule << "» in «" << text << "»");
    if (!c.cpp)
      continue;
    auto ev = base();
    c.cpp(ev);
    auto err = cpp_add(ev);
    CAF_REQUIRE(err);
    CAF_CHECK(err == errc::invalid_event);
    if (render(err).find(c.rule) == std::string::npos)
      CAF_FAIL("expected «" << c.rule << "» in «" << render(err) << "»");
  }
  CAF_CHECK_EQUAL(events(), 0);
}

CAF_TEST(values at the limits are accepted by both) {
  std::string headers = "{";
  for (int i = 0; i < 64; ++i)
    headers += (i ? ",\"" : "\"") + std::string(120, 'n') + std::to_string(100 + i)
               + "\":\"" + std::string(4096, 'v') + "\"";
  headers += "}";
  auto r = sql_publish({std::string(255, 't'), deep(64), std::string(1024, 'k'),
                        "3153600000", headers, "2199-12-31T23:59:59Z",
                        "application/json"});
  if (!(r))
    CAF_FAIL(render(r.error()));
  auto ev = base();
  ev.event_type = std::string(255, 't');
  ev.payload = deep(64);
  ev.key = std::string(1024, 'k');
  ev.ttl_seconds = 3'153'600'000;
  ev.expires_at = *parse_timestamp("2199-12-31T23:59:59Z");
  for (int i = 0; i < 64; ++i)
    ev.headers[std::string(120, 'n') + std::to_string(100 + i)] = std::string(4096, 'v');
  CAF_REQUIRE(!db.begin());
  auto id = store.add(db.native(), ev);
  if (!(id))
    CAF_FAIL(render(id.error()));
  CAF_REQUIRE(!db.commit());
  CAF_CHECK_EQUAL(events(), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
