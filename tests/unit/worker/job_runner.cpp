#define CAF_SUITE worker.job_runner
#include <caf/test/unit_test.hpp>

#include "tests/sample_events.hpp"
#include "worker/job_runner.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

job_message_fields job(const std::string& name = "J") {
  job_message_fields j;
  j.event_id = 1;
  j.delivery_id = 2;
  j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  j.job = name;
  j.event_type = "stock.changed";
  j.last_attempt = true;
  j.payload_json = R"({"sku":"A-1","available":4})";
  return j;
}

send_result run_with(job_handler h) {
  return run_job(job(), handler_map{{"J", std::move(h)}});
}

} // namespace

CAF_TEST(returning normally completes the job) {
  job_context seen;
  auto r = run_with([&](const job_context& ctx) { seen = ctx; });
  CAF_CHECK(r.result == outcome::completed);
  CAF_CHECK_EQUAL(r.delivery_id, 2);
  CAF_CHECK_EQUAL(r.dispatch_id, "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c");
  CAF_CHECK_EQUAL(r.job, "J");
  CAF_CHECK_EQUAL(seen.event_id, 1);
  CAF_CHECK_EQUAL(seen.last_attempt, true);
  auto typed = seen.payload_as<stock_changed>();
  CAF_REQUIRE(typed);
  CAF_CHECK_EQUAL(typed->sku, "A-1");
  CAF_CHECK_EQUAL(typed->available, 4);
}

CAF_TEST(a retryable error asks for a retry with its safe reason) {
  auto r = run_with([](const job_context&) {
    throw retryable_error("shop API busy");
  });
  CAF_CHECK(r.result == outcome::retry);
  CAF_CHECK_EQUAL(r.reason, "shop API busy");
}

CAF_TEST(job failed fails with its reason) {
  auto r = run_with([](const job_context&) { throw job_failed("unknown sku"); });
  CAF_CHECK(r.result == outcome::failed);
  CAF_CHECK_EQUAL(r.reason, "unknown sku");
}

CAF_TEST(any other exception fails without sending its message) {
  auto r = run_with([](const job_context&) {
    throw std::runtime_error("password=hunter2 rejected");
  });
  CAF_CHECK(r.result == outcome::failed);
  CAF_CHECK_EQUAL(r.reason, "handler threw std::runtime_error");
  auto odd = run_with([](const job_context&) { throw 42; });
  CAF_CHECK(odd.result == outcome::failed);
  CAF_CHECK_EQUAL(odd.reason, "handler threw a non-standard exception");
}

CAF_TEST(an unknown job fails) {
  auto r = run_job(job("Other"), handler_map{});
  CAF_CHECK(r.result == outcome::failed);
  CAF_CHECK_EQUAL(r.reason, "no handler for this job in the worker");
}
