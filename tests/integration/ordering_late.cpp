// A send of an ordered key whose delivery timeout ran out may still run at
// a worker: the key's next event must not overtake it. The key stays held
// by the late send until its result comes or, without one, one more
// delivery timeout has passed (schema/020_late_sends.sql); workers do not
// start such a job after its outboxExpiresAt (integration.worker,
// integration.python_worker). Each case below lets the next event go at
// once on the code before late sends.
#define CAF_SUITE integration.ordering_late
#include <caf/test/unit_test.hpp>

#include "core/amqp/wire.hpp"
#include "core/pg/key_admin_repository.hpp"
#include "tests/integration/ordering_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct late_fixture : ordering_fixture {
  /// An ordered route whose timeouts retry after `delays` (none: a timeout
  /// fails the delivery for good, and `continue` lets the key go on).
  void use_route(std::vector<int32_t> delays) {
    auto r = ordered_route();
    r.rules.retry_delays_seconds = std::move(delays);
    use_routes({r});
  }

  /// Runs out the delivery timeout of every send and sweeps once.
  sweep_result time_out_sends() {
    must_exec(db, "UPDATE " + names.deliveries
                    + " SET delivery_timeout_at = now() - interval '1 second'"
                      " WHERE status = 'dispatched'");
    auto swept = sweeps.sweep(db, 100);
    if (!swept)
      CAF_FAIL("sweep failed: " << render(swept.error()));
    return *swept;
  }

  int64_t late_sends() {
    return must_exec(db, "SELECT count(*) FROM " + names.deliveries + "_late")
      .int64(0, 0);
  }

  std::string status_of(int64_t delivery_id) {
    return must_exec(db, "SELECT status FROM " + names.deliveries
                           + " WHERE id = $1",
                     {std::to_string(delivery_id)})
      .text(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(ordering_late_tests, late_fixture)

// The head's send times out and fails for good (no retries, continue):
// before, the next event was sent at once, beside the worker that might
// still run the head. Now the key waits for the late result.
CAF_TEST(a timed out send holds its key until its late result) {
  use_route({});
  auto first = publish("e", "{}", "K");
  auto second = publish("e", "{}", "K");
  auto other = publish("e", "{}", "L");
  route_events(3);
  auto c = claim("oq");
  CAF_REQUIRE_EQUAL(events_of(c), (std::set<int64_t>{first, other}));
  auto late = job_of(c, first);
  // The job message says until when a worker may start it: the send's
  // delivery timeout.
  CAF_REQUIRE(late.start_by.has_value());
  auto fields = parse_job_message(job_message(late).body);
  CAF_REQUIRE(fields);
  CAF_CHECK(fields->expires_at == late.start_by);
  apply({result_of(job_of(c, other), outcome::completed)});
  auto swept = time_out_sends();
  CAF_CHECK_EQUAL(swept.failed, 1);
  CAF_CHECK_EQUAL(swept.late_held, 1);
  CAF_CHECK_EQUAL(status_of(late.delivery_id), "failed");
  CAF_CHECK(claim("oq").jobs.empty());
  CAF_CHECK_EQUAL(parked(), 1);
  // Another key is not held by it.
  auto other_next = publish("e", "{}", "L");
  route_events(1);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{other_next}));
  // The late result changes nothing of its delivery, but ends the hold.
  auto a = apply({result_of(late, outcome::completed)});
  CAF_CHECK(a.verdicts.at(0) == result_verdict::stale);
  CAF_CHECK_EQUAL(a.released, 1);
  CAF_CHECK_EQUAL(status_of(late.delivery_id), "failed");
  CAF_CHECK_EQUAL(late_sends(), 0);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{second}));
}

// The head is retried after its timeout and the retry completes while the
// first send still runs: the delivery is done, but the first send may
// still be running, so the next event waits for it too.
CAF_TEST(a retry that completes first still waits for the late send) {
  use_route({60});
  auto first = publish("e", "{}", "K");
  auto second = publish("e", "{}", "K");
  route_events(2);
  auto late = job_of(claim("oq"), first);
  auto swept = time_out_sends();
  CAF_CHECK_EQUAL(swept.retried, 1);
  CAF_CHECK_EQUAL(swept.late_held, 1);
  make_ready();
  auto retry = claim("oq");
  CAF_REQUIRE_EQUAL(events_of(retry), (std::set<int64_t>{first}));
  CAF_CHECK_NOT_EQUAL(job_of(retry, first).dispatch_id, late.dispatch_id);
  auto done = apply({result_of(job_of(retry, first), outcome::completed)});
  CAF_CHECK_EQUAL(done.completed, 1);
  CAF_CHECK(claim("oq").jobs.empty());
  CAF_CHECK_EQUAL(parked(), 1);
  apply({result_of(late, outcome::completed)});
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{second}));
}

// No result ever comes (the worker died with the job, or refused it after
// its outboxExpiresAt and that answer was lost): the hold ends one more
// delivery timeout after the sweep, by the sweep.
CAF_TEST(a late send without a result holds its key for one more timeout) {
  use_route({});
  publish("e", "{}", "K");
  auto second = publish("e", "{}", "K");
  route_events(2);
  claim("oq");
  time_out_sends();
  auto held_for = must_exec(db, "SELECT extract(epoch FROM late_until - timed_out_at)"
                                "::integer FROM " + names.deliveries + "_late");
  CAF_REQUIRE_EQUAL(held_for.size(), 1);
  CAF_CHECK_EQUAL(held_for.int64(0, 0), ordered_route().rules.delivery_timeout_seconds);
  // Sweeps before late_until leave it.
  auto early = sweeps.sweep(db, 100);
  CAF_REQUIRE(early);
  CAF_CHECK_EQUAL(early->late_ended, 0);
  CAF_CHECK(claim("oq").jobs.empty());
  must_exec(db, "UPDATE " + names.deliveries
                  + "_late SET late_until = now() - interval '1 second'");
  auto ended = sweeps.sweep(db, 100);
  CAF_REQUIRE(ended);
  CAF_CHECK_EQUAL(ended->late_ended, 1);
  CAF_CHECK_EQUAL(late_sends(), 0);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{second}));
}

// A late send on a blocking route changes nothing of the block: the key
// waits for the operator, and after `skip` still for the late send.
CAF_TEST(skip of a timed out head still waits for its late send) {
  auto r = ordered_route("oq", failure_policy::block_key);
  r.rules.retry_delays_seconds = {};
  use_routes({r});
  auto first = publish("e", "{}", "K");
  auto second = publish("e", "{}", "K");
  route_events(2);
  auto late = job_of(claim("oq"), first);
  time_out_sends();
  CAF_CHECK(claim("oq").jobs.empty());
  key_admin_repository keys{names};
  auto skipped = keys.skip(db, {late.delivery_id});
  CAF_REQUIRE(skipped);
  CAF_CHECK(skipped->front().verdict == skip_verdict::skipped);
  CAF_CHECK(claim("oq").jobs.empty());
  apply({result_of(late, outcome::failed)});
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{second}));
}

// Sends of unordered routes carry no expiry and leave no late send.
CAF_TEST(an unordered send leaves no late send) {
  make_deliveries(1, {});
  auto c = claim("q");
  CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
  CAF_CHECK(!c.jobs[0].start_by);
  auto swept = time_out_sends();
  CAF_CHECK_EQUAL(swept.failed, 1);
  CAF_CHECK_EQUAL(swept.late_held, 0);
  CAF_CHECK_EQUAL(late_sends(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
