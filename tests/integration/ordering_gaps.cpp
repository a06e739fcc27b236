// Ways an ordered key could lose its place, each closed: an application's
// row lock on an event not routed yet, and an event quarantined at routing
// (which holds its key on a blocking route and lets it go on otherwise,
// visibly, with the verbs of a failed delivery).
#define CAF_SUITE integration.ordering_gaps
#include <caf/test/unit_test.hpp>

#include "core/pg/admin_repository.hpp"
#include "core/pg/key_admin_repository.hpp"
#include "tests/integration/ordering_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

struct gaps_fixture : ordering_fixture {
  key_admin_repository keys{names};
  admin_repository admin{names};

  /// An ordered route on which an event created in the far future makes
  /// the routing statement fail (its time to live ends past the year
  /// 294276, which PostgreSQL cannot hold: SQLSTATE 22008).
  route poisonable(failure_policy on_failure) {
    auto r = ordered_route("oq", on_failure);
    r.rules.ttl_seconds = 366 * 24 * 3600;
    return r;
  }

  /// An event of key `key` whose routing fails.
  int64_t publish_poison(const std::string& key) {
    auto id = publish("e", "{}", key);
    must_exec(db, "UPDATE " + names.events
                    + " SET created_at = '294276-06-01' WHERE id = $1",
              {std::to_string(id)});
    return id;
  }

  /// The delivery made for event `event_id` (0: none).
  int64_t delivery_of(int64_t event_id) {
    return must_exec(db, "SELECT coalesce(max(id), 0) FROM " + names.deliveries
                           + " WHERE event_id = $1",
                     {std::to_string(event_id)})
      .int64(0, 0);
  }

  std::string column_of(int64_t delivery_id, const std::string& column) {
    return must_exec(db, "SELECT " + column + " FROM " + names.deliveries
                           + " WHERE id = $1",
                     {std::to_string(delivery_id)})
      .text(0, 0);
  }

  /// Routes one batch, which must quarantine `quarantined` events and route
  /// `routed` (no wait for older transactions: none are open here).
  void route_with_poison(int64_t routed, int64_t quarantined) {
    auto r = router->route_batch(db, 100);
    if (!r)
      CAF_FAIL("routing failed: " << render(r.error()));
    CAF_CHECK_EQUAL(r->events_routed, routed);
    CAF_CHECK_EQUAL(r->events_quarantined, quarantined);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(ordering_gaps_tests, gaps_fixture)

// Routing takes no lock on an event row (no routed mark since schema/015,
// no foreign key since 017), so an application transaction that locks or
// updates an event it published neither stalls routing nor lets the key's
// next event be routed first. A lock timeout turns a routing statement
// that would wait for the lock into a failure of this test.
CAF_TEST(an application row lock on an unrouted ordered event keeps its place) {
  use_routes({ordered_route()});
  must_exec(db, "SET lock_timeout = '5s'");
  for (auto lock : {std::string{"SELECT 1 FROM {e} WHERE id = $1 FOR UPDATE"},
                    std::string{"UPDATE {e} SET payload = payload WHERE id = $1"}}) {
    auto first = publish("e", "{}", "K");
    auto other = connect_db();
    CAF_REQUIRE(!other.exec_script("begin", "BEGIN"));
    lock.replace(lock.find("{e}"), 3, names.events);
    must_exec(other, lock, {std::to_string(first)});
    auto second = publish("e", "{}", "K");
    route_events(2);
    auto c = claim("oq");
    CAF_CHECK_EQUAL(events_of(c), (std::set<int64_t>{first}));
    CAF_CHECK_EQUAL(parked(), 1);
    apply({result_of(job_of(c, first), outcome::completed)});
    auto next = claim("oq");
    CAF_CHECK_EQUAL(events_of(next), (std::set<int64_t>{second}));
    apply({result_of(job_of(next, second), outcome::completed)});
    CAF_REQUIRE(!other.exec_script("rollback", "ROLLBACK"));
  }
}

// onFailure: block. The quarantined event's place is a failed delivery that
// blocks the key: the key's next event waits, `blocked` lists the key, and
// skip lets it go on. Before, the key went on at once without it.
CAF_TEST(an event quarantined at routing blocks its key on a blocking route) {
  use_routes({poisonable(failure_policy::block_key)});
  auto poison = publish_poison("K");
  auto next = publish("e", "{}", "K");
  auto other_key = publish("e", "{}", "L");
  route_with_poison(2, 1); // in one batch: the poison before its successor
  auto head = delivery_of(poison);
  CAF_REQUIRE_NOT_EQUAL(head, 0);
  CAF_CHECK_EQUAL(column_of(head, "status"), "failed");
  CAF_CHECK_EQUAL(column_of(head, "last_error"),
                  "quarantined: routing failed on this event with SQLSTATE 22008");
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{other_key}));
  CAF_CHECK_EQUAL(parked(), 1);
  auto blocked = keys.blocked(db, std::nullopt, 10);
  CAF_REQUIRE(blocked);
  CAF_REQUIRE_EQUAL(blocked->size(), 1u);
  CAF_CHECK_EQUAL(blocked->front().key, "K");
  CAF_CHECK_EQUAL(blocked->front().delivery_id, head);
  CAF_CHECK_EQUAL(blocked->front().parked, 1);
  auto listed = admin.list_quarantined_deliveries(db, 10);
  CAF_REQUIRE(listed);
  CAF_CHECK_EQUAL(listed->size(), 1u);
  // Nothing unblocks it by itself.
  route_with_poison(0, 0);
  CAF_CHECK(claim("oq").jobs.empty());
  auto skipped = keys.skip(db, {head});
  CAF_REQUIRE(skipped);
  CAF_CHECK(skipped->front().verdict == skip_verdict::skipped);
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{next}));
}

// onFailure: continue. The key goes on, and the quarantined event is a
// failed delivery an operator sees and can retry: sent again in its key's
// order, it waits for the delivery out.
CAF_TEST(an event quarantined at routing lets its key go on visibly on a continue route) {
  use_routes({poisonable(failure_policy::continue_key)});
  auto poison = publish_poison("K");
  auto next = publish("e", "{}", "K");
  route_with_poison(1, 1);
  auto failed = delivery_of(poison);
  CAF_REQUIRE_NOT_EQUAL(failed, 0);
  CAF_CHECK_EQUAL(column_of(failed, "status"), "failed");
  auto c = claim("oq");
  CAF_CHECK_EQUAL(events_of(c), (std::set<int64_t>{next}));
  auto blocked = keys.blocked(db, std::nullopt, 10);
  CAF_REQUIRE(blocked);
  CAF_CHECK(blocked->empty());
  // A retry while the next event is out waits for it, then goes.
  auto retried = admin.retry(db, {failed});
  CAF_REQUIRE(retried);
  CAF_CHECK(claim("oq").jobs.empty());
  apply({result_of(job_of(c, next), outcome::completed)});
  CAF_CHECK_EQUAL(events_of(claim("oq")), (std::set<int64_t>{poison}));
}

// An unordered route, or an event without a key, has no order to keep:
// the quarantine makes no delivery, as before.
CAF_TEST(an event quarantined at routing without a key order makes no delivery) {
  auto unordered = poisonable(failure_policy::continue_key);
  unordered.rules.ordering = key_ordering::none;
  use_routes({unordered});
  auto keyed = publish_poison("K");
  route_with_poison(0, 1);
  CAF_CHECK_EQUAL(delivery_of(keyed), 0);
  use_routes({poisonable(failure_policy::block_key)});
  auto id = publish("e", "{}");
  must_exec(db, "UPDATE " + names.events
                  + " SET created_at = '294276-06-01' WHERE id = $1",
            {std::to_string(id)});
  route_with_poison(0, 1);
  CAF_CHECK_EQUAL(delivery_of(id), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
