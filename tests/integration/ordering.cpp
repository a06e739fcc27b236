#define CAF_SUITE integration.ordering
#include <caf/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "tests/integration/delivery_fixture.hpp"
#include "tests/integration/ordering_fixture.hpp"
#include "tests/integration/wait_until.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST_FIXTURE_SCOPE(ordering_tests, ordering_fixture)

CAF_TEST(a retrying head holds its key and not other keys) {
  use_routes({ordered_route()});
  auto a1 = publish("e", "{}", "A");
  publish("e", "{}", "A");
  auto b1 = publish("e", "{}", "B");
  route_events(3);
  auto first = claim("oq");
  CAF_CHECK_EQUAL(events_of(first), (std::set<int64_t>{a1, b1}));
  auto& a_head = job_of(first, a1);
  apply({result_of(a_head, outcome::retry)});
  make_ready(); // the retry's delay is over; A's second stays parked
  auto again = claim("oq");
  CAF_CHECK_EQUAL(events_of(again), (std::set<int64_t>{a1}));
  CAF_CHECK_EQUAL(again.jobs[0].attempts, 1);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u); // B1 and A1 are out
}

CAF_TEST(the next delivery of a key goes once the head completes) {
  use_routes({ordered_route()});
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(publish("e", "{}", "K"));
  route_events(3);
  std::vector<int64_t> sent;
  for (int i = 0; i < 3; ++i) {
    auto c = claim("oq");
    CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
    sent.push_back(c.jobs[0].event_id);
    auto a = apply({result_of(c.jobs[0], outcome::completed)});
    CAF_CHECK_EQUAL(a.completed, 1);
    int64_t waiting = i < 1 ? 1 : 0; // the next one has the key
    CAF_CHECK_EQUAL(parked(), waiting);
  }
  CAF_CHECK_EQUAL(sent, ids);
}

CAF_TEST(a duplicate or stale completion of an ordered delivery changes nothing) {
  use_routes({ordered_route()});
  publish("e", "{}", "K");
  publish("e", "{}", "K");
  route_events(2);
  auto c = claim("oq");
  auto stale = result_of(c.jobs[0], outcome::completed);
  stale.dispatch_id = "00000000-0000-0000-0000-000000000000";
  auto a = apply({result_of(c.jobs[0], outcome::completed),
                  result_of(c.jobs[0], outcome::completed), stale});
  CAF_CHECK(a.verdicts[0] == result_verdict::applied);
  CAF_CHECK(a.verdicts[1] == result_verdict::stale);
  CAF_CHECK(a.verdicts[2] == result_verdict::stale);
  CAF_CHECK_EQUAL(a.completed, 1);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 1u);
}

CAF_TEST(a timed out head holds its key until it is sent again) {
  use_routes({ordered_route()});
  auto k1 = publish("e", "{}", "K");
  publish("e", "{}", "K");
  route_events(2);
  auto c = claim("oq");
  CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET delivery_timeout_at = now() - interval '1 second'"
                    " WHERE status = 'dispatched'");
  auto swept = sweeps.sweep(db, 100);
  CAF_REQUIRE(swept);
  CAF_CHECK_EQUAL(swept->retried, 1);
  CAF_CHECK_EQUAL(swept->released, 0);
  make_ready();
  auto again = claim("oq");
  CAF_CHECK_EQUAL(events_of(again), (std::set<int64_t>{k1}));
}

CAF_TEST(order follows the events also when a later transaction committed first) {
  use_routes({ordered_route()});
  auto other = connect_db();
  auto early = publish_left_open(other, "K");
  auto late = publish("e", "{}", "K"); // commits while `early` is open
  CAF_REQUIRE(late > early);
  // The later event waits for the open transaction: it is not routed.
  for (int i = 0; i < 3; ++i)
    check_held_back();
  CAF_REQUIRE(!other.exec_script("commit", "COMMIT"));
  route_events(2);
  auto c = claim("oq");
  CAF_CHECK_EQUAL(events_of(c), (std::set<int64_t>{early}));
  apply({result_of(c.jobs[0], outcome::completed)});
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{late}));
}

// A database restored to an earlier point hands out event ids again that
// the router had already found safe; an open transaction may hold one.
CAF_TEST(ids taken again after the sequence went back wait like new ones) {
  use_routes({ordered_route()});
  for (int i = 0; i < 5; ++i)
    publish("e", "{}", "A");
  route_events(5);
  must_exec(db, "DELETE FROM " + names.deliveries);
  must_exec(db, "DELETE FROM " + names.events);
  must_exec(db, "SELECT setval(pg_get_serial_sequence('" + names.events
                  + "', 'id'), 1, false)");
  auto other = connect_db();
  auto early = publish_left_open(other, "K");
  auto late = publish("e", "{}", "K");
  CAF_REQUIRE_EQUAL(early, 1);
  CAF_REQUIRE_EQUAL(late, 2);
  check_held_back();
  CAF_REQUIRE(!other.exec_script("commit", "COMMIT"));
  route_events(2);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{early}));
}

CAF_TEST(a transaction that inserted no event does not hold ordered events back) {
  use_routes({ordered_route()});
  auto other = connect_db();
  CAF_REQUIRE(!other.exec_script("begin", "BEGIN"));
  must_exec(other, "SELECT pg_current_xact_id()"); // holds a transaction id
  // ...and writes to the events table without taking an id (as another
  // router or retention does): it holds the table's ROW EXCLUSIVE lock.
  must_exec(other, "UPDATE " + names.events + " SET routed_at = routed_at WHERE false");
  auto k1 = publish("e", "{}", "K");
  auto r = router->route_batch(db, 100);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->events_routed, 1);
  CAF_CHECK(!r->held_back);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k1}));
  CAF_REQUIRE(!other.exec_script("rollback", "ROLLBACK"));
}

CAF_TEST(events of unordered routes are not held back by an open transaction) {
  use_routes({ordered_route(), plain_route("pq", "u")});
  auto other = connect_db();
  publish_left_open(other, "K");
  publish("u", "{}", "K");
  publish("e", "{}"); // no key: nothing to order
  route_events(2);
  CAF_CHECK_EQUAL(claim("pq").jobs.size(), 1u);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 1u);
  CAF_REQUIRE(!other.exec_script("rollback", "ROLLBACK"));
}

CAF_TEST(continue lets the next delivery go after a final failure) {
  use_routes({ordered_route()});
  publish("e", "{}", "K");
  auto k2 = publish("e", "{}", "K");
  route_events(2);
  auto c = claim("oq");
  auto a = apply({result_of(c.jobs[0], outcome::failed)});
  CAF_CHECK_EQUAL(a.failed, 1);
  CAF_CHECK_EQUAL(a.released, 1);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k2}));
}

CAF_TEST(block stops the key at a final failure and leaves other keys) {
  use_routes({ordered_route("oq", failure_policy::block_key)});
  publish("e", "{}", "K");
  publish("e", "{}", "K");
  auto other_key = publish("e", "{}", "L");
  route_events(3);
  auto c = claim("oq");
  CAF_CHECK_EQUAL(c.jobs.size(), 2u);
  apply({result_of(job_of(c, c.jobs[0].event_id == other_key
                               ? c.jobs[1].event_id
                               : c.jobs[0].event_id),
                   outcome::failed)});
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u);
  CAF_CHECK_EQUAL(parked(), 1);
  // The sweep's backstop finds nothing to hand on: the key is blocked.
  auto swept = sweeps.sweep(db, 100);
  CAF_REQUIRE(swept);
  CAF_CHECK_EQUAL(swept->released, 0);
  CAF_CHECK_EQUAL(parked(), 1);
}

CAF_TEST(an expired head blocks its key under block and releases it under continue) {
  for (auto policy : {failure_policy::block_key, failure_policy::continue_key}) {
    ordering_fixture f;
    f.use_routes({f.ordered_route("oq", policy)});
    f.publish_expiring("K", 1);
    auto k2 = f.publish("e", "{}", "K");
    f.route_events(2);
    f.expire_all_pending_ttl();
    auto swept = f.sweeps.sweep(f.db, 100);
    CAF_REQUIRE(swept);
    CAF_CHECK_EQUAL(swept->expired, 1);
    auto c = f.claim("oq");
    if (policy == failure_policy::block_key)
      CAF_CHECK_EQUAL(c.jobs.size(), 0u);
    else
      CAF_CHECK_EQUAL(f.events_of(c), (std::set<int64_t>{k2}));
  }
}

CAF_TEST(replace keeps one delivery in flight and one waiting per key) {
  use_routes({ordered_route("oq", failure_policy::continue_key,
                            merge_mode::replace)});
  auto k1 = publish("e", R"({"n":1})", "K");
  route_events(1);
  auto c = claim("oq");
  CAF_CHECK_EQUAL(events_of(c), (std::set<int64_t>{k1}));
  publish("e", R"({"n":2})", "K");
  auto k3 = publish("e", R"({"n":3})", "K");
  route_events(2);
  CAF_CHECK_EQUAL(count_status("superseded"), 1);
  CAF_CHECK_EQUAL(parked(), 1);
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u); // k1 still holds the key
  apply({result_of(c.jobs[0], outcome::completed)});
  auto next = claim("oq");
  CAF_CHECK_EQUAL(events_of(next), (std::set<int64_t>{k3}));
  CAF_CHECK_EQUAL(next.jobs[0].payload, R"({"n":3})");
}

CAF_TEST(json-merge folds the waiting ones behind the head) {
  use_routes({ordered_route("oq", failure_policy::continue_key,
                            merge_mode::json_merge)});
  publish("e", R"({"a":1})", "K");
  route_events(1);
  auto c = claim("oq");
  publish("e", R"({"b":2})", "K");
  publish("e", R"({"c":3})", "K");
  route_events(2);
  apply({result_of(c.jobs[0], outcome::completed)});
  auto next = claim("oq");
  CAF_REQUIRE_EQUAL(next.jobs.size(), 1u);
  CAF_CHECK_EQUAL(next.jobs[0].payload, R"({"b": 2, "c": 3})");
}

CAF_TEST(a newer delivery that supersedes a retrying head takes its place) {
  use_routes({ordered_route("oq", failure_policy::continue_key,
                            merge_mode::replace)});
  publish("e", "{}", "K");
  route_events(1);
  auto c = claim("oq");
  apply({result_of(c.jobs[0], outcome::retry)}); // waits 60 s, holds the key
  auto k2 = publish("e", "{}", "K");
  route_events(1);
  CAF_CHECK_EQUAL(count_status("superseded"), 1);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k2}));
}

CAF_TEST(routes without ordering send every delivery of a key at once) {
  use_routes({plain_route("pq", "e")});
  for (int i = 0; i < 3; ++i)
    publish("e", "{}", "K");
  route_events(3);
  CAF_CHECK_EQUAL(claim("pq").jobs.size(), 3u);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE ordered")
                    .int64(0, 0),
                  0);
}

CAF_TEST(a lost hand-over is found by the sweep) {
  use_routes({ordered_route()});
  publish("e", "{}", "K");
  auto k2 = publish("e", "{}", "K");
  route_events(2);
  auto c = claim("oq");
  // As if the relay died between a completion and its hand-over.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET status = 'completed', finished_at = now()"
                    " WHERE status = 'dispatched'");
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u);
  auto swept = sweeps.sweep(db, 100); // a new repository: its first sweep
  CAF_REQUIRE(swept);
  CAF_CHECK_EQUAL(swept->released, 1);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{k2}));
}

CAF_TEST_FIXTURE_SCOPE_END()
