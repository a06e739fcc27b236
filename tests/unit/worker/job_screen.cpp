#define CAF_SUITE worker.job_screen
#include <caf/test/unit_test.hpp>

#include "core/json_depth.hpp"
#include "worker/job_screen.hpp"

using namespace outbox;

namespace {

incoming_message with_body(std::string body) {
  incoming_message m;
  m.body = std::move(body);
  return m;
}

} // namespace

CAF_TEST(depth counts objects and arrays outside strings) {
  CAF_CHECK(json_depth_within("{}", 1));
  CAF_CHECK(!json_depth_within("{\"a\":[1]}", 1));
  CAF_CHECK(json_depth_within("{\"a\":[1]}", 2));
  CAF_CHECK(json_depth_within(R"({"a":"[[[[{{{{"})", 1));
  CAF_CHECK(json_depth_within(R"({"a":"\"[[[["})", 1)); // an escaped quote
  CAF_CHECK(json_depth_within(R"({"a":"\\"})", 1));
  CAF_CHECK(!json_depth_within(R"({"a":"\\",[[]]})", 2)); // the string ended
  CAF_CHECK(json_depth_within("[]]]]][]", 1)); // stray closers do not go negative
}

CAF_TEST(a million levels deep is refused unread) {
  auto why = screen_job_message(with_body(std::string(1'000'000, '[')));
  CAF_REQUIRE(why);
  CAF_CHECK_EQUAL(*why, "job message: nested deeper than 256 levels");
  std::string ok = std::string(max_job_message_depth, '[')
                   + std::string(max_job_message_depth, ']');
  CAF_CHECK(!screen_job_message(with_body(ok)));
  auto big = screen_job_message(with_body(std::string(max_job_message_bytes + 1, ' ')));
  CAF_REQUIRE(big);
  CAF_CHECK_EQUAL(*big, "job message: larger than 16777216 bytes");
}

CAF_TEST(properties in the form the relay sets attribute a message) {
  incoming_message m;
  m.message_id = "42";
  m.correlation_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  m.type = "J";
  auto r = attribute_by_properties(m);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->delivery_id, 42);
  CAF_CHECK_EQUAL(r->dispatch_id, m.correlation_id);
  CAF_CHECK_EQUAL(r->job, "J");
  for (auto id : {"", "0", "-1", "4x", "1234567890123456789"}) {
    auto bad = m;
    bad.message_id = id;
    CAF_CHECK(!attribute_by_properties(bad));
  }
  auto direct = m;
  direct.message_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c"; // a direct job's
  CAF_CHECK(!attribute_by_properties(direct));
  auto no_job = m;
  no_job.type.clear();
  CAF_CHECK(!attribute_by_properties(no_job));
  auto no_uuid = m;
  no_uuid.correlation_id = "dispatch-1";
  CAF_CHECK(!attribute_by_properties(no_uuid));
}
