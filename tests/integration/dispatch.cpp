#define CAF_SUITE integration.dispatch
#include <caf/test/unit_test.hpp>

#include <set>
#include <thread>

#include "core/pg/pause_repository.hpp"
#include "tests/integration/delivery_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST_FIXTURE_SCOPE(dispatch_tests, delivery_fixture)

CAF_TEST(a claim marks deliveries dispatched with a fresh dispatch id) {
  make_deliveries(3, {60});
  auto c = claim("q", 2);
  CAF_REQUIRE_EQUAL(c.jobs.size(), 2u);
  CAF_CHECK_EQUAL(c.jobs[0].job, "J");
  CAF_CHECK_EQUAL(c.jobs[0].event_type, "e");
  CAF_CHECK_EQUAL(c.jobs[0].payload, "{}");
  CAF_CHECK_EQUAL(c.jobs[0].dispatch_id.size(), 36u);
  CAF_CHECK_NOT_EQUAL(c.jobs[0].dispatch_id, c.jobs[1].dispatch_id);
  CAF_CHECK(!c.jobs[0].last_attempt);
  CAF_CHECK_EQUAL(count_status("dispatched"), 2);
  CAF_CHECK_EQUAL(claim("q").jobs.size(), 1u);
  CAF_CHECK_EQUAL(claim("q").jobs.size(), 0u);
  CAF_CHECK_EQUAL(claim("other").jobs.size(), 0u);
}

// While batches come back full, a claim goes on after the last key taken;
// a delivery that became ready behind it is sent once a batch is not full.
CAF_TEST(full batches claim on from where they left off and then start over) {
  make_deliveries(6, {60});
  auto ids = must_exec(db, "SELECT id FROM " + names.deliveries + " ORDER BY id");
  CAF_REQUIRE_EQUAL(ids.size(), 6);
  auto first = claim("q", 2);
  CAF_REQUIRE_EQUAL(first.jobs.size(), 2u);
  CAF_CHECK_EQUAL(first.jobs[0].delivery_id, ids.int64(0, 0));
  // The last one becomes ready behind the claimed ones, as after a late
  // commit: the index order would put it first.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET available_at = available_at - interval '1 hour'"
                    " WHERE id = " + ids.text(5, 0));
  auto second = claim("q", 2);
  CAF_REQUIRE_EQUAL(second.jobs.size(), 2u);
  CAF_CHECK_EQUAL(second.jobs[0].delivery_id, ids.int64(2, 0));
  CAF_CHECK_EQUAL(second.jobs[1].delivery_id, ids.int64(3, 0));
  auto third = claim("q", 2); // not full: the next claim starts over
  CAF_REQUIRE_EQUAL(third.jobs.size(), 1u);
  CAF_CHECK_EQUAL(third.jobs[0].delivery_id, ids.int64(4, 0));
  auto fourth = claim("q", 2);
  CAF_REQUIRE_EQUAL(fourth.jobs.size(), 1u);
  CAF_CHECK_EQUAL(fourth.jobs[0].delivery_id, ids.int64(5, 0));
  CAF_CHECK_EQUAL(count_status("dispatched"), 6);
  CAF_CHECK_EQUAL(claim("q", 2).jobs.size(), 0u);
}

CAF_TEST(two connections claiming one queue never claim a delivery twice) {
  make_deliveries(400, {60});
  std::vector<int64_t> got[2];
  auto worker = [&](int k) {
    auto conn = connect_db();
    claim_repository repo2{names};
    claim_cursor cursor;
    for (;;) {
      auto c = repo2.claim_batch(conn, {"q", 7, claim_request::no_limit, cursor});
      if (c)
        cursor = c->resume;
      if (!c || c->jobs.empty())
        return;
      for (auto& j : c->jobs)
        got[k].push_back(j.delivery_id);
    }
  };
  std::thread a{worker, 0}, b{worker, 1};
  a.join();
  b.join();
  std::set<int64_t> all(got[0].begin(), got[0].end());
  all.insert(got[1].begin(), got[1].end());
  CAF_MESSAGE("claimed " << got[0].size() << " + " << got[1].size());
  CAF_CHECK_EQUAL(got[0].size() + got[1].size(), 400u);
  CAF_CHECK_EQUAL(all.size(), 400u);
  CAF_CHECK_EQUAL(count_status("dispatched"), 400);
}

// Work beyond the queue's in-flight limit waits in the table, where no
// delivery timeout runs, and goes out as results free room.
CAF_TEST(a claim takes only the room the in flight limit leaves) {
  make_deliveries(20, {60});
  auto first = claim("q", 100, 5);
  CAF_CHECK_EQUAL(first.jobs.size(), 5u);
  CAF_CHECK(first.at_limit);
  CAF_CHECK_EQUAL(first.room, 5);
  auto full = claim("q", 100, 5);
  CAF_CHECK_EQUAL(full.jobs.size(), 0u);
  CAF_CHECK(full.at_limit);
  CAF_CHECK_EQUAL(full.room, 0);
  CAF_CHECK_EQUAL(count_status("dispatched"), 5);
  apply({result_of(first.jobs[0], outcome::completed),
         result_of(first.jobs[1], outcome::completed),
         result_of(first.jobs[2], outcome::completed)});
  auto next = claim("q", 100, 5);
  CAF_CHECK_EQUAL(next.jobs.size(), 3u);
  CAF_CHECK(next.at_limit);
  CAF_CHECK_EQUAL(count_status("dispatched"), 5);
  CAF_CHECK_EQUAL(count_status("pending"), 12);
  // A retry frees room as well: the delivery waits in the table again.
  apply({result_of(next.jobs[0], outcome::retry)});
  make_ready();
  CAF_CHECK_EQUAL(claim("q", 100, 5).jobs.size(), 1u);
  // Under the limit with nothing more ready, a claim is not at the limit.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET status = 'completed', finished_at = now()"
                    " WHERE status = 'dispatched'");
  auto rest = claim("q", 100, 50);
  CAF_CHECK_EQUAL(rest.jobs.size(), 12u);
  CAF_CHECK(!rest.at_limit);
}

// An operator's pause (schema/018) is read by the claim itself: a paused
// queue has no room, the claim says so and for how long, the other queues
// go on, and a pause whose time has come binds nothing.
CAF_TEST(a claim takes nothing from a paused queue) {
  make_deliveries(3, {60}, "q");
  make_deliveries(3, {60}, "r");
  pause_repository pauses{names};
  auto p = pauses.pause(db, "q", "ops@host", "upgrade", std::nullopt);
  CAF_REQUIRE(p);
  CAF_CHECK_EQUAL(p->paused_by, "ops@host");
  CAF_CHECK_EQUAL(p->ends_in_seconds, -1);
  auto held = claim("q");
  CAF_CHECK_EQUAL(held.jobs.size(), 0u);
  CAF_CHECK(held.paused);
  CAF_CHECK(!held.pause_ends_in_seconds);
  CAF_CHECK_EQUAL(held.room, 0);
  auto other = claim("r");
  CAF_CHECK_EQUAL(other.jobs.size(), 3u);
  CAF_CHECK(!other.paused);
  // A pause for a while: the claim says how long yet.
  CAF_REQUIRE(pauses.pause(db, "q", "ops@host", "", int64_t{600}));
  held = claim("q");
  CAF_CHECK(held.paused);
  CAF_CHECK(held.pause_ends_in_seconds && *held.pause_ends_in_seconds > 590
            && *held.pause_ends_in_seconds <= 600);
  auto listed = pauses.paused(db);
  CAF_REQUIRE(listed);
  CAF_REQUIRE_EQUAL(listed->count("q"), 1u);
  CAF_CHECK_EQUAL(listed->at("q").reason, "");
  // Its time has come (as a --for that ended): the claim sends again.
  must_exec(db, "UPDATE " + names.deliveries
                  + "_paused SET resume_at = now() - interval '1 s'");
  auto sent = claim("q");
  CAF_CHECK_EQUAL(sent.jobs.size(), 3u);
  CAF_CHECK(!sent.paused);
  CAF_CHECK_EQUAL(pauses.paused(db)->size(), 0u);
  auto none = pauses.resume(db, "q");
  CAF_CHECK(none && !*none);
  CAF_REQUIRE(pauses.pause(db, "q", "ops@host", "", std::nullopt));
  auto ended = pauses.resume(db, "q");
  CAF_CHECK(ended && *ended);
  CAF_CHECK(!claim("q").paused);
}

CAF_TEST(the in flight limit is per queue) {
  make_deliveries(4, {60}, "q");
  make_deliveries(4, {60}, "r");
  CAF_CHECK_EQUAL(claim("q", 100, 2).jobs.size(), 2u);
  auto r = claim("r", 100, 3);
  CAF_CHECK_EQUAL(r.jobs.size(), 3u); // q's two do not count for r
  CAF_CHECK(r.at_limit);
}

// The count is the database's, so the limit holds for several dispatchers
// of one queue, each with its own connection (on any node).
CAF_TEST(the in flight limit holds across dispatchers of one queue) {
  make_deliveries(10, {60});
  auto conn = connect_db();
  claim_repository other{names};
  CAF_CHECK_EQUAL(claim("q", 3, 4).jobs.size(), 3u);
  auto c = other.claim_batch(conn, {"q", 3, 4});
  CAF_REQUIRE(c);
  CAF_CHECK_EQUAL(c->jobs.size(), 1u);
  CAF_CHECK(c->at_limit);
  CAF_CHECK_EQUAL(claim("q", 3, 4).jobs.size(), 0u);
  CAF_CHECK_EQUAL(count_status("dispatched"), 4);
}

// What the in-flight window measures (core/domain/in_flight_window.hpp)
// comes from the claim's count on the server: how many are out, how many
// of a cohort are still out, the shortest timeout and the server's clock.
CAF_TEST(a claim reports what the in flight window measures) {
  make_deliveries(6, {60});
  auto first = claim("q", 3);
  CAF_REQUIRE(first.window);
  CAF_CHECK_EQUAL(first.window->in_flight, 0); // counted before it took any
  CAF_CHECK_EQUAL(first.window->cohort_left, 0);
  CAF_CHECK_EQUAL(first.window->timeout_seconds, 0.0);
  // The next claim asks about the cohort that started at the first: its
  // three deliveries, dispatched at that very instant.
  claim_request next{"q", 1};
  next.cohort_start_us = first.window->now_us;
  auto second = claims.claim_batch(db, next);
  CAF_REQUIRE(second && second->window);
  CAF_CHECK_EQUAL(second->window->in_flight, 3);
  CAF_CHECK_EQUAL(second->window->cohort_left, 3);
  CAF_CHECK(second->window->timeout_seconds > 0);
  CAF_CHECK_GREATER_OR_EQUAL(second->window->now_us, first.window->now_us);
  // One of the cohort finished, and the one the second claim took is not
  // of the cohort.
  apply({result_of(first.jobs[0], outcome::completed)});
  auto third = claims.claim_batch(db, next);
  CAF_REQUIRE(third && third->window);
  CAF_CHECK_EQUAL(third->window->in_flight, 3);
  CAF_CHECK_EQUAL(third->window->cohort_left, 2);
}

// The cursor of full batches (see claim_cursor) goes on while the limit
// cuts claims short: a claim that took all it could is as good as full.
CAF_TEST(claims at the limit go on from where they left off) {
  make_deliveries(6, {60});
  auto ids = must_exec(db, "SELECT id FROM " + names.deliveries + " ORDER BY id");
  auto first = claim("q", 10, 2);
  CAF_REQUIRE_EQUAL(first.jobs.size(), 2u);
  CAF_CHECK_EQUAL(first.jobs[1].delivery_id, ids.int64(1, 0));
  apply({result_of(first.jobs[0], outcome::completed),
         result_of(first.jobs[1], outcome::completed)});
  // As in the test of full batches: one becomes ready behind the cursor.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET available_at = available_at - interval '1 hour'"
                    " WHERE id = " + ids.text(5, 0));
  auto second = claim("q", 10, 2);
  CAF_REQUIRE_EQUAL(second.jobs.size(), 2u);
  CAF_CHECK_EQUAL(second.jobs[0].delivery_id, ids.int64(2, 0));
  CAF_CHECK_EQUAL(second.jobs[1].delivery_id, ids.int64(3, 0));
}

CAF_TEST(deliveries past their time to live expire instead of being sent) {
  make_deliveries(2, {60});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET expires_at = now() - interval '1 s' WHERE id = "
                    "(SELECT min(id) FROM " + names.deliveries + ")");
  auto c = claim();
  CAF_CHECK_EQUAL(c.expired, 1);
  CAF_CHECK_EQUAL(c.jobs.size(), 1u);
  CAF_CHECK_EQUAL(count_status("expired"), 1);
}

// Each job message carries how long the broker may keep it unread: the
// route's delivery timeout, or less when its time to live ends sooner.
CAF_TEST(a claimed job lives until its timeout or its time to live) {
  make_deliveries(2, {60});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET expires_at = now() + interval '5 s' WHERE id = "
                    "(SELECT max(id) FROM " + names.deliveries + ")");
  auto c = claim();
  CAF_REQUIRE_EQUAL(c.jobs.size(), 2u);
  CAF_CHECK_EQUAL(c.jobs[0].expiration_ms, 300000); // route's default
  CAF_CHECK_GREATER(c.jobs[1].expiration_ms, 4000);
  CAF_CHECK_LESS_OR_EQUAL(c.jobs[1].expiration_ms, 5000);
}

CAF_TEST(a claim tells when the next pending delivery becomes ready) {
  make_deliveries(3, {60});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET available_at = now() + interval '30 s' WHERE id = "
                    "(SELECT max(id) FROM " + names.deliveries + ")");
  auto c = claim();
  CAF_CHECK_EQUAL(c.jobs.size(), 2u); // the third waits
  CAF_REQUIRE(c.next_ready_seconds);
  CAF_CHECK_GREATER(*c.next_ready_seconds, 29.0);
  CAF_CHECK_LESS_OR_EQUAL(*c.next_ready_seconds, 30.0);
  must_exec(db, "UPDATE " + names.deliveries + " SET status = 'completed', "
                  "finished_at = now() WHERE status = 'pending'");
  CAF_CHECK(!claim().next_ready_seconds); // nothing pending
}

CAF_TEST(the last attempt flag follows the retry rules) {
  make_deliveries(1, {});
  auto c = claim();
  CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
  CAF_CHECK(c.jobs[0].last_attempt); // no delays: the first try is the last
}

CAF_TEST_FIXTURE_SCOPE_END()
