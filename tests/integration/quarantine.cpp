// Rows written past the publish function (by hand, or by a future bug)
// that make a routing or claim pass fail: the pass quarantines them and
// every other row goes on. Also rows whose times lie past 2262.
#define CAF_SUITE integration.quarantine
#include <caf/test/unit_test.hpp>

#include "tests/integration/delivery_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

route make_route(std::string type, std::string job, std::string queue,
                 std::vector<int32_t> delays = {60}) {
  route r;
  r.event_type = std::move(type);
  r.job = std::move(job);
  r.queue = std::move(queue);
  r.rules.retry_delays_seconds = std::move(delays);
  return r;
}

struct fixture : delivery_fixture {
  std::vector<route> routes{make_route("t.key", "KeyJob", "keys"),
                            make_route("other", "OtherJob", "others")};
  routing_repository router{names, routes};

  // An event inserted as a hand-written INSERT would: no publish function.
  int64_t insert_event(const std::string& type, const std::string& key_sql) {
    return must_exec(db, "INSERT INTO " + names.events
                           + " (event_type, payload, key) VALUES ($1, '{\"k\":2}', "
                           + key_sql + ") RETURNING id",
                     {type})
      .int64(0, 0);
  }

  std::string text(const std::string& sql) {
    return must_exec(db, sql).text(0, 0);
  }
};

// 8,000 characters that do not compress (a btree entry of the coalescing
// index takes at most about 2,700 bytes, compressed or not).
const char* long_key_sql
  = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 250) i)";

} // namespace

CAF_TEST_FIXTURE_SCOPE(quarantine_tests, fixture)

// Regression: this event made every routing pass fail with SQLSTATE 54000,
// for every event type, until someone deleted it by hand.
CAF_TEST(an event whose key the index cannot hold is quarantined and the rest route) {
  auto before = publish("other", "{}");
  auto poison = insert_event("t.key", long_key_sql);
  auto after = publish("other", "{}");
  auto keyed = publish("t.key", "{}", "short");
  auto r = router.route_batch(db, 100);
  if (!(r))
    CAF_FAIL("routing failed: " << render(r.error()));
  CAF_CHECK_EQUAL(r->events_routed, 3);       // the same pass
  CAF_CHECK_EQUAL(r->events_quarantined, 1);
  CAF_CHECK_EQUAL(r->per_queue["others"], 2);
  CAF_CHECK_EQUAL(r->per_queue["keys"], 1);
  auto row = must_exec(db, "SELECT quarantined_at IS NOT NULL, quarantine_reason"
                           " FROM " + names.events + " WHERE id = $1",
                       {std::to_string(poison)});
  CAF_CHECK_EQUAL(row.text(0, 0), "t");
  CAF_CHECK_EQUAL(row.text(0, 1), "routing failed on this event with SQLSTATE 54000");
  CAF_CHECK_EQUAL(text("SELECT count(*) FROM " + names.deliveries
                       + " WHERE event_id = " + std::to_string(poison)),
                  "0");
  for (auto id : {before, after, keyed})
    CAF_CHECK_EQUAL(text("SELECT count(*) > 0 FROM " + names.deliveries
                         + " WHERE event_id = " + std::to_string(id)),
                    "t");
  // The next pass sees neither it nor a failure.
  publish("other", "{}");
  auto next = router.route_batch(db, 100);
  CAF_REQUIRE(next);
  CAF_CHECK_EQUAL(next->events_routed, 1);
  CAF_CHECK_EQUAL(next->events_quarantined, 0);
}

CAF_TEST(a full batch that fails routes the other events one by one) {
  for (int i = 0; i < 3; ++i)
    publish("other", "{}");
  insert_event("t.key", long_key_sql);
  for (int i = 0; i < 3; ++i)
    publish("other", "{}");
  // A batch of 4 holds the poison: it and the three before it are handled.
  auto r = router.route_batch(db, 4);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->events_routed + r->events_quarantined, 4);
  CAF_CHECK_EQUAL(r->events_quarantined, 1);
  auto rest = router.route_batch(db, 4);
  CAF_REQUIRE(rest);
  CAF_CHECK_EQUAL(rest->events_routed, 3);
  CAF_CHECK_EQUAL(count_status("pending"), 6);
}

// Only poison in the batch (or an error of our own SQL that every row
// repeats): one row per pass, so a systematic error cannot empty the table.
CAF_TEST(a batch of nothing but failing events quarantines one per pass) {
  insert_event("t.key", long_key_sql);
  insert_event("t.key", long_key_sql);
  auto first = router.route_batch(db, 100);
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(first->events_routed, 0);
  CAF_CHECK_EQUAL(first->events_quarantined, 1);
  auto second = router.route_batch(db, 100);
  CAF_REQUIRE(second);
  CAF_CHECK_EQUAL(second->events_quarantined, 1);
  CAF_CHECK_EQUAL(text("SELECT count(*) FROM " + names.events
                       + " WHERE quarantined_at IS NOT NULL"),
                  "2");
  publish("other", "{}");
  auto third = router.route_batch(db, 100);
  CAF_REQUIRE(third);
  CAF_CHECK_EQUAL(third->events_routed, 1);
  CAF_CHECK_EQUAL(third->events_quarantined, 0);
}

// Regression: (extract(epoch FROM 'infinity') * 1000000)::bigint failed
// every claim of the queue with SQLSTATE 0A000. 'infinity' never expires.
CAF_TEST(a delivery that never expires by infinity is sent with the others) {
  make_deliveries(3, {60});
  must_exec(db, "UPDATE " + names.deliveries + " SET expires_at = 'infinity'"
                  " WHERE id = (SELECT min(id) FROM " + names.deliveries + ")");
  auto c = claims.claim_batch(db, {"q", 100});
  if (!(c))
    CAF_FAIL("claim failed: " << render(c.error()));
  CAF_CHECK_EQUAL(c->jobs.size(), 3u);
  CAF_CHECK_EQUAL(c->quarantined, 0);
  CAF_CHECK(!c->jobs[0].last_attempt);
  // Its retry is scheduled, not expired: the sweep and the results read it too.
  auto a = apply({result_of(c->jobs[0], outcome::retry)});
  CAF_CHECK_EQUAL(a.retried, 1);
  must_exec(db, "UPDATE " + names.deliveries + " SET status = 'dispatched',"
                  " dispatch_id = gen_random_uuid(), delivery_timeout_at = now()"
                  " - interval '1 s', expires_at = '-infinity' WHERE id = "
                  + std::to_string(c->jobs[1].delivery_id));
  auto s = sweeps.sweep(db, 100);
  if (!(s))
    CAF_FAIL("sweep failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->timed_out, 1);
  CAF_CHECK_EQUAL(s->expired, 1); // -infinity: long past
}

// Any future way a row could fail the claim (here a trigger raising a data
// exception for one delivery) quarantines that delivery only.
CAF_TEST(a delivery the claim fails on is quarantined and the queue goes on) {
  make_deliveries(4, {60});
  auto poison = text("SELECT min(id) + 1 FROM " + names.deliveries);
  must_exec(db, "CREATE FUNCTION " + names.deliveries + "_poison() RETURNS trigger"
                  " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'poison'"
                  " USING ERRCODE = '22023'; END $$");
  must_exec(db, "CREATE TRIGGER " + names.deliveries + "_poison BEFORE UPDATE ON "
                  + names.deliveries + " FOR EACH ROW WHEN (OLD.id = " + poison
                  + " AND NEW.status = 'dispatched') EXECUTE FUNCTION "
                  + names.deliveries + "_poison()");
  auto c = claims.claim_batch(db, {"q", 100});
  if (!(c))
    CAF_FAIL("claim failed: " << render(c.error()));
  CAF_CHECK_EQUAL(c->jobs.size(), 3u);
  CAF_CHECK_EQUAL(c->quarantined, 1);
  CAF_REQUIRE_EQUAL(c->transitions.size(), 1u);
  CAF_CHECK_EQUAL(c->transitions[0].status, delivery_status::failed);
  CAF_CHECK_EQUAL(std::to_string(c->transitions[0].delivery_id), poison);
  auto row = must_exec(db, "SELECT status, last_error, finished_at IS NOT NULL FROM "
                             + names.deliveries + " WHERE id = " + poison);
  CAF_CHECK_EQUAL(row.text(0, 0), "failed");
  CAF_CHECK_EQUAL(row.text(0, 1),
                  "quarantined: the claim failed on this delivery with SQLSTATE 22023");
  CAF_CHECK_EQUAL(row.text(0, 2), "t");
  CAF_CHECK_EQUAL(count_status("dispatched"), 3);
  auto next = claims.claim_batch(db, {"q", 100});
  CAF_REQUIRE(next);
  CAF_CHECK_EQUAL(next->jobs.size(), 0u);
  CAF_CHECK_EQUAL(next->quarantined, 0);
  must_exec(db, "DROP FUNCTION " + names.deliveries + "_poison() CASCADE");
}

CAF_TEST(a claim that fails on every delivery quarantines one per pass) {
  make_deliveries(3, {60});
  must_exec(db, "CREATE FUNCTION " + names.deliveries + "_all() RETURNS trigger"
                  " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'all'"
                  " USING ERRCODE = '22023'; END $$");
  must_exec(db, "CREATE TRIGGER " + names.deliveries + "_all BEFORE UPDATE ON "
                  + names.deliveries + " FOR EACH ROW WHEN (NEW.status = 'dispatched')"
                  " EXECUTE FUNCTION " + names.deliveries + "_all()");
  auto c = claims.claim_batch(db, {"q", 100});
  CAF_REQUIRE(c);
  CAF_CHECK_EQUAL(c->jobs.size(), 0u);
  CAF_CHECK_EQUAL(c->quarantined, 1);
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  must_exec(db, "DROP FUNCTION " + names.deliveries + "_all() CASCADE");
  CAF_CHECK_EQUAL(claim().jobs.size(), 2u);
}

// Not the row's fault: a statement failing otherwise quarantines nothing.
CAF_TEST(an error that is not about the data fails the pass and quarantines nothing) {
  make_deliveries(2, {60});
  must_exec(db, "CREATE FUNCTION " + names.deliveries + "_busy() RETURNS trigger"
                  " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'busy'"
                  " USING ERRCODE = '40001'; END $$");
  must_exec(db, "CREATE TRIGGER " + names.deliveries + "_busy BEFORE UPDATE ON "
                  + names.deliveries + " FOR EACH ROW EXECUTE FUNCTION "
                  + names.deliveries + "_busy()");
  auto c = claims.claim_batch(db, {"q", 100});
  CAF_REQUIRE(!c);
  CAF_CHECK_EQUAL(sqlstate_of(c.error()), "40001");
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  must_exec(db, "DROP FUNCTION " + names.deliveries + "_busy() CASCADE");
}

// Regression: an expiry in 2300 (or a route TTL of 10,000,000,000 s) was
// read into a time_point that wrapped around to a time long past, so a
// failed send expired the delivery instead of scheduling its retry.
CAF_TEST(a failed send with an expiry after 2262 schedules its retry) {
  make_deliveries(1, {60});
  must_exec(db, "UPDATE " + names.deliveries
                  + " SET expires_at = '2300-01-01T00:00:00Z'");
  route long_ttl = make_route("long", "J", "q");
  long_ttl.rules.ttl_seconds = 10'000'000'000;
  routing_repository long_router{names, {long_ttl}};
  publish("long", "{}");
  CAF_REQUIRE(long_router.route_batch(db, 100));
  CAF_CHECK_EQUAL(text("SELECT count(*) FROM " + names.deliveries
                       + " WHERE expires_at > '2300-01-01'"),
                  "1");
  auto c = claim();
  CAF_REQUIRE_EQUAL(c.jobs.size(), 2u);
  for (auto& j : c.jobs)
    CAF_CHECK(!j.last_attempt);
  auto a = apply({result_of(c.jobs[0], outcome::retry),
                  result_of(c.jobs[1], outcome::retry)});
  CAF_CHECK_EQUAL(a.retried, 2);
  CAF_CHECK_EQUAL(a.expired, 0);
  CAF_CHECK_EQUAL(count_status("pending"), 2);
  CAF_CHECK_EQUAL(text("SELECT count(*) FROM " + names.deliveries
                       + " WHERE available_at BETWEEN now() + interval '50 s'"
                         " AND now() + interval '70 s'"),
                  "2");
}

CAF_TEST_FIXTURE_SCOPE_END()
