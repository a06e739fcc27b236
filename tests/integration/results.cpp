#define CAF_SUITE integration.results
#include <caf/test/unit_test.hpp>

#include "core/pg/db_stores.hpp"
#include "tests/integration/delivery_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST_FIXTURE_SCOPE(result_tests, delivery_fixture)

CAF_TEST(a completed result closes only its own delivery) {
  make_deliveries(2, {60});
  auto c = claim();
  auto a = apply({result_of(c.jobs[0], outcome::completed)});
  CAF_CHECK(a.verdicts[0] == result_verdict::applied);
  CAF_CHECK_EQUAL(a.completed, 1);
  CAF_CHECK_EQUAL(count_status("completed"), 1);
  CAF_CHECK_EQUAL(count_status("dispatched"), 1);
}

CAF_TEST(applied results report each transition for the lifecycle log) {
  make_deliveries(2, {60}, "lq");
  auto c = claim("lq");
  CAF_CHECK_EQUAL(c.jobs[0].attempts, 0);
  auto a = apply({result_of(c.jobs[0], outcome::completed),
                  result_of(c.jobs[1], outcome::retry)});
  CAF_REQUIRE_EQUAL(a.transitions.size(), 2u);
  auto& done = a.transitions[0];
  CAF_CHECK_EQUAL(done.delivery_id, c.jobs[0].delivery_id);
  CAF_CHECK_EQUAL(done.event_id, c.jobs[0].event_id);
  CAF_CHECK_EQUAL(done.queue, "lq");
  CAF_CHECK_EQUAL(done.job, "J");
  CAF_CHECK_EQUAL(done.status, delivery_status::completed);
  CAF_CHECK(!done.next_try);
  auto& retry = a.transitions[1];
  CAF_CHECK_EQUAL(retry.status, delivery_status::pending);
  CAF_CHECK_EQUAL(retry.attempts, 1);
  CAF_REQUIRE(retry.next_try);
  auto ahead = std::chrono::duration_cast<std::chrono::seconds>(
                 *retry.next_try - std::chrono::system_clock::now())
                 .count();
  CAF_CHECK(ahead >= 55 && ahead <= 60); // the route's 60 s delay
}

CAF_TEST(a retry schedule of two delays gives exactly three sends) {
  make_deliveries(1, {1, 1});
  std::vector<bool> last_flags;
  for (int send = 0; send < 5; ++send) {
    make_ready();
    auto c = claim();
    if (c.jobs.empty())
      break;
    last_flags.push_back(c.jobs[0].last_attempt);
    apply({result_of(c.jobs[0], outcome::retry)});
  }
  CAF_CHECK_EQUAL(last_flags, (std::vector<bool>{false, false, true}));
  CAF_CHECK_EQUAL(count_status("failed"), 1);
  auto row = must_exec(db, "SELECT attempts, last_error, failed_at IS NOT NULL, "
                           "dispatch_id IS NULL FROM " + names.deliveries);
  CAF_CHECK_EQUAL(row.text(0, 0), "3");
  CAF_CHECK_EQUAL(row.text(0, 1), "test");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
}

CAF_TEST(a retry waits for its delay and clears the dispatch) {
  make_deliveries(1, {60});
  auto c = claim();
  apply({result_of(c.jobs[0], outcome::retry)});
  auto row = must_exec(db, "SELECT status, attempts, dispatch_id IS NULL, "
                           "dispatched_at IS NULL, delivery_timeout_at IS NULL, "
                           "available_at > now() + interval '55 s' FROM "
                             + names.deliveries);
  CAF_CHECK_EQUAL(row.text(0, 0), "pending");
  CAF_CHECK_EQUAL(row.text(0, 1), "1");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
  CAF_CHECK_EQUAL(row.text(0, 3), "t");
  CAF_CHECK_EQUAL(row.text(0, 4), "t");
  CAF_CHECK_EQUAL(row.text(0, 5), "t");
  CAF_CHECK_EQUAL(claim().jobs.size(), 0u); // not before its time
}

CAF_TEST(a failed result is final at once) {
  make_deliveries(1, {60, 60});
  auto c = claim();
  auto a = apply({result_of(c.jobs[0], outcome::failed)});
  CAF_CHECK_EQUAL(a.failed, 1);
  CAF_CHECK_EQUAL(count_status("failed"), 1);
}

CAF_TEST(a result with an old dispatch id changes nothing) {
  make_deliveries(1, {1});
  auto first = claim().jobs.at(0);
  apply({result_of(first, outcome::retry)});
  make_ready();
  auto second = claim().jobs.at(0);
  CAF_CHECK_NOT_EQUAL(first.dispatch_id, second.dispatch_id);
  auto a = apply({result_of(first, outcome::completed)});
  CAF_CHECK(a.verdicts[0] == result_verdict::stale);
  CAF_CHECK_EQUAL(count_status("dispatched"), 1);
  CAF_CHECK_EQUAL(count_status("completed"), 0);
}

CAF_TEST(unknown deliveries wrong jobs and duplicates are told apart) {
  make_deliveries(1, {60});
  auto j = claim().jobs.at(0);
  auto wrong = result_of(j, outcome::completed);
  wrong.job = "OtherJob";
  auto unknown = result_of(j, outcome::completed);
  unknown.delivery_id = 999999999;
  auto a = apply({wrong, unknown, result_of(j, outcome::completed),
                  result_of(j, outcome::failed)});
  CAF_CHECK(a.verdicts[0] == result_verdict::wrong_job);
  CAF_CHECK(a.verdicts[1] == result_verdict::unknown_delivery);
  CAF_CHECK(a.verdicts[2] == result_verdict::applied);
  CAF_CHECK(a.verdicts[3] == result_verdict::stale);
  CAF_CHECK_EQUAL(count_status("completed"), 1);
}

// Completions alone take one statement of their own (apply_completions):
// the same verdicts, from the rows as they were before it.
CAF_TEST(a batch of completions alone tells the same cases apart) {
  make_deliveries(3, {60});
  auto c = claim();
  auto wrong = result_of(c.jobs[0], outcome::completed);
  wrong.job = "OtherJob";
  auto unknown = result_of(c.jobs[0], outcome::completed);
  unknown.delivery_id = 999999999;
  auto malformed = result_of(c.jobs[2], outcome::completed);
  malformed.dispatch_id = "not-a-uuid";
  auto a = apply({wrong, unknown, result_of(c.jobs[1], outcome::completed),
                  result_of(c.jobs[1], outcome::completed), malformed});
  CAF_CHECK(a.verdicts[0] == result_verdict::wrong_job);
  CAF_CHECK(a.verdicts[1] == result_verdict::unknown_delivery);
  CAF_CHECK(a.verdicts[2] == result_verdict::applied);
  CAF_CHECK(a.verdicts[3] == result_verdict::stale);
  CAF_CHECK(a.verdicts[4] == result_verdict::stale);
  CAF_CHECK_EQUAL(a.completed, 1);
  CAF_REQUIRE_EQUAL(a.transitions.size(), 1u);
  CAF_CHECK_EQUAL(a.transitions[0].delivery_id, c.jobs[1].delivery_id);
  CAF_CHECK_EQUAL(a.transitions[0].event_id, c.jobs[1].event_id);
  CAF_CHECK_EQUAL(a.transitions[0].job, "J");
  CAF_CHECK_EQUAL(a.transitions[0].queue, "q");
  CAF_CHECK_EQUAL(a.transitions[0].status, delivery_status::completed);
  CAF_CHECK_EQUAL(count_status("completed"), 1);
  CAF_CHECK_EQUAL(count_status("dispatched"), 2);
  // A completion that comes again later is stale, and changes nothing.
  auto again = apply({result_of(c.jobs[1], outcome::completed)});
  CAF_CHECK(again.verdicts[0] == result_verdict::stale);
  CAF_CHECK_EQUAL(again.completed, 0);
  // So in a batch with other results (which locks and decides instead).
  auto mixed = apply({result_of(c.jobs[1], outcome::completed),
                      result_of(c.jobs[0], outcome::failed)});
  CAF_CHECK(mixed.verdicts[0] == result_verdict::stale);
  CAF_CHECK(mixed.verdicts[1] == result_verdict::applied);
  // The completed delivery left the table for the completion log, with
  // what it was routed and sent as.
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE id = $1",
                            {std::to_string(c.jobs[1].delivery_id)})
                    .int64(0, 0),
                  0);
  auto logged = must_exec(db, "SELECT event_id, job, queue, attempts,"
                              " dispatched_at IS NOT NULL, completed_at >= created_at"
                              " FROM " + names.deliveries + "_completed WHERE id = $1",
                          {std::to_string(c.jobs[1].delivery_id)});
  CAF_REQUIRE_EQUAL(logged.size(), 1);
  CAF_CHECK_EQUAL(logged.int64(0, 0), c.jobs[1].event_id);
  CAF_CHECK_EQUAL(logged.text(0, 1), "J");
  CAF_CHECK_EQUAL(logged.text(0, 2), "q");
  CAF_CHECK_EQUAL(logged.int64(0, 3), 0);
  CAF_CHECK_EQUAL(logged.text(0, 4), "t");
  CAF_CHECK_EQUAL(logged.text(0, 5), "t");
}

CAF_TEST(a timed out dispatch counts as a failed attempt) {
  make_deliveries(2, {60});
  claim();
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET delivery_timeout_at = now() - interval '1 s'");
  auto s = sweeps.sweep(db, 100);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->timed_out, 2);
  CAF_CHECK_EQUAL(s->retried, 2);
  CAF_REQUIRE_EQUAL(s->transitions.size(), 2u);
  CAF_CHECK_EQUAL(s->transitions[0].status, delivery_status::pending);
  CAF_CHECK(s->transitions[0].next_try.has_value());
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  auto again = sweeps.sweep(db, 100);
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(again->timed_out, 0);
}

// The relay's own stall costs no attempt (core/domain/relay_stalls.hpp):
// no timeout while the queue's result handlers are stalled, and after
// they are back a deadline moves by the part of the outage after the
// delivery's dispatch.
CAF_TEST(the sweep leaves a stalled queue alone and moves deadlines by an outage) {
  make_deliveries(2, {60}, "q");
  make_deliveries(1, {60}, "r");
  claim("q");
  claim("r");
  // Dispatched 20 s ago with a 10 s timeout: 10 s past the deadline.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET dispatched_at = now() - interval '20 s',"
                    " delivery_timeout_at = now() - interval '10 s'");
  sweep_request stalled{100};
  stalled.holds.stalled = {"q"};
  auto s = sweeps.sweep(db, stalled);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->timed_out, 1); // r's only
  // q's handlers were away from 15 s ago until 2 s ago: 13 s of the 20 s
  // out, so the deadline moved to 3 s from now.
  sweep_request after{100};
  after.holds.outages = {{"q", 2.0, 13.0}};
  s = sweeps.sweep(db, after);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->timed_out, 0);
  // An outage that began before the dispatch counts from the dispatch
  // only: 25 s ago until 12 s ago moves it by 8 s, to 2 s ago.
  after.holds.outages = {{"q", 12.0, 13.0}};
  s = sweeps.sweep(db, after);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->timed_out, 2);
}

CAF_TEST(the sweep expires waiting deliveries past their time to live) {
  make_deliveries(3, {60});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET expires_at = now() - interval '1 s' WHERE id <> "
                    "(SELECT min(id) FROM " + names.deliveries + ")");
  auto s = sweeps.sweep(db, 100);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->expired, 2);
  CAF_REQUIRE_EQUAL(s->transitions.size(), 2u);
  CAF_CHECK_EQUAL(s->transitions[1].status, delivery_status::expired);
  CAF_CHECK_EQUAL(s->transitions[1].queue, "q");
  CAF_CHECK(s->transitions[1].event_id > 0);
  CAF_CHECK_EQUAL(count_status("expired"), 2);
  CAF_CHECK_EQUAL(count_status("pending"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()

// The result handler acks results once they are applied, so its commits
// must be durable even where the server's default is not; the other relay
// sessions only record progress and skip the wait.
CAF_TEST(only the result handler session waits for the WAL flush) {
  delivery_fixture f;
  auto commit_setting = [&](commit_mode mode) {
    must_exec(f.db, "SET synchronous_commit = off");
    CAF_REQUIRE(!f.db.exec_script("settings", relay_session_settings(mode)));
    return must_exec(f.db, "SHOW synchronous_commit").text(0, 0);
  };
  CAF_CHECK_EQUAL(commit_setting(commit_mode::before_ack), "on");
  CAF_CHECK_EQUAL(commit_setting(commit_mode::relay_progress), "off");
}
