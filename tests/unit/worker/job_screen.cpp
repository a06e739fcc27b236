#define CAF_SUITE worker.job_screen
#include <caf/test/unit_test.hpp>

#include "tests/unit/case_check.hpp"
#include "worker/job_screen.hpp"

using namespace outbox;

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
    OUTBOX_CHECK_CASE(std::string{"message id \""} + id + "\"", !attribute_by_properties(bad));
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
