#define CAF_SUITE integration.handoff
#include <caf/test/unit_test.hpp>

#include "tests/integration/delivery_fixture.hpp"

// Claim on route (core/domain/handoff.hpp) on the real server: what the
// routing statement inserts dispatched, what the dispatcher reads of it,
// and how a handed delivery goes back when it cannot be published.

using namespace outbox;
using namespace outbox::testing;

namespace {

route make_route(std::string job, std::string queue, merge_mode merge,
                 key_ordering ordering = key_ordering::none) {
  route r;
  r.event_type = "e";
  r.job = std::move(job);
  r.queue = std::move(queue);
  r.rules.retry_delays_seconds = {60};
  r.rules.delivery_timeout_seconds = 30;
  r.rules.merge = merge;
  r.rules.ordering = ordering;
  return r;
}

struct fixture : delivery_fixture {
  routing_result route_with(const std::vector<route>& routes,
                            std::vector<handoff_queue> handoff) {
    routing_repository router{names, routes};
    auto r = router.route_batch(db, 100, handoff);
    if (!r)
      CAF_FAIL("routing failed: " << render(r.error()));
    return *r;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(handoff_tests, fixture)

CAF_TEST(deliveries are inserted dispatched up to the room given) {
  for (int i = 0; i < 5; ++i)
    publish("e", R"({"n":)" + std::to_string(i) + "}");
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 3}});
  CAF_CHECK_EQUAL(r.deliveries_created, 5);
  CAF_REQUIRE_EQUAL(r.handed["q"].size(), 3u);
  CAF_CHECK_EQUAL(r.per_queue["q"], 2);
  CAF_CHECK_EQUAL(count_status("dispatched"), 3);
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  // In event order, each with the dispatch id and timeout a claim gives.
  auto& handed = r.handed["q"];
  CAF_CHECK_LESS(handed[0].id, handed[1].id);
  auto row = must_exec(db, "SELECT dispatch_id::text, attempts, "
                           "delivery_timeout_at - dispatched_at = interval '30 s' "
                           "FROM " + names.deliveries + " WHERE id = $1",
                       {std::to_string(handed[0].id)});
  CAF_CHECK_EQUAL(row.text(0, 0), handed[0].dispatch_id);
  CAF_CHECK_EQUAL(row.text(0, 1), "0");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
  // The claim counts the handed ones in flight (the credit the dispatcher
  // gives comes from this count): of a limit of 5 it finds room for the
  // two pending ones, and after them none.
  auto c = claim("q", 100, 5);
  CAF_CHECK_EQUAL(c.jobs.size(), 2u);
  CAF_CHECK_EQUAL(c.room.value_or(-1), 2);
  CAF_CHECK_EQUAL(claim("q", 100, 5).room.value_or(-1), 0);
}

CAF_TEST(a queue without room or not offered gets pending deliveries) {
  publish("e", "{}");
  auto r = route_with({make_route("J", "q", merge_mode::replace),
                       make_route("K", "other", merge_mode::replace)},
                      {{"q", 0}});
  CAF_CHECK(r.handed.empty());
  CAF_CHECK_EQUAL(r.per_queue["q"], 1);
  CAF_CHECK_EQUAL(r.per_queue["other"], 1);
  CAF_CHECK_EQUAL(count_status("pending"), 2);
}

CAF_TEST(coalescing and ordered deliveries are never handed) {
  publish("e", "{}", "k1");
  publish("e", "{}");
  auto r = route_with({make_route("Replace", "q", merge_mode::replace),
                       make_route("Ordered", "q", merge_mode::none,
                                  key_ordering::key),
                       make_route("None", "q", merge_mode::none)},
                      {{"q", 100}});
  // The keyed event: only its merge-none, unordered route is handed. The
  // keyless event: all three routes.
  CAF_CHECK_EQUAL(r.handed["q"].size(), 4u);
  auto rows = must_exec(db, "SELECT job, status FROM " + names.deliveries
                              + " WHERE coalesce_key = 'k1' ORDER BY job");
  CAF_REQUIRE_EQUAL(rows.size(), 3);
  CAF_CHECK_EQUAL(rows.text(0, 0), "None");
  CAF_CHECK_EQUAL(rows.text(0, 1), "dispatched");
  CAF_CHECK_EQUAL(rows.text(1, 1), "pending"); // Ordered: its key's head
  CAF_CHECK_EQUAL(rows.text(2, 1), "pending"); // Replace
}

CAF_TEST(an event past its time to live is not handed) {
  auto id = publish("e", "{}");
  must_exec(db, "UPDATE " + names.events
                  + " SET expires_at = now() - interval '1 s' WHERE id = $1",
            {std::to_string(id)});
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 10}});
  CAF_CHECK(r.handed.empty());
  CAF_CHECK_EQUAL(claim("q").expired, 1);
}

CAF_TEST(the dispatcher reads handed jobs and completes them with one update) {
  publish("e", R"({"sku":"A1"})");
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 10}});
  auto handed = r.handed["q"];
  CAF_REQUIRE_EQUAL(handed.size(), 1u);
  // A dispatch id that is not the row's reads nothing.
  auto stale = claims.fetch_handed(db, {{handed[0].id, "00000000-0000-0000-0000-000000000000"}});
  CAF_REQUIRE(stale);
  CAF_CHECK(stale->jobs.empty());
  auto got = claims.fetch_handed(db, handed);
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->jobs.size(), 1u);
  auto& j = got->jobs[0];
  CAF_CHECK_EQUAL(j.delivery_id, handed[0].id);
  CAF_CHECK_EQUAL(j.dispatch_id, handed[0].dispatch_id);
  CAF_CHECK_EQUAL(j.payload, R"({"sku":"A1"})");
  CAF_CHECK_EQUAL(j.job, "J");
  CAF_CHECK(!j.last_attempt); // a retry is left
  auto a = apply({result_of(j, outcome::completed)});
  CAF_CHECK_EQUAL(a.completed, 1);
  CAF_CHECK_EQUAL(status_of(j.delivery_id), "completed");
}

CAF_TEST(handed deliveries given back are pending and ready with no attempt) {
  publish("e", "{}");
  publish("e", "{}");
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 10}});
  auto handed = r.handed["q"];
  CAF_REQUIRE_EQUAL(handed.size(), 2u);
  // The second was taken back and claimed again meanwhile: its new
  // dispatch id is not the handed one, so it stays as it is.
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET dispatch_id = gen_random_uuid() WHERE id = $1",
            {std::to_string(handed[1].id)});
  auto released = claims.release_handed(db, handed);
  CAF_REQUIRE(released);
  CAF_CHECK_EQUAL(*released, 1);
  CAF_CHECK_EQUAL(status_of(handed[0].id), "pending");
  CAF_CHECK_EQUAL(status_of(handed[1].id), "dispatched");
  auto c = claim("q");
  CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
  CAF_CHECK_EQUAL(c.jobs[0].delivery_id, handed[0].id);
  CAF_CHECK_EQUAL(c.jobs[0].attempts, 0);
}

CAF_TEST(a handed delivery never published times out like a claimed one) {
  publish("e", "{}");
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 10}});
  CAF_REQUIRE_EQUAL(r.handed["q"].size(), 1u);
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET delivery_timeout_at = now() - interval '1 s'");
  auto s = sweeps.sweep(db, 100);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->retried, 1);
  CAF_CHECK_EQUAL(count_status("pending"), 1);
}

CAF_TEST(every transition of a handed send moves it into the logged partition) {
  for (int i = 0; i < 3; ++i)
    publish("e", "{}");
  auto r = route_with({make_route("J", "q", merge_mode::replace)}, {{"q", 10}});
  auto handed = r.handed["q"];
  CAF_REQUIRE_EQUAL(handed.size(), 3u);
  auto partition = [&](int64_t id) {
    return must_exec(db, "SELECT tableoid::regclass::text FROM " + names.deliveries
                           + " WHERE id = $1",
                     {std::to_string(id)})
      .text(0, 0);
  };
  for (auto& h : handed)
    CAF_CHECK_EQUAL(partition(h.id), names.deliveries + "_handed");
  // A retry answered by the worker, a send given back, a send timed out.
  auto got = claims.fetch_handed(db, {handed[0]});
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->jobs.size(), 1u);
  CAF_CHECK_EQUAL(apply({result_of(got->jobs[0], outcome::retry)}).retried, 1);
  CAF_REQUIRE(claims.release_handed(db, {handed[1]}));
  must_exec(db, "UPDATE " + names.deliveries + "_handed"
                  + " SET delivery_timeout_at = now() - interval '1 s'");
  auto swept = sweeps.sweep(db, 100);
  CAF_REQUIRE(swept);
  CAF_CHECK_EQUAL(swept->retried, 1);
  for (auto& h : handed) {
    CAF_CHECK_EQUAL(partition(h.id), names.deliveries + "_logged");
    CAF_CHECK_EQUAL(status_of(h.id), "pending");
  }
}

// What PostgreSQL's crash recovery does to unlogged tables, done by hand:
// the routing that leads next must make the lost sends again, and nothing
// that survived.
CAF_TEST(a crash that empties the handed partition makes its sends again) {
  std::vector<int64_t> events;
  for (int i = 0; i < 4; ++i)
    events.push_back(publish("e", "{}"));
  auto aside = publish("x", "{}"); // no route: set aside
  auto routes = std::vector<route>{make_route("J", "q", merge_mode::replace)};
  auto r = route_with(routes, {{"q", 3}});
  auto handed = r.handed["q"];
  CAF_REQUIRE_EQUAL(handed.size(), 3u);
  CAF_CHECK_EQUAL(r.per_queue["q"], 1);
  // One handed send completed before the crash: it is in the log.
  auto got = claims.fetch_handed(db, {handed[0]});
  CAF_REQUIRE(got);
  CAF_CHECK_EQUAL(apply({result_of(got->jobs[0], outcome::completed)}).completed, 1);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT handed_floor FROM " + names.events
                                  + "_routing").int64(0, 0),
                  events[0]);
  must_exec(db, "TRUNCATE " + names.deliveries + "_handed" + ", "
                  + names.deliveries + "_handed_alive");
  auto again = route_with(routes, {{"q", 10}});
  CAF_CHECK_EQUAL(again.deliveries_created, 2);
  CAF_CHECK(again.handed.empty());
  // Each event has its one delivery: the completed one in the log, the
  // lost ones pending again, the one that was pending as it was.
  auto per_event = must_exec(db, "SELECT event_id, count(*), max(status) FROM "
                                   + all_deliveries(names)
                                   + " d GROUP BY event_id ORDER BY event_id");
  CAF_REQUIRE_EQUAL(per_event.size(), 4);
  for (int i = 0; i < 4; ++i) {
    CAF_CHECK_EQUAL(per_event.int64(i, 0), events[i]);
    CAF_CHECK_EQUAL(per_event.int64(i, 1), 1);
    CAF_CHECK_EQUAL(per_event.text(i, 2), i == 0 ? "completed" : "pending");
  }
  // The set-aside event keeps its place; the partition is marked alive,
  // so the next pass recovers nothing.
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.events
                                  + "_unrouted WHERE event_id = $1",
                            {std::to_string(aside)}).int64(0, 0),
                  1);
  CAF_CHECK_EQUAL(route_with(routes, {{"q", 10}}).deliveries_created, 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
