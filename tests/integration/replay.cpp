#define CAF_SUITE integration.replay
#include <caf/test/unit_test.hpp>

#include "core/pg/replay_repository.hpp"
#include "tests/integration/ordering_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

// outboxctl replay on an ordered route (core/pg/replay_repository.hpp):
// the replayed deliveries of a key wait behind its live delivery and then
// go out one at a time in event order; a replay on the real server also
// skips events that still have a delivery of the route in the table.

CAF_TEST_FIXTURE_SCOPE(replay_tests, ordering_fixture)

// A route added later (job J on queue oq, ordered by key): the events of
// key K published before it have no delivery of it. A new event of K is
// routed to it and sent (the key's live delivery); the replay of the
// older ones waits behind it, then goes in event order.
CAF_TEST(replayed deliveries of a key wait behind its live one in event order) {
  std::vector<int64_t> old;
  for (int i = 0; i < 3; ++i)
    old.push_back(publish("e", "{}", "K"));
  auto other = publish("e", "{}", "L");
  // Only another route existed then: the events were routed to it alone.
  use_routes({plain_route("elsewhere", "e")});
  route_events(4);
  use_routes({ordered_route()});
  auto live_id = publish("e", "{}", "K");
  route_events(1);
  auto live = claim("oq");
  CAF_REQUIRE_EQUAL(live.jobs.size(), 1u);
  CAF_CHECK_EQUAL(live.jobs[0].event_id, live_id);
  CAF_CHECK(!live.jobs[0].replayed);
  replay_repository replay{names, {ordered_route()}, std::nullopt};
  replay_selection what;
  what.since = "-infinity";
  // A dry run counts and makes nothing.
  auto dry = replay.replay(db, what, true);
  CAF_REQUIRE(dry);
  CAF_CHECK_EQUAL(dry->events, 5);   // the old three, L's and the live one
  CAF_CHECK_EQUAL(dry->skipped, 1);  // the live one has its delivery
  CAF_CHECK_EQUAL(dry->created, 0);
  CAF_CHECK_EQUAL(parked(), 0);
  auto made = replay.replay(db, what, false, 2); // batches of two
  CAF_REQUIRE(made);
  CAF_CHECK_EQUAL(made->events, 5);
  CAF_CHECK_EQUAL(made->created, 4);
  CAF_CHECK_EQUAL(made->skipped, 1);
  // L's key is free: its replayed delivery goes at once. K's wait.
  auto first = claim("oq");
  CAF_REQUIRE_EQUAL(first.jobs.size(), 1u);
  CAF_CHECK_EQUAL(first.jobs[0].event_id, other);
  CAF_CHECK(first.jobs[0].replayed);
  CAF_CHECK_EQUAL(parked(), 3);
  apply({result_of(live.jobs[0], outcome::completed)});
  for (auto id : old) {
    auto c = claim("oq");
    CAF_REQUIRE_EQUAL(c.jobs.size(), 1u);
    CAF_CHECK_EQUAL(c.jobs[0].event_id, id);
    CAF_CHECK(c.jobs[0].replayed);
    apply({result_of(c.jobs[0], outcome::completed)});
  }
  CAF_CHECK_EQUAL(claim("oq").jobs.size(), 0u);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE replayed_at IS NOT NULL").int64(0, 0),
                  4);
}

// By ids, and a time to live counted from the replay, not from the event.
CAF_TEST(a replay by ids counts the time to live from the replay) {
  auto id = publish("e", "{}", "K");
  must_exec(db, "UPDATE " + names.events
                  + " SET created_at = now() - interval '2 days' WHERE id = $1",
            {std::to_string(id)});
  auto r = ordered_route();
  r.rules.ttl_seconds = 3600;
  replay_repository replay{names, {r}, std::nullopt};
  replay_selection what;
  what.event_ids = {id, 999999};
  auto made = replay.replay(db, what, false);
  CAF_REQUIRE(made);
  CAF_CHECK_EQUAL(made->events, 1);
  CAF_CHECK_EQUAL(made->created, 1);
  auto c = claim("oq");
  CAF_REQUIRE_EQUAL(c.jobs.size(), 1u); // not expired: an hour from now
  CAF_CHECK(c.jobs[0].replayed);
}

CAF_TEST_FIXTURE_SCOPE_END()
